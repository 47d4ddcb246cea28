"""`make demo-mqtt` (python -m mcs_mqtt.demo): a real round trip through an embedded amqtt broker."""

from __future__ import annotations

import json
import socket

import paho.mqtt.client as mqtt
import pytest
from mcs_mqtt import demo
from paho.mqtt.enums import CallbackAPIVersion


def test_the_demo_reads_dry_runs_publishes_and_refuses(capsys: pytest.CaptureFixture[str]) -> None:
    demo.main()
    out = capsys.readouterr().out
    assert "== System prompt for claude-3-5-sonnet ==" in out and "setWindow" in out
    results = [json.loads(part.split("\n\n")[0]) for part in out.split("== Result of the real MQTT call ==\n")[1:]]
    assert results[0]["messages"][0]["payload"]["celsius"] == 31.5
    assert results[1]["dry_run"] is True and results[1]["payload_text"] == '{"open_percent":40}'
    assert results[2]["published"] is True and results[2]["acknowledged"] is True
    assert "== Refused (INVALID_INPUT) ==" in out
    received = json.loads(out.split("== What the window actuator received ==\n")[1].split("\n\n")[0])
    assert received == [["greenhouse/north/window", '{"open_percent":40}']]  # the dry run sent nothing


def test_the_embedded_broker_stops_after_use() -> None:
    with demo.embedded_broker() as port:
        client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="demo-test")
        assert client.connect("127.0.0.1", port) == mqtt.MQTT_ERR_SUCCESS
        client.disconnect()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
