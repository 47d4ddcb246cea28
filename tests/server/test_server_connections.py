"""Slow and numerous clients against the RFC-0001 server as `mcs serve` runs it (real
uvicorn from mcs.server.runner on a free loopback port, raw sockets): a request head or
body sent too slowly is answered 408 and the connection closed; connections beyond the
cap are answered 503; a long call, a kept-alive idle connection and a WebSocket are not
slow requests."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack, closing, contextmanager
from pathlib import Path

import httpx
import pytest
from pydantic import BaseModel
from rfc0001_helpers import WsClient, build_server
from support.servers import free_port, loopback_socket, running_uvicorn, stop, wait_for_port
from support.slow_clients import SlowClient, request_head

from mcs.errors import ConfigurationError
from mcs.server import McpServer, tool
from mcs.server.cli import serve_command
from mcs.server.connections import ConnectionLimits
from mcs.server.runner import uvicorn_config

HEAD, BODY = 0.5, 0.6
LIMITS = ConnectionLimits(head_timeout=HEAD, body_timeout=BODY, max_connections=50)
MCS = Path(sys.executable).with_name("mcs")


class Nap(BaseModel):
    seconds: float


class Slept(BaseModel):
    slept: float


@tool(name="nap", description="Sleep, then say for how long.", timeout_ms=10_000)
def nap(req: Nap) -> Slept:
    time.sleep(req.seconds)
    return Slept(slept=req.seconds)


@contextmanager
def serving(server: McpServer, limits: ConnectionLimits) -> Iterator[int]:
    """``server`` as ``mcs.server.runner.serve`` configures uvicorn; yields the port."""
    config = uvicorn_config(server.asgi_app(), log_level="critical", max_body_bytes=server.max_body_bytes,
                            limits=limits)
    with closing(loopback_socket()) as sock, running_uvicorn(config, sock):
        yield int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    server = build_server(tmp_path_factory.mktemp("slow") / "audit.jsonl")
    server.add_tool(nap)
    with serving(server, LIMITS) as bound:
        yield bound
    server.close()


def _execute(port: int, body: bytes) -> bytes:
    return request_head("POST", "/mcp/execute", port, content_type="application/json",
                        content_length=str(len(body))) + body


def test_a_request_head_sent_a_byte_at_a_time_is_answered_408_and_closed(
    port: int, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="mcs.server.connections")
    with SlowClient(port) as client:
        took = client.trickle(_execute(port, b'{"tool": "echo"}'), every=0.05, within=HEAD + 3)
        assert client.closed_by_server, "the server still held the trickling connection"
        assert HEAD - 0.05 <= took < HEAD + 1.5
        assert client.received.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
        assert b"request head not received within 0.5 s" in client.received
        assert any("request head not received within 0.5 s (answered 408)" in r.getMessage()
                   for r in caplog.records if r.name == "mcs.server.connections")


def test_a_connection_that_sends_nothing_is_closed_at_the_head_deadline(port: int) -> None:
    with SlowClient(port) as client:
        took = client.wait_closed(within=HEAD + 3)
        assert client.closed_by_server and HEAD - 0.05 <= took < HEAD + 1.5
        assert client.received.startswith(b"HTTP/1.1 408 ")


def test_a_declared_body_trickled_is_answered_408_at_the_body_deadline(
    port: int, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="mcs.server.connections")
    body = json.dumps({"tool": "echo", "arguments": {"text": "x" * 200}}).encode()
    with SlowClient(port) as client:
        client.send(request_head("POST", "/mcp/execute", port, content_type="application/json",
                                 content_length=str(len(body))))
        took = client.trickle(body, every=0.05, within=BODY + 3)
        assert client.closed_by_server and BODY - 0.05 <= took < BODY + 1.5
        assert client.received.startswith(b"HTTP/1.1 408 ")
        assert any("request body not received within 0.6 s" in r.getMessage() for r in caplog.records)


def test_a_body_still_trickling_after_the_answer_is_cut_at_the_body_deadline(port: int) -> None:
    # Declared over max_body_bytes: answered 413 at once, without reading the body, which
    # uvicorn then drops as it arrives, for as long as it keeps arriving.
    with SlowClient(port) as client:
        client.send(request_head("POST", "/mcp/execute", port, content_type="application/json",
                                 content_length="100000"))
        assert client.response().status_code == 413
        took = client.trickle(b"x" * 1000, every=0.05, within=BODY + 3)
        assert client.closed_by_server and took < BODY + 1.5
        assert b"408" not in client.received.split(b"\r\n", 1)[1]  # one answer only: the 413


def test_the_next_request_on_a_kept_alive_connection_gets_its_own_head_deadline(port: int) -> None:
    with SlowClient(port) as client:
        client.send(request_head("GET", "/mcp/capabilities", port))
        assert client.response().status_code == 200
        time.sleep(HEAD + 0.3)  # idle between requests: uvicorn's keep-alive (5 s), not a slow head
        assert client.is_open()
        client.send(request_head("GET", "/mcp/capabilities", port))
        assert client.response().status_code == 200
        took = client.trickle(request_head("GET", "/mcp/capabilities", port), every=0.05, within=HEAD + 3)
        assert client.closed_by_server and took < HEAD + 1.5
        assert client.received.count(b"HTTP/1.1 200 ") == 2 and b"HTTP/1.1 408 " in client.received


@pytest.mark.parametrize("finished", [False, True], ids=["unfinished", "complete in one read"])
def test_a_request_head_over_16_kib_is_refused_with_431_at_once(
    port: int, finished: bool, caplog: pytest.LogCaptureFixture
) -> None:
    # h11 bounds only what it buffers of an incomplete head: a complete one of any size,
    # arriving in one read, was served.
    caplog.set_level(logging.WARNING, logger="mcs.server.connections")
    head = request_head("GET", "/mcp/capabilities", port, x_padding="a" * 20_000)
    with SlowClient(port) as client:
        client.send(head if finished else head[:-2])
        assert client.response(within=HEAD - 0.1).status_code == 431
        assert client.wait_closed(within=2) < 1.5
    assert any("request head larger than 16384 bytes (answered 431)" in r.getMessage() for r in caplog.records)


def test_a_request_head_just_under_16_kib_is_served(port: int) -> None:
    bare = len(request_head("GET", "/mcp/capabilities", port, x_padding=""))
    head = request_head("GET", "/mcp/capabilities", port, x_padding="a" * (16 * 1024 - bare))
    assert len(head) == 16 * 1024
    with SlowClient(port) as client:
        client.send(head)
        assert client.response().status_code == 200


def test_a_slow_but_timely_client_and_a_call_longer_than_the_deadlines_are_served(port: int) -> None:
    with SlowClient(port) as client:
        request = _execute(port, json.dumps({"tool": "nap", "arguments": {"seconds": HEAD + BODY + 0.3}}).encode())
        client.trickle(request, every=(HEAD - 0.2) / len(request), within=HEAD - 0.1)
        reply = client.response(within=10)
        assert reply.status_code == 200, client.received
        assert json.loads(client.last_body)["result"] == {"slept": HEAD + BODY + 0.3}


def test_a_websocket_lives_past_the_head_deadline(port: int) -> None:
    ws = WsClient(f"http://127.0.0.1:{port}")
    try:
        time.sleep(HEAD + 0.4)
        status, body = ws.capabilities()
        assert status == 200 and body["server"] == "sample"
    finally:
        ws.close()


def test_connections_beyond_max_connections_are_answered_503_at_once(tmp_path: Path) -> None:
    server = build_server(tmp_path / "audit.jsonl")
    with ExitStack() as stack:
        stack.callback(server.close)
        bound = stack.enter_context(serving(server, ConnectionLimits(head_timeout=5, body_timeout=5, max_connections=2)))
        held = [stack.enter_context(SlowClient(bound)) for _ in range(2)]
        for client in held:  # answered, so certainly accepted and counted; kept alive
            client.send(request_head("GET", "/mcp/capabilities", bound))
            assert client.response().status_code == 200
        third = stack.enter_context(SlowClient(bound))
        assert third.wait_closed(within=2) < 1
        assert third.received.startswith(b"HTTP/1.1 503 Service Unavailable\r\n")
        held[0].close()
        for _ in range(40):  # the server counts the closed one out when it notices
            if httpx.get(f"http://127.0.0.1:{bound}/mcp/capabilities", timeout=5).status_code == 200:
                break
            time.sleep(0.05)
        else:
            pytest.fail("a connection freed under the cap was not served")


def test_mcs_serve_rfc0001_takes_the_bounds_from_serving_options(tmp_path: Path) -> None:
    bound = free_port()
    argv = [str(MCS), "serve", "functions", "--protocol", "rfc0001", "--port", str(bound),
            "-s", "head_timeout=0.4", "-s", "body_timeout=20", "-s", "max_connections=10"]
    errors = (tmp_path / "stderr").open("wb")
    process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=errors)
    try:
        wait_for_port(bound, process)
        with SlowClient(bound) as client:
            took = client.trickle(request_head("GET", "/mcp/capabilities", bound), every=0.05, within=5)
            assert client.closed_by_server and took < 2
            assert client.received.startswith(b"HTTP/1.1 408 ")
    finally:
        stop(process)
        errors.close()
    assert "request head not received within 0.4 s" in (tmp_path / "stderr").read_text()


@pytest.mark.parametrize(("option", "message"), [
    ("head_timeout=0", "head_timeout must be a positive number of seconds"),
    ("body_timeout=soon", "-s body_timeout must be a number of seconds"),
    ("max_connections=0", "max_connections must be a whole number of at least 1"),
    ("header_timeout=3", "options: allowed_hosts, allowed_origins, head_timeout, body_timeout, max_connections"),
])
def test_bad_bounds_are_refused_before_serving(option: str, message: str) -> None:
    import argparse

    args = argparse.Namespace(target="functions", option=[], serve_option=[option], transport="http",
                              host=None, port=free_port(), config=None)
    with pytest.raises(ConfigurationError, match=message):
        serve_command(args)
