"""SECURITY.md C1-C3 and D1-D8: the GraphQL, SOAP, gRPC and CAN drivers against real peers
on loopback (a graphql-core server, the SOAP peer the driver ships, the gRPC lab server,
python-can's virtual bus, mosquitto). Each driver's own suite goes through its case in
depth; here each case holds once, end to end.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from mcs.errors import (
    ErrorCode,
    ExecutionError,
    InvalidInputError,
    PolicyDeniedError,
    ToolCallError,
    ToolTimeoutError,
)

TESTS = Path(__file__).resolve().parents[1]


# ----------------------------------------------------------------------------- C1

SDL = """
type Book { id: ID! title: String! }
type Query { book(title: String!): Book  books: [Book!]! }
type Mutation { deleteAll: Int! }
"""


@pytest.fixture(scope="module")
def graphql_peer() -> Iterator[tuple[str, list[dict[str, Any]], list[int]]]:
    pytest.importorskip("mcs_graphql", reason="C1 needs the GraphQL driver (pip install mcs-framework-graphql)")
    from graphql import build_schema, graphql_sync

    schema = build_schema(SDL)
    bodies: list[dict[str, Any]] = []
    deleted: list[int] = []

    class Root:
        def book(self, info: Any, title: str) -> dict[str, str]:
            return {"id": "1", "title": title}

        def books(self, info: Any) -> list[dict[str, str]]:
            return [{"id": "1", "title": "Dune"}]

        def deleteAll(self, info: Any) -> int:
            deleted.append(1)
            return 1

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            bodies.append(body)
            result = graphql_sync(schema, body["query"], root_value=Root(),
                                  variable_values=body.get("variables"), operation_name=body.get("operationName"))
            data = json.dumps(result.formatted).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/graphql", bodies, deleted
    finally:
        server.shutdown()
        server.server_close()


C1_INJECTION = 'x") { deleteAll } #'


def test_c1_an_argument_travels_only_in_variables_and_the_document_is_the_configured_one(
        graphql_peer: tuple[str, list[dict[str, Any]], list[int]], tmp_path: Path) -> None:
    from mcs_graphql import GraphQLDriver

    url, bodies, deleted = graphql_peer
    persisted = tmp_path / "ops.graphql"
    persisted.write_text("query FindBook($title: String!) { book(title: $title) { id title } }\n")
    with GraphQLDriver(url, schema=SDL, operations=persisted, generate=False) as driver:
        bodies.clear()
        result = driver.call_tool("FindBook", {"title": C1_INJECTION})
    assert result == {"book": {"id": "1", "title": C1_INJECTION}}
    [body] = bodies
    assert body["query"] == persisted.read_text()  # byte for byte
    assert body["variables"] == {"title": C1_INJECTION} and C1_INJECTION not in body["query"]
    assert deleted == []


@pytest.mark.parametrize(("document", "expected"), [
    ("query { " + " ".join(f"a{i}: books {{ id }}" for i in range(200)) + " }", "aliases"),
    ("mutation { deleteAll }", "mutation"),
    ("query Q { books { id } } query R { books { id } }", "holds 2 operations"),  # batching
])
def test_c1_free_form_documents_over_the_limits_are_refused_before_sending(
        graphql_peer: tuple[str, list[dict[str, Any]], list[int]], document: str, expected: str) -> None:
    from mcs_graphql import GraphQLDriver

    url, bodies, deleted = graphql_peer
    with GraphQLDriver(url, schema=SDL, freeform=True) as driver:
        bodies.clear()
        with pytest.raises(InvalidInputError, match=expected):
            driver.call_tool("execute", {"query": document})
    assert bodies == [] and deleted == []


# ----------------------------------------------------------------------------- C2

XXE = b"""<?xml version="1.0"?>
<!DOCTYPE foo [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>
<AddResponse xmlns="urn:mcs:demo:calculator"><AddResult>&xxe;</AddResult></AddResponse></soap:Body></soap:Envelope>"""
LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
<!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
<!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
<!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">]>
<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/"><soap:Body>
<AddResponse xmlns="urn:mcs:demo:calculator"><AddResult>&lol6;</AddResult></AddResponse></soap:Body></soap:Envelope>"""


@pytest.fixture(scope="module")
def soap_peers() -> Iterator[tuple[Any, str, Any, str, Path]]:
    pytest.importorskip("mcs_soap", reason="C2 needs the SOAP driver (pip install mcs-framework-soap)")
    import mcs_soap
    from mcs_soap.peer import SoapPeer, serve

    wsdl = Path(mcs_soap.__file__).with_name("calculator.wsdl").read_text()
    peer = SoapPeer(wsdl=wsdl, handlers={}, validate=False)
    metadata = SoapPeer(wsdl=wsdl, handlers={}, validate=False)  # stands for 169.254.169.254
    with serve(peer) as url, serve(metadata) as metadata_url:
        yield peer, url, metadata, metadata_url, Path(mcs_soap.__file__).with_name("calculator.wsdl")


@pytest.mark.parametrize("attack", ["xxe", "laughs", "external-entity", "wsdl-import"])
def test_c2_dtds_entities_and_external_fetches_are_refused_within_budget(
        soap_peers: tuple[Any, str, Any, str, Path], tmp_path: Path, attack: str) -> None:
    from mcs_soap import SoapDriver, WsdlError

    peer, url, metadata, metadata_url, wsdl = soap_peers
    metadata.requests.clear()
    text = wsdl.read_text().replace("{address}", url + "/evil")
    started = time.monotonic()
    if attack == "wsdl-import":
        evil = tmp_path / "import.wsdl"
        evil.write_text(text.replace(
            '<xsd:schema targetNamespace="urn:mcs:demo:calculator" elementFormDefault="qualified">',
            '<xsd:schema targetNamespace="urn:mcs:demo:calculator" elementFormDefault="qualified">'
            f'<xsd:import namespace="urn:evil" schemaLocation="{metadata_url}/latest/meta-data.xsd"/>'))
        with pytest.raises(WsdlError):
            SoapDriver(evil)
    else:
        body = {"xxe": XXE, "laughs": LAUGHS,
                "external-entity": XXE.replace(b"file:///etc/passwd", f"{metadata_url}/stolen".encode())}[attack]
        peer.raw["/evil"] = (200, "text/xml", body)
        local = tmp_path / "calculator.wsdl"
        local.write_text(text)
        with SoapDriver(local) as driver, pytest.raises(ExecutionError) as info:
            driver.call_tool("Add", {"intA": 1, "intB": 2})
        assert "root:" not in info.value.message
    assert time.monotonic() - started < 5
    assert metadata.requests == []  # nothing was fetched from "the metadata service"


# ----------------------------------------------------------------------------- C3


def test_c3_limits_map_to_errors_with_a_retry_flag_and_only_idempotent_calls_are_retried(grpc_lab: Any) -> None:
    from mcs_grpc import GrpcDriver

    grpc_lab.state.reset()
    with GrpcDriver(grpc_lab.target, max_receive_message_bytes=1024, timeout=0.3, retries=3) as driver:
        with pytest.raises(ExecutionError) as big:
            driver.call_tool("Lab_Big", {"bytes": 4096})
        with pytest.raises(ToolTimeoutError) as slow:
            driver.call_tool("Lab_Slow", {"seconds": 2})
    assert big.value.details["grpc_code"] == "RESOURCE_EXHAUSTED" and big.value.details["retryable"] is False
    assert slow.value.details["grpc_code"] == "DEADLINE_EXCEEDED" and slow.value.details["retryable"] is False
    assert grpc_lab.state.calls["Slow"] == 1  # the non-idempotent call was not retried


# ----------------------------------------------------------------------------- D1, D2


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Any]:
    """A real mosquitto broker whose log shows what reached it (the MQTT tests' own broker)."""
    pytest.importorskip("mcs_mqtt", reason="D1, D2 need the MQTT driver (pip install mcs-framework-mqtt)")
    sys.path.insert(0, str(TESTS / "drivers" / "mqtt"))
    from mqtt_broker import mosquitto_binary, running_mosquitto

    if mosquitto_binary() is None:
        pytest.skip("mosquitto is not installed (make test installs it through scripts/system-deps.sh)")
    with running_mosquitto(tmp_path / "broker") as running:
        yield running


