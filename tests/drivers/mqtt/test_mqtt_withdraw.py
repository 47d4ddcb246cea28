"""A publish that does not complete by its deadline never goes out later, and its error says
what became of it. A real stalling TCP proxy sits between the driver and mosquitto: it stops
forwarding the driver's bytes, the call times out, the proxy forwards again, and a subscriber
on the broker shows what arrived."""

from __future__ import annotations

import asyncio
import base64
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from mcs_mqtt import MqttDriver
from mqtt_broker import Mosquitto, Observer
from mqtt_specs import LIGHTS
from stalling_proxy import StallingProxy, stalling_proxy

from mcs.errors import ExecutionError, ToolTimeoutError

MIB = 1 << 20


@pytest.fixture
def proxy(own_broker: Mosquitto) -> Iterator[StallingProxy]:
    with stalling_proxy(own_broker.port) as running:
        yield running


@pytest.fixture
def through_proxy(proxy: StallingProxy) -> Iterator[Any]:
    made: list[MqttDriver] = []

    def build(qos: int, **options: Any) -> MqttDriver:
        driver = MqttDriver(LIGHTS, host="127.0.0.1", port=proxy.port, max_payload_bytes=16 * MIB,
                            operations={"uploadFirmware": {"qos": qos}}, rate_limit=None,
                            rate_limit_total=None, **{"timeout": 1, **options})
        made.append(driver)
        driver.call_tool("sendCommand", {"lightId": "warm-up", "payload": {"command": "on"}})  # connected
        return driver

    yield build
    for driver in made:
        driver.close()


@pytest.fixture
def seen(own_broker: Mosquitto) -> Iterator[Observer]:
    observer = Observer(own_broker.port, "lights/#")
    yield observer
    observer.close()


def firmware(size: int) -> str:
    return base64.b64encode(b"x" * size).decode()


def publish_until_timeout(driver: MqttDriver, size: int) -> tuple[str, ToolTimeoutError]:
    """Publish ``size`` bytes to fresh topics until one cannot be written: the stalled link backs up."""
    for _ in range(40):
        lid = f"n{uuid.uuid4().hex[:8]}"
        try:
            driver.call_tool("uploadFirmware", {"lightId": lid, "payload": firmware(size)})
        except ToolTimeoutError as exc:
            return f"lights/{lid}/firmware", exc
    raise AssertionError("the stalled proxy never backed up into the driver")


def after_resume(driver: MqttDriver, proxy: StallingProxy, seen: Observer) -> set[str]:
    """Forward again, publish a marker once the driver is back, and return every topic seen."""
    proxy.resume()
    marker = f"marker{uuid.uuid4().hex[:6]}"
    deadline = time.monotonic() + 10
    while True:  # the driver reconnects within a few seconds when it cut its connection
        try:
            driver.call_tool("sendCommand", {"lightId": marker, "payload": {"command": "off"}})
            break
        except ExecutionError:
            assert time.monotonic() < deadline, "the driver did not come back after the link resumed"
    while f"lights/{marker}/command" not in {m.topic for m in seen.messages} and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # what the proxy held has had time to reach the broker and the subscriber
    topics = {m.topic for m in seen.messages}
    assert f"lights/{marker}/command" in topics
    return topics


def test_a_qos0_publish_stuck_behind_a_stalled_link_is_never_delivered_after_its_timeout(
        through_proxy: Any, proxy: StallingProxy, seen: Observer) -> None:
    driver = through_proxy(0)
    proxy.stall()
    topic, error = publish_until_timeout(driver, MIB)
    assert "was not sent and will not be" in error.message
    assert error.details["may_be_delivered"] is False
    assert topic not in after_resume(driver, proxy, seen)


@pytest.mark.parametrize("qos", [1, 2])
def test_a_qos1_or_2_publish_that_never_left_is_withdrawn_and_never_delivered(
        qos: int, through_proxy: Any, proxy: StallingProxy, seen: Observer) -> None:
    driver = through_proxy(qos)
    proxy.stall()
    with pytest.raises(ToolTimeoutError, match="was not sent and will not be") as raised:
        driver.call_tool("uploadFirmware", {"lightId": "big", "payload": firmware(8 * MIB)})  # > socket buffers
    assert raised.value.details["may_be_delivered"] is False
    assert "lights/big/firmware" not in after_resume(driver, proxy, seen)


def test_a_qos1_publish_that_left_but_was_not_acknowledged_says_it_may_still_arrive(
        through_proxy: Any, proxy: StallingProxy, seen: Observer) -> None:
    driver = through_proxy(1)
    proxy.stall()
    with pytest.raises(ToolTimeoutError, match="may have reached the broker or still reach it") as raised:
        driver.call_tool("uploadFirmware", {"lightId": "small", "payload": firmware(16)})
    assert raised.value.details["may_be_delivered"] is True
    assert "lights/small/firmware" in after_resume(driver, proxy, seen)  # what the error warned of


def test_the_async_path_withdraws_a_stuck_qos0_publish_too(
        through_proxy: Any, proxy: StallingProxy, seen: Observer) -> None:
    driver = through_proxy(0)
    proxy.stall()

    async def until_timeout() -> tuple[str, ToolTimeoutError]:
        for _ in range(40):
            lid = f"a{uuid.uuid4().hex[:8]}"
            try:
                await driver.acall_tool("uploadFirmware", {"lightId": lid, "payload": firmware(MIB)})
            except ToolTimeoutError as exc:
                return f"lights/{lid}/firmware", exc
        raise AssertionError("the stalled proxy never backed up into the driver")

    topic, error = asyncio.run(until_timeout())
    assert error.details["may_be_delivered"] is False  # the driver's own answer, not the core's wording
    assert topic not in after_resume(driver, proxy, seen)


def test_a_qos0_publish_dropped_with_its_connection_is_reported_as_not_sent(
        through_proxy: Any, proxy: StallingProxy) -> None:
    driver = through_proxy(0, timeout=5)
    proxy.stall()
    threading.Timer(0.5, proxy.drop).start()  # the link dies while a publish waits in paho's queue
    with pytest.raises(ExecutionError, match="was not sent and will not be") as raised:
        for _ in range(40):
            driver.call_tool("uploadFirmware", {"lightId": f"d{uuid.uuid4().hex[:8]}", "payload": firmware(MIB)})
    assert raised.value.details["may_be_delivered"] is False
