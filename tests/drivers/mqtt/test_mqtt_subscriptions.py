"""Subscriptions the driver's tools share on one connection, against a real broker: a broker
keeps one subscription per filter per client, so a later SUBSCRIBE replaces the QoS of an
earlier one. Reads and discovery hold the same filters; none may lower another's QoS or drop
a filter another still uses. A subscription the broker refused (an ACL) or never
acknowledged (a stalled link) is an error naming the filter, never an empty answer."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcs_mqtt import MqttDriver
from mqtt_broker import Mosquitto, dynamic_security_plugin, publish_raw, running_mosquitto
from mqtt_specs import PLANT
from stalling_proxy import StallingProxy, stalling_proxy

from mcs.errors import ExecutionError


def line() -> str:
    return f"l{uuid.uuid4().hex[:10]}"


def wait_until(check: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def subscribed(driver: MqttDriver, topic_filter: str) -> Any:
    return lambda: topic_filter in driver.get_status()["subscriptions"]


def reader_waiting(driver: MqttDriver) -> Any:
    return lambda: any(history.signal.waiters for history in list(driver._histories.values()))


def next_message(driver: MqttDriver, topic: str, payload: bytes) -> list[tuple[Any, int]]:
    """Read the next message of ``topic`` (plant/<line>/temp) while a device publishes
    ``payload`` at QoS 1: its payload and the QoS it came with."""
    def publish() -> None:
        wait_until(reader_waiting(driver))
        publish_raw(driver.broker.port, topic, payload, qos=1)  # type: ignore[union-attr]

    thread = threading.Thread(target=publish, daemon=True)
    thread.start()
    read = driver.call_tool("line_temperature", {"line": topic.split("/")[1], "mode": "next", "wait_s": 10})
    thread.join()
    return [(m["payload"], m["qos"]) for m in read["messages"]]


def discover_in_thread(driver: MqttDriver, window: float) -> tuple[threading.Thread, dict[str, Any]]:
    out: dict[str, Any] = {}

    def run() -> None:
        out["result"] = driver.call_tool("discover_topics", {"window_s": window})

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, out


@pytest.fixture
def acl_broker(mosquitto_installed: None, tmp_path: Path) -> Iterator[Mosquitto]:
    """A broker whose ACL refuses the SUBSCRIBE of plant/+/temp (its dynamic security plugin)."""
    if dynamic_security_plugin() is None:
        pytest.skip("mosquitto's dynamic security plugin is not installed")
    with running_mosquitto(tmp_path / "broker", deny_subscribe=("plant/+/temp",)) as running:
        yield running


@pytest.fixture
def proxy(own_broker: Mosquitto) -> Iterator[StallingProxy]:
    with stalling_proxy(own_broker.port) as running:
        yield running


# ---------------------------------------------------------------- one filter, several users


def test_discovery_never_lowers_the_qos_a_read_holds(connect: Any) -> None:
    one = line()
    driver = connect(PLANT)
    driver.call_tool("line_temperature", {"line": one, "wait_s": 0})  # plant/+/temp at QoS 1
    thread, _ = discover_in_thread(driver, 0.6)  # subscribes plant/+/temp too, itself at QoS 0
    wait_until(lambda: driver._watchers)
    during = next_message(driver, f"plant/{one}/temp", b'{"celsius": 1}')
    thread.join()
    after = next_message(driver, f"plant/{one}/temp", b'{"celsius": 2}')
    # The broker delivers at the lower of the publish's and the subscription's QoS.
    assert during + after == [({"celsius": 1}, 1), ({"celsius": 2}, 1)]
    assert "plant/+/temp" in driver.get_status()["subscriptions"]  # discovery left the read's filter


def test_a_read_raises_the_qos_of_a_filter_discovery_holds(connect: Any) -> None:
    one = line()
    driver = connect(PLANT)
    thread, _ = discover_in_thread(driver, 1.0)
    wait_until(subscribed(driver, "plant/+/temp"))  # held by discovery at QoS 0
    driver.call_tool("line_temperature", {"line": one, "wait_s": 0})  # needs QoS 1
    read = next_message(driver, f"plant/{one}/temp", b'{"celsius": 3}')
    thread.join()
    assert read == [({"celsius": 3}, 1)]
    assert "plant/+/temp" in driver.get_status()["subscriptions"]


def test_a_discovery_that_ends_leaves_the_filters_of_one_still_listening(connect: Any, broker: Mosquitto) -> None:
    one = line()
    driver = connect(PLANT)
    thread, out = discover_in_thread(driver, 2.0)
    wait_until(subscribed(driver, "plant/+/valve"))
    driver.call_tool("discover_topics", {"window_s": 0.1})  # a second discovery, over before the first
    publish_raw(broker.port, f"plant/{one}/valve", b"1.5")
    thread.join()
    assert f"plant/{one}/valve" in {t["topic"] for t in out["result"]["topics"]}
    assert driver.get_status()["subscriptions"] == []  # the last user gone: unsubscribed


def test_async_discovery_never_lowers_the_qos_a_read_holds(connect: Any, broker: Mosquitto) -> None:
    one = line()
    driver = connect(PLANT)

    async def main() -> dict[str, Any]:
        await driver.acall_tool("line_temperature", {"line": one, "wait_s": 0})
        await driver.acall_tool("discover_topics", {"window_s": 0.1})
        reader = asyncio.create_task(driver.acall_tool("line_temperature", {"line": one, "mode": "next",
                                                                             "wait_s": 10}))
        waiting = reader_waiting(driver)
        while not waiting():
            await asyncio.sleep(0.005)
        await asyncio.to_thread(publish_raw, broker.port, f"plant/{one}/temp", b'{"celsius": 4}', qos=1)
        return await reader

    read = asyncio.run(main())
    assert [(m["payload"], m["qos"]) for m in read["messages"]] == [({"celsius": 4}, 1)]


# ---------------------------------------------------------------- refused or unanswered


@pytest.mark.parametrize("protocol", ["3.1.1", "5"])
def test_a_read_whose_subscription_the_broker_refuses_says_so(acl_broker: Mosquitto, protocol: str) -> None:
    publish_raw(acl_broker.port, "plant/line1/temp", b'{"celsius": 21}', retain=True)  # denied too
    with MqttDriver(PLANT, host="127.0.0.1", port=acl_broker.port, timeout=5, protocol=protocol) as driver:
        for _ in range(2):  # and again: a refusal is never remembered as a subscription
            with pytest.raises(ExecutionError) as caught:
                driver.call_tool("line_temperature", {"line": "line1", "wait_s": 0})
            error = caught.value
            assert "refused the subscription to 'plant/+/temp'" in error.message
            assert error.details["filter"] == "plant/+/temp" and error.details["reason"]
            assert error.details["reason"] in error.message
        assert driver.get_status()["subscriptions"] == [] and driver._histories == {}


def test_a_read_says_so_when_the_broker_refuses_the_subscription_again_after_a_reconnect(
        own_broker: Mosquitto) -> None:
    if dynamic_security_plugin() is None:
        pytest.skip("mosquitto's dynamic security plugin is not installed")
    with MqttDriver(PLANT, host="127.0.0.1", port=own_broker.port, timeout=5, protocol="5") as driver:
        assert driver.call_tool("line_temperature", {"wait_s": 0})["messages"] == []  # subscribed

        def deny() -> None:
            own_broker.deny_subscribe = ("plant/+/temp",)

        own_broker.restart(deny)
        wait_until(lambda: driver.get_status()["reconnects"] == 1)
        with pytest.raises(ExecutionError) as caught:
            driver.call_tool("line_temperature", {"wait_s": 0})
        assert "refused the subscription to 'plant/+/temp': Not authorized" in caught.value.message


def test_an_async_read_whose_subscription_the_broker_refuses_says_so(acl_broker: Mosquitto) -> None:
    with (MqttDriver(PLANT, host="127.0.0.1", port=acl_broker.port, timeout=5, protocol="5") as driver,
          pytest.raises(ExecutionError, match="refused the subscription to 'plant/\\+/temp'")):
        asyncio.run(driver.acall_tool("line_temperature", {"wait_s": 0}))


def test_discovery_says_which_filter_the_broker_refused(acl_broker: Mosquitto) -> None:
    with MqttDriver(PLANT, host="127.0.0.1", port=acl_broker.port, timeout=5) as driver:
        with pytest.raises(ExecutionError, match="refused the subscription to 'plant/\\+/temp'"):
            driver.call_tool("discover_topics", {"window_s": 0.2})
        assert driver.get_status()["subscriptions"] == []


@pytest.mark.parametrize("mode", ["latest", "next"])
def test_a_read_whose_subscription_is_never_acknowledged_says_so(own_broker: Mosquitto, proxy: StallingProxy,
                                                                 mode: str) -> None:
    with MqttDriver(PLANT, host="127.0.0.1", port=proxy.port, timeout=1.5) as driver:
        driver.connection.ensure(time.monotonic() + 5)  # connected through the proxy
        proxy.stall()  # from now on nothing the driver sends reaches the broker
        started = time.monotonic()
        with pytest.raises(ExecutionError) as caught:
            driver.call_tool("line_temperature", {"mode": mode, "wait_s": 0})
        assert time.monotonic() - started < 1.5  # within the call's deadline
        error = caught.value
        assert "did not acknowledge the subscription to 'plant/+/temp'" in error.message
        assert error.details == {"filter": "plant/+/temp", "reason": "unacknowledged", "retryable": True}
        with pytest.raises(ExecutionError, match="did not acknowledge"):  # the next read too, not an empty answer
            asyncio.run(driver.acall_tool("line_temperature", {"mode": mode, "wait_s": 0}))
        publish_raw(own_broker.port, "plant/line1/temp", b'{"celsius": 5}', retain=True)
        proxy.resume()  # the SUBSCRIBE reaches the broker at last: the next read is served
        read = driver.call_tool("line_temperature", {"line": "line1", "wait_s": 1})
        assert [m["payload"] for m in read["messages"]] == [{"celsius": 5}]


def copies(driver: MqttDriver, topic: str, payload: bytes) -> Any:
    """How many times the reads' history of plant/+/temp received ``payload`` on ``topic``."""
    return lambda: sum(m.topic == topic and m.payload == payload
                       for m in driver._histories["plant/+/temp"].snapshot())


