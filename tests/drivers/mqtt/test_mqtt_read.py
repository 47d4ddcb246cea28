"""Read tools, monitors (the stream capability) and topic discovery against a real broker."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from mcs_mqtt import MqttDriver
from mqtt_broker import Mosquitto, publish_raw
from mqtt_specs import LIGHTS, PLANT

from mcs.errors import PolicyDeniedError, ToolTimeoutError


def light() -> str:
    return f"t{uuid.uuid4().hex[:10]}"


def subscribed(driver: Any, topic_filter: str) -> Callable[[], bool]:
    """True once the broker acknowledged the driver's subscription to ``topic_filter``."""
    return lambda: topic_filter in driver.get_status()["subscriptions"]


def reader_waiting(driver: Any) -> Callable[[], bool]:
    """True once a read of the driver waits on one of its histories."""
    return lambda: any(history.signal.waiters for history in list(driver._histories.values()))


def publish_soon(port: int, topic: str, payloads: list[bytes], ready: Callable[[], bool]) -> threading.Thread:
    """Publish ``payloads`` from a device once ``ready()`` (the reader listens), polling for it."""
    def run() -> None:
        deadline = time.monotonic() + 10
        while not ready() and time.monotonic() < deadline:
            time.sleep(0.005)
        for payload in payloads:
            publish_raw(port, topic, payload)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_latest_returns_the_retained_value_with_its_parameters(connect: Any, broker: Mosquitto) -> None:
    lid = light()
    publish_raw(broker.port, f"lights/{lid}/measured", b'{"lumens": 42}', retain=True)
    result = connect().call_tool("readMeasurement", {"lightId": lid})
    [message] = result["messages"]
    assert result["topic"] == f"lights/{lid}/measured" and result["mode"] == "latest"
    assert message["payload"] == {"lumens": 42} and message["retained"] is True
    assert message["parameters"] == {"lightId": lid} and message["qos"] == 1
    assert message["received_at"].endswith("Z")


def test_latest_without_a_parameter_gives_the_newest_value_of_each_topic(connect: Any, broker: Mosquitto) -> None:
    driver = connect()
    lids = sorted(light() for _ in range(3))
    driver.call_tool("readState", {"lightId": lids[0], "wait_s": 0})  # the channel's subscription exists
    for lid in lids:
        publish_raw(broker.port, f"lights/{lid}/state", b'{"on": false}')
        publish_raw(broker.port, f"lights/{lid}/state", b'{"on": true}')
    marker = light()
    publish_raw(broker.port, f"lights/{marker}/state", b"{}")
    assert driver.call_tool("readState", {"lightId": marker, "wait_s": 10})["messages"]  # all before it are in
    result = driver.call_tool("readState", {"count": 50, "wait_s": 0})
    mine = [m for m in result["messages"] if m["parameters"]["lightId"] in lids]
    assert sorted(m["parameters"]["lightId"] for m in mine) == lids
    assert all(m["payload"] == {"on": True} for m in mine)
    assert result["topic"] == "lights/+/state"


def test_a_parameter_inside_a_topic_level_reads_through_a_whole_level_wildcard(
        connect: Any, broker: Mosquitto) -> None:
    # HOUSE/room-{room}/temp: a filter may hold '+' only as a whole level (HOUSE/+/temp), never
    # HOUSE/room-+/temp, which paho refuses; the topic's own pattern then picks the rooms out.
    house = light()
    spec = {"topics": {"room_temp": {"topic": f"{house}/room-{{room}}/temp", "action": "receive",
                                     "payload": {"type": "number"}}}}
    publish_raw(broker.port, f"{house}/room-kitchen/temp", b"21", retain=True)
    publish_raw(broker.port, f"{house}/garage/temp", b"5", retain=True)  # under the wildcard, not a room
    driver = connect(spec)
    one = driver.call_tool("room_temp", {"room": "kitchen", "wait_s": 10})
    every = driver.call_tool("room_temp", {"count": 10, "wait_s": 10})
    assert one["topic"] == f"{house}/room-kitchen/temp" and every["topic"] == f"{house}/+/temp"
    for result in (one, every):
        assert [(m["parameters"], m["payload"]) for m in result["messages"]] == [({"room": "kitchen"}, 21)]
    narrow = connect(spec, subscribe_allow=[f"{house}/room-*/temp"])  # the whole-level filter is wider
    assert narrow.call_tool("room_temp", {"room": "kitchen", "wait_s": 10})["messages"][0]["payload"] == 21
    with pytest.raises(PolicyDeniedError):
        narrow.call_tool("room_temp", {"wait_s": 0})


