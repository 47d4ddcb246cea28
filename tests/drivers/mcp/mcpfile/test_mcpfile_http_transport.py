"""HTTP invocations and their connections: pooled per event loop, closed by close()/aclose()."""

from __future__ import annotations

import asyncio

from mcpfile_support import mcp_file, tool
from mcs_mcp.mcpfile.driver import MCPFileDriver

CALLS = 5


def fetching(new_driver, write_file, recorder) -> MCPFileDriver:
    """A driver whose tool ``t`` GETs /items/{id} from the recorder."""
    invocation = {"http": {"method": "GET", "url": recorder.url + "/items/{id}"}}
    return new_driver(write_file(mcp_file(tool("t", invocation, {"id": {"type": "string"}}))))


# ---------------------------------------------------------------------- pooled connections


def test_sequential_sync_calls_share_one_connection_and_close_releases_it(new_driver, write_file, recorder) -> None:
    driver = fetching(new_driver, write_file, recorder)
    for number in range(CALLS):
        assert driver.call_tool("t", {"id": str(number)}) == {"ok": True}
    assert len(recorder.requests) == CALLS
    assert recorder.connections == 1
    driver.close()
    assert recorder.wait_until_closed() == 0


async def test_sequential_async_calls_share_one_connection_and_aclose_releases_it(
    new_driver, write_file, recorder
) -> None:
    driver = fetching(new_driver, write_file, recorder)
    for number in range(CALLS):
        assert await driver.acall_tool("t", {"id": str(number)}) == {"ok": True}
    assert len(recorder.requests) == CALLS
    assert recorder.connections == 1
    await driver.aclose()
    assert await asyncio.to_thread(recorder.wait_until_closed) == 0


def test_a_finished_event_loop_closes_its_pool_and_keeps_none(new_driver, write_file, recorder) -> None:
    driver = fetching(new_driver, write_file, recorder)

    async def calls() -> None:
        for number in range(CALLS):
            await driver.acall_tool("t", {"id": str(number)})

    asyncio.run(calls())
    assert recorder.connections == 1
    assert recorder.wait_until_closed() == 0  # asyncio.run's shutdown closed the loop's pool
    asyncio.run(calls())  # a new loop gets a pool of its own
    assert recorder.connections == 2
    assert len(driver._aclients) == 0


async def test_the_driver_is_an_async_context_manager_that_closes_its_pools(write_file, recorder) -> None:
    invocation = {"http": {"method": "GET", "url": recorder.url + "/items/1"}}
    async with MCPFileDriver(write_file(mcp_file(tool("t", invocation)))) as driver:
        await driver.acall_tool("t", {})
        driver.call_tool("t", {})
        assert recorder.connections == 2  # one pool for the sync path, one for this loop
    assert await asyncio.to_thread(recorder.wait_until_closed) == 0