def _plant(broker: Any, **options: Any) -> Any:
    from mcs_mqtt import MqttDriver

    return MqttDriver(TESTS / "drivers" / "mqtt" / "specs" / "plant.yaml", host="127.0.0.1", port=broker.port,
                      timeout=10, **options)


@pytest.mark.parametrize("line", ["+", "#", "a/b", "line\x00x", "$SYS", "x" * 70_000, "line2"])
def test_d1_topics_outside_one_level_or_the_allow_list_never_reach_the_broker(broker: Any, line: str) -> None:
    with _plant(broker, publish_allow=["plant/line1/*"]) as driver:
        with pytest.raises((InvalidInputError, PolicyDeniedError)):
            driver.call_tool("valve_setpoint", {"line": line, "payload": {"setpoint_c": 20}})
        assert driver.call_tool("valve_setpoint", {"line": "line1", "payload": {"setpoint_c": 20}})["published"]
    log = broker.log()
    assert log.count("Received PUBLISH") == 1 and "'plant/line1/valve'" in log


@pytest.mark.parametrize("arguments", [
    {"payload": {"setpoint_c": 9999}}, {"payload": {"setpoint_c": "hot"}}, {"payload": {"setpoint_c": 20, "x": 1}},
    {"payload": {"setpoint_c": 20}, "retain": True}, {"payload": {"setpoint_c": 20}, "qos": 2},
])
def test_d2_payloads_and_flags_outside_the_policy_are_refused_and_nothing_is_published(
        broker: Any, arguments: dict[str, Any]) -> None:
    with _plant(broker) as driver:
        with pytest.raises(InvalidInputError):
            driver.call_tool("valve_setpoint", {"line": "line1", **arguments})
        driver.call_tool("valve_setpoint", {"line": "line1", "payload": {"setpoint_c": 20.5}})
    log = broker.log()
    assert log.count("Received PUBLISH") == 1 and "(d0, q1, r0, m1, 'plant/line1/valve'" in log