def latest(driver: MqttDriver, lid: str) -> list[tuple[Any, bool]]:
    read = driver.call_tool("line_temperature", {"line": lid, "wait_s": 10})
    return [(m["payload"], m["retained"]) for m in read["messages"]]


def test_a_retained_value_that_discovery_makes_the_broker_resend_never_hides_a_newer_live_one(
        connect: Any, broker: Mosquitto) -> None:
    lid = line()
    topic = f"plant/{lid}/temp"
    publish_raw(broker.port, topic, b'{"celsius": 1}', retain=True)
    driver = connect(PLANT)
    assert latest(driver, lid) == [({"celsius": 1}, True)]
    publish_raw(broker.port, topic, b'{"celsius": 2}')  # live, not retained: the broker still keeps celsius 1
    wait_until(lambda: copies(driver, topic, b'{"celsius": 2}')() == 1)
    driver.call_tool("discover_topics", {"window_s": 0.3})  # a new SUBSCRIBE: the broker sends celsius 1 again
    wait_until(lambda: copies(driver, topic, b'{"celsius": 1}')() == 2)
    assert latest(driver, lid) == [({"celsius": 2}, False)]
    history = driver._histories["plant/+/temp"].snapshot()
    assert [(m.payload, m.retain) for m in history if m.topic == topic] == [  # recorded as what it is
        (b'{"celsius": 1}', True), (b'{"celsius": 2}', False), (b'{"celsius": 1}', True)]


