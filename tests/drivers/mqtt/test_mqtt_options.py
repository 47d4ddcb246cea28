"""Options and shapes that need no broker, and discovery mode reaching every operation."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from mcs_mqtt import MqttDriver
from mcs_mqtt._limits import Rate
from mcs_mqtt._topics import covers
from mqtt_broker import Mosquitto, Observer
from mqtt_specs import LIGHTS, PLANT

from mcs.errors import ConfigurationError


@pytest.mark.parametrize(("value", "rate"), [
    ("10/s", Rate(10, 1.0)), ("600/min", Rate(600, 60.0)), ("5/2s", Rate(5, 2.0)), ([3, 0.5], Rate(3, 0.5)),
    (None, None),
])
def test_rates_are_read_from_text_or_pairs(value: Any, rate: Rate | None) -> None:
    assert Rate.parse(value, "rate_limit") == rate


@pytest.mark.parametrize("value", ["fast", "0/s", "10/fortnight", [0, 1], [1, -1]])
def test_a_bad_rate_is_a_configuration_error(value: Any) -> None:
    with pytest.raises(ConfigurationError, match="rate_limit"):
        Rate.parse(value, "rate_limit")


def test_a_parameter_named_like_a_driver_argument_moves_under_parameters() -> None:
    spec = {"topics": {"t": {"topic": "a/{payload}/b", "action": "send", "payload": {"type": "integer"}}}}
    driver = MqttDriver(spec, host="127.0.0.1", dry_run=True)
    schema = driver.list_tools()[0].input_schema
    assert schema["required"] == ["parameters", "payload"]
    assert schema["properties"]["parameters"]["properties"]["payload"] == {"type": "string"}
    result = driver.call_tool("t", {"parameters": {"payload": "x"}, "payload": 3})
    assert (result["topic"], result["payload_text"]) == ("a/x/b", "3")


def test_a_topic_map_offers_discovery_only_where_the_allow_list_permits_it() -> None:
    spec = {"topics": {"t": {"topic": "plant/temp", "action": "receive"}}}
    assert "discover_topics" in {t.name for t in MqttDriver(spec, host="127.0.0.1").list_tools()}
    elsewhere = MqttDriver(spec, host="127.0.0.1", subscribe_allow=["other/*"])
    assert {t.name for t in elsewhere.list_tools()} == {"t"}


def discovery_text(**options: Any) -> str:
    spec = {"topics": {"temp": {"topic": "plant/{line}/temp", "action": "receive"},
                       "valve": {"topic": "plant/{line}/valve", "action": "send"}}}
    [tool] = [t for t in MqttDriver(spec, host="127.0.0.1", **options).list_tools() if t.name == "discover_topics"]
    return tool.description


def test_discovery_watches_only_the_maps_own_topics_unless_subscribe_allow_allows_everything() -> None:
    assert "seen on plant/+/temp, plant/+/valve within" in discovery_text()
    assert "seen on plant/+/temp, plant/+/valve within" in discovery_text(subscribe_allow=["plant/*"])
    assert "seen on # within" in discovery_text(subscribe_allow=["*"])


def test_a_discover_filter_beyond_the_maps_topics_needs_subscribe_allow() -> None:
    spec = {"discover": ["plant/#"], "topics": {"temp": {"topic": "plant/{line}/temp", "action": "receive"}}}
    with pytest.raises(ConfigurationError, match=r"beyond the topic map's own topics \(plant/\+/temp\); .*subscribe_allow"):
        MqttDriver(spec, host="127.0.0.1")
    assert MqttDriver(spec, host="127.0.0.1", subscribe_allow=["plant/*"]).spec.discover == ("plant/#",)
    within = {"discover": ["plant/line1/temp"], "topics": spec["topics"]}
    assert MqttDriver(within, host="127.0.0.1").spec.discover == ("plant/line1/temp",)


def test_status_before_the_first_call_does_not_connect() -> None:
    status = MqttDriver(PLANT, host="127.0.0.1", port=1).get_status()
    assert status == {"broker": "127.0.0.1:1", "connected": False, "subscriptions": [], "reconnects": 0,
                      "last_error": None}


def test_without_a_host_a_call_says_which_option_is_missing() -> None:
    driver = MqttDriver({"topics": {"t": {"topic": "a", "action": "send"}}})
    with pytest.raises(Exception, match="give the host option"):
        driver.call_tool("t", {})


def test_discovery_mode_keeps_every_operation_reachable_and_callable(broker: Mosquitto) -> None:
    with MqttDriver(LIGHTS, host="127.0.0.1", port=broker.port, description_mode="discovery") as driver:
        names = {t.name for t in driver.list_tools()}
        assert {"search_tools", "describe_tool"} <= names
        found = driver.call_tool("search_tools", {"query": "switch a light"})
        assert "sendCommand" in json.dumps(found)
        described = driver.call_tool("describe_tool", {"name": "sendCommand"})
        assert "lightId" in json.dumps(described)
        seen = Observer(broker.port, "lights/discovery/command")
        try:
            driver.call_tool("sendCommand", {"lightId": "discovery", "payload": {"command": "on"}})
            assert seen.wait_for(1)[0].payload == b'{"command":"on"}'
        finally:
            seen.close()


def test_a_cancelled_publish_waiting_out_an_outage_is_never_sent(own_broker: Mosquitto) -> None:
    """SECURITY G3: a publish cancelled while it waits is not sent when the broker returns."""
    watcher_topic = "plant/cancel/valve"
    with MqttDriver(PLANT, host="127.0.0.1", port=own_broker.port, timeout=10) as driver:
        driver.call_tool("valve_setpoint", {"line": "warmup", "payload": {"setpoint_c": 1}})
        own_broker.stop()
        deadline = time.monotonic() + 10
        while driver.connection.connected and time.monotonic() < deadline:
            time.sleep(0.01)

        async def cancel_it() -> None:
            task = asyncio.create_task(driver.acall_tool(
                "valve_setpoint", {"line": "cancel", "payload": {"setpoint_c": 99}}))
            for _ in range(5):  # let it run up to its wait for the connection
                await asyncio.sleep(0)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        asyncio.run(cancel_it())
        own_broker.start()
        driver.call_tool("valve_setpoint", {"line": "after", "payload": {"setpoint_c": 2}})  # reconnected
    assert watcher_topic not in own_broker.log()


@pytest.mark.parametrize(("wide", "narrow", "expected"), [
    ("plant/+/temp", "plant/line1/temp", True), ("plant/+/temp", "plant/+/temp", True),
    ("plant/line1/temp", "plant/+/temp", False), ("plant/+/temp", "plant/#", False),
    ("plant/#", "plant", True), ("plant/#", "plant/a/b", True), ("plant/+", "plant/a/b", False),
    ("#", "$SYS/broker", False), ("+/x", "$SYS/x", False), ("a/b", "a", False), ("a", "a/b", False),
])
def test_one_filter_covers_another_only_when_it_matches_every_topic_of_it(wide: str, narrow: str,
                                                                           expected: bool) -> None:
    assert covers(wide, narrow) is expected
