"""The private loop synchronous MCP calls share: each call ends when its coroutine does."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from mcs_mcp.client.loop import DrivenLoop


@pytest.fixture
def driven() -> Iterator[DrivenLoop]:
    loop = DrivenLoop()
    yield loop
    loop.loop.close()


def test_a_call_returns_its_coroutines_result_and_leaves_the_loop_stopped(driven: DrivenLoop) -> None:
    async def answer() -> int:
        await asyncio.sleep(0)
        return 42

    assert driven.run(answer()) == 42
    assert not driven.loop.is_running()
    assert driven.run(answer()) == 42  # the next call starts the loop again


def test_a_stop_asked_by_other_code_does_not_end_the_call_early(driven: DrivenLoop) -> None:
    async def stops_the_loop_then_answers() -> str:
        driven.loop.stop()
        await asyncio.sleep(0.001)
        return "finished"

    assert driven.run(stops_the_loop_then_answers()) == "finished"


def test_an_exception_of_the_coroutine_reaches_the_caller_and_the_loop_stays_usable(driven: DrivenLoop) -> None:
    async def fails() -> None:
        await asyncio.sleep(0)
        raise ValueError("from the server")

    async def ok() -> str:
        return "ok"

    with pytest.raises(ValueError, match="from the server"):
        driven.run(fails())
    assert driven.run(ok()) == "ok"


def test_tasks_the_call_started_keep_running_in_later_calls(driven: DrivenLoop) -> None:
    seen: list[int] = []

    async def start_background() -> None:
        async def background() -> None:
            for step in range(3):
                seen.append(step)
                await asyncio.sleep(0)

        driven.loop.create_task(background())

    async def wait_for_it() -> None:
        while len(seen) < 3:
            await asyncio.sleep(0)

    driven.run(start_background())
    driven.run(wait_for_it(), timeout=5)
    assert seen == [0, 1, 2]
