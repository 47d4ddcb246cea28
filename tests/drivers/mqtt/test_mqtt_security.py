"""SECURITY.md D1, D2, D6 against a real broker whose log shows what reached it; the publish
rate limits; allow-lists for publish and subscribe."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from mcs_mqtt import MqttDriver
from mqtt_broker import Mosquitto, publish_raw
from mqtt_specs import LIGHTS, PLANT

from mcs.errors import ErrorCode, InvalidInputError, PolicyDeniedError, ToolCallError

HOSTILE_LEVELS = ["+", "#", "a/b", "line\x00x", "$SYS", "x\ny", "x\ry", "tab\there", "\x7f", "a+", "#b", "\u2028",
                  "\uffff", "\ufffe", "\ufdd0", "x\U0001fffey", "\U0010ffff"]  # noncharacters: brokers drop the client


def driver_on(broker: Mosquitto, spec: Any = PLANT, **options: Any) -> MqttDriver:
    return MqttDriver(spec, host="127.0.0.1", port=broker.port, timeout=10, **options)


@pytest.mark.parametrize("value", HOSTILE_LEVELS)
def test_d1_a_parameter_that_is_not_one_topic_level_is_refused_before_the_broker(own_broker: Mosquitto, value: str) -> None:
    with driver_on(own_broker) as driver:
        driver.call_tool("valve_setpoint", {"line": "line1", "payload": {"setpoint_c": 20}})  # connected
        with pytest.raises(InvalidInputError) as caught:
            driver.call_tool("valve_setpoint", {"line": value, "payload": {"setpoint_c": 20}})
        assert "line" in caught.value.message
        with pytest.raises(InvalidInputError):
            driver.call_tool("line_temperature", {"line": value, "wait_s": 0})
    log = own_broker.log()
    assert log.count("Received PUBLISH") == 1 and "Received SUBSCRIBE" not in log


# Invisible format characters (Unicode category Cf): each would make a topic look like another.
INVISIBLE_LEVELS = {"line\u200b1": "U+200B", "line\u200d1": "U+200D", "\u2060line1": "U+2060",
                    "\ufeffline1": "U+FEFF", "line1\u202e": "U+202E", "line\u00ad1": "U+00AD",
                    "line1\U000e0041": "U+E0041"}


@pytest.mark.parametrize(("value", "code_point"), INVISIBLE_LEVELS.items())
def test_d1_a_parameter_with_an_invisible_format_character_is_refused_naming_it(
        own_broker: Mosquitto, value: str, code_point: str) -> None:
    with driver_on(own_broker) as driver:
        driver.call_tool("valve_setpoint", {"line": "line1", "payload": {"setpoint_c": 20}})  # connected
        calls = [("valve_setpoint", {"line": value, "payload": {"setpoint_c": 20}, "dry_run": True}),
                 ("valve_setpoint", {"line": value, "payload": {"setpoint_c": 20}}),
                 ("line_temperature", {"line": value, "wait_s": 0}),
                 ("line_temperature", {"line": value, "mode": "next", "wait_s": 0})]
        for tool, arguments in calls:
            with pytest.raises(InvalidInputError) as caught:
                driver.call_tool(tool, arguments)
            assert f"invisible format character {code_point}" in caught.value.message
            assert "allow_format_characters" in caught.value.message
            assert caught.value.details == {"field": "line", "code_point": code_point}
    log = own_broker.log()
    assert log.count("Received PUBLISH") == 1 and "Received SUBSCRIBE" not in log


def test_d1_the_allow_format_characters_option_lets_them_through(own_broker: Mosquitto) -> None:
    joined = "line\u200d1"
    with driver_on(own_broker, allow_format_characters=True) as driver:
        dry = driver.call_tool("valve_setpoint", {"line": joined, "payload": {"setpoint_c": 20}, "dry_run": True})
        assert dry["topic"] == f"plant/{joined}/valve"
        assert driver.call_tool("valve_setpoint", {"line": joined, "payload": {"setpoint_c": 20}})["published"]
        publish_raw(own_broker.port, f"plant/{joined}/temp", b'{"celsius": 7}', retain=True)
        [message] = driver.call_tool("line_temperature", {"line": joined, "wait_s": 10})["messages"]
    assert message["topic"] == f"plant/{joined}/temp" and message["payload"] == {"celsius": 7}
    assert "Received PUBLISH" in own_broker.log()


def test_d1_a_format_character_in_the_spec_s_own_topic_stays_as_configured(own_broker: Mosquitto) -> None:
    address = "plant/\u200bline/{line}/valve"  # configuration: the operator wrote it
    spec = {"topics": {"valve": {"topic": address, "action": "send", "payload": {"type": "number"}}}}
    with driver_on(own_broker, spec=spec) as driver:
        result = driver.call_tool("valve", {"line": "a", "payload": 1})
    assert result["published"] and result["topic"] == "plant/\u200bline/a/valve"


def test_d1_topics_built_before_are_reused_only_for_the_same_values(own_broker: Mosquitto) -> None:
    def topic(line: str) -> str:
        args = {"line": line, "payload": {"setpoint_c": 20}, "dry_run": True}
        return str(driver.call_tool("valve_setpoint", args)["topic"])

    with driver_on(own_broker) as driver:
        assert [topic(v) for v in ("line1", "line2", "line1")] == ["plant/line1/valve", "plant/line2/valve",
                                                                    "plant/line1/valve"]
        for _ in range(2):  # a refused value is never remembered as a topic
            with pytest.raises(InvalidInputError):
                topic("line1/+")
        assert [topic(f"l{n}") for n in range(300)][-1] == "plant/l299/valve"  # past the bound: still right


def test_d1_a_70_kb_topic_is_refused_for_publish_and_subscribe(own_broker: Mosquitto) -> None:
    with driver_on(own_broker) as driver:
        with pytest.raises(InvalidInputError, match="MQTT allows 65535"):
            driver.call_tool("valve_setpoint", {"line": "x" * 70_000, "payload": {"setpoint_c": 20}})
        with pytest.raises(InvalidInputError, match="MQTT allows 65535"):
            driver.call_tool("line_temperature", {"line": "x" * 70_000, "wait_s": 0})
    assert "Received PUBLISH" not in own_broker.log() and "Received SUBSCRIBE" not in own_broker.log()


def test_d1_publish_outside_the_allow_list_is_denied_and_allowed_topics_pass(own_broker: Mosquitto) -> None:
    with driver_on(own_broker, publish_allow=["plant/line1/*"]) as driver:
        with pytest.raises(PolicyDeniedError) as caught:
            driver.call_tool("valve_setpoint", {"line": "line2", "payload": {"setpoint_c": 20}})
        assert caught.value.details["allowed"] == ["plant/line1/*"]
        assert "Received PUBLISH" not in own_broker.log()
        assert driver.call_tool("valve_setpoint", {"line": "line1", "payload": {"setpoint_c": 20}})["published"]
    assert "'plant/line1/valve'" in own_broker.log() and "line2" not in own_broker.log()


def test_d1_a_wildcard_read_is_refused_when_only_one_topic_may_be_subscribed(own_broker: Mosquitto) -> None:
    with driver_on(own_broker, subscribe_allow=["plant/line1/temp"], spec={
        "topics": {"t": {"topic": "plant/{line}/temp", "action": "receive"}}}) as driver:
        with pytest.raises(PolicyDeniedError, match="plant/\\+/temp"):
            driver.call_tool("t", {"wait_s": 0})  # every line: plant/+/temp
        with pytest.raises(PolicyDeniedError):
            driver.call_tool("t", {"line": "line2", "wait_s": 0})
        assert "Received SUBSCRIBE" not in own_broker.log()
        assert driver.call_tool("t", {"line": "line1", "wait_s": 0})["messages"] == []
    log = own_broker.log()
    assert "\tplant/line1/temp (QoS 1)" in log and "plant/+" not in log and "plant/#" not in log


def test_d1_a_read_of_a_channel_outside_subscribe_allow_is_denied_though_the_spec_declares_it(
        own_broker: Mosquitto) -> None:
    publish_raw(own_broker.port, "vault/line1/code", b'{"code": "4711"}', retain=True)
    spec = {"topics": {"temp": {"topic": "plant/{line}/temp", "action": "receive"},
                       "code": {"topic": "vault/{line}/code", "action": "receive"}}}
    with driver_on(own_broker, spec=spec, subscribe_allow=["plant/*"]) as driver:
        assert {"temp", "code"} <= {tool.name for tool in driver.list_tools()}  # offered, but not readable
        for arguments in ({"line": "line1", "wait_s": 0}, {"wait_s": 0}, {"line": "line1", "mode": "next", "wait_s": 0}):
            with pytest.raises(PolicyDeniedError) as caught:
                driver.call_tool("code", arguments)
            assert caught.value.code == ErrorCode.POLICY_DENIED and caught.value.details["allowed"] == ["plant/*"]
            assert "vault/" in caught.value.message and "4711" not in caught.value.message
        assert driver.call_tool("temp", {"line": "line1", "wait_s": 0})["messages"] == []
        subscriptions = driver.get_status()["subscriptions"]
    assert subscriptions and not [s for s in subscriptions if s.startswith("vault/")]
    subscribed = own_broker.log().split("Received SUBSCRIBE", 1)[-1]
    assert "\tplant/" in subscribed and "vault/" not in subscribed


@pytest.mark.parametrize("payload", [
    {"setpoint_c": 9999}, {"setpoint_c": "hot"}, {"setpoint_c": 20, "extra": 1}, {}, "20",
])
def test_d2_a_payload_outside_its_schema_is_refused_and_nothing_is_published(own_broker: Mosquitto, payload: Any) -> None:
    with driver_on(own_broker) as driver, pytest.raises(InvalidInputError):
        driver.call_tool("valve_setpoint", {"line": "line1", "payload": payload})
    assert "Received PUBLISH" not in own_broker.log()


@pytest.mark.parametrize("flag", [{"retain": True}, {"qos": 2}, {"topic": "plant/other"}])
def test_d2_the_model_cannot_choose_retain_qos_or_topic(own_broker: Mosquitto, flag: dict) -> None:
    with driver_on(own_broker) as driver, pytest.raises(InvalidInputError) as caught:
        driver.call_tool("valve_setpoint", {"line": "line1", "payload": {"setpoint_c": 20}, **flag})
    assert next(iter(flag)) in caught.value.message
    assert "Received PUBLISH" not in own_broker.log()


def test_d2_a_valid_payload_goes_out_with_policy_fixed_qos_and_no_retain(own_broker: Mosquitto) -> None:
    with driver_on(own_broker) as driver:
        driver.call_tool("valve_setpoint", {"line": "line1", "payload": {"setpoint_c": 20.5}})
    assert "(d0, q1, r0, m1, 'plant/line1/valve', ... (19 bytes))" in own_broker.log()


def test_d6_dry_run_shows_the_exact_message_and_the_broker_sees_nothing(own_broker: Mosquitto) -> None:
    with driver_on(own_broker) as driver:
        events: list[Any] = []
        driver.on_execute_end(events.append)
        result = driver.call_tool("valve_setpoint", {"line": "line1", "payload": {"setpoint_c": 20}, "dry_run": True})
    assert result == {"dry_run": True, "topic": "plant/line1/valve", "qos": 1, "retain": False, "bytes": 17,
                      "content_type": "application/json", "payload_base64": "eyJzZXRwb2ludF9jIjoyMH0=",
                      "payload_text": '{"setpoint_c":20}'}
    assert events[0].arguments["dry_run"] is True and events[0].result["dry_run"] is True  # the audit entry
    assert "New client connected" not in own_broker.log()


def test_d6_simulation_mode_dry_runs_every_publish(own_broker: Mosquitto) -> None:
    with driver_on(own_broker, dry_run=True) as driver:
        assert driver.call_tool("alarm", {"payload": "fire"})["payload_text"] == "fire"
    assert "Received PUBLISH" not in own_broker.log()


def test_a_dry_run_still_refuses_what_a_real_publish_would(own_broker: Mosquitto) -> None:
    with driver_on(own_broker, publish_allow=["plant/alarm"]) as driver, pytest.raises(PolicyDeniedError):
        driver.call_tool("valve_setpoint", {"line": "line1", "payload": {"setpoint_c": 1}, "dry_run": True})


def test_the_per_topic_rate_limit_refuses_at_once_with_retry_after(own_broker: Mosquitto) -> None:
    with driver_on(own_broker, rate_limit="3/min", rate_limit_total=None) as driver:
        for _ in range(3):
            driver.call_tool("valve_setpoint", {"line": "line1", "payload": {"setpoint_c": 1}})
        with pytest.raises(PolicyDeniedError) as caught:
            driver.call_tool("valve_setpoint", {"line": "line1", "payload": {"setpoint_c": 1}})
        assert caught.value.code is ErrorCode.POLICY_DENIED
        assert 0 < caught.value.details["retry_after"] <= 60
        assert "Nothing was sent" in caught.value.message
        driver.call_tool("valve_setpoint", {"line": "line2", "payload": {"setpoint_c": 1}})  # another topic
    assert own_broker.log().count("Received PUBLISH") == 4


def test_the_overall_rate_limit_spans_topics(own_broker: Mosquitto) -> None:
    with driver_on(own_broker, rate_limit=None, rate_limit_total=[2, 60]) as driver:
        driver.call_tool("valve_setpoint", {"line": "a", "payload": {"setpoint_c": 1}})
        driver.call_tool("valve_setpoint", {"line": "b", "payload": {"setpoint_c": 1}})
        with pytest.raises(PolicyDeniedError, match="already published 2 messages"):
            driver.call_tool("valve_setpoint", {"line": "c", "payload": {"setpoint_c": 1}})
    assert own_broker.log().count("Received PUBLISH") == 2


def test_dry_runs_do_not_use_the_rate_budget(own_broker: Mosquitto) -> None:
    with driver_on(own_broker, rate_limit="1/min") as driver:
        for _ in range(3):
            driver.call_tool("alarm", {"payload": "x", "dry_run": True})
        assert driver.call_tool("alarm", {"payload": "x"})["published"]


def test_an_unknown_tool_or_a_hostile_value_never_leaks_a_traceback(own_broker: Mosquitto) -> None:
    with driver_on(own_broker, spec=LIGHTS) as driver:
        for args in ({"lightId": "a/b", "payload": {"command": "on"}}, {"lightId": str(uuid.uuid4())}):
            with pytest.raises(ToolCallError) as caught:
                driver.call_tool("sendCommand", args)
            assert "Traceback" not in caught.value.message
