"""Fixtures for the CAN driver: python-can's virtual bus on a fresh channel per test, a
second bus object on it as the sniffer, and drivers closed after the test."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import can
import pytest
from can_support import DEMO_DBC
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
