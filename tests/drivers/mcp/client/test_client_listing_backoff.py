"""A server that failed its listing is tried again by later listings at most once per an
interval that doubles with each failure in a row (``retry_interval`` up to
``max_retry_interval``), so a server that hangs does not cost ``listing_timeout`` at every
listing; a call of one of its tools tries it at once, and a call tries a server at most
once. Real servers: the official SDK's moody server over streamable HTTP on loopback, and a
loopback socket that accepts connections and never answers."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from mcp_bridge_servers import free_port, start_moody, stop
from mcs_mcp.client_driver import MCPDriver
from support.servers import silent_peer

from mcs.errors import ConfigurationError, ExecutionError

TIMEOUT = 1.0  # listing_timeout of the stalled server's bridge


@pytest.fixture
def stalled_pair() -> Iterator[dict[str, Any]]:
    """Moody servers ``a`` (answers) and ``b`` (never answers tools/list in time) over
    streamable HTTP; yields the bridge's ``config``."""
    ports = {"a": free_port(), "b": free_port()}
    processes = [start_moody(ports["a"], "a_"), start_moody(ports["b"], "b_", listing="slow")]
    try:
        yield {"mcpServers": {name: {"url": f"http://127.0.0.1:{port}/mcp"} for name, port in ports.items()}}
    finally:
        for process in processes:
            stop(process)


@pytest.fixture
def silent_url() -> Iterator[str]:
    """A loopback socket that accepts connections and never answers; yields an MCP URL there."""
    with silent_peer() as port:
        yield f"http://127.0.0.1:{port}/mcp"


def _timed(listing: Callable[[], Any]) -> tuple[set[str], float]:
    started = time.monotonic()
    names = {tool.name for tool in listing()}
    return names, time.monotonic() - started


def test_two_listings_in_a_row_cost_one_timeout_of_a_stalled_server(stalled_pair: dict[str, Any]) -> None:
    with MCPDriver(config=stalled_pair, connect_timeout=10, listing_timeout=TIMEOUT) as driver:
        names, first = _timed(driver.list_tools)
        assert "a_ping" in names and "b_ping" not in names
        assert first >= TIMEOUT
        names, second = _timed(driver.list_tools)
        assert "a_ping" in names
        assert second < TIMEOUT / 2  # not asked again within retry_interval
        assert "MCP server 'b' did not list its tools in time" in driver.get_function_description()


def test_a_stalled_server_is_retried_after_an_interval_that_doubles(stalled_pair: dict[str, Any]) -> None:
    with MCPDriver(config=stalled_pair, connect_timeout=10, listing_timeout=TIMEOUT, retry_interval=0.5) as driver:
        _timed(driver.list_tools)  # b fails: next try in 0.5 s
        time.sleep(0.6)
        _, again = _timed(driver.list_tools)
        assert again >= TIMEOUT  # due: asked again, and it fails again: next try in 1 s
        time.sleep(0.6)
        _, waiting = _timed(driver.list_tools)
        assert waiting < TIMEOUT / 2  # 0.6 s is not the doubled interval
        assert driver.call_tool("a_ping", {}) == "pong from a_"


def test_the_interval_stops_growing_at_max_retry_interval(stalled_pair: dict[str, Any]) -> None:
    with MCPDriver(config=stalled_pair, connect_timeout=10, listing_timeout=TIMEOUT, retry_interval=0.2,
                   max_retry_interval=0.2) as driver:
        for _ in range(3):
            _, took = _timed(driver.list_tools)
            assert took >= TIMEOUT  # 0.2 s, then 0.2 s again (not 0.4 s): due at every listing
            time.sleep(0.3)


def test_a_single_stalled_server_costs_one_timeout_for_two_listings(stalled_pair: dict[str, Any]) -> None:
    config = {"mcpServers": {"b": stalled_pair["mcpServers"]["b"]}}
    with MCPDriver(config=config, connect_timeout=10, listing_timeout=TIMEOUT) as driver:
        for limit in (None, TIMEOUT / 2):
            started = time.monotonic()
            with pytest.raises(ExecutionError, match="did not list its tools in time"):
                driver.list_tools()
            if limit is not None:
                assert time.monotonic() - started < limit


