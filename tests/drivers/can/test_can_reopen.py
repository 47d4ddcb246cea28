"""Reopening a failed bus the driver owns: the next read or monitor reopens it on a worker
thread, never on the event loop, and waits for it no longer than the call's deadline; the
reopen goes on, and a later call finds the bus open. The bus is python-can's virtual bus
behind an interface that takes its time to open."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import can.interfaces
import can.util
import pytest
from can_support import SLOW_INTERFACE, SlowToOpenBus
from mcs_can import CanDriver

from mcs.errors import ExecutionError

OPEN_DELAY = 1.5
READ = {"message": "WheelSpeeds"}


@pytest.fixture
def slow_interface(monkeypatch: pytest.MonkeyPatch) -> Iterator[type[SlowToOpenBus]]:
    """``slow-virtual`` known to python-can (as an interface package registers itself)."""
    monkeypatch.setitem(can.interfaces.BACKENDS, SLOW_INTERFACE, ("can_support", "SlowToOpenBus"))
    monkeypatch.setattr(can.util, "VALID_INTERFACES", can.util.VALID_INTERFACES | {SLOW_INTERFACE})
    monkeypatch.setattr(SlowToOpenBus, "open_delay", 0.0)
    yield SlowToOpenBus


@pytest.fixture
def failed(make_driver, slow_interface) -> CanDriver:
    """A driver (timeout 0.5 s) whose bus failed and takes OPEN_DELAY seconds to reopen."""
    driver = make_driver(interface=SLOW_INTERFACE, timeout=0.5)
    driver.bus.shutdown()
    deadline = time.monotonic() + 5
    while driver.healthcheck()["status"] == "ok" and time.monotonic() < deadline:
        time.sleep(0.005)
    assert driver.healthcheck()["status"] == "error"
    slow_interface.open_delay = OPEN_DELAY
    return driver


async def _longest_stall_while(call: Any) -> tuple[float, Any]:
    """Run ``call`` on the loop with a ticker beside it: the longest the loop went without a tick."""
    stalls = [0.0]

    async def tick() -> None:
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.01)
            now = time.monotonic()
            stalls.append(now - last)
            last = now

    ticker = asyncio.ensure_future(tick())
    await asyncio.sleep(0.02)
    try:
        outcome: Any = await call
    except Exception as exc:
        outcome = exc
    finally:
        ticker.cancel()
    return max(stalls), outcome


@pytest.mark.parametrize(("tool", "arguments"), [
    ("read", READ), ("read", {**READ, "wait_s": 5}), ("monitor", {**READ, "duration_s": 5}),
])
async def test_an_async_call_reopens_the_bus_off_the_loop_and_answers_by_its_deadline(failed, tool, arguments) -> None:
    started = time.monotonic()
    stall, outcome = await _longest_stall_while(failed.acall_tool(tool, arguments))
    assert time.monotonic() - started < 1.0  # not the 1.5 s the bus takes to open
    assert stall < 0.3
    assert isinstance(outcome, ExecutionError) and "reopening it" in outcome.message
    assert outcome.details["bus_failure"]


async def test_an_async_stream_reopens_the_bus_off_the_loop(failed) -> None:
    async def first() -> Any:
        async for item in failed.astream_call("monitor", {**READ, "duration_s": 5}):
            return item
        return None

    stall, outcome = await _longest_stall_while(first())
    assert stall < 0.3
    assert isinstance(outcome, ExecutionError) and "reopening it" in outcome.message


def test_a_read_waits_for_the_reopen_no_longer_than_its_deadline_and_a_later_call_finds_it_open(failed) -> None:
    started = time.monotonic()
    with pytest.raises(ExecutionError, match="reopening it"):
        failed.call_tool("read", READ)
    assert time.monotonic() - started < 1.0
    deadline = time.monotonic() + 5
    while failed.healthcheck()["status"] != "ok" and time.monotonic() < deadline:
        time.sleep(0.01)
    result = failed.call_tool("read", READ)
    assert "closed bus" in result["bus"]["recovered_from"]


def test_a_call_without_a_deadline_waits_for_the_reopen(failed) -> None:
    failed.timeout = None
    result = failed.call_tool("read", READ)
    assert "closed bus" in result["bus"]["recovered_from"]


def test_a_bus_seen_healthy_again_already_reports_what_it_recovered_from(failed, slow_interface, monkeypatch) -> None:
    """The reopened bus is published last: a caller that sees it healthy while the reopen is
    still setting the controller's state finds the recovery recorded (CI once read the health
    between the two)."""
    slow_interface.open_delay = 0.0

    def slow_state(bus: Any, value: Any) -> None:
        time.sleep(0.3)
        raise NotImplementedError

    monkeypatch.setattr(slow_interface, "state", property(lambda bus: can.BusState.ACTIVE, slow_state), raising=False)
    failed.timeout = None
    reopening = threading.Thread(target=failed.call_tool, args=("read", READ), daemon=True)
    reopening.start()
    deadline = time.monotonic() + 5
    while failed.healthcheck()["status"] != "ok" and time.monotonic() < deadline:
        time.sleep(0.001)
    result = failed.call_tool("read", READ)
    reopening.join(5)
    assert "closed bus" in result["bus"]["recovered_from"]