def test_a_retained_value_resent_after_a_reconnect_never_hides_a_newer_live_one(own_broker: Mosquitto) -> None:
    topic = "plant/line1/temp"
    publish_raw(own_broker.port, topic, b'{"celsius": 1}', retain=True)
    with MqttDriver(PLANT, host="127.0.0.1", port=own_broker.port, timeout=15) as driver:
        assert latest(driver, "line1") == [({"celsius": 1}, True)]
        publish_raw(own_broker.port, topic, b'{"celsius": 2}')
        wait_until(lambda: copies(driver, topic, b'{"celsius": 2}')() == 1)
        own_broker.restart()  # the broker keeps celsius 1 retained; the driver re-subscribes and gets it again
        wait_until(lambda: copies(driver, topic, b'{"celsius": 1}')() == 2, timeout=20)
        assert driver.get_status()["reconnects"] == 1
        assert latest(driver, "line1") == [({"celsius": 2}, False)]


def test_a_retained_value_published_while_the_driver_was_away_replaces_the_live_one(own_broker: Mosquitto) -> None:
    topic = "plant/line1/temp"
    publish_raw(own_broker.port, topic, b'{"celsius": 1}', retain=True)
    with MqttDriver(PLANT, host="127.0.0.1", port=own_broker.port, timeout=15, reconnect_min_delay=3) as driver:
        assert latest(driver, "line1") == [({"celsius": 1}, True)]
        publish_raw(own_broker.port, topic, b'{"celsius": 2}')
        wait_until(lambda: copies(driver, topic, b'{"celsius": 2}')() == 1)
        own_broker.restart()
        publish_raw(own_broker.port, topic, b'{"celsius": 3}', retain=True)  # before the driver is back (3 s)
        wait_until(lambda: copies(driver, topic, b'{"celsius": 3}')() == 1, timeout=20)
        assert latest(driver, "line1") == [({"celsius": 3}, True)]  # newer than the live value: it may be


def test_a_resent_retained_value_that_first_came_live_never_hides_a_newer_live_one(own_broker: Mosquitto) -> None:
    topic = "plant/line1/temp"
    publish_raw(own_broker.port, topic, b'{"celsius": 1}', retain=True)
    with MqttDriver(PLANT, host="127.0.0.1", port=own_broker.port, timeout=15) as driver:
        assert latest(driver, "line1") == [({"celsius": 1}, True)]
        publish_raw(own_broker.port, topic, b'{"celsius": 2}', retain=True)  # reaches the driver live
        publish_raw(own_broker.port, topic, b'{"celsius": 3}')
        wait_until(lambda: copies(driver, topic, b'{"celsius": 3}')() == 1)
        own_broker.restart()  # the broker sends celsius 2 again, which the driver saw live only
        wait_until(lambda: copies(driver, topic, b'{"celsius": 2}')() == 2, timeout=20)
        assert latest(driver, "line1") == [({"celsius": 3}, False)]
