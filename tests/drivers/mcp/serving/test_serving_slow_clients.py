"""Slow clients against a driver served over streamable HTTP (real uvicorn from
``uvicorn_config``, raw sockets, the SDK's client): a request head or body sent too slowly
is answered 408 and closed, while the SDK client's long calls, SSE streams and idle
kept-alive connections are served as before."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import socket
import ssl
import subprocess
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import mcp_types as types
import pytest
from mcs_mcp.serving import ServeOptions, TLSOptions
from mcs_mcp.serving.cli import apply_flags
from serving_helpers import SampleDriver
from serving_support import MCS, mcp_client, self_signed, serve_driver
from support.servers import free_port, server_process
from support.slow_clients import SlowClient, request_head

import mcs
from mcs.errors import ConfigurationError
from mcs.server.h11_deadlines import TLS_SHUTDOWN_TIMEOUT

HEAD, BODY = 0.4, 0.5
LIMITS = {"head_timeout": HEAD, "body_timeout": BODY}
INIT = json.dumps({
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}).encode()
dawdler = logging.getLogger("mcs.dawdle")


@mcs.tool
async def dawdle(seconds: float) -> str:
    """Log, wait, log again: a response stream that lasts ``seconds``."""
    dawdler.info("started")
    await asyncio.sleep(seconds)
    dawdler.info("finished")
    return f"waited {seconds}"


def _post_head(port: int, length: int) -> bytes:
    return request_head("POST", "/mcp", port, content_type="application/json",
                        accept="application/json, text/event-stream", content_length=str(length))


def test_a_request_head_sent_a_byte_at_a_time_is_answered_408_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="mcs.server.connections")
    with serve_driver(SampleDriver(), **LIMITS) as url:
        port = int(urlsplit(url).port or 0)
        with SlowClient(port) as client:
            took = client.trickle(_post_head(port, len(INIT)) + INIT, every=0.05, within=HEAD + 3)
            assert client.closed_by_server, "the server still held the trickling connection"
            assert HEAD - 0.05 <= took < HEAD + 1.5
            assert client.received.startswith(b"HTTP/1.1 408 ")
    warnings = [r.getMessage() for r in caplog.records if r.name == "mcs.server.connections"]
    assert any("request head not received within 0.4 s (answered 408)" in m for m in warnings)


def test_a_declared_body_trickled_is_answered_408_at_the_body_deadline() -> None:
    with serve_driver(SampleDriver(), **LIMITS) as url:
        port = int(urlsplit(url).port or 0)
        with SlowClient(port) as client:
            client.send(_post_head(port, len(INIT)))
            took = client.trickle(INIT, every=0.05, within=BODY + 3)
            assert client.closed_by_server and BODY - 0.05 <= took < BODY + 1.5
            assert client.received.startswith(b"HTTP/1.1 408 ")
            assert b"request body not received within 0.5 s" in client.received
        # the server keeps serving
        with SlowClient(port) as client:
            client.send(_post_head(port, len(INIT)) + INIT)
            assert client.response().status_code == 200


@pytest.mark.parametrize("stateless", [True, False], ids=["stateless", "stateful"])
async def test_the_sdk_clients_long_streams_and_idle_connections_are_not_slow_requests(
    stateless: bool, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="mcs.dawdle")
    logs: list[str] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        if params.logger == "mcs.dawdle":
            logs.append(params.data["message"])

    seconds = HEAD + BODY + 0.3
    with serve_driver(mcs.FunctionDriver([dawdle]), stateless=stateless, **LIMITS) as url:
        async with mcp_client(url, logging_callback=on_log) as session:
            first = await session.call_tool("dawdle", {"seconds": seconds})
            await asyncio.sleep(HEAD + 0.3)  # idle on kept-alive connections (and, stateful, the GET stream)
            second = await session.call_tool("dawdle", {"seconds": 0.01})
    assert first.is_error is False and first.content[0].text == f"waited {seconds}"
    assert second.is_error is False
    assert logs[:2] == ["started", "finished"]
    assert not [r for r in caplog.records if r.name == "mcs.server.connections"]


def test_mcs_serve_takes_the_bounds_from_serving_options(tmp_path: Path) -> None:
    port = free_port()
    log_file = tmp_path / "serve.log"
    argv = [MCS, "serve", "functions", "--transport", "http", "--port", str(port),
            "-s", "head_timeout=0.4", "-s", "body_timeout=20", "-s", "max_connections=10",
            "-s", f"log_output={log_file}"]
    with server_process(argv, port, stderr=subprocess.DEVNULL), SlowClient(port) as client:
        took = client.wait_closed(within=5)
        assert client.closed_by_server and took < 2
        assert client.received.startswith(b"HTTP/1.1 408 ")
    assert "request head not received within 0.4 s" in log_file.read_text()


def test_serving_options_set_and_check_the_bounds() -> None:
    args = argparse.Namespace(transport=None, host=None, port=None,
                              serve_option=["head_timeout=2.5", "body_timeout=45", "max_connections=64"])
    options = apply_flags(ServeOptions(), args)
    assert (options.head_timeout, options.body_timeout, options.max_connections) == (2.5, 45.0, 64)
    defaults = ServeOptions().connection_limits
    assert (defaults.head_timeout, defaults.body_timeout, defaults.max_connections) == (10.0, 30.0, 500)
    with pytest.raises(ConfigurationError, match="body_timeout must be a positive number of seconds"):
        ServeOptions(body_timeout=-1)
    with pytest.raises(ConfigurationError, match="-s max_connections must be a whole number"):
        apply_flags(ServeOptions(), argparse.Namespace(transport=None, host=None, port=None,
                                                       serve_option=["max_connections=lots"]))


def _tls_client(port: int, cert_file: Path) -> ssl.SSLSocket:
    """A TLS connection whose handshake is done; nothing is read from it afterwards, so
    it never answers the server's close_notify."""
    context = ssl.create_default_context(cafile=str(cert_file))
    return context.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10), server_hostname="127.0.0.1")


