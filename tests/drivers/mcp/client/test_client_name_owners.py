"""A tool name stays with the server that offered it: another server's tool of that name
does not take it over because the owner failed a listing, or because the owner came up
after it. Two SDK-built shifty servers over streamable HTTP both offer ``ping``; each
records the calls it runs."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_bridge_servers import SHIFTY, free_port, stop
from mcs_mcp.client_driver import MCPDriver
from support.servers import start_server

from mcs.errors import ExecutionError


class Peer:
    """One shifty server over streamable HTTP on a fixed port; ``up()``/``down()`` start and stop it."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir()
        self.calls = folder / "calls.txt"
        self.port = free_port()
        self.env = {**os.environ, "MCS_TEST_CALLS": str(self.calls)}
        self.process: Any = None
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def up(self) -> None:
        self.process = start_server([sys.executable, SHIFTY, "--http", str(self.port)], self.port, env=self.env)

    def down(self) -> None:
        if self.process is not None:
            stop(self.process)
            self.process = None

    def ran(self) -> list[str]:
        return self.calls.read_text(encoding="utf-8").split() if self.calls.exists() else []


@pytest.fixture
def peers(tmp_path: Path) -> Iterator[dict[str, Peer]]:
    servers = {name: Peer(tmp_path / name) for name in ("a", "b")}
    try:
        yield servers
    finally:
        for peer in servers.values():
            peer.down()


def _driver(peers: dict[str, Peer], **options: Any) -> MCPDriver:
    config = {"mcpServers": {name: {"url": peer.url} for name, peer in peers.items()}}
    return MCPDriver(config=config, connect_timeout=5, retry_interval=0, **options)


def test_a_server_that_comes_up_later_does_not_take_a_name_another_server_offers(peers: dict[str, Peer]) -> None:
    peers["b"].up()  # a (first in the configuration) is not up yet
    with _driver(peers) as driver:
        assert driver.call_tool("ping", {}) == "pong"
        assert peers["b"].ran() == ["ping"]
        peers["a"].up()
        tool = next(t for t in driver.list_tools() if t.name == "ping")  # a is listed now
        assert tool.meta["server"] == "b"
        assert ("a", "ping", "shadowing") in {(h.server, h.name, h.reason) for h in driver.held_tools()}
        assert driver.call_tool("ping", {}) == "pong"
        assert peers["a"].ran() == [] and peers["b"].ran() == ["ping", "ping"]


@pytest.mark.parametrize("trust_new_tools", [False, True])
def test_a_name_waits_for_its_server_while_that_server_is_down(peers: dict[str, Peer], trust_new_tools: bool) -> None:
    peers["a"].up()
    peers["b"].up()
    with _driver(peers, trust_new_tools=trust_new_tools) as driver:
        assert driver.call_tool("ping", {}) == "pong"
        assert peers["a"].ran() == ["ping"]
        peers["a"].down()
        driver.reload()
        assert "ping" not in {t.name for t in driver.list_tools()}
        with pytest.raises(ExecutionError, match="MCP server 'a'"):
            driver.call_tool("ping", {})  # a's name: a is tried again, and is still down
        assert peers["b"].ran() == []
        peers["a"].up()
        assert driver.call_tool("ping", {}) == "pong"
        assert peers["a"].ran() == ["ping", "ping"] and peers["b"].ran() == []
