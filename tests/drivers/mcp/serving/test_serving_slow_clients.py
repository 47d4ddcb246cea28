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


def test_tls_clients_cut_at_a_deadline_or_the_cap_stop_counting_at_once(tmp_path: Path) -> None:
    # Closing a TLS connection waits for the client's close_notify (30 s by default); a
    # client that never sends it kept its place under max_connections all that time.
    cert_file, key_file = self_signed(tmp_path)
    tls = TLSOptions(str(cert_file), str(key_file))
    with serve_driver(SampleDriver(), tls=tls, head_timeout=HEAD, body_timeout=BODY, max_connections=2) as url:
        port = int(urlsplit(url).port or 0)
        with ExitStack() as stack:
            for _ in range(2):  # the cap, each answered 408 at HEAD
                stack.callback(_tls_client(port, cert_file).close)
            time.sleep(HEAD + 0.2)
            refused = _tls_client(port, cert_file)  # over the cap while those are being closed
            stack.callback(refused.close)
            waited = time.monotonic()
            while (status := _status_over_tls(port, cert_file)) == 503 and time.monotonic() - waited < 8:
                time.sleep(0.2)
            assert status != 503, "connections cut long ago still fill the cap"
            assert time.monotonic() - waited < 3


def test_tls_clients_refused_over_the_cap_are_closed_without_an_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Over TLS a request sent right after the handshake still arrives once the 503 is out
    # and the connection closing; h11 raised on it, and asyncio logged the traceback at
    # ERROR for every such client.
    caplog.set_level(logging.WARNING)
    cert_file, key_file = self_signed(tmp_path)
    tls = TLSOptions(str(cert_file), str(key_file))
    with serve_driver(SampleDriver(), tls=tls, head_timeout=5, body_timeout=5, max_connections=1) as url:
        port = int(urlsplit(url).port or 0)
        with _tls_client(port, cert_file):
            assert [_status_over_tls(port, cert_file) for _ in range(30)] == [503] * 30
    refusals = [r for r in caplog.records if r.name == "mcs.server.connections" and "answered 503" in r.getMessage()]
    assert len(refusals) == 30
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], [r.getMessage() for r in caplog.records]
