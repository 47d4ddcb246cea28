"""Publish tools against a real broker: payload encoding per content type, QoS and retain from
the spec or configuration, dry runs, MQTT 5 properties, the async path."""

from __future__ import annotations

import asyncio
import base64
import uuid
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from mqtt_broker import Mosquitto, publish_raw
from mqtt_specs import PLANT

from mcs.errors import InvalidInputError, PolicyDeniedError


def light() -> str:
    return f"t{uuid.uuid4().hex[:10]}"


def test_a_command_is_published_as_compact_json_with_the_spec_qos(connect: Any, observe: Any) -> None:
    lid = light()
    seen = observe(f"lights/{lid}/#")
    result = connect().call_tool("sendCommand", {"lightId": lid, "payload": {"command": "on", "level": 70}})
    assert result == {"published": True, "topic": f"lights/{lid}/command", "qos": 1, "retain": False,
                      "bytes": 27, "message_id": result["message_id"], "acknowledged": True}
    [message] = seen.wait_for(1)
    assert (message.topic, message.payload, message.qos, message.retain) == (
        f"lights/{lid}/command", b'{"command":"on","level":70}', 1, False)


def test_a_text_message_is_sent_as_utf8_and_retained_as_the_binding_says(connect: Any, observe: Any) -> None:
    lid = light()
    connect().call_tool("setLabel", {"lightId": lid, "payload": "Küche"})
    later = observe(f"lights/{lid}/label")  # subscribes after the publish: gets the retained value
    [message] = later.wait_for(1)
    assert message.payload == "Küche".encode() and message.retain is True


def test_a_binary_payload_travels_as_base64(connect: Any, observe: Any) -> None:
    lid = light()
    seen = observe(f"lights/{lid}/firmware")
    blob = bytes(range(256))
    connect().call_tool("uploadFirmware", {"lightId": lid, "payload": base64.b64encode(blob).decode()})
    assert seen.wait_for(1)[0].payload == blob


def test_invalid_base64_is_refused_before_anything_is_sent(connect: Any, observe: Any) -> None:
    lid = light()
    seen = observe(f"lights/{lid}/#")
    with pytest.raises(InvalidInputError, match="not valid base64"):
        connect().call_tool("uploadFirmware", {"lightId": lid, "payload": "***"})
    connect().call_tool("sendCommand", {"lightId": lid, "payload": {"command": "off"}})
    assert [m.topic for m in seen.wait_for(1)] == [f"lights/{lid}/command"]


def test_a_payload_over_max_payload_bytes_is_refused_and_nothing_is_sent(connect: Any, observe: Any) -> None:
    lid = light()
    seen = observe(f"lights/{lid}/#")
    driver = connect(max_payload_bytes=1024)
    blob = base64.b64encode(bytes(1025)).decode()
    with pytest.raises(InvalidInputError, match="1025 bytes; this driver publishes at most 1024") as refused:
        driver.call_tool("uploadFirmware", {"lightId": lid, "payload": blob})
    assert refused.value.details["max_payload_bytes"] == 1024
    driver.call_tool("uploadFirmware", {"lightId": lid, "payload": base64.b64encode(bytes(1024)).decode()})
    assert [len(m.payload) for m in seen.wait_for(1)] == [1024]  # the refused one never reached the broker


def test_configuration_sets_qos_and_retain_the_model_cannot(connect: Any, observe: Any) -> None:
    lid = light()
    seen = observe(f"lights/{lid}/command", qos=2)
    driver = connect(operations={"sendCommand": {"qos": 2}})
    assert driver.call_tool("sendCommand", {"lightId": lid, "payload": {"command": "on"}})["qos"] == 2
    assert seen.wait_for(1)[0].qos == 2
    with pytest.raises(InvalidInputError, match="qos"):
        driver.call_tool("sendCommand", {"lightId": lid, "payload": {"command": "on"}, "qos": 0})


def test_a_topic_map_publish_without_a_binding_uses_the_default_qos(connect: Any, observe: Any) -> None:
    seen = observe("plant/alarm")
    driver = connect(PLANT, default_qos=0)
    assert driver.call_tool("alarm", {"payload": "overheat"})["qos"] == 0
    assert seen.wait_for(1)[0].payload == b"overheat"


def test_mqtt5_publishes_carry_the_content_type(connect: Any, observe: Any) -> None:
    lid = light()
    seen = observe(f"lights/{lid}/label", protocol=mqtt.MQTTv5)
    connect(protocol="5").call_tool("setLabel", {"lightId": lid, "payload": "hall"})
    message = seen.wait_for(1)[0]
    assert message.properties.ContentType == "text/plain"
    assert message.properties.PayloadFormatIndicator == 1


