"""Calls against the loopback SOAP peer: SOAP 1.1 and 1.2, rpc, results as JSON, faults,
WS-Security checked by the server, HTTP auth and headers, retries, deadlines, caps."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest
from lxml import etree
from mcs_soap import SoapDriver
from mcs_soap.peer import PeerFault
from soap_world import NS, World

from mcs.errors import ExecutionError, InvalidInputError, ToolTimeoutError


@pytest.fixture
def driver(world: World):
    with SoapDriver(world.wsdl) as d:
        yield d


def _bodies(world: World) -> list[etree._Element]:
    return [etree.fromstring(r.body) for r in world.peer.requests if r.method == "POST"]


def test_the_same_operation_on_soap_11_and_12_ports_gets_port_qualified_names(driver, world):
    names = {t.name for t in driver.list_tools()}
    assert {"Calculator_CalculatorSoap_Add", "Calculator_CalculatorSoap12_Add", "FullCountryInfo", "Echo"} <= names
    assert "Add" not in names
    assert driver.call_tool("Calculator_CalculatorSoap_Add", {"a": 2, "b": 40}) == 42
    assert driver.call_tool("Calculator_CalculatorSoap12_Add", {"a": 2, "b": 40}) == 42
    first, second = world.peer.requests
    assert first.headers["content-type"].startswith("text/xml") and first.headers["soapaction"] == '"urn:mcs:world/Add"'
    assert second.headers["content-type"].startswith("application/soap+xml")
    assert etree.QName(etree.fromstring(second.body)).namespace == "http://www.w3.org/2003/05/soap-envelope"


def test_a_wrapped_document_operation_takes_the_inner_fields_and_returns_nested_json(driver):
    result = driver.process_llm_response('{"tool": "FullCountryInfo", "arguments": {"sCountryISOCode": "KE"}}')
    assert result == {
        "sISOCode": "KE", "sName": "Kenya", "sCapitalCity": "Nairobi", "sContinentCode": "AF",
        "Languages": {"tLanguage": [{"sISOCode": "SW", "sName": "Swahili"}, {"sISOCode": "EN", "sName": "English"}]},
        "Currency": {"sISOCode": "KES", "sName": "Shilling"}, "Population": 54000000, "Founded": "1963-12-12",
    }
    json.dumps(result)


def test_dates_durations_base64_and_nil_come_back_json_safe(driver):
    result = driver.call_tool("Holidays", {"sCountryISOCode": "NL", "from": "2024-01-01", "until": "2024-12-31"})
    assert result[0] == {"day": "2024-04-27", "name": "King's Day", "startsAt": "2024-04-27T00:00:00+02:00",
                         "length": "P1D", "logo": "iVBORw==", "note": None}
    assert result[1]["length"] == "PT12H" and result[1]["logo"] is None


def test_decimals_are_sent_as_given_and_returned_as_strings(driver, world):
    assert driver.call_tool("Calculator_CalculatorSoap_Divide", {"dividend": "10.00", "divisor": 4}) == "2.5000000000"
    sent = _bodies(world)[0]
    assert sent.findtext(f".//{{{NS}}}dividend") == "10.00"


def test_integers_beyond_53_bits_are_strings_and_extension_attributes_and_any_are_sent(driver, world):
    result = driver.call_tool("RegisterTraveller", {
        "traveller": {"id": 7, "name": "Ann", "tier": "gold", "visited": ["NL", "JP"],
                      "extra": {"_value_1": "<note>vegetarian</note>"}},
        "budget": None, "itinerary": {"value": 1, "child": [{"value": 2, "child": [{"value": 3}]}]},
    })
    assert result == {"summary": "Ann (id 7, tier gold) visited NL,JP; extra note", "stops": 3,
                      "budget": None, "ticket": str(2**63 + 5)}
    traveller = _bodies(world)[0].find(f".//{{{NS}}}traveller")
    assert traveller.get("id") == "7"


def test_a_choice_sends_the_one_alternative_given(driver, world):
    assert driver.call_tool("FindCountry", {"byName": "Japan"}) == "JP"
    sent = _bodies(world)[0].find(f".//{{{NS}}}FindCountry")
    assert [etree.QName(c).localname for c in sent] == ["byName"]


def test_a_choice_with_both_alternatives_is_refused_before_sending(driver, world):
    with pytest.raises(InvalidInputError):
        driver.call_tool("FindCountry", {"byName": "Japan", "byCode": "JP"})
    assert world.peer.requests == []


def test_an_rpc_literal_operation_takes_its_parts(driver):
    assert driver.call_tool("Echo", {"text": "hi", "times": 3}) == "hi hi hi"


@pytest.mark.parametrize(("tool", "code", "status"), [
    ("Calculator_CalculatorSoap_Divide", "soap:Client", 500),
    ("Calculator_CalculatorSoap12_Divide", "soap:Sender", 400),
])
def test_a_soap_fault_is_an_execution_error_with_code_string_actor_and_detail(driver, world, tool, code, status):
    with pytest.raises(ExecutionError) as info:
        driver.call_tool(tool, {"dividend": 1, "divisor": 0})
    fault = info.value.details["fault"]
    assert fault["code"] == code
    assert fault["string"] == "Division by zero"
    assert fault["actor"] == "urn:mcs:world:calculator"
    assert "the divisor is 0" in fault["detail"]
    assert "Division by zero" in info.value.message and "Traceback" not in info.value.message


@pytest.mark.parametrize("tool", ["Calculator_CalculatorSoap_Divide", "Calculator_CalculatorSoap12_Divide"])
def test_the_async_path_reports_a_fault_with_its_actor_or_role(world, tool):
    async def run():
        async with SoapDriver(world.wsdl) as driver:
            with pytest.raises(ExecutionError) as info:
                await driver.acall_tool(tool, {"dividend": 1, "divisor": 0})
        return info.value

    error = asyncio.run(run())
    assert error.details["fault"]["actor"] == "urn:mcs:world:calculator"
    assert "actor urn:mcs:world:calculator" in error.message


async def test_async_with_closes_the_pool_of_the_running_loop(world):
    async with SoapDriver(world.wsdl) as driver:
        assert await driver.acall_tool("Calculator_CalculatorSoap12_Add", {"a": 1, "b": 2}) == 3
        entry = driver._aclients.current()
        assert entry is not None and not entry[1].is_closed
    assert entry[1].is_closed and len(driver._aclients) == 0


def test_the_async_path_gives_the_same_results(world):
    async def run():
        async with SoapDriver(world.wsdl) as driver:
            first = await driver.acall_tool("Calculator_CalculatorSoap12_Add", {"a": 1, "b": 2})
            second = await driver.aprocess_llm_response('{"tool": "Echo", "arguments": {"text": "x", "times": 2}}')
            with pytest.raises(ExecutionError):
                await driver.acall_tool("Calculator_CalculatorSoap_Divide", {"dividend": 1, "divisor": 0})
            return first, second

    assert asyncio.run(run()) == (3, "x x")


def test_a_driver_called_from_many_asyncio_runs_keeps_no_pool_of_a_finished_loop(world):
    with SoapDriver(world.wsdl) as driver:
        for number in range(20):  # one loop per call, as sync code calling async code often does
            assert asyncio.run(driver.acall_tool("Calculator_CalculatorSoap12_Add", {"a": number, "b": 1})) == number + 1
            assert len(driver._aclients) == 0  # the loop's shutdown closed its pool and let it go


def test_connections_are_reused_across_calls(driver, world):
    for _ in range(3):
        driver.call_tool("Calculator_CalculatorSoap_Add", {"a": 1, "b": 1})
    assert len(world.peer.requests) == 3
    assert all(r.headers.get("connection", "keep-alive") != "close" for r in world.peer.requests)


@pytest.mark.parametrize("digest", [False, True], ids=["text", "digest"])
def test_ws_security_username_token_is_checked_by_the_server(world, digest):
    endpoint = {"CalculatorSoap": world.url + "/secure/calculator"}
    with SoapDriver(world.wsdl, endpoint=endpoint, wsse_username="alice", wsse_password="s3cret",
                    wsse_digest=digest) as driver:
        assert driver.call_tool("Calculator_CalculatorSoap_Add", {"a": 1, "b": 2}) == 3
        assert driver.call_tool("Calculator_CalculatorSoap_Add", {"a": 1, "b": 2}) == 3  # a fresh nonce each time
    body = world.peer.requests[-1].body
    assert (b"PasswordDigest" in body) is digest
    assert (b"s3cret" in body) is not digest


def test_a_wrong_ws_security_password_is_a_fault_and_no_credential_is_echoed(world):
    endpoint = {"CalculatorSoap": world.url + "/secure/calculator"}
    with SoapDriver(world.wsdl, endpoint=endpoint, wsse_username="alice", wsse_password="Pa55-guess",
                    wsse_digest=True) as driver, pytest.raises(ExecutionError) as info:
        driver.call_tool("Calculator_CalculatorSoap_Add", {"a": 1, "b": 2})
    assert "FailedAuthentication" in info.value.message
    assert "Pa55-guess" not in info.value.message


def test_http_basic_auth_and_static_headers_are_sent(world):
    with SoapDriver(world.wsdl, endpoint=world.url + "/basic/calculator", http_basic="bob:hunter2",
                    http_headers={"X-Tenant": "acme"}) as driver:
        assert driver.call_tool("Calculator_CalculatorSoap_Add", {"a": 2, "b": 2}) == 4
    assert world.peer.requests[-1].headers["x-tenant"] == "acme"
    with SoapDriver(world.wsdl, endpoint=world.url + "/basic/calculator") as driver, \
            pytest.raises(ExecutionError) as info:
        driver.call_tool("Calculator_CalculatorSoap_Add", {"a": 2, "b": 2})
    assert info.value.details["status"] == 401


def test_configured_soap_headers_are_sent_on_every_call(world):
    header = '<t:Trace xmlns:t="urn:trace">abc</t:Trace>'
    with SoapDriver(world.wsdl, soap_headers=[header]) as driver:
        driver.call_tool("Calculator_CalculatorSoap_Add", {"a": 1, "b": 1})
    sent = etree.fromstring(world.peer.requests[-1].body)
    assert sent.findtext(".//{urn:trace}Trace") == "abc"


def test_retries_happen_only_for_operations_configured_idempotent(world):
    world.peer.raw["/flaky"] = (503, "text/plain", b"busy")
    with SoapDriver(world.wsdl, endpoint=world.url + "/flaky", backoff=0.01, retries=2) as driver, \
            pytest.raises(ExecutionError) as info:
        driver.call_tool("Calculator_CalculatorSoap_Add", {"a": 1, "b": 1})
    assert info.value.details["status"] == 503
    assert len(world.peer.requests) == 1
    world.peer.requests.clear()
    with SoapDriver(world.wsdl, endpoint=world.url + "/flaky", backoff=0.01, retries=2,
                    idempotent=["Add"]) as driver:
        assert driver.get_tool("Calculator_CalculatorSoap_Add").annotations["idempotentHint"] is True
        with pytest.raises(ExecutionError):
            driver.call_tool("Calculator_CalculatorSoap_Add", {"a": 1, "b": 1})
    assert len(world.peer.requests) == 3


def test_a_slow_service_times_out_within_the_call_deadline(world):
    release = threading.Event()

    def slow(request, context):
        release.wait(10)
        raise PeerFault("released")

    world.peer.handlers["Add"] = slow
    try:
        with SoapDriver(world.wsdl, timeout=0.5) as driver, pytest.raises(ToolTimeoutError):
            driver.call_tool("Calculator_CalculatorSoap_Add", {"a": 1, "b": 1})
    finally:
        release.set()
        from soap_world import add

        world.peer.handlers["Add"] = add


def test_a_dead_service_is_a_clear_error_and_the_next_call_works(world):
    with SoapDriver(world.wsdl, endpoint="http://127.0.0.1:9/x", retries=0) as driver:
        with pytest.raises(ExecutionError) as info:
            driver.call_tool("Calculator_CalculatorSoap_Add", {"a": 1, "b": 1})
        assert "could not reach the service" in info.value.message
    with SoapDriver(world.wsdl) as driver:
        assert driver.call_tool("Calculator_CalculatorSoap_Add", {"a": 1, "b": 1}) == 2


def test_a_large_result_is_cut_with_a_marker(world):
    with SoapDriver(world.wsdl, max_result_chars=60) as driver:
        result = driver.call_tool("FullCountryInfo", {"sCountryISOCode": "NL"})
    assert "[truncated]" in result
    assert len(json.dumps(result)) < 400


def test_a_non_soap_error_page_names_the_http_status(world):
    with SoapDriver(world.wsdl, endpoint=world.url + "/nowhere") as driver, pytest.raises(ExecutionError) as info:
        world.peer.raw["/nowhere"] = (404, "text/html", b"<html><body>Not Found</body></html>")
        driver.call_tool("Calculator_CalculatorSoap_Add", {"a": 1, "b": 1})
    assert "HTTP 404" in info.value.message


def test_the_endpoint_cannot_come_from_the_model(driver, world):
    with pytest.raises(InvalidInputError):
        driver.call_tool("Calculator_CalculatorSoap_Add", {"a": 1, "b": 1, "endpoint": "http://169.254.169.254/"})
    assert world.peer.requests == []
