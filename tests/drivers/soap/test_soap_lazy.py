"""What a load leaves for later: input schemas are built when first read, each the same
whatever was read before, and a disk-cache hit imports neither zeep, httpx nor lxml."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from mcs_soap import SoapDriver
from soap_world import World

from mcs import discovery

# Two operations whose inputs reach two types that contain each other: which one becomes
# the $defs entry depends on where the conversion starts.
MUTUAL_WSDL = """<?xml version="1.0"?>
<wsdl:definitions xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/" xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/"
    xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:tns="urn:mutual" targetNamespace="urn:mutual">
  <wsdl:types>
    <xsd:schema targetNamespace="urn:mutual" elementFormDefault="qualified">
      <xsd:complexType name="tFolder"><xsd:sequence>
        <xsd:element name="name" type="xsd:string"/>
        <xsd:element name="files" type="tns:tFile" minOccurs="0" maxOccurs="unbounded"/>
      </xsd:sequence></xsd:complexType>
      <xsd:complexType name="tFile"><xsd:sequence>
        <xsd:element name="name" type="xsd:string"/>
        <xsd:element name="folder" type="tns:tFolder" minOccurs="0"/>
      </xsd:sequence></xsd:complexType>
      <xsd:complexType name="tFolderRequest"><xsd:sequence>
        <xsd:element name="folder" type="tns:tFolder"/></xsd:sequence></xsd:complexType>
      <xsd:complexType name="tFileRequest"><xsd:sequence>
        <xsd:element name="file" type="tns:tFile"/></xsd:sequence></xsd:complexType>
      <xsd:element name="SaveFolder"><xsd:complexType><xsd:sequence>
        <xsd:element name="request" type="tns:tFolderRequest"/></xsd:sequence></xsd:complexType></xsd:element>
      <xsd:element name="SaveFile"><xsd:complexType><xsd:sequence>
        <xsd:element name="request" type="tns:tFileRequest"/></xsd:sequence></xsd:complexType></xsd:element>
      <xsd:element name="Done" type="xsd:boolean"/>
    </xsd:schema>
  </wsdl:types>
  <wsdl:message name="SaveFolderIn"><wsdl:part name="parameters" element="tns:SaveFolder"/></wsdl:message>
  <wsdl:message name="SaveFileIn"><wsdl:part name="parameters" element="tns:SaveFile"/></wsdl:message>
  <wsdl:message name="DoneOut"><wsdl:part name="parameters" element="tns:Done"/></wsdl:message>
  <wsdl:portType name="Files">
    <wsdl:operation name="SaveFolder"><wsdl:input message="tns:SaveFolderIn"/><wsdl:output message="tns:DoneOut"/></wsdl:operation>
    <wsdl:operation name="SaveFile"><wsdl:input message="tns:SaveFileIn"/><wsdl:output message="tns:DoneOut"/></wsdl:operation>
  </wsdl:portType>
  <wsdl:binding name="FilesSoap" type="tns:Files">
    <soap:binding transport="http://schemas.xmlsoap.org/soap/http" style="document"/>
    <wsdl:operation name="SaveFolder"><soap:operation soapAction="SaveFolder"/>
      <wsdl:input><soap:body use="literal"/></wsdl:input><wsdl:output><soap:body use="literal"/></wsdl:output></wsdl:operation>
    <wsdl:operation name="SaveFile"><soap:operation soapAction="SaveFile"/>
      <wsdl:input><soap:body use="literal"/></wsdl:input><wsdl:output><soap:body use="literal"/></wsdl:output></wsdl:operation>
  </wsdl:binding>
  <wsdl:service name="FileService"><wsdl:port name="FilesSoap" binding="tns:FilesSoap">
    <soap:address location="http://127.0.0.1:9/files"/></wsdl:port></wsdl:service>
