"""The private loop synchronous MCP calls share: each call ends when its coroutine does."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Iterator

import pytest
from mcs_mcp.client.loop import DrivenLoop


@pytest.fixture
def driven() -> Iterator[DrivenLoop]:
    loop = DrivenLoop()
    yield loop
    loop.close()


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


def test_a_call_after_a_cancelled_one_runs_on_a_fresh_worker(driven: DrivenLoop) -> None:
    async def cancelled() -> None:
        raise asyncio.CancelledError

    async def ok() -> str:
        await asyncio.sleep(0)
        return "ok"

    with pytest.raises(asyncio.CancelledError):
        driven.run(cancelled())
    assert driven.run(ok()) == "ok"
    assert driven.run(ok()) == "ok"


def test_a_call_after_a_timed_out_one_still_works(driven: DrivenLoop) -> None:
    async def hangs() -> None:
        await asyncio.Event().wait()

    async def ok() -> str:
        return "ok"

    with pytest.raises(TimeoutError):
        driven.run(hangs(), timeout=0.01)
    assert driven.run(ok()) == "ok"


def test_each_call_sees_the_callers_context_and_leaves_nothing_in_the_next(driven: DrivenLoop) -> None:
    request: contextvars.ContextVar[str] = contextvars.ContextVar("request", default="none")

    async def read_then_set(value: str) -> str:
        seen = request.get()
        request.set(value)
        return seen

    assert driven.run(read_then_set("set by the first call")) == "none"
    assert driven.run(read_then_set("set by the second call")) == "none"
    token = request.set("the caller's")
    try:
        assert driven.run(read_then_set("x")) == "the caller's"
    finally:
        request.reset(token)
    assert driven.run(read_then_set("y")) == "none"


def test_close_while_idle_ends_the_worker_and_the_loop() -> None:
    driven = DrivenLoop()

    async def ok() -> str:
        return "ok"

    assert driven.run(ok()) == "ok"
    tasks = asyncio.all_tasks(driven.loop)
    assert tasks  # the worker waits for the next call
    driven.close()
    assert driven.loop.is_closed()
    assert all(task.done() for task in tasks)
