"""A bridge over two real MCP servers (the official SDK's, streamable HTTP on loopback): a
flood of ``notifications/tools/list_changed`` from one makes the bridge list that server
again, once per burst, and leaves the other alone."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from mcs_mcp.client_driver import MCPDriver

from mcs.errors import ConfigurationError


async def _listings(driver: MCPDriver) -> dict[str, int]:
    """How many ``tools/list`` requests each server answered (its own count)."""
    return {name: int(await driver.acall_tool(f"{name}_listings", {})) for name in ("a", "b")}


async def test_a_flood_of_list_changed_relists_only_its_server_once_per_burst(moody_pair: dict[str, Any]) -> None:
    async with MCPDriver(config=moody_pair["config"], relist_interval=1.0) as driver:
        await driver.aconnect()
        heard: list[str] = []
        relists: list[asyncio.Task[Any]] = []

        def listener(kind: str, uri: str | None) -> None:
            # what a served bridge's clients do: list the tools again on each notification
            heard.append(kind)
            relists.append(asyncio.get_running_loop().create_task(driver.alist_tools()))

        driver.add_change_listener(listener)
        before = await _listings(driver)
        assert await driver.acall_tool("a_flood", {"count": 200}) == "sent 200"
        await asyncio.sleep(1.5)  # past the interval: the end of the burst has been told
        await asyncio.gather(*relists)
        await driver.alist_tools()
        after = await _listings(driver)

        assert 1 <= heard.count("tools") <= 2
        assert 1 <= after["a"] - before["a"] <= 2
        assert after["b"] == before["b"]  # the quiet server is not listed again
        assert "a_ping" in {t.name for t in await driver.alist_tools()}


def test_a_synchronous_bridge_relists_only_the_server_that_changed(moody_pair: dict[str, Any]) -> None:
    with MCPDriver(config=moody_pair["config"]) as driver:
        driver.list_tools()
        before = {name: driver.call_tool(f"{name}_listings", {}) for name in ("a", "b")}
        assert driver.call_tool("a_flood", {"count": 200}) == "sent 200"
        driver.list_tools()
        driver.list_tools()
        after = {name: driver.call_tool(f"{name}_listings", {}) for name in ("a", "b")}
        assert after["a"] - before["a"] == 1
        assert after["b"] == before["b"]


def test_a_negative_relist_interval_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="relist_interval"):
        MCPDriver(url="http://127.0.0.1:1/mcp", relist_interval=-1)