def test_next_waits_for_new_messages_and_skips_the_retained_one(connect: Any, broker: Mosquitto) -> None:
    lid = light()
    topic = f"lights/{lid}/measured"
    publish_raw(broker.port, topic, b'{"lumens": 1}', retain=True)
    driver = connect()
    driver.call_tool("readMeasurement", {"lightId": lid})  # subscribed, retained value cached
    thread = publish_soon(broker.port, topic, [b'{"lumens": 2}', b'{"lumens": 3}'], reader_waiting(driver))
    result = driver.call_tool("readMeasurement", {"lightId": lid, "mode": "next", "count": 2, "wait_s": 10})
    thread.join()
    assert [m["payload"] for m in result["messages"]] == [{"lumens": 2}, {"lumens": 3}]
    assert not any(m["retained"] for m in result["messages"])


def test_next_returns_what_it_has_when_the_wait_ends(connect: Any) -> None:
    result = connect().call_tool("readMeasurement", {"lightId": light(), "mode": "next", "wait_s": 0.2})
    assert result["messages"] == [] and "No message" in result["note"]


def test_a_read_is_bounded_by_the_call_deadline_too(connect: Any) -> None:
    result = connect(timeout=0.5).call_tool("readMeasurement", {"lightId": light(), "mode": "next", "wait_s": 30})
    assert result["messages"] == []


def test_the_history_is_bounded(connect: Any, broker: Mosquitto) -> None:
    lid = light()
    driver = connect(history_size=3)
    driver.call_tool("readState", {"lightId": lid, "wait_s": 0})
    for n in range(6):
        publish_raw(broker.port, f"lights/{lid}/state", f'{{"on": {str(n % 2 == 0).lower()}, "n": {n}}}'.encode())
    history = next(iter(driver._histories.values()))
    assert history.signal.wait(lambda: any(m.payload.endswith(b'"n": 5}') for m in history.messages),
                               time.monotonic() + 10)
    assert [m.payload[-3:] for m in history.messages] == [b" 3}", b" 4}", b" 5}"]


def test_an_undecodable_payload_comes_back_with_a_marker(connect: Any, broker: Mosquitto) -> None:
    lid = light()
    publish_raw(broker.port, f"lights/{lid}/measured", b"\xff\xfe not json", retain=True)
    [message] = connect().call_tool("readMeasurement", {"lightId": lid})["messages"]
    assert message["payload_encoding"] == "base64" and "not UTF-8" in message["decode_error"]
    publish_raw(broker.port, f"lights/{lid}/state", b"{broken", retain=True)
    [message] = connect().call_tool("readState", {"lightId": lid})["messages"]
    assert "not valid JSON" in message["decode_error"]


def test_a_large_payload_is_cut_with_an_explicit_marker(connect: Any, broker: Mosquitto) -> None:
    lid = light()
    publish_raw(broker.port, f"lights/{lid}/label", b"x" * 5000, retain=True)
    [message] = connect(max_payload_bytes=100).call_tool("readLabel", {"lightId": lid})["messages"]
    assert message["payload"].endswith("[truncated: 5000 bytes, first 100 shown]")
    assert message["truncated"] is True


