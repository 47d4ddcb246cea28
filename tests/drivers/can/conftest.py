"""Fixtures for the CAN driver: python-can's virtual bus on a fresh channel per test, a
second bus object on it as the sniffer, drivers closed after the test, and an armed driver on a
congested bus."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import can
import pytest
from can_support import DEMO_DBC, CongestedBus
from mcs_can import CanDriver


@pytest.fixture
def channel() -> str:
    """A virtual channel no other test uses."""
    return f"mcs-test-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def sniffer(channel: str) -> Iterator[can.BusABC]:
    """A second bus object on the driver's channel: every frame the driver sends lands here."""
    bus = can.Bus(interface="virtual", channel=channel)
    try:
        yield bus
    finally:
        bus.shutdown()


@pytest.fixture
def peer(channel: str) -> Iterator[can.BusABC]:
    """Another node on the bus (an ECU) that sends frames for the driver to receive."""
    bus = can.Bus(interface="virtual", channel=channel)
    try:
        yield bus
    finally:
        bus.shutdown()


@pytest.fixture
def make_driver(channel: str) -> Iterator[Callable[..., CanDriver]]:
    """Build CanDrivers on the test's channel (the demo database by default); all closed after."""
    made: list[CanDriver] = []

    def make(database: Any = DEMO_DBC, **options: Any) -> CanDriver:
        options.setdefault("channel", channel)
        driver = CanDriver(database, **options)
        made.append(driver)
        return driver

    yield make
    for driver in made:
        driver.close()


@pytest.fixture
def congested(channel: str) -> Iterator[tuple[CanDriver, CongestedBus]]:
    """An armed driver (CruiseCommand and SteeringTorque allowed, no rate limit or watchdog) on a
    :class:`CongestedBus` it does not own, with the bus; the bus is cleared and both closed after."""
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