# ----------------------------------------------------------------------------- D3-D8

CRUISE = {"TargetSpeed": 80, "Mode": "Active", "Acceleration": 0.5}


@pytest.fixture
def bus() -> Iterator[tuple[str, Any]]:
    can = pytest.importorskip("can", reason="D3-D8 need the CAN driver (pip install mcs-framework-can)")
    pytest.importorskip("mcs_can", reason="D3-D8 need the CAN driver (pip install mcs-framework-can)")
    channel = f"mcs-security-{uuid.uuid4().hex[:12]}"
    sniffer = can.Bus(interface="virtual", channel=channel)
    try:
        yield channel, sniffer
    finally:
        sniffer.shutdown()


def _frames(sniffer: Any) -> list[Any]:
    frames = []
    while (frame := sniffer.recv(timeout=0)) is not None:
        frames.append(frame)
    return frames


def _can(channel: str, **options: Any) -> Any:
    import mcs_can
    from mcs_can import CanDriver

    return CanDriver(Path(mcs_can.__file__).with_name("demo.dbc"), channel=channel, **options)


def _send(driver: Any, tool: str, **arguments: Any) -> Any:
    return driver.process_llm_response(json.dumps({"tool": tool, "arguments": arguments}))


def test_d3_only_allow_listed_frames_reach_the_bus(bus: tuple[str, Any]) -> None:
    channel, sniffer = bus
    with _can(channel, allow_send=["CruiseCommand"], send_tools="all", watchdog_timeout=None) as driver:
        driver.arm()
        _send(driver, "send_CruiseCommand", **CRUISE)
        with pytest.raises(PolicyDeniedError, match="allow-list"):
            _send(driver, "send_SteeringTorque", Torque=1)
        with pytest.raises(InvalidInputError):  # no argument can name another id or length
            _send(driver, "send_CruiseCommand", **CRUISE, arbitration_id=0x7DF, dlc=64)
    assert [f.arbitration_id for f in _frames(sniffer)] == [0x200]


