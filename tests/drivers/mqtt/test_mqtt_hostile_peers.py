"""What the other side of the broker can send the driver: messages from hostile clients
through a real mosquitto, and bytes a hostile broker puts on the wire (a real TCP proxy
that rewrites what mosquitto sends). None of it may stop the driver from serving."""

from __future__ import annotations

import base64
import gc
import json
import tracemalloc
from collections.abc import Iterator

import paho.mqtt.client as mqtt
import pytest
from mcs_mqtt import MqttDriver
from mqtt_broker import Mosquitto, publish_raw
from mqtt_specs import PLANT
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from stalling_proxy import StallingProxy, stalling_proxy

MIB = 1 << 20


@pytest.fixture
def proxy(own_broker: Mosquitto) -> Iterator[StallingProxy]:
    with stalling_proxy(own_broker.port) as running:
        yield running


def test_a_topic_that_is_not_utf8_is_dropped_and_the_connection_keeps_serving(
        own_broker: Mosquitto, proxy: StallingProxy) -> None:
    # Same length as the topic mosquitto forwards, so the packet stays well formed.
    proxy.rewrite(b"plant/EVIL/temp", b"plant/\xff\xfe\xfd\xfc/temp")
    with MqttDriver(PLANT, host="127.0.0.1", port=proxy.port, timeout=5) as driver:
        assert driver.call_tool("line_temperature", {"wait_s": 0})["messages"] == []  # subscribed to plant/+/temp
        publish_raw(own_broker.port, "plant/EVIL/temp", b'{"celsius": 1}')
        publish_raw(own_broker.port, "plant/good/temp", b'{"celsius": 2}', retain=True)
        read = driver.call_tool("line_temperature", {"line": "good", "wait_s": 3})
        assert [m["payload"] for m in read["messages"]] == [{"celsius": 2}]
        published = driver.call_tool("valve_setpoint", {"line": "good", "payload": {"setpoint_c": 3}})
        assert published["acknowledged"] is True
        assert "not UTF-8" in str(driver.get_status()["last_error"])


@pytest.mark.parametrize(("payload", "why"), [
    (b"[" * 30_000 + b"]" * 30_000, "nested deeper than 128 levels"),  # under max_payload_bytes
    (b'{"celsius": ' * 200 + b"1" + b"}" * 200, "nested deeper than 128 levels"),  # parses, then too deep
    (b'{"celsius": NaN}', "NaN is not a JSON number"),
    (b'{"celsius": -Infinity}', "-Infinity is not a JSON number"),
    (b'{"celsius": 1e999}', "out of range"),
])
def test_a_retained_payload_no_json_result_can_carry_comes_back_as_base64_beside_the_others(
        own_broker: Mosquitto, payload: bytes, why: str) -> None:
    publish_raw(own_broker.port, "plant/bad/temp", payload, retain=True)
    publish_raw(own_broker.port, "plant/good/temp", b'{"celsius": 2}', retain=True)
    with MqttDriver(PLANT, host="127.0.0.1", port=own_broker.port, timeout=5) as driver:
        read = driver.call_tool("line_temperature", {"count": 5, "wait_s": 1})
        json.dumps(read, allow_nan=False)  # the result can travel as JSON
        found = {m["topic"]: m for m in read["messages"]}
        assert found["plant/good/temp"]["payload"] == {"celsius": 2}
        bad = found["plant/bad/temp"]
        assert bad["payload_encoding"] == "base64" and why in bad["decode_error"]
        assert base64.b64decode(bad["payload"]) == payload


def test_a_storm_of_large_messages_grows_the_history_only_by_what_it_shows(own_broker: Mosquitto) -> None:
    with MqttDriver(PLANT, host="127.0.0.1", port=own_broker.port, timeout=10, max_payload_bytes=1000) as driver:
        driver.call_tool("line_temperature", {"wait_s": 0})  # subscribed to plant/+/temp, history of 100
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            for n in range(40):
                publish_raw(own_broker.port, f"plant/l{n}/temp", b"7" * MIB)
            publish_raw(own_broker.port, "plant/done/temp", b'{"celsius": 1}')
            assert driver.call_tool("line_temperature", {"line": "done", "wait_s": 10})["messages"]
            gc.collect()
            grown = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        assert grown < 8 * MIB  # 40 MiB arrived; the history holds 1,000 bytes of each
        [message] = driver.call_tool("line_temperature", {"line": "l39"})["messages"]
    assert message["payload"] == "7" * 1000 + f" [truncated: {MIB} bytes, first 1000 shown]"
    assert message["bytes"] == MIB and message["truncated"] is True


def test_mqtt5_user_properties_are_capped_like_the_payload(own_broker: Mosquitto) -> None:
    device = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="v5-hostile", protocol=mqtt.MQTTv5)
    device.connect("127.0.0.1", own_broker.port)
    device.loop_start()
    try:
        properties = Properties(PacketTypes.PUBLISH)
        properties.UserProperty = [(f"k{n}", "v" * 1000) for n in range(3000)]  # 3 MB of headers
        device.publish("plant/hdr/temp", b'{"celsius": 1}', qos=1, retain=True,
                       properties=properties).wait_for_publish(10)
    finally:
        device.disconnect()
        device.loop_stop()
    with MqttDriver(PLANT, host="127.0.0.1", port=own_broker.port, timeout=10, protocol="5") as driver:
        read = driver.call_tool("line_temperature", {"line": "hdr", "wait_s": 5})
    [message] = read["messages"]
    assert message["payload"] == {"celsius": 1}
    shown = len(message["headers"])
    assert shown > 0 and sum(len(k) + len(v) for k, v in message["headers"].items()) <= 65_536
    assert message["headers_truncated"] == f"[truncated: {3000 - shown} more user properties not shown]"
    assert len(json.dumps(read)) <= 262_144
