"""Every corpus WSDL loads or fails with an error naming the document; vboxweb's 1,158
operations go to discovery mode and stay reachable; options are checked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcs_soap import SoapDriver, WsdlError
from soap_world import CORPUS, World

from mcs import discovery
from mcs.errors import ConfigurationError
from mcs.validation import compile_validator

WSDL_DIR = CORPUS / "wsdl"
FILES = sorted(WSDL_DIR.rglob("*.wsdl")) if WSDL_DIR.is_dir() else []
# What each corpus WSDL that cannot be offered says, in words the user can act on.
EXPECTED_ERRORS = {
    "gowsdl/stock.wsdl": "no operation to offer",
    "gowsdl/vim.wsdl": "query-messagetypes.xsd",
    "gowsdl/workday-time-min.wsdl": "WorkerReferenceEnumeration",
    "node-soap/CyberSourceTransaction_1.26_3.wsdl": "schemaLocation is required",
    "node-soap/ImportSample.wsdl": "line 2, column 35",
    "node-soap/Netsuite.wsdl": "allow_imports",
    "node-soap/marketo.wsdl": "StreamPosition",
    "node-soap/npe.wsdl": "wsdlns",
    "node-soap/rpcexample.wsdl": "soap-encoding",
    "node-soap/stockquote-url.wsdl": "allow_imports",
    "node-soap/stockquote.wsdl": "invalid part",
    "zeep/hello_world_recursive_import.wsdl": "no operation to offer",
    "zeep/recursive_schema_main.wsdl": "no operation to offer",
    "zeep/soap_import_2.wsdl": "no operation to offer",
}


def _id(path: Path) -> str:
    return path.relative_to(WSDL_DIR).as_posix()


@pytest.mark.parametrize("path", FILES, ids=[_id(p) for p in FILES])
def test_every_corpus_wsdl_loads_or_fails_naming_the_document(corpus, path):
    name = _id(path)
    if name in EXPECTED_ERRORS:
        with pytest.raises(WsdlError) as info:
            SoapDriver(path, cache=False)
        message = str(info.value)
        assert path.name in message
        assert EXPECTED_ERRORS[name] in message
        return
    with SoapDriver(path, cache=False) as driver:
        tools = [t for t in driver.list_tools() if not discovery.is_meta_tool(t)]
        assert tools
        for tool in tools:
            compile_validator(tool.input_schema, tool=tool.name)
            json.dumps(dict(tool.input_schema))


def test_vboxweb_loads_all_1158_operations_in_discovery_mode(corpus):
    with SoapDriver(corpus / "wsdl" / "gowsdl" / "vboxweb.wsdl") as driver:
        tools = [t for t in driver.list_tools() if not discovery.is_meta_tool(t)]
        assert len(tools) == 1158
        description = driver.get_function_description()
        assert "search_tools" in description and len(description) < 12_000
        # Choosing the mode measured some tools; no other input schema was built.
        assert 0 < sum(t.schema_built for t in tools) < 200
        found = driver.call_tool("search_tools", {"query": "machine state"})
        assert found
        described = driver.call_tool("describe_tool", {"name": "IMachine_getState"})
        assert described["input_schema"]["required"] == ["_this"]


def test_rpc_encoded_wsdls_load_with_the_bundled_soap_encoding_schema(corpus):
    with SoapDriver(corpus / "wsdl" / "node-soap" / "EVacSyncService_SPClient.wsdl") as driver:
        assert driver.list_tools()


def test_a_missing_file_is_a_wsdl_error_naming_it():
    with pytest.raises(WsdlError) as info:
        SoapDriver("no/such/service.wsdl")
    assert "no/such/service.wsdl" in str(info.value)


def test_a_file_that_is_not_xml_names_the_line(tmp_path):
    path = tmp_path / "broken.wsdl"
    path.write_text("<definitions>\n  <unclosed>\n</definitions>")
    with pytest.raises(WsdlError) as info:
        SoapDriver(path)
    assert "broken.wsdl" in str(info.value) and "line" in str(info.value)


def test_an_unknown_option_is_named(world: World):
    with pytest.raises(ConfigurationError) as info:
        SoapDriver(world.wsdl, endpont="http://x")
    assert "'endpont'" in str(info.value) and "endpoint" in str(info.value)


@pytest.mark.parametrize("options", [
    {"endpoint": "ftp://x/y"}, {"ports": ["NoSuchPort"]}, {"http_headers": {"X": "a\r\nB: c"}},
    {"http_basic": "no-colon"}, {"wsse_username": "only-user"}, {"soap_headers": ["<a><b></a>"]},
    {"max_response_bytes": 0},
])
def test_bad_options_are_configuration_errors(world: World, options):
    with pytest.raises(ConfigurationError):
        SoapDriver(world.wsdl, **options)


def test_ports_selects_ports_and_names_lose_their_qualification(world: World):
    with SoapDriver(world.wsdl, ports=["CalculatorSoap12"]) as driver:
        names = {t.name for t in driver.list_tools()}
        assert names == {"Add", "Divide"}
        assert driver.call_tool("Add", {"a": 1, "b": 1}) == 2
    assert world.peer.requests[-1].headers["content-type"].startswith("application/soap+xml")