def test_the_result_is_capped_in_bytes(own_broker: Mosquitto) -> None:
    for lid in range(4):
        publish_raw(own_broker.port, f"lights/{lid}/label", b"y" * 900, retain=True)
    with MqttDriver(LIGHTS, host="127.0.0.1", port=own_broker.port, max_result_bytes=2500) as driver:
        result = driver.call_tool("readLabel", {"count": 50, "wait_s": 0.5})
    assert len(result["messages"]) == 2
    assert result["truncated"].startswith("[truncated:")


def json_bytes(records: list[dict[str, Any]]) -> int:
    """What ``max_result_bytes`` bounds: the records as UTF-8 JSON, one after the other."""
    return sum(len(json.dumps(record, ensure_ascii=False).encode("utf-8")) for record in records)


@pytest.mark.parametrize("payload", [b"x" * 5000, "\u00e9".encode() * 3000, b'"\\' * 2000],
                         ids=["ascii", "two-byte-characters", "escaped-in-json"])
def test_a_first_message_larger_than_the_result_cap_is_cut_to_fit_with_markers(
        connect: Any, broker: Mosquitto, payload: bytes) -> None:
    lid = light()
    publish_raw(broker.port, f"lights/{lid}/label", payload, retain=True)
    result = connect(max_result_bytes=1000).call_tool("readLabel", {"lightId": lid, "wait_s": 10})
    [message] = result["messages"]
    assert json_bytes(result["messages"]) <= 1000
    assert message["truncated"] is True and message["bytes"] == len(payload)
    shown = re.fullmatch(rf"(.*) \[truncated: {len(payload)} bytes, first (\d+) shown\]", message["payload"], re.S)
    assert shown is not None and payload.decode().startswith(shown.group(1)) and 300 < int(shown.group(2)) < 1000
    assert message["topic"] == f"lights/{lid}/label" and message["retained"] is True
    assert result["truncated"] == ("[truncated: the first message was cut to fit (its own [truncated ...] markers "
                                   "say what was left out); the result cap is 1000 bytes]")
    assert "note" not in result


def test_a_cut_first_message_says_how_many_others_were_left_out(own_broker: Mosquitto) -> None:
    for lid in range(3):
        publish_raw(own_broker.port, f"lights/{lid}/label", b"z" * 3000, retain=True)
    with MqttDriver(LIGHTS, host="127.0.0.1", port=own_broker.port, max_result_bytes=1200) as driver:
        result = driver.call_tool("readLabel", {"count": 50, "wait_s": 0.5})
    assert len(result["messages"]) == 1 and json_bytes(result["messages"]) <= 1200
    assert re.fullmatch(r"z+ \[truncated: 3000 bytes, first \d+ shown\]", result["messages"][0]["payload"])
    assert "the first message was cut to fit" in result["truncated"]
    assert "2 more message(s) not shown" in result["truncated"]


def test_a_first_message_whose_headers_exceed_the_result_cap_loses_them_with_a_marker(
        connect: Any, broker: Mosquitto) -> None:
    lid = light()
    publish_measured_v5(broker.port, lid, [(f"k{n}", "v" * 100) for n in range(30)])
    driver = connect(protocol="5", max_result_bytes=600)
    result = driver.call_tool("readMeasurement", {"lightId": lid, "wait_s": 10})
    [message] = result["messages"]
    assert json_bytes(result["messages"]) <= 600
    assert message["payload"] == {"lumens": 9} and "headers" not in message
    assert message["headers_truncated"] == "[truncated: 30 more user properties not shown]"
    assert "cut to fit" in result["truncated"]


def test_a_message_whose_topic_alone_exceeds_the_result_cap_is_counted_not_shown(
        connect: Any, broker: Mosquitto) -> None:
    lid = light() * 10
    publish_raw(broker.port, f"lights/{lid}/label", b"porch", retain=True)
    result = connect(max_result_bytes=100).call_tool("readLabel", {"lightId": lid, "wait_s": 10})
    assert result["messages"] == [] and "note" not in result
    assert result["truncated"] == "[truncated: 1 more message(s) not shown; the result cap is 100 bytes]"