@pytest.mark.parametrize("value", [300, -300])
def test_d4_values_beyond_their_limit_and_jumps_beyond_the_step_are_refused_in_both_signs(
        bus: tuple[str, Any], value: int) -> None:
    from mcs_can import SignalLimit

    channel, sniffer = bus
    limits = {"SteeringTorque.Torque": SignalLimit(minimum=-50, maximum=50, max_step=10)}
    with _can(channel, allow_send=["SteeringTorque"], limits=limits, watchdog_timeout=None,
              tx_rate_limit=None) as driver:
        driver.arm()
        with pytest.raises(ToolCallError) as beyond:
            _send(driver, "send_SteeringTorque", Torque=value)
        with pytest.raises(PolicyDeniedError, match="at most 10 per send"):
            _send(driver, "send_SteeringTorque", Torque=50 if value > 0 else -50)
    assert beyond.value.code in (ErrorCode.INVALID_INPUT, ErrorCode.POLICY_DENIED)
    assert _frames(sniffer) == []


def test_d4_the_rate_limiter_refuses_beyond_its_budget_and_does_not_queue(bus: tuple[str, Any]) -> None:
    channel, sniffer = bus
    with _can(channel, allow_send=["CruiseCommand"], tx_rate_limit=1, tx_burst=5, watchdog_timeout=None) as driver:
        driver.arm()
        outcomes = []
        started = time.monotonic()
        for _ in range(20):
            try:
                _send(driver, "send_CruiseCommand", **CRUISE)
                outcomes.append("sent")
            except PolicyDeniedError:
                outcomes.append("refused")
        elapsed = time.monotonic() - started
    # the burst, plus what one frame a second refilled however slow the machine was
    assert outcomes.count("sent") <= 5 + int(elapsed) and "refused" in outcomes
    assert len(_frames(sniffer)) == outcomes.count("sent")


def test_d5_nothing_is_sent_until_the_operator_arms_and_no_model_output_can_arm(bus: tuple[str, Any]) -> None:
    channel, sniffer = bus
    with _can(channel, allow_send=["CruiseCommand"], on_unknown_tool="error") as driver:
        with pytest.raises(PolicyDeniedError, match="not armed"):
            _send(driver, "send_CruiseCommand", **CRUISE)
        with pytest.raises(ToolCallError):
            driver.process_llm_response('{"tool": "arm", "arguments": {}}')
        assert driver.armed is False
    assert _frames(sniffer) == []


def test_d6_a_dry_run_returns_the_exact_frame_and_sends_nothing(bus: tuple[str, Any]) -> None:
    channel, sniffer = bus
    with _can(channel, allow_send=["CruiseCommand"]) as driver:
        result = _send(driver, "send_CruiseCommand", **CRUISE, dry_run=True)
    assert result["dry_run"] is True and result["sent"] is False
    assert result["frame"]["arbitration_id"] == 0x200 and result["frame"]["data_hex"] == "5002f401"
    assert _frames(sniffer) == []


def test_d7_an_approval_is_bound_to_the_exact_frame_and_spent_once(bus: tuple[str, Any]) -> None:
    channel, sniffer = bus
    with _can(channel, allow_send=["SteeringTorque"], high_risk=["SteeringTorque"], watchdog_timeout=None) as driver:
        driver.arm()
        token = _send(driver, "send_SteeringTorque", Torque=5)["approval_token"]
        with pytest.raises(PolicyDeniedError):
            _send(driver, "send_SteeringTorque", Torque=6, approval_token=token)  # another byte
        token = _send(driver, "send_SteeringTorque", Torque=5)["approval_token"]
        assert _send(driver, "send_SteeringTorque", Torque=5, approval_token=token)["sent"] is True
        with pytest.raises(PolicyDeniedError):
            _send(driver, "send_SteeringTorque", Torque=5, approval_token=token)  # replayed
    assert [bytes(f.data).hex() for f in _frames(sniffer)] == ["f401"]


def test_d8_without_heartbeats_the_watchdog_stops_periodic_sends_and_disarms(bus: tuple[str, Any]) -> None:
    channel, sniffer = bus
    with _can(channel, allow_send=["CruiseCommand"], watchdog_timeout=0.2) as driver:
        driver.arm()
        _send(driver, "send_CruiseCommand", **CRUISE, period_ms=20)
        deadline = time.monotonic() + 3
        while driver.armed and time.monotonic() < deadline:
            sniffer.recv(timeout=0.05)
        assert driver.armed is False and driver.get_status()["periodic"] == {}
        _frames(sniffer)
        assert sniffer.recv(timeout=0.1) is None  # five periods later: nothing
