"""A bridge over several real MCP servers (the official SDK's, over streamable HTTP on
loopback) lists them at the same time: a listing takes about the slowest server's time, not
the sum, and the tools keep the order of the configuration."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from mcp_bridge_servers import free_port, start_moody, stop
from mcs_mcp.client_driver import MCPDriver

DELAY = 2.0  # seconds each slow server takes to answer tools/list


@pytest.fixture
def slow_trio() -> Iterator[dict[str, Any]]:
    """Three moody servers over streamable HTTP, ``a``, ``b`` and ``c``, each answering its
    listing after ``DELAY`` seconds; yields the bridge's ``config``."""
    ports = {name: free_port() for name in ("a", "b", "c")}
    processes = [start_moody(port, f"{name}_", listing=f"after:{DELAY}") for name, port in ports.items()]
    try:
        yield {"mcpServers": {name: {"url": f"http://127.0.0.1:{port}/mcp"} for name, port in ports.items()}}
    finally:
        for process in processes:
            stop(process)


def _timed(listing: Any) -> tuple[list[str], float]:
    started = time.monotonic()
    names = [tool.name for tool in listing()]
    return names, time.monotonic() - started


EXPECTED = [f"{server}_{tool}" for server in "abc" for tool in ("ping", "listings", "flood")]


def test_servers_are_listed_at_the_same_time_in_the_configured_order(slow_trio: dict[str, Any]) -> None:
    with MCPDriver(config=slow_trio, connect_timeout=10, listing_timeout=10) as driver:
        names, took = _timed(driver.list_tools)
        assert names == EXPECTED
        assert took < 2 * DELAY  # one after the other would take 3 * DELAY
        assert driver.call_tool("c_ping", {}) == "pong from c_"


async def test_the_async_listing_lists_the_servers_at_the_same_time(slow_trio: dict[str, Any]) -> None:
    async with MCPDriver(config=slow_trio, connect_timeout=10, listing_timeout=10) as driver:
        started = time.monotonic()
        names = [tool.name for tool in await driver.alist_tools()]
        assert names == EXPECTED
        assert time.monotonic() - started < 2 * DELAY
        assert await driver.acall_tool("b_ping", {}) == "pong from b_"


async def test_aconnect_lists_the_servers_at_the_same_time(slow_trio: dict[str, Any]) -> None:
    async with MCPDriver(config=slow_trio, connect_timeout=10, listing_timeout=10) as driver:
        started = time.monotonic()
        await driver.aconnect()
        assert time.monotonic() - started < 2 * DELAY
        assert [tool.name for tool in await driver.alist_tools()] == EXPECTED