</wsdl:definitions>
"""


def _own(driver: SoapDriver) -> list:
    return [t for t in driver.list_tools() if not discovery.is_meta_tool(t)]


def test_listing_and_describing_in_discovery_mode_build_no_input_schema(world: World):
    with SoapDriver(world.wsdl, description_mode="discovery", cache=False) as driver:
        driver.get_driver_system_message()
        assert not any(t.schema_built for t in _own(driver))
        described = driver.call_tool("describe_tool", {"name": "RegisterTraveller"})
        assert described["input_schema"]["$defs"]["tNode"]["properties"]["value"] == {
            "type": "integer", "minimum": -(2**31), "maximum": 2**31 - 1}
        assert [t.name for t in _own(driver) if t.schema_built] == ["RegisterTraveller"]
        assert driver.warmup()["tools"] == len(_own(driver))
        assert all(t.schema_built for t in _own(driver))


def test_a_tools_schema_does_not_depend_on_which_tools_were_read_before(tmp_path: Path):
    wsdl = tmp_path / "files.wsdl"
    wsdl.write_text(MUTUAL_WSDL)
    # Discovery mode: nothing reads the schemas but the test (the auto mode would measure them in order).
    folder_first = SoapDriver(wsdl, cache=False, description_mode="discovery")
    file_first = SoapDriver(wsdl, cache=False, description_mode="discovery")
    schemas_a = {name: folder_first.get_tool(name).input_schema for name in ("SaveFolder", "SaveFile")}
    schemas_b = {name: file_first.get_tool(name).input_schema for name in ("SaveFile", "SaveFolder")}
    assert schemas_a == schemas_b
    folder = schemas_a["SaveFolder"]
    assert folder["properties"]["request"]["properties"]["folder"] == {"$ref": "#/$defs/tFolder"}
    assert folder["$defs"]["tFolder"]["properties"]["files"]["items"]["properties"]["folder"] == {
        "$ref": "#/$defs/tFolder"}


def test_schemas_read_from_several_threads_are_the_schemas_read_in_order(corpus):
    wsdl = corpus / "wsdl" / "gowsdl" / "ec2.wsdl"
    in_order = {t.name: t.input_schema for t in _own(SoapDriver(wsdl, cache=False))}
    tools = _own(SoapDriver(wsdl, cache=False, description_mode="discovery"))
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads take turns inside the conversions
    try:
        with ThreadPoolExecutor(max_workers=4) as pool:
            read = list(pool.map(lambda tool: (tool.name, tool.input_schema), tools[::-1]))
    finally:
        sys.setswitchinterval(interval)
    assert dict(read) == in_order


def test_a_disk_cache_hit_imports_neither_zeep_nor_httpx_nor_lxml_until_warmup(world: World, tmp_path: Path):
    SoapDriver(world.wsdl, cache_dir=tmp_path)
    script = textwrap.dedent(f"""
        import json, sys
        from mcs_soap import SoapDriver

        heavy = ("zeep", "httpx", "lxml")
        driver = SoapDriver({str(world.wsdl)!r}, cache_dir={str(tmp_path)!r}, description_mode="discovery")
        driver.get_driver_system_message()
        described = driver.call_tool("describe_tool", {{"name": "Echo"}})
        before = [m for m in heavy if m in sys.modules]
        driver.warmup()
        after = [m for m in heavy if m in sys.modules]
        result = driver.call_tool("Echo", {{"text": "a", "times": 2}})
        print(json.dumps([driver.cache_source, before, after, sorted(described["input_schema"]["properties"]), result]))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    source, before, after, properties, result = json.loads(done.stdout.strip().splitlines()[-1])
    assert (source, before, after) == ("disk", [], ["zeep", "httpx", "lxml"])
    assert properties == ["text", "times"]
    assert result == "a a"


def test_a_load_leaves_the_garbage_collector_as_it_found_it(world: World):
    import gc

    assert gc.isenabled()
    SoapDriver(world.wsdl, cache=False)
    assert gc.isenabled()
    gc.disable()
    try:
        SoapDriver(world.wsdl, cache=False)
        assert not gc.isenabled()  # an application that turned it off keeps it off
    finally:
        gc.enable()


def test_loads_in_several_threads_leave_the_garbage_collector_running(world: World):
    import gc

    with ThreadPoolExecutor(max_workers=4) as pool:
        drivers = list(pool.map(lambda _: SoapDriver(world.wsdl, cache=False), range(4)))
    assert all(d.cache_source == "parsed" for d in drivers)
    assert gc.isenabled()


def test_importing_the_driver_loads_neither_pydantic_nor_asyncio_nor_yaml():
    script = "import json, sys, mcs_soap; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout))
    heavy = ("pydantic", "asyncio", "yaml", "jsonschema_rs", "zeep", "lxml", "httpx", "importlib.metadata")
    assert [m for m in heavy if m in loaded] == []