def test_the_async_read_does_not_block_the_loop(connect: Any, broker: Mosquitto) -> None:
    lid = light()
    driver = connect()

    async def main() -> dict[str, Any]:
        reader = asyncio.create_task(driver.acall_tool("readMeasurement", {"lightId": lid, "mode": "next",
                                                                           "wait_s": 10}))
        listening = subscribed(driver, "lights/+/measured")
        while not listening():
            await asyncio.sleep(0.01)  # the loop keeps running while the read waits
        await asyncio.to_thread(publish_raw, broker.port, f"lights/{lid}/measured", b'{"lumens": 7}')
        return await reader

    result = asyncio.run(main())
    assert result["messages"][0]["payload"] == {"lumens": 7}


def test_a_monitor_streams_messages_as_they_arrive_and_stops_at_its_count(connect: Any, broker: Mosquitto) -> None:
    lid = light()
    driver = connect()
    assert driver.supports("stream")
    stream = driver.stream_call("readMeasurement", {"lightId": lid, "mode": "next", "count": 3, "wait_s": 10})
    thread = publish_soon(broker.port, f"lights/{lid}/measured", [b'{"lumens": %d}' % n for n in range(5)],
                          subscribed(driver, "lights/+/measured"))
    got = [item["payload"]["lumens"] for item in stream]
    thread.join()
    assert got == [0, 1, 2]


def test_an_async_monitor_ends_with_its_window(connect: Any) -> None:
    driver = connect()

    async def main() -> list[Any]:
        return [item async for item in driver.astream_call(
            "readMeasurement", {"lightId": light(), "mode": "next", "count": 5, "wait_s": 0.2})]

    assert asyncio.run(main()) == []


def test_a_monitor_starts_with_the_latest_value(connect: Any, broker: Mosquitto) -> None:
    lid = light()
    publish_raw(broker.port, f"lights/{lid}/label", b"porch", retain=True)
    items = list(connect().stream_call("readLabel", {"lightId": lid, "count": 1}))
    assert [i["payload"] for i in items] == ["porch"]


def test_discovery_lists_retained_and_live_topics_within_its_window(connect: Any, broker: Mosquitto) -> None:
    line = light()
    publish_raw(broker.port, f"plant/{line}/temp", b'{"celsius": 21}', retain=True)
    driver = connect(PLANT)
    thread = publish_soon(broker.port, f"plant/{line}/valve", [b"1.2"], subscribed(driver, "plant/+/valve"))
    result = driver.call_tool("discover_topics", {"window_s": 0.5})
    thread.join()
    topics = {t["topic"]: t for t in result["topics"]}
    assert topics[f"plant/{line}/temp"]["retained"] is True
    assert topics[f"plant/{line}/temp"]["last_payload"] == '{"celsius": 21}'
    assert topics[f"plant/{line}/valve"]["messages"] == 1
    assert result["filters"] == ["plant/+/temp", "plant/+/valve", "plant/alarm"]
    assert driver.get_status()["subscriptions"] == []  # discovery unsubscribes after its window


def test_discovery_by_default_never_shows_a_retained_topic_the_map_does_not_name(connect: Any,
                                                                                  broker: Mosquitto) -> None:
    line = light()
    publish_raw(broker.port, f"plant/{line}/temp", b'{"celsius": 19}', retain=True)
    publish_raw(broker.port, f"plant/{line}/pressure", b"1.2", retain=True)
    publish_raw(broker.port, f"vault/{line}/secret", b"hunter2", retain=True)
    found = {t["topic"] for t in connect(PLANT).call_tool("discover_topics", {"window_s": 0.5})["topics"]}
    assert f"plant/{line}/temp" in found
    assert not {f"plant/{line}/pressure", f"vault/{line}/secret"} & found


def test_discovery_shows_every_topic_once_subscribe_allow_allows_it(own_broker: Mosquitto) -> None:
    line = light()
    publish_raw(own_broker.port, f"vault/{line}/secret", b"hunter2", retain=True)
    with MqttDriver(PLANT, host="127.0.0.1", port=own_broker.port, timeout=10, subscribe_allow=["*"]) as driver:
        result = driver.call_tool("discover_topics", {"window_s": 0.5})
    assert result["filters"] == ["#"]
    assert {"topic": f"vault/{line}/secret", "messages": 1, "retained": True, "last_payload": "hunter2",
            "last_bytes": 7} in result["topics"]