def _status_over_tls(port: int, cert_file: Path) -> int:
    """The status of a GET over a new TLS connection (404 here: served; 503: over the cap)."""
    with httpx.Client(verify=ssl.create_default_context(cafile=str(cert_file)), timeout=5) as client:
        return client.get(f"https://127.0.0.1:{port}/healthz").status_code


def _tls_serving(tmp_path: Path, **limits: float) -> tuple[ExitStack, int, Path]:
    cert_file, key_file = self_signed(tmp_path)
    stack = ExitStack()
    url = stack.enter_context(serve_driver(SampleDriver(), tls=TLSOptions(str(cert_file), str(key_file)), **limits))
    return stack, int(urlsplit(url).port or 0), cert_file


def _within(seconds: float, check: Callable[[], bool]) -> bool:
    """Whether ``check()`` comes true within ``seconds`` (asked every 20 ms)."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _served_again_within(port: int, cert_file: Path, seconds: float) -> float:
    """Seconds until a new TLS connection is served (not refused); fails after ``seconds``."""
    started = time.monotonic()
    while time.monotonic() - started < seconds:
        try:
            if _status_over_tls(port, cert_file) != 503:
                return time.monotonic() - started
        except httpx.TransportError:
            pass  # refused before its handshake
        time.sleep(0.1)
    pytest.fail(f"no TLS connection served within {seconds:g} s")


def test_tls_clients_cut_at_a_deadline_or_the_cap_stop_counting_at_once(tmp_path: Path) -> None:
    # Closing a TLS connection waits for the client's close_notify; a client that never
    # sends it kept its place under max_connections all that time.
    stack, port, cert_file = _tls_serving(tmp_path, head_timeout=HEAD, body_timeout=BODY, max_connections=2)
    with stack:
        for _ in range(2):  # the cap, each answered 408 at HEAD
            stack.callback(_tls_client(port, cert_file).close)
        time.sleep(HEAD + 0.2)
        refused = stack.enter_context(SlowClient(port))  # over the cap while those are being closed
        refused.wait_closed(within=2)
        assert _served_again_within(port, cert_file, 8) < 3, "connections cut long ago still fill the cap"


def test_tls_clients_over_the_cap_are_closed_before_the_handshake_without_an_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    stack, port, cert_file = _tls_serving(tmp_path, head_timeout=5, body_timeout=5, max_connections=1)
    with stack, _tls_client(port, cert_file):
        for _ in range(30):
            with pytest.raises(httpx.TransportError):
                _status_over_tls(port, cert_file)
    refusals = [r for r in caplog.records if r.name == "mcs.server.connections" and "closed before TLS" in r.getMessage()]
    assert len(refusals) == 30
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], [r.getMessage() for r in caplog.records]


def test_a_tls_connection_that_never_sends_a_client_hello_is_dropped_at_the_head_deadline(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # asyncio waits 60 s for a handshake unless told otherwise, and uvicorn does not tell it.
    caplog.set_level(logging.WARNING, logger="mcs.server.connections")
    stack, port, _ = _tls_serving(tmp_path, head_timeout=HEAD, body_timeout=BODY)
    with stack, SlowClient(port) as silent:
        took = silent.wait_closed(within=HEAD + 5)
        assert silent.closed_by_server, "the server still held a connection that never began its handshake"
        assert HEAD - 0.05 <= took < HEAD + 1.5
        # The server logs once the handshake's failure reaches it, just after the client sees
        # the close: on a busy machine that can come a moment later.
        logged = _within(2.0, lambda: any("TLS handshake not done within 0.4 s" in r.getMessage()
                                          for r in caplog.records))
    assert logged, "no warning says why the connection was closed"


def test_tls_connections_still_in_their_handshake_count_against_max_connections(tmp_path: Path) -> None:
    stack, port, cert_file = _tls_serving(tmp_path, head_timeout=5, body_timeout=5, max_connections=2)
    with stack:
        silent = [stack.enter_context(SlowClient(port)) for _ in range(2)]  # accepted, no ClientHello
        time.sleep(0.2)
        with pytest.raises(httpx.TransportError):
            _status_over_tls(port, cert_file)
        for client in silent:
            client.close()
        assert _served_again_within(port, cert_file, 3) < 1.5, "handshakes given up still fill the cap"


def test_a_tls_connection_the_server_closes_stops_counting_within_seconds(tmp_path: Path) -> None:
    # After a `Connection: close` answer the server sends its close_notify and waits for
    # the client's (30 s by default); this client never reads it, so never answers.
    stack, port, cert_file = _tls_serving(tmp_path, head_timeout=10, body_timeout=10, max_connections=1)
    with stack, _tls_client(port, cert_file) as quiet:
        quiet.sendall(request_head("GET", "/healthz", port, connection="close"))
        answer = b""
        while b"\r\n\r\n" not in answer:
            answer += quiet.recv(4096)
        assert answer.startswith(b"HTTP/1.1 404 ")
        took = _served_again_within(port, cert_file, 10)
        assert took < TLS_SHUTDOWN_TIMEOUT + 1.5, f"the closed connection was counted for {took:.1f} s"


def test_a_client_gone_before_the_end_of_its_body_is_one_warning_not_an_error(
    caplog: pytest.LogCaptureFixture
) -> None:
    # The SDK logged an ERROR with a traceback (ClientDisconnect) for every such client.
    caplog.set_level(logging.WARNING)
    with serve_driver(SampleDriver(), head_timeout=5, body_timeout=BODY) as url:
        port = int(urlsplit(url).port or 0)
        with SlowClient(port) as gone:
            gone.send(_post_head(port, len(INIT)) + INIT[:10])
            time.sleep(0.2)
        with SlowClient(port) as slow:  # cut at the body deadline: also a client gone
            slow.send(_post_head(port, len(INIT)) + INIT[:10])
            slow.wait_closed(within=BODY + 3)
        with SlowClient(port) as client:  # the server keeps serving
            client.send(_post_head(port, len(INIT)) + INIT)
            assert client.response().status_code == 200
        time.sleep(0.2)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], [r.getMessage() for r in caplog.records]
    gone_warnings = [r for r in caplog.records if "went before the end of its request body" in r.getMessage()]
    assert len(gone_warnings) == 2 and all(r.exc_info is None for r in gone_warnings)
