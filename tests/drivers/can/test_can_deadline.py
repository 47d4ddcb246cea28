"""A send whose caller gave up (its deadline passed, the awaiting task was cancelled) while it
waited for a congested bus never reaches the bus, and never starts a periodic send."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import can
import pytest
from can_support import CRUISE, DEMO_DBC, collect, drain
from mcs_can import CanDriver

from mcs.errors import ToolCallError, ToolTimeoutError


class CongestedBus(can.BusABC):
    """A virtual bus whose transmit queue is full until ``clear`` is set: a send waits for it
    (up to its timeout), as a controller with a full TX buffer makes it wait."""

    def __init__(self, channel: str) -> None:
        self.inner = can.Bus(interface="virtual", channel=channel)
        self.clear = threading.Event()
        self.clear.set()
        self.waiting = threading.Event()
        super().__init__(channel=channel)

    def send(self, msg: can.Message, timeout: float | None = None) -> None:
        if not self.clear.is_set():
            self.waiting.set()
            if not self.clear.wait(timeout):
                raise can.CanOperationError("transmit buffer full")
        self.inner.send(msg, timeout=timeout)

    def _recv_internal(self, timeout: float | None) -> tuple[can.Message | None, bool]:
        return self.inner.recv(timeout), False

    def shutdown(self) -> None:
        self.inner.shutdown()
        super().shutdown()


@pytest.fixture
def congested(channel: str) -> Iterator[tuple[CanDriver, CongestedBus]]:
    bus = CongestedBus(channel)
    driver = CanDriver(DEMO_DBC, bus=bus, allow_send=["CruiseCommand", "SteeringTorque"], tx_rate_limit=None,
                       watchdog_timeout=None, timeout=5.0)
    driver.arm()
    try:
        yield driver, bus
    finally:
        bus.clear.set()
        driver.close()
        bus.shutdown()


def _block_the_bus(driver: CanDriver, bus: CongestedBus) -> threading.Thread:
    """Another caller's frame stuck in the full transmit queue, holding the bus for ~1 s."""
    bus.clear.clear()
    slow = threading.Thread(target=lambda: driver.call_tool("send_CruiseCommand", CRUISE))
    slow.start()
    assert bus.waiting.wait(2.0)
    threading.Timer(1.0, bus.clear.set).start()
    return slow


@pytest.mark.parametrize("arguments", [{"Torque": 5}, {"Torque": 5, "period_ms": 50}], ids=["once", "periodic"])
def test_a_send_whose_deadline_passed_while_the_bus_was_busy_is_not_sent(congested, sniffer, arguments) -> None:
    driver, bus = congested
    slow = _block_the_bus(driver, bus)
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
    slow = _block_the_bus(driver, bus)

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
