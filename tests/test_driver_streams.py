"""The ``stream`` capability as ToolDriver implements it: ``stream_call`` and ``astream_call``
go through the same resolution, validation, policies and hooks as any call."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

import pytest

from mcs.context import AgentContext, PolicyDecision
from mcs.driver import DriverMeta, ToolDriver
from mcs.errors import ErrorCode, ExecutionError, InvalidInputError, PolicyDeniedError
from mcs.pipeline import ExecutionEvent, Invocation
from mcs.tools import Tool

TICKS = Tool(
    name="ticks",
    description="Count up to n.",
    input_schema={"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}},
                  "required": ["n"]},
)
ONCE = Tool(name="once", description="A tool without a stream of its own.")


class Counter(ToolDriver):
    """Streams 1..n; ``broken_at`` makes the stream fail after that many items."""

    def __init__(self, broken_at: int | None = None) -> None:
        super().__init__(timeout=None)
        self.meta = DriverMeta(
            id="0b9f3f0e-8a0c-4f7c-9b64-6d1f0d2a9e11", name="counter", version="1",
            protocol="Python", transport="in-process", spec_format="Python",
            capabilities=("stream",),
        )
        self.broken_at = broken_at
        self.opened = 0
        self.closed = 0

    def _list_tools(self) -> Iterable[Tool]:
        return [TICKS, ONCE]

    def _call_tool(self, invocation: Invocation) -> Any:
        return "done"

    def _stream_tool(self, invocation: Invocation) -> Iterator[Any]:
        if invocation.tool.name != "ticks":
            yield from super()._stream_tool(invocation)
            return
        self.opened += 1
        try:
            for i in range(1, invocation.arguments["n"] + 1):
                if self.broken_at is not None and i > self.broken_at:
                    raise ConnectionResetError("peer went away")
                yield i
        finally:
            self.closed += 1

    async def _astream_tool(self, invocation: Invocation) -> AsyncIterator[Any]:
        for item in self._stream_tool(invocation):
            yield item


def recorded(driver: ToolDriver) -> dict[str, list[ExecutionEvent]]:
    seen: dict[str, list[ExecutionEvent]] = {"start": [], "end": [], "error": []}
    driver.on_execute_start(seen["start"].append)
    driver.on_execute_end(seen["end"].append)
    driver.on_execute_error(seen["error"].append)
    return seen


def test_a_stream_yields_every_item_and_reports_the_count_to_the_end_hook() -> None:
    driver = Counter()
    seen = recorded(driver)
    assert list(driver.stream_call("ticks", {"n": 3})) == [1, 2, 3]
    assert len(seen["start"]) == 1
    assert [e.result for e in seen["end"]] == [{"streamed": 3}]
    assert seen["error"] == []


def test_a_tool_without_a_stream_of_its_own_yields_its_one_result() -> None:
    assert list(Counter().stream_call("once")) == ["done"]


def test_invalid_arguments_are_refused_before_the_stream_opens() -> None:
    driver = Counter()
    with pytest.raises(InvalidInputError):
        driver.stream_call("ticks", {"n": 0})
    assert driver.opened == 0


def test_a_policy_denial_stops_the_stream_before_it_opens() -> None:
    driver = Counter()
    driver.add_policy(lambda ctx, tool, args: PolicyDecision.deny("no streams today"))
    stream = driver.stream_call("ticks", {"n": 3})
    with pytest.raises(PolicyDeniedError) as caught:
        next(stream)
    assert caught.value.code is ErrorCode.POLICY_DENIED
    assert driver.opened == 0


def test_a_failure_mid_stream_is_mapped_once_and_fires_the_error_hook() -> None:
    driver = Counter(broken_at=2)
    seen = recorded(driver)
    got: list[int] = []
    with pytest.raises(ExecutionError) as caught:
        for item in driver.stream_call("ticks", {"n": 5}):
            got.append(item)
    assert got == [1, 2]
    assert "ticks failed unexpectedly (ConnectionResetError)" in caught.value.message
    assert "peer went away" not in caught.value.message  # the exception's text goes to the log only
    assert len(seen["error"]) == 1 and seen["end"] == []


def test_stopping_early_closes_the_drivers_stream_and_ends_the_call() -> None:
    driver = Counter()
    seen = recorded(driver)
    stream = driver.stream_call("ticks", {"n": 100})
    assert [next(stream), next(stream)] == [1, 2]
    stream.close()  # type: ignore[attr-defined]
    assert driver.closed == 1
    assert [e.result for e in seen["end"]] == [{"streamed": 2}]


def test_the_context_reaches_the_hooks_of_a_stream() -> None:
    driver = Counter()
    seen = recorded(driver)
    list(driver.stream_call("ticks", {"n": 1}, context=AgentContext(agent_id="a1")))
    assert seen["start"][0].context.agent_id == "a1"


async def test_the_async_stream_gives_the_same_items_and_hooks() -> None:
    driver = Counter()
    seen = recorded(driver)
    items = [item async for item in driver.astream_call("ticks", {"n": 3})]
    assert items == [1, 2, 3]
    assert [e.result for e in seen["end"]] == [{"streamed": 3}]


async def test_an_async_stream_closed_early_ends_the_call_once() -> None:
    driver = Counter()
    seen = recorded(driver)
    stream = driver.astream_call("ticks", {"n": 50})
    assert await stream.__anext__() == 1
    await stream.aclose()  # type: ignore[attr-defined]
    assert [e.result for e in seen["end"]] == [{"streamed": 1}]


def test_supports_stream_follows_the_declaration() -> None:
    assert Counter().supports("stream")