def test_mqtt5_publishes_of_two_content_types_each_keep_their_own_on_every_publish(connect: Any, observe: Any) -> None:
    lid = light()
    seen = observe(f"lights/{lid}/#", protocol=mqtt.MQTTv5)
    driver = connect(protocol="5", rate_limit=None)
    for n in range(2):
        driver.call_tool("setLabel", {"lightId": lid, "payload": f"hall {n}"})
        driver.call_tool("sendCommand", {"lightId": lid, "payload": {"command": "on"}})
    kinds = [(m.topic.rsplit("/", 1)[-1], m.properties.ContentType) for m in seen.wait_for(4)]
    assert kinds == [("label", "text/plain"), ("command", "application/json")] * 2


def test_the_async_path_publishes_concurrently_on_the_one_connection(connect: Any, observe: Any) -> None:
    lid = light()
    seen = observe(f"lights/{lid}/command")
    driver = connect(rate_limit=None)

    async def main() -> list[Any]:
        calls = [driver.acall_tool("sendCommand", {"lightId": lid, "payload": {"command": "on", "level": n}})
                 for n in range(20)]
        return await asyncio.gather(*calls)

    results = asyncio.run(main())
    assert all(r["acknowledged"] for r in results)
    assert sorted(int(m.payload.split(b":")[-1].rstrip(b"}")) for m in seen.wait_for(20)) == list(range(20))
    assert driver.get_status()["reconnects"] == 0


def test_an_llm_response_runs_a_publish(connect: Any, observe: Any) -> None:
    lid = light()
    seen = observe(f"lights/{lid}/command")
    reply = f'I will switch it on.\n{{"tool": "sendCommand", "arguments": {{"lightId": "{lid}", "payload": {{"command": "on"}}}}}}'
    result = connect().process_llm_response(reply)
    assert result["published"] is True
    assert seen.wait_for(1)[0].payload == b'{"command":"on"}'


def first_message_after_subscribing(observe: Any, port: int, topic: str) -> bytes:
    """What a new subscriber to ``topic`` gets first: the retained value, or else the marker
    published after its subscription (the broker keeps the order)."""
    seen = observe(topic)
    publish_raw(port, topic, b"marker")
    return bytes(seen.wait_for(1)[0].payload)


def test_an_empty_payload_on_a_retained_topic_is_refused_and_the_retained_value_stays(
        connect: Any, observe: Any, broker: Mosquitto) -> None:
    lid = light()
    driver = connect(operations={"setLabel": {"qos": 1}})  # acknowledged: the broker holds it before we look
    driver.call_tool("setLabel", {"lightId": lid, "payload": "porch"})
    for dry_run in (True, False):
        with pytest.raises(PolicyDeniedError, match="would delete the broker's retained value") as caught:
            driver.call_tool("setLabel", {"lightId": lid, "payload": "", "dry_run": dry_run})
        assert "operations.setLabel.clear_retained" in str(caught.value)
        assert "Nothing was sent" in str(caught.value)
    assert first_message_after_subscribing(observe, broker.port, f"lights/{lid}/label") == b"porch"
    assert "An empty payload is refused" in next(t for t in driver.list_tools() if t.name == "setLabel").description


def test_the_operator_can_allow_an_empty_payload_to_clear_the_retained_value(
        connect: Any, observe: Any, broker: Mosquitto) -> None:
    lid = light()
    driver = connect(operations={"setLabel": {"qos": 1, "clear_retained": True}})
    driver.call_tool("setLabel", {"lightId": lid, "payload": "porch"})
    dry = driver.call_tool("setLabel", {"lightId": lid, "payload": "", "dry_run": True})
    assert (dry["cleared_retained"], dry["bytes"]) == (True, 0)
    result = driver.call_tool("setLabel", {"lightId": lid, "payload": ""})
    assert (result["published"], result["cleared_retained"], result["bytes"]) == (True, True, 0)
    assert first_message_after_subscribing(observe, broker.port, f"lights/{lid}/label") == b"marker"
    assert "An empty payload deletes" in next(t for t in driver.list_tools() if t.name == "setLabel").description
    assert "cleared_retained" not in driver.call_tool("setLabel", {"lightId": lid, "payload": "back"})


def test_an_empty_payload_on_a_topic_that_is_not_retained_is_sent(connect: Any, observe: Any) -> None:
    seen = observe("plant/alarm")
    result = connect(PLANT).call_tool("alarm", {"payload": ""})
    assert (result["published"], result["retain"], result["bytes"]) == (True, False, 0)
    assert "cleared_retained" not in result
    assert seen.wait_for(1)[0].payload == b""
