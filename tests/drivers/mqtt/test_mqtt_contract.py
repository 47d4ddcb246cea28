"""The core's contract suite (mcs.testing) over the MQTT driver, with and without a prefix,
against the shared mosquitto broker."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from mcs_mqtt import MqttDriver
from mqtt_broker import Mosquitto, publish_raw
from mqtt_specs import LIGHTS

from mcs.testing import DriverContractTests

LABEL_TOPIC = "lights/contract/label"


class TestMqttDriverContract(DriverContractTests):
    @pytest.fixture(params=[None, "street"], ids=["no-prefix", "prefix"])
    def driver(self, request: pytest.FixtureRequest, broker: Mosquitto) -> Iterator[MqttDriver]:
        publish_raw(broker.port, LABEL_TOPIC, b"contract", retain=True)
        with MqttDriver(LIGHTS, host="127.0.0.1", port=broker.port, prefix=request.param, timeout=10) as driver:
            yield driver

    @pytest.fixture
    def valid_call(self, driver: MqttDriver) -> str:
        name = self.exposed_name(driver, "readLabel")
        return json.dumps({"tool": name, "arguments": {"lightId": "contract", "wait_s": 5}})

    def test_valid_call_reads_the_retained_label(self, driver: MqttDriver, valid_call: str) -> None:
        result: Any = driver.process_llm_response(valid_call)
        assert [m["payload"] for m in result["messages"]] == ["contract"]
        assert result["messages"][0]["retained"] is True

    def test_a_prefixed_publish_reaches_the_broker(self, driver: MqttDriver, broker: Mosquitto) -> None:
        name = self.exposed_name(driver, "sendCommand")
        result = driver.call_tool(name, {"lightId": "contract", "payload": {"command": "on"}})
        assert result["topic"] == "lights/contract/command" and result["acknowledged"] is True
