"""The inspector in front of a bridge: a confirmation holds for the tool a name resolved to
when it was shown. Two SDK-built shifty servers over streamable HTTP both offer ``ping``;
``a`` owns the name until it stops listing it, and then ``b``'s ``ping`` (trusted as a new
tool) takes it. Each server records the calls it runs."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp_bridge_servers import SHIFTY, free_port, stop
from mcs_mcp.client_driver import MCPDriver
from support.servers import start_server

from mcs.inspector import InspectorServer


def _calls(folder: Path) -> list[str]:
    record = folder / "calls.txt"
    return record.read_text(encoding="utf-8").split() if record.exists() else []


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[MCPDriver, Path, Path]]:
    """A bridge (discovery mode, new tools trusted) over shifty servers ``a`` and ``b``; yields
    it and each server's folder."""
    folders, processes, servers = {}, [], {}
    try:
        for name in ("a", "b"):
            folder = folders[name] = tmp_path / name
            folder.mkdir()
            port = free_port()
            env = {**os.environ, "MCS_TEST_STATE": str(folder / "state"), "MCS_TEST_CALLS": str(folder / "calls.txt")}
            processes.append(start_server([sys.executable, SHIFTY, "--http", str(port)], port, env=env))
            servers[name] = {"url": f"http://127.0.0.1:{port}/mcp"}
        with MCPDriver(config={"mcpServers": servers}, trust_new_tools=True, description_mode="discovery") as driver:
            yield driver, folders["a"], folders["b"]
    finally:
        for process in processes:
            stop(process)


def _hand_ping_to_b(driver: MCPDriver) -> None:
    """Server ``a`` stops listing ``ping``; the bridge lists again, and ``b``'s ``ping`` has the name."""
    assert driver.call_tool("shift", {"text": ""}) == "shifted"  # a's shift: ping leaves a's listing
    driver.reload()
    tool = driver.get_tool("ping")
    assert tool is not None and tool.meta["server"] == "b"


def test_a_call_tool_preview_names_the_tool_it_resolves_to_and_holds_only_for_it(
    pair: tuple[MCPDriver, Path, Path],
) -> None:
    driver, a, b = pair
    with InspectorServer(driver) as server, httpx.Client(base_url=server.url, timeout=30) as client:
        body = {"tool": "call_tool", "arguments": {"name": "ping", "arguments": {}}}
        asked = client.post("api/call", json=body).json()
        assert asked["preview"]["runs"] == {"tool": "ping", "server": "a", "original_name": "ping"}

        _hand_ping_to_b(driver)
        again = client.post("api/call", json={**body, "confirmation": asked["confirmation"]})
        assert again.status_code == 409
        assert again.json()["preview"]["runs"]["server"] == "b"
        assert _calls(b) == []  # what was confirmed was a's ping: b's did not run
        assert _calls(a) == ["shift"]


def test_a_direct_call_confirmed_for_one_servers_tool_does_not_run_anothers(
    pair: tuple[MCPDriver, Path, Path],
) -> None:
    driver, a, b = pair
    with InspectorServer(driver) as server, httpx.Client(base_url=server.url, timeout=30) as client:
        body: dict[str, Any] = {"tool": "ping", "arguments": {}}
        asked = client.post("api/call", json=body).json()
        _hand_ping_to_b(driver)
        assert client.post("api/call", json={**body, "confirmation": asked["confirmation"]}).status_code == 409
        assert _calls(b) == []
        assert _calls(a) == ["shift"]