def test_a_wider_discover_filter_of_the_map_works_once_subscribe_allow_allows_it(own_broker: Mosquitto) -> None:
    publish_raw(own_broker.port, "plant/line1/pressure", b"1.2", retain=True)
    spec = {"discover": ["plant/#"], "topics": {"temp": {"topic": "plant/{line}/temp", "action": "receive"}}}
    with MqttDriver(spec, host="127.0.0.1", port=own_broker.port, timeout=10, subscribe_allow=["plant/*"]) as driver:
        result = driver.call_tool("discover_topics", {"window_s": 0.5})
    assert [t["topic"] for t in result["topics"]] == ["plant/line1/pressure"]


def test_discovery_of_a_channel_inside_a_level_keeps_only_that_channels_topics(connect: Any,
                                                                              broker: Mosquitto) -> None:
    home = light()
    publish_raw(broker.port, f"{home}/room-kitchen/temp", b"20", retain=True)
    publish_raw(broker.port, f"{home}/garage/temp", b"9", retain=True)
    spec = {"topics": {"temp": {"topic": home + "/room-{room}/temp", "action": "receive"}}}
    result = connect(spec).call_tool("discover_topics", {"window_s": 0.5})
    assert result["filters"] == [f"{home}/+/temp"]
    assert [t["topic"] for t in result["topics"]] == [f"{home}/room-kitchen/temp"]


def test_async_discovery_is_bounded_by_max_topics(connect: Any, broker: Mosquitto) -> None:
    for _ in range(3):
        publish_raw(broker.port, f"plant/{light()}/temp", b"1", retain=True)
    result = asyncio.run(connect(PLANT).acall_tool("discover_topics", {"window_s": 0.3, "max_topics": 2}))
    assert result["count"] == 2


def test_max_subscriptions_refuses_beyond_its_bound(connect: Any) -> None:
    driver = connect(max_subscriptions=1, subscribe_allow=["lights/*"])
    driver.call_tool("readMeasurement", {"wait_s": 0})
    driver.call_tool("readMeasurement", {"lightId": "a", "wait_s": 0})  # served by lights/+/measured
    with pytest.raises(Exception, match="max_subscriptions"):
        driver.call_tool("readState", {"lightId": "a", "wait_s": 0})


def test_a_read_on_a_broker_that_is_gone_times_out_or_fails_clearly(connect: Any) -> None:
    driver = connect(port=1, timeout=2)
    with pytest.raises((ToolTimeoutError, Exception)) as caught:
        driver.call_tool("readMeasurement", {"wait_s": 0})
    assert "Cannot reach the MQTT broker at 127.0.0.1:1" in str(caught.value)


def test_mqtt5_user_properties_come_back_as_headers(connect: Any, broker: Mosquitto) -> None:
    lid = light()
    publish_measured_v5(broker.port, lid, [("site", "north")])
    [message] = connect(protocol="5").call_tool("readMeasurement", {"lightId": lid, "wait_s": 5})["messages"]
    assert message["payload"] == {"lumens": 9} and message["headers"] == {"site": "north"}


def test_mqtt5_user_properties_with_a_repeated_name_keep_every_value(connect: Any, broker: Mosquitto) -> None:
    lid = light()
    publish_measured_v5(broker.port, lid, [("site", "north"), ("tag", "a"), ("site", "south"), ("tag", "b"),
                                           ("tag", "a"), ("unit", "lm")])
    [message] = connect(protocol="5").call_tool("readMeasurement", {"lightId": lid, "wait_s": 5})["messages"]
    assert message["headers"] == {"site": ["north", "south"], "tag": ["a", "b", "a"], "unit": "lm"}


