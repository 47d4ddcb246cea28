"""Real MCP servers for the bridge's tests: SDK-built, over stdio and streamable HTTP on loopback."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from mcp_bridge_servers import PLAYER, start_http, stop


@pytest.fixture
def backend() -> Iterator[str]:
    """A plain HTTP service on loopback that the player server's ``lookup`` tool calls."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Items)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class _Items(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        key = self.path.rsplit("/", 1)[-1]
        body = json.dumps({"key": key, "value": f"value of {key}", "served_by": "backend"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def player_http(backend: str) -> Iterator[str]:
    """The SDK-built player server over streamable HTTP (its backend running); yields its URL."""
    process, url = start_http(PLAYER, env={"MCS_TEST_BACKEND": backend})
    try:
        yield url
    finally:
        stop(process)


@pytest.fixture
def quiet() -> Iterator[object]:
    """A sink for stdio servers' stderr (their tracebacks for refused calls)."""
    with open(os.devnull, "w", encoding="utf-8") as sink:
        yield sink
