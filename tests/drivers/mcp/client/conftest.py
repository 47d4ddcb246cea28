"""Real MCP servers for the bridge's tests: SDK-built, over stdio and streamable HTTP on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from mcp_bridge_servers import PLAYER, free_port, start_http, start_moody, stop
from support.servers import JSONHandler, serving_http


@pytest.fixture
def backend() -> Iterator[str]:
    """A plain HTTP service on loopback that the player server's ``lookup`` tool calls."""
    with serving_http(_Items) as url:
        yield url


class _Items(JSONHandler):
    def do_GET(self) -> None:
        key = self.path.rsplit("/", 1)[-1]
        self.send_json({"key": key, "value": f"value of {key}", "served_by": "backend"})


@pytest.fixture
def player_http(backend: str) -> Iterator[str]:
    """The SDK-built player server over streamable HTTP (its backend running); yields its URL."""
    process, url = start_http(PLAYER, env={"MCS_TEST_BACKEND": backend})
    try:
        yield url
    finally:
        stop(process)


@pytest.fixture
def moody_pair() -> Iterator[dict[str, Any]]:
    """Two moody servers, ``a`` and ``b`` (tools ``a_ping``, ``b_ping``...), over streamable
    HTTP: their ``ports``, ``processes`` (a test may stop and restart one) and the bridge's
    ``config``."""
    ports = {"a": free_port(), "b": free_port()}
    processes = {name: start_moody(port, f"{name}_") for name, port in ports.items()}
    try:
        yield {"ports": ports, "processes": processes,
               "config": {"mcpServers": {name: {"url": f"http://127.0.0.1:{port}/mcp"} for name, port in ports.items()}}}
    finally:
        for process in processes.values():
            stop(process)
