"""SECURITY.md C2 (XML attacks on SOAP) against the loopback peer: XXE, billion laughs and
external entities in responses and in WSDLs, external imports in WSDLs (no fetch observed),
size caps for WSDLs and responses; values from the model stay data."""

from __future__ import annotations

import contextlib
import time
import unicodedata

import pytest
from mcs_soap import SoapDriver, WsdlError
from mcs_soap.peer import SoapPeer, serve
from soap_world import WORLD_WSDL, World, world_peer
from support.hostile import HostilePeer
from support.logs import log_everything, quoting

from mcs.errors import ExecutionError, InvalidInputError

XXE = b"""<?xml version="1.0"?>
<!DOCTYPE foo [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>
<AddResponse xmlns="urn:mcs:world"><AddResult>&xxe;</AddResult></AddResponse></soap:Body></soap:Envelope>"""
LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
<!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
<!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
<!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
<!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
<!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
<!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">]>
<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>
<AddResponse xmlns="urn:mcs:world"><AddResult>&lol9;</AddResult></AddResponse></soap:Body></soap:Envelope>"""


def _external(url: str) -> bytes:
    return f"""<?xml version="1.0"?>
<!DOCTYPE foo [<!ENTITY ext SYSTEM "{url}/stolen">]>
<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>
<AddResponse xmlns="urn:mcs:world"><AddResult>&ext;</AddResult></AddResponse></soap:Body></soap:Envelope>""".encode()


@pytest.fixture
def recorder():
    """A second loopback server standing for 169.254.169.254: it records any fetch."""
    peer = SoapPeer(wsdl=WORLD_WSDL.read_text(), handlers={}, validate=False)
    with serve(peer) as url:
        yield peer, url


@pytest.mark.parametrize("attack", ["xxe", "laughs", "external"])
def test_c2_a_response_with_a_dtd_or_entities_is_refused_and_nothing_is_fetched(world: World, recorder, attack):
    peer, url = recorder
    body = {"xxe": XXE, "laughs": LAUGHS, "external": _external(url)}[attack]
    world.peer.raw["/evil"] = (200, "text/xml", body)
    started = time.monotonic()
    with SoapDriver(world.wsdl, endpoint=world.url + "/evil") as driver, pytest.raises(ExecutionError) as info:
        driver.call_tool("Calculator_CalculatorSoap_Add", {"a": 1, "b": 1})
    assert time.monotonic() - started < 5
    assert "refused" in info.value.message
    assert "root:" not in info.value.message
    assert peer.requests == []


def test_c2_a_response_over_the_size_cap_is_refused(world: World):
    world.peer.raw["/huge"] = (200, "text/xml", b"<x>" + b"a" * 300_000 + b"</x>")
    with SoapDriver(world.wsdl, endpoint=world.url + "/huge", max_response_bytes=100_000) as driver, \
            pytest.raises(ExecutionError) as info:
        driver.call_tool("Calculator_CalculatorSoap_Add", {"a": 1, "b": 1})
    assert "larger than 100000 bytes" in info.value.message


def test_c2_a_gzip_bomb_response_is_cut_while_inflating(world: World):
    import gzip

    bomb = gzip.compress(b"<x>" + b"a" * 50_000_000 + b"</x>")
    world.peer.raw["/bomb"] = (200, "text/xml", bomb)
    world.peer.raw_headers["/bomb"] = {"Content-Encoding": "gzip"}
    with SoapDriver(world.wsdl, endpoint=world.url + "/bomb", max_response_bytes=1_000_000) as driver, \
            pytest.raises(ExecutionError) as info:
        driver.call_tool("Calculator_CalculatorSoap_Add", {"a": 1, "b": 1})
    assert "larger than 1000000 bytes" in info.value.message


@pytest.mark.parametrize("attack", ["xxe", "laughs"])
def test_c2_a_wsdl_with_a_dtd_or_entities_is_refused(tmp_path, attack):
    text = WORLD_WSDL.read_text().replace("{address}", "http://127.0.0.1:9")
    head, rest = text.split("\n", 1)
    dtd = ('<!DOCTYPE d [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>' if attack == "xxe"
           else '<!DOCTYPE d [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>')
    path = tmp_path / "evil.wsdl"
    path.write_text(head + "\n" + dtd + "\n" + rest)
    with pytest.raises(WsdlError) as info:
        SoapDriver(path)
    assert "evil.wsdl" in str(info.value) and "DTDForbidden" in str(info.value)


def test_c2_a_wsdl_importing_from_another_host_is_refused_and_nothing_is_fetched(tmp_path, recorder):
    peer, url = recorder
    text = WORLD_WSDL.read_text().replace("{address}", "http://127.0.0.1:9").replace(
        '<xsd:schema targetNamespace="urn:mcs:world" elementFormDefault="qualified">',
        f'<xsd:schema targetNamespace="urn:mcs:world" elementFormDefault="qualified">'
        f'<xsd:import namespace="urn:evil" schemaLocation="{url}/latest/meta-data.xsd"/>')
    path = tmp_path / "import.wsdl"
    path.write_text(text)
    with pytest.raises(WsdlError) as info:
        SoapDriver(path)
    assert f"{url}/latest/meta-data.xsd" in str(info.value)
    assert "allow_imports" in str(info.value)
    assert peer.requests == []


def test_c2_a_wsdl_importing_a_local_file_outside_its_folder_is_refused(tmp_path):
    folder = tmp_path / "wsdl"
    folder.mkdir()
    (tmp_path / "secret.xsd").write_text('<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema"/>')
    text = WORLD_WSDL.read_text().replace("{address}", "http://127.0.0.1:9").replace(
        '<xsd:schema targetNamespace="urn:mcs:world" elementFormDefault="qualified">',
        '<xsd:schema targetNamespace="urn:mcs:world" elementFormDefault="qualified">'
        '<xsd:include schemaLocation="../secret.xsd"/>')
    (folder / "w.wsdl").write_text(text)
    with pytest.raises(WsdlError) as info:
        SoapDriver(folder / "w.wsdl")
    assert "secret.xsd" in str(info.value) and "own location" in str(info.value)
    with SoapDriver(folder / "w.wsdl", allow_imports=[str(tmp_path)]) as driver:
        assert driver.get_tool("FullCountryInfo") is not None


def _importing(url: str) -> str:
    return WORLD_WSDL.read_text().replace("{address}", "http://127.0.0.1:9").replace(
        '<xsd:schema targetNamespace="urn:mcs:world" elementFormDefault="qualified">',
        f'<xsd:schema targetNamespace="urn:mcs:world" elementFormDefault="qualified">'
        f'<xsd:import namespace="urn:evil" schemaLocation="{url}"/>')


@pytest.mark.parametrize(("allowed", "imported"), [
    ("http://127.0.0.1", "{url}/latest/meta-data.xsd"),  # the allowed origin is port 80, not the recorder's
    ("{url}/schemas", "{url}/schemas-private/secret.xsd"),  # a folder is not every path that starts like it
    ("{url}/schemas/", "{url}/schemas/../latest/meta-data.xsd"),  # nor what dot segments climb out to
])
def test_an_import_outside_an_allowed_url_prefix_is_refused_and_nothing_is_fetched(tmp_path, recorder, allowed, imported):
    peer, url = recorder
    allowed = allowed.format(url=url)
    imported = imported.format(url=url)
    path = tmp_path / "import.wsdl"
    path.write_text(_importing(imported))
    with pytest.raises(WsdlError) as info:
        SoapDriver(path, allow_imports=[allowed])
    assert "allow_imports" in str(info.value)
    assert peer.requests == []


def test_an_import_under_an_allowed_url_prefix_is_read(tmp_path):
    schema = b'<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:evil"/>'
    peer = SoapPeer(wsdl=WORLD_WSDL.read_text(), handlers={}, documents={"schemas/extra.xsd": schema}, validate=False)
    with serve(peer) as url:
        path = tmp_path / "import.wsdl"
        path.write_text(_importing(f"{url}/schemas/extra.xsd"))
        with SoapDriver(path, allow_imports=[f"{url}/schemas"]) as driver:
            assert driver.get_tool("FullCountryInfo") is not None
    assert [r.path for r in peer.requests] == ["/schemas/extra.xsd"]


def test_a_wsdl_served_over_http_may_import_from_its_own_origin_only(tmp_path):
    schema = (b'<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:extra">'
              b'<xsd:simpleType name="Code"><xsd:restriction base="xsd:string"><xsd:enumeration value="A"/>'
              b'</xsd:restriction></xsd:simpleType></xsd:schema>')
    text = WORLD_WSDL.read_text().replace(
        '<xsd:schema targetNamespace="urn:mcs:world" elementFormDefault="qualified">',
        '<xsd:schema targetNamespace="urn:mcs:world" elementFormDefault="qualified">'
        '<xsd:import namespace="urn:extra" schemaLocation="extra.xsd"/>')
    peer = SoapPeer(wsdl=text, handlers={}, documents={"extra.xsd": schema}, validate=False)
    with serve(peer) as url, SoapDriver(url + "/?wsdl") as driver:
        assert driver.get_tool("FullCountryInfo") is not None
    assert [r.path for r in peer.requests] == ["/?wsdl", "/extra.xsd"]


@pytest.mark.parametrize("use_async", [False, True])
def test_a_served_wsdl_cannot_send_calls_to_another_origin(recorder, use_async: bool):
    """A WSDL read over HTTP whose port address is another host (here the recorder, standing
    for 169.254.169.254): nothing is sent there, and no credential leaves, unless the
    configuration names that endpoint."""
    import asyncio

    target, target_url = recorder
    peer = SoapPeer(wsdl=WORLD_WSDL.read_text().replace("{address}", target_url + "/metadata"),
                    handlers={}, validate=False)
    with serve(peer) as url, SoapDriver(url + "/?wsdl", http_basic="user:origin-secret-4") as driver:
        add = "Calculator_CalculatorSoap_Add"
        with pytest.raises(ExecutionError, match=r"another origin.*endpoint option") as info:
            if use_async:
                asyncio.run(driver.acall_tool(add, {"a": 1, "b": 2}))
            else:
                driver.call_tool(add, {"a": 1, "b": 2})
        assert info.value.details["address"].startswith(target_url + "/metadata")
    assert target.requests == []
    assert [r.path for r in peer.requests] == ["/?wsdl"]


def test_a_served_wsdl_calls_its_own_origin_or_the_configured_endpoint(world: World):
    peer = SoapPeer(wsdl=WORLD_WSDL.read_text(), handlers={}, validate=False)
    with serve(peer) as url:
        with SoapDriver(url + "/?wsdl") as driver, pytest.raises(ExecutionError) as info:
            driver.call_tool("Calculator_CalculatorSoap_Add", {"a": 1, "b": 2})
        assert "another origin" not in info.value.message  # the WSDL's own origin: sent there
        assert [r.path for r in peer.requests if r.method == "POST"]
        with SoapDriver(url + "/?wsdl", endpoint=world.url) as driver:
            assert driver.call_tool("Calculator_CalculatorSoap_Add", {"a": 1, "b": 2}) == 3


def test_a_wsdl_read_from_localhost_calls_its_address_on_127_0_0_1():
    """The loopback hosts are one host for the origin rule: a WSDL fetched from localhost
    whose address names 127.0.0.1 on the same port is called, credentials included."""
    peer = world_peer()
    with serve(peer) as url:  # the WSDL's addresses are on http://127.0.0.1:PORT
        assert url.startswith("http://127.0.0.1:")
        with SoapDriver(url.replace("127.0.0.1", "localhost", 1) + "/?wsdl", http_basic="bob:hunter2") as driver:
            assert driver.call_tool("Calculator_CalculatorSoap_Add", {"a": 1, "b": 2}) == 3
    assert [(r.method, r.path) for r in peer.requests] == [("GET", "/?wsdl"), ("POST", "/calculator")]
    assert peer.requests[1].headers.get("authorization", "").startswith("Basic ")


def test_a_wsdl_read_from_localhost_cannot_send_calls_to_another_loopback_port(recorder):
    target, target_url = recorder
    peer = SoapPeer(wsdl=WORLD_WSDL.read_text().replace("{address}", target_url), handlers={}, validate=False)
    with (serve(peer) as url, SoapDriver(url.replace("127.0.0.1", "localhost", 1) + "/?wsdl") as driver,
          pytest.raises(ExecutionError, match=r"another origin.*endpoint option")):
        driver.call_tool("Calculator_CalculatorSoap_Add", {"a": 1, "b": 2})
    assert target.requests == []


def test_a_wsdl_read_from_localhost_may_import_from_127_0_0_1_on_its_port():
    schema = b'<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:extra"/>'
    text = WORLD_WSDL.read_text().replace(
        '<xsd:schema targetNamespace="urn:mcs:world" elementFormDefault="qualified">',
        '<xsd:schema targetNamespace="urn:mcs:world" elementFormDefault="qualified">'
        '<xsd:import namespace="urn:extra" schemaLocation="{address}/extra.xsd"/>')
    peer = SoapPeer(wsdl=text, handlers={}, documents={"extra.xsd": schema}, validate=False)
    with serve(peer) as url, SoapDriver(url.replace("127.0.0.1", "localhost", 1) + "/?wsdl") as driver:
        assert driver.get_tool("FullCountryInfo") is not None
    assert [r.path for r in peer.requests] == ["/?wsdl", "/extra.xsd"]


def test_a_wsdl_over_the_size_cap_is_refused(tmp_path):
    path = tmp_path / "big.wsdl"
    path.write_text(WORLD_WSDL.read_text() + " " * 200_000)
    with pytest.raises(WsdlError) as info:
        SoapDriver(path, max_wsdl_bytes=100_000)
    assert "big.wsdl" in str(info.value) and "larger than 100000 bytes" in str(info.value)


def test_xml_content_from_the_model_cannot_declare_a_dtd(world: World):
    with SoapDriver(world.wsdl) as driver, pytest.raises(InvalidInputError) as info:
        driver.call_tool("RegisterTraveller", {
            "traveller": {"id": 1, "name": "x", "extra": {
                "_value_1": '<!DOCTYPE n [<!ENTITY e SYSTEM "file:///etc/passwd">]><n>&e;</n>'}},
            "budget": None})
    assert "_value_1" in info.value.message or "DOCTYPE" in info.value.message
    assert world.peer.requests == []


def test_markup_in_a_string_argument_stays_text(world: World):
    with SoapDriver(world.wsdl) as driver:
        assert driver.call_tool("Echo", {"text": "</text><times>9</times>&amp;", "times": 1}) == \
            "</text><times>9</times>&amp;"


URL_REPLACEMENT_WSDL = """<?xml version="1.0"?>
<definitions xmlns="http://schemas.xmlsoap.org/wsdl/" xmlns:http="http://schemas.xmlsoap.org/wsdl/http/"
  xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:mime="http://schemas.xmlsoap.org/wsdl/mime/"
  xmlns:tns="urn:quotes" targetNamespace="urn:quotes">
  <message name="in"><part name="symbol" type="xsd:string"/><part name="day" type="xsd:int"/></message>
  <message name="out"><part name="body" type="xsd:string"/></message>
  <portType name="Quotes"><operation name="Quote"><input message="tns:in"/><output message="tns:out"/></operation></portType>
  <binding name="QuotesGet" type="tns:Quotes">
    <http:binding verb="GET"/>
    <operation name="Quote">
      <http:operation location="/quote/(symbol)/(day)"/>
      <input><http:urlReplacement/></input>
      <output><mime:content type="text/xml"/></output>
    </operation>
  </binding>
  <service name="QuoteService"><port name="Get" binding="tns:QuotesGet"><http:address location="http://127.0.0.1:9/api"/></port></service>
