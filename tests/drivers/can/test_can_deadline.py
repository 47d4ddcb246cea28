"""A send whose caller gave up (its deadline passed, the awaiting task was cancelled) while it
waited for a congested bus never reaches the bus, and never starts a periodic send."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from can_support import block_the_bus, collect, drain

from mcs.errors import ToolCallError, ToolTimeoutError


@pytest.mark.parametrize("arguments", [{"Torque": 5}, {"Torque": 5, "period_ms": 50}], ids=["once", "periodic"])
def test_a_send_whose_deadline_passed_while_the_bus_was_busy_is_not_sent(congested, sniffer, arguments) -> None:
    driver, bus = congested
    slow = block_the_bus(driver, bus)
    driver.timeout = 0.3  # this caller gives up long before the bus frees up
    started = time.monotonic()
    with pytest.raises(ToolCallError) as info:
        driver.call_tool("send_SteeringTorque", arguments)
    assert isinstance(info.value, ToolTimeoutError)
    assert time.monotonic() - started < 0.9  # answered at its deadline, not when the bus freed up
    slow.join(5.0)
    time.sleep(0.3)
    assert [f.arbitration_id for f in drain(sniffer)] == [0x200]  # only the other caller's frame
    assert driver.get_status()["periodic"] == {}


def test_an_async_send_cancelled_while_the_bus_was_busy_never_starts_a_periodic_send(congested, sniffer) -> None:
    driver, bus = congested
    slow = block_the_bus(driver, bus)

    async def cancelled_call() -> Any:
        task = asyncio.ensure_future(driver.acall_tool("send_SteeringTorque", {"Torque": 5, "period_ms": 50}))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancelled_call())
    slow.join(5.0)
    time.sleep(0.3)
    assert [f.arbitration_id for f in collect(sniffer, 5, timeout=0.3)] == [0x200]
    assert driver.get_status()["periodic"] == {}


def test_a_periodic_send_whose_async_caller_was_cancelled_as_it_started_is_stopped(congested, sniffer) -> None:
    driver, _ = congested

    async def cancelled_as_it_returns() -> None:
        task = asyncio.ensure_future(driver.acall_tool("send_SteeringTorque", {"Torque": 5, "period_ms": 50}))
        await asyncio.sleep(0)  # the call is on its worker thread
        time.sleep(0.3)  # the loop is busy: the send finishes before the caller hears of it
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancelled_as_it_returns())
    assert wait_until(lambda: driver.get_status()["periodic"] == {})
    drain(sniffer)
    time.sleep(0.2)
    assert drain(sniffer) == []


def wait_until(predicate: Any, timeout: float = 2.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return bool(predicate())