def test_a_call_of_a_failed_servers_tool_tries_it_at_once(moody_pair: dict[str, Any]) -> None:
    with MCPDriver(config=moody_pair["config"], connect_timeout=5, listing_timeout=5,
                   retry_interval=60) as driver:
        assert "b_ping" in {t.name for t in driver.list_tools()}
        stop(moody_pair["processes"]["b"])
        driver.reload()
        assert "b_ping" not in {t.name for t in driver.list_tools()}
        moody_pair["processes"]["b"] = start_moody(moody_pair["ports"]["b"], "b_")
        assert "b_ping" not in {t.name for t in driver.list_tools()}  # a listing waits for its interval
        assert driver.call_tool("b_ping", {}) == "pong from b_"  # a call does not
        assert "b_ping" in {t.name for t in driver.list_tools()}


async def test_an_async_call_of_a_failed_servers_tool_tries_it_at_once(moody_pair: dict[str, Any]) -> None:
    async with MCPDriver(config=moody_pair["config"], connect_timeout=5, listing_timeout=5,
                         retry_interval=60) as driver:
        assert "b_ping" in {t.name for t in await driver.alist_tools()}
        stop(moody_pair["processes"]["b"])
        driver.reload()
        assert "b_ping" not in {t.name for t in await driver.alist_tools()}
        moody_pair["processes"]["b"] = start_moody(moody_pair["ports"]["b"], "b_")
        assert await driver.acall_tool("b_ping", {}) == "pong from b_"


def test_a_streamed_call_of_a_failed_servers_tool_tries_it_at_once(moody_pair: dict[str, Any]) -> None:
    with MCPDriver(config=moody_pair["config"], connect_timeout=5, listing_timeout=5,
                   retry_interval=60) as driver:
        assert "b_ping" in {t.name for t in driver.list_tools()}
        stop(moody_pair["processes"]["b"])
        driver.reload()
        assert "b_ping" not in {t.name for t in driver.list_tools()}
        moody_pair["processes"]["b"] = start_moody(moody_pair["ports"]["b"], "b_")
        assert list(driver.stream_call("b_ping", {})) == ["pong from b_"]


async def test_an_async_streamed_call_of_a_failed_servers_tool_tries_it_at_once(moody_pair: dict[str, Any]) -> None:
    async with MCPDriver(config=moody_pair["config"], connect_timeout=5, listing_timeout=5,
                         retry_interval=60) as driver:
        assert "b_ping" in {t.name for t in await driver.alist_tools()}
        stop(moody_pair["processes"]["b"])
        driver.reload()
        assert "b_ping" not in {t.name for t in await driver.alist_tools()}
        moody_pair["processes"]["b"] = start_moody(moody_pair["ports"]["b"], "b_")
        assert [item async for item in driver.astream_call("b_ping", {})] == ["pong from b_"]


async def test_an_async_streamed_call_on_a_fresh_driver_lists_on_the_callers_loop(moody_pair: dict[str, Any]) -> None:
    async with MCPDriver(config=moody_pair["config"], connect_timeout=5, listing_timeout=5) as driver:
        assert [item async for item in driver.astream_call("a_ping", {})] == ["pong from a_"]


async def test_an_async_call_to_a_server_that_never_answers_tries_it_once(silent_url: str) -> None:
    async with MCPDriver(url=silent_url, name="silent", timeout=1, connect_timeout=30) as driver:
        with pytest.raises(ExecutionError) as caught:
            await driver.acall_tool("ping", {})
        assert "took longer than the 1 s left of the call's deadline" in caught.value.message
        assert "no time was left" not in caught.value.message


def test_retry_intervals_are_checked() -> None:
    with pytest.raises(ConfigurationError, match="max_retry_interval"):
        MCPDriver(url="http://127.0.0.1:1/mcp", retry_interval=5, max_retry_interval=1)
    with pytest.raises(ConfigurationError, match="retry_interval"):
        MCPDriver(url="http://127.0.0.1:1/mcp", retry_interval=-1)