</definitions>"""


@pytest.mark.parametrize(("symbol", "path"), [
    ("../../admin?delete=1#", "/api/quote/..%2F..%2Fadmin%3Fdelete%3D1%23/7"),
    ("..", "/api/quote/%2E%2E/7"),
    ("a/b&c=d", "/api/quote/a%2Fb%26c%3Dd/7"),
    ("x%2F..", "/api/quote/x%252F../7"),
    ("(day)", "/api/quote/%28day%29/7"),
])
def test_an_http_binding_puts_each_url_replacement_value_in_one_path_segment(tmp_path, recorder, symbol, path):
    peer, url = recorder
    wsdl = tmp_path / "quotes.wsdl"
    wsdl.write_text(URL_REPLACEMENT_WSDL)
    with SoapDriver(wsdl, endpoint=url + "/api") as driver, pytest.raises(ExecutionError):  # the recorder answers 404
        driver.call_tool("Quote", {"symbol": symbol, "day": 7})
    assert [r.path for r in peer.requests] == [path]


HIDDEN = "\u200b\u202e\U000e0049\U000e0047\U000e004e\U000e004f\U000e0052\U000e0045"  # zero-width, bidi, "IGNORE" in tag characters


def test_documentation_carries_no_invisible_characters_into_descriptions(tmp_path):
    text = URL_REPLACEMENT_WSDL.replace(
        '<operation name="Quote"><input',
        f'<operation name="Quote"><documentation>Quotes a share{HIDDEN}.</documentation><input')
    path = tmp_path / "hidden.wsdl"
    path.write_text(text, encoding="utf-8")
    with SoapDriver(path, cache=False) as driver:
        tool = driver.get_tool("Quote")
        shown = [tool.description, driver.get_function_description()]
    assert "Quotes a share." in shown[0]
    assert [[f"U+{ord(c):04X}" for c in text if unicodedata.category(c) == "Cf"] for text in shown] == [[], []]


def test_a_wsdl_server_dripping_its_headers_is_cut_at_load_timeout_as_a_whole():
    with HostilePeer() as peer:
        started = time.monotonic()
        with pytest.raises(WsdlError, match="not read within 1 s"):
            SoapDriver(peer.url + "/drip-headers", load_timeout=1.0, cache=False)
        assert time.monotonic() - started < 3.0  # each header byte came within httpx's per-read timeout


@pytest.mark.parametrize("path", ["/bomb-gzip", "/bomb-deflate", "/endless"])
def test_a_wsdl_larger_than_max_wsdl_bytes_once_inflated_is_refused(path: str):
    with HostilePeer() as peer, pytest.raises(WsdlError, match="max_wsdl_bytes"):
        SoapDriver(peer.url + path, max_wsdl_bytes=1_000_000, cache=False)


# -------------------------------------------------------------- credentials echoed back

BASIC = ("bob", "hunter2/&x")
API_KEY = "k3y/with+plus&more"
WSSE_PASSWORD = "pa&ss<w>rd 2"


def _forms(*credentials: str) -> list[str]:
    """Every form of ``credentials`` a careless server may echo, and the XML-escaped ones."""
    from urllib.parse import quote, quote_plus
    from xml.sax.saxutils import escape

    from mcs.redaction import credential_forms

    forms = set(credential_forms(credentials))
    forms |= {quote(f, safe="") for f in forms} | {quote_plus(f) for f in forms}
    return sorted(forms | {escape(f) for f in forms} | {escape(f, {'"': "&quot;"}) for f in forms})


def _texts(value) -> str:
    if isinstance(value, dict):
        return " ".join(_texts(k) + " " + _texts(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return " ".join(_texts(v) for v in value)
    return str(value)


def _told(error: ExecutionError) -> str:
    """Everything the model may read of ``error``: its message and details."""
    return error.message + " " + _texts(error.details)


def _call(driver: SoapDriver, tool: str, use_async: bool):
    import asyncio

    arguments = {"text": "hi", "times": 1} if tool == "Echo" else {"a": 1, "b": 2}
    if use_async:
        async def run():
            try:
                return await driver.acall_tool(tool, arguments)
            finally:
                await driver.aclose()
        return asyncio.run(run())
    return driver.call_tool(tool, arguments)


@pytest.fixture
def echo_peer():
    from soap_world import EchoPeer

    peer = EchoPeer()
    with serve(peer) as url:
        yield peer, url


def _basic_header() -> str:
    import base64

    return "Basic " + base64.b64encode(":".join(BASIC).encode()).decode()


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("tool", ["Calculator_CalculatorSoap_Add", "Calculator_CalculatorSoap12_Add"],
                         ids=["soap11", "soap12"])
def test_credentials_echoed_in_a_fault_never_reach_the_model(echo_peer, tool, use_async):
    peer, url = echo_peer
    with SoapDriver(WORLD_WSDL, endpoint=url + "/fault", http_basic=BASIC, http_headers={"X-Api-Key": API_KEY},
                    wsse_username="alice", wsse_password=WSSE_PASSWORD) as driver, \
            pytest.raises(ExecutionError) as info:
        _call(driver, tool, use_async)
    told = _told(info.value)
    assert "SOAP fault" in told and "[redacted]" in info.value.details["fault"]["string"]
    assert "[redacted]" in info.value.details["fault"]["actor"]
    assert "[redacted]" in info.value.details["fault"]["detail"]
    assert [form for form in _forms(_basic_header(), API_KEY, WSSE_PASSWORD) if form in told] == []
    assert API_KEY in peer.requests[-1].headers["x-api-key"]  # the echo was of what was really sent


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_a_key_in_a_configured_soap_header_echoed_in_a_fault_never_reaches_the_model(echo_peer, use_async):
    _, url = echo_peer
    header = '<a:Auth xmlns:a="urn:auth"><a:ApiKey>soap-key-4242</a:ApiKey></a:Auth>'
    with SoapDriver(WORLD_WSDL, endpoint=url + "/fault", soap_headers=[header]) as driver, \
            pytest.raises(ExecutionError) as info:
        _call(driver, "Calculator_CalculatorSoap_Add", use_async)
    told = _told(info.value)
    assert "header [redacted]" in info.value.details["fault"]["string"]
    assert "soap-key-4242" not in told


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_credentials_echoed_in_an_error_page_never_reach_the_model(echo_peer, use_async):
    _, url = echo_peer
    with SoapDriver(WORLD_WSDL, endpoint=url + "/page", http_basic=BASIC, http_headers={"X-Api-Key": API_KEY},
                    wsse_username="alice", wsse_password=WSSE_PASSWORD) as driver, \
            pytest.raises(ExecutionError) as info:
        _call(driver, "Calculator_CalculatorSoap_Add", use_async)
    told = _told(info.value)
    assert info.value.details["status"] == 401 and "[redacted]" in info.value.details["body"]
    assert [form for form in _forms(_basic_header(), API_KEY, WSSE_PASSWORD) if form in told] == []


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("path", ["/refs.html", "/refs.xml"])
def test_credentials_written_as_character_references_never_reach_the_model(echo_peer, path, use_async):
    _, url = echo_peer
    with SoapDriver(WORLD_WSDL, endpoint=url + path, http_headers={"X-Api-Key": API_KEY},
                    wsse_username="alice", wsse_password=WSSE_PASSWORD) as driver, \
            pytest.raises(ExecutionError) as info:
        _call(driver, "Calculator_CalculatorSoap_Add", use_async)
    told = _told(info.value)
    assert "[redacted]" in told
    assert [form for form in _forms(API_KEY, WSSE_PASSWORD) if form in told] == []
    assert "&#" not in told  # nor the references themselves


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("path", ["/tag", "/element"])
def test_a_credential_echoed_as_an_element_name_never_reaches_the_model(echo_peer, path, use_async):
    _, url = echo_peer
    with SoapDriver(WORLD_WSDL, endpoint=url + path, http_headers={"X-Api-Key": "ak-5150-secret"}) as driver, \
            pytest.raises(ExecutionError) as info:
        _call(driver, "Calculator_CalculatorSoap_Add", use_async)
    told = _told(info.value)
    assert "could not be read as a SOAP message" in told and "[redacted]" in told
    assert "ak-5150-secret" not in told


@pytest.fixture
def status_echo():
    """A raw HTTP peer answering with a broken status line that quotes the request's headers."""
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(10)

    def serve_once() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                request = conn.recv(65536)
                quoted = b" ".join(line for line in request.split(b"\r\n")
                                   if line.lower().startswith((b"authorization:", b"x-api-key:")))
                conn.sendall(b"HTTP/1.1 401 " + quoted + b"\x00\r\n\r\n")

    thread = threading.Thread(target=serve_once, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    with contextlib.suppress(OSError):
        listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept() (close alone does not)
    listener.close()
    thread.join(5)


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_credentials_echoed_in_a_broken_status_line_never_reach_the_model(status_echo, use_async):
    with SoapDriver(WORLD_WSDL, endpoint=status_echo, http_basic=BASIC, http_headers={"X-Api-Key": API_KEY},
                    retries=0) as driver, pytest.raises(ExecutionError) as info:
        _call(driver, "Calculator_CalculatorSoap_Add", use_async)
    told = _told(info.value)
    assert "could not reach the service" in told and "[redacted]" in told
    assert [form for form in _forms(_basic_header(), API_KEY) if form in told] == []


def test_a_successful_answer_that_echoes_a_credential_is_data(echo_peer):
    _, url = echo_peer
    with SoapDriver(WORLD_WSDL, endpoint=url + "/ok", http_headers={"X-Api-Key": API_KEY}) as driver:
        assert driver.call_tool("Echo", {"text": "hi", "times": 1}) == API_KEY


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_credentials_are_in_no_record_the_http_libraries_or_zeep_log(echo_peer, caplog, use_async):
    _, url = echo_peer
    log_everything(caplog)
    with SoapDriver(WORLD_WSDL, endpoint=url + "/page", http_basic=BASIC, http_headers={"X-Api-Key": API_KEY},
                    wsse_username="alice", wsse_password=WSSE_PASSWORD) as driver, pytest.raises(ExecutionError):
        _call(driver, "Calculator_CalculatorSoap_Add", use_async)
    assert caplog.records
    assert quoting(caplog.records, *_forms(_basic_header(), API_KEY, WSSE_PASSWORD)) == []