def publish_measured_v5(port: int, lid: str, user_properties: list[tuple[str, str]]) -> None:
    """Publish ``{"lumens": 9}`` retained on ``lights/<lid>/measured`` over MQTT 5 with
    ``user_properties``, as a device would."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion
    from paho.mqtt.packettypes import PacketTypes
    from paho.mqtt.properties import Properties

    device = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"v5-{lid}", protocol=mqtt.MQTTv5)
    device.connect("127.0.0.1", port)
    device.loop_start()
    try:
        properties = Properties(PacketTypes.PUBLISH)
        properties.UserProperty = user_properties
        device.publish(f"lights/{lid}/measured", b'{"lumens": 9}', qos=1, retain=True,
                       properties=properties).wait_for_publish(10)
    finally:
        device.disconnect()
        device.loop_stop()


def received(driver: Any, payload: bytes) -> Callable[[], bool]:
    """True once one of the driver's histories holds a message with ``payload``."""
    return lambda: any(m.payload == payload for h in list(driver._histories.values()) for m in h.snapshot())


def test_a_flood_on_one_topic_does_not_push_out_the_latest_value_of_another(connect: Any, broker: Mosquitto) -> None:
    line, junk = light(), light()
    publish_raw(broker.port, f"plant/{line}/temp", b'{"celsius": 21}', retain=True)
    driver = connect(PLANT, history_size=5)
    assert driver.call_tool("line_temperature", {"line": line, "wait_s": 10})["messages"]
    for n in range(20):
        publish_raw(broker.port, f"plant/{junk}/temp", b'{"celsius": %d}' % n)
    history = driver._histories["plant/+/temp"]
    assert history.signal.wait(received(driver, b'{"celsius": 19}'), time.monotonic() + 10)
    assert len(history.snapshot()) == 5  # the flood filled the whole message history
    result = driver.call_tool("line_temperature", {"line": line, "wait_s": 0})
    assert [m["payload"] for m in result["messages"]] == [{"celsius": 21}]
    every = driver.call_tool("line_temperature", {"count": 50, "wait_s": 0})
    mine = {m["parameters"]["line"]: m["payload"] for m in every["messages"] if m["parameters"]["line"] in (line, junk)}
    assert mine == {line: {"celsius": 21}, junk: {"celsius": 19}}
    assert "evicted" not in every


def test_latest_values_are_kept_for_at_most_max_latest_topics_and_an_eviction_is_reported(
        connect: Any, broker: Mosquitto) -> None:
    site, lines = light(), [light() for _ in range(3)]
    spec = {"topics": {"temp": {"topic": site + "/{line}/temp", "action": "receive"}}}
    driver = connect(spec, max_latest_topics=2)
    driver.call_tool("temp", {"line": lines[0], "wait_s": 0})  # subscribed to <site>/+/temp
    for n, line in enumerate(lines):
        publish_raw(broker.port, f"{site}/{line}/temp", b"%d" % n)
    history = driver._histories[f"{site}/+/temp"]
    assert history.signal.wait(received(driver, b"2"), time.monotonic() + 10)
    every = driver.call_tool("temp", {"count": 50, "wait_s": 0})
    assert [m["parameters"]["line"] for m in every["messages"]] == [lines[2], lines[1]]  # newest first
    assert every["evicted"].startswith(f"[1 topic of {site}/+/temp evicted")
    assert "max_latest_topics" in every["evicted"]
    oldest = driver.call_tool("temp", {"line": lines[0], "wait_s": 0})
    assert oldest["messages"] == [] and "evicted" in oldest
    publish_raw(broker.port, f"{site}/{lines[0]}/temp", b"30")  # it publishes again: kept again
    back = driver.call_tool("temp", {"line": lines[0], "wait_s": 10})
    assert [m["payload"] for m in back["messages"]] == [30]
    assert driver.call_tool("temp", {"count": 50, "wait_s": 0})["evicted"].startswith("[2 topics")


def test_max_latest_topics_must_be_a_whole_number(connect: Any) -> None:
    from mcs.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="max_latest_topics"):
        connect(PLANT, max_latest_topics=0)
