"""The shared connection against real brokers: passwords, TLS with client certificates, a
broker that is down, refused credentials, restarts (reconnect, nothing lost at QoS 1),
outages longer than a call's deadline, and closing."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from mcs_mqtt import MqttDriver
from mqtt_broker import Certificates, Mosquitto, Observer, publish_raw
from mqtt_specs import LIGHTS, PLANT, USERS
from support.servers import free_port

from mcs.errors import ExecutionError

VALVE = {"line": "line1", "payload": {"setpoint_c": 20}}


def make(broker: Mosquitto, spec: Any = PLANT, **options: Any) -> MqttDriver:
    options.setdefault("timeout", 10)
    return MqttDriver(spec, host="127.0.0.1", port=broker.port, **options)


def test_one_connection_serves_every_tool_and_call(broker: Mosquitto) -> None:
    with make(broker, LIGHTS) as driver:
        driver.call_tool("sendCommand", {"lightId": "a1", "payload": {"command": "on"}})
        driver.call_tool("readLabel", {"lightId": "a1", "wait_s": 0})
        asyncio.run(driver.acall_tool("sendCommand", {"lightId": "a1", "payload": {"command": "off"}}))
        client = driver.connection._client
        driver.call_tool("setLabel", {"lightId": "a1", "payload": "x"})
        assert driver.connection._client is client
    assert broker.log().count(f"as {client._client_id.decode()}") == 1


def test_username_and_password_open_a_protected_broker(auth_broker: Mosquitto) -> None:
    user, password = next(iter(USERS.items()))
    with make(auth_broker, username=user, password=password) as driver:
        assert driver.call_tool("valve_setpoint", VALVE)["published"]


@pytest.mark.parametrize("credentials", [{}, {"username": "operator", "password": "wrong"},
                                         {"username": "nobody", "password": "x"}])
@pytest.mark.parametrize("protocol", ["3.1.1", "5"])
def test_refused_credentials_fail_at_once_with_a_clear_error(auth_broker: Mosquitto, credentials: dict,
                                                             protocol: str) -> None:
    with make(auth_broker, protocol=protocol, **credentials) as driver:
        started = time.monotonic()
        with pytest.raises(ExecutionError) as caught:
            driver.call_tool("valve_setpoint", VALVE)
        assert time.monotonic() - started < 3  # at once: not the 10 s deadline, no retry loop
    message = caught.value.message
    assert "refused the connection" in message and "username and password" in message
    assert "wrong" not in message and caught.value.details["reason"] == "refused"


def test_a_broker_that_is_down_gives_a_clear_error_at_once() -> None:
    with MqttDriver(PLANT, host="127.0.0.1", port=free_port(), timeout=10) as driver:
        started = time.monotonic()
        with pytest.raises(ExecutionError, match=r"Cannot reach the MQTT broker at 127\.0\.0\.1:.*is it running"):
            driver.call_tool("valve_setpoint", VALVE)
        with pytest.raises(ExecutionError, match="Cannot reach"):
            asyncio.run(driver.acall_tool("valve_setpoint", VALVE))
        assert time.monotonic() - started < 3


def test_tls_with_a_client_certificate_and_password(tls_broker: Mosquitto, certificates: Certificates) -> None:
    with make(tls_broker, tls=True, ca_file=str(certificates.ca), cert_file=str(certificates.client_cert),
              key_file=str(certificates.client_key), username="operator", password=USERS["operator"]) as driver:
        assert driver.call_tool("valve_setpoint", VALVE)["published"]
        assert driver.get_status()["tls"] is True


def test_tls_against_an_unknown_ca_fails_the_handshake_clearly(tls_broker: Mosquitto,
                                                               certificates: Certificates) -> None:
    with make(tls_broker, ca_file=str(certificates.other_ca), cert_file=str(certificates.client_cert),
              key_file=str(certificates.client_key)) as driver, pytest.raises(ExecutionError) as caught:
        driver.call_tool("valve_setpoint", VALVE)
    assert "TLS handshake" in caught.value.message and "CERTIFICATE_VERIFY_FAILED" in caught.value.message


def test_tls_without_the_required_client_certificate_is_refused(tls_broker: Mosquitto,
                                                                certificates: Certificates) -> None:
    with make(tls_broker, ca_file=str(certificates.ca), username="operator", password=USERS["operator"]) as driver, \
            pytest.raises(ExecutionError) as caught:
        driver.call_tool("valve_setpoint", VALVE)
    assert tls_broker.certificates is not None
    assert "127.0.0.1" in caught.value.message and "Traceback" not in caught.value.message


def test_a_plain_client_cannot_talk_to_the_tls_port(tls_broker: Mosquitto) -> None:
    started = time.monotonic()
    with make(tls_broker) as driver, pytest.raises(ExecutionError) as caught:
        driver.call_tool("valve_setpoint", VALVE)
    assert "closed the connection before accepting it" in caught.value.message
    assert time.monotonic() - started < 3


def test_a_broker_restart_loses_nothing_at_qos1(own_broker: Mosquitto) -> None:
    observer = Observer(own_broker.port, "plant/+/valve", client_id="restart-observer", clean_session=False)
    try:
        with make(own_broker, timeout=15, rate_limit=None) as driver:
            for n in range(5):
                driver.call_tool("valve_setpoint", {"line": "l", "payload": {"setpoint_c": n}})
            during: dict[str, Any] = {}

            def publish_during_outage() -> None:
                try:
                    during["result"] = driver.call_tool("valve_setpoint", {"line": "l", "payload": {"setpoint_c": 5}})
                except Exception as exc:
                    during["error"] = exc

            thread = threading.Thread(target=publish_during_outage)

            def while_down() -> None:
                deadline = time.monotonic() + 10
                while driver.connection.connected and time.monotonic() < deadline:
                    time.sleep(0.01)  # the driver noticed the broker is gone
                thread.start()

            own_broker.restart(between=while_down)
            thread.join(20)
            assert during.get("result", {}).get("published") is True, during
            for n in range(6, 10):
                driver.call_tool("valve_setpoint", {"line": "l", "payload": {"setpoint_c": n}})
            assert driver.get_status()["reconnects"] == 1
        received = observer.wait_for(10, timeout=20)
    finally:
        observer.close()
    values = [int(m.payload.decode().split(":")[1].rstrip("}")) for m in received]
    first_seen = list(dict.fromkeys(values))
    assert first_seen == list(range(10))  # all of them, in order; QoS 1 allows duplicates only


def test_the_background_subscription_comes_back_after_a_restart(own_broker: Mosquitto) -> None:
    with make(own_broker, LIGHTS, timeout=15) as driver:
        driver.call_tool("readState", {"lightId": "r1", "wait_s": 0})
        own_broker.restart()
        deadline = time.monotonic() + 15
        while "lights/+/state" not in driver.get_status()["subscriptions"] and time.monotonic() < deadline:
            time.sleep(0.02)
        publish_raw(own_broker.port, "lights/r1/state", b'{"on": true}')
        result = driver.call_tool("readState", {"lightId": "r1", "wait_s": 10})
        assert result["messages"][-1]["payload"] == {"on": True}


def test_an_outage_longer_than_the_deadline_fails_clearly_and_the_next_call_reconnects(own_broker: Mosquitto) -> None:
    with make(own_broker, timeout=1.0) as driver:
        driver.call_tool("valve_setpoint", VALVE)
        own_broker.stop()
        deadline = time.monotonic() + 10
        while driver.connection.connected and time.monotonic() < deadline:
            time.sleep(0.01)
        started = time.monotonic()
        with pytest.raises(ExecutionError) as caught:
            driver.call_tool("valve_setpoint", VALVE)
        assert 0.8 <= time.monotonic() - started < 5
        assert "unreachable" in caught.value.message and "Nothing was sent" in caught.value.message
        assert caught.value.details["retryable"] is True
        with pytest.raises(ExecutionError, match="unreachable"):
            asyncio.run(driver.acall_tool("valve_setpoint", VALVE))
        own_broker.start()
        driver.timeout = 10
        assert driver.call_tool("valve_setpoint", VALVE)["published"]
    after_restart = own_broker.log().split("starting")[-1]
    assert after_restart.count("'plant/line1/valve'") == 1  # the refused calls never reached it


def test_close_stops_the_network_thread_and_a_later_call_connects_again(broker: Mosquitto) -> None:
    driver = make(broker)
    driver.call_tool("valve_setpoint", VALVE)
    before = {t.name for t in threading.enumerate() if t.name.startswith("paho-mqtt-client-")}
    assert before
    driver.close()
    after = {t.name for t in threading.enumerate() if t.name.startswith("paho-mqtt-client-")}
    assert not (before & after) and driver.get_status()["connected"] is False
    assert driver.call_tool("valve_setpoint", VALVE)["published"]
    driver.close()


def test_the_async_context_manager_closes_the_connection(broker: Mosquitto) -> None:
    async def main() -> MqttDriver:
        async with make(broker) as driver:
            await driver.acall_tool("valve_setpoint", VALVE)
            assert driver.get_status()["connected"] is True
        return driver

    assert asyncio.run(main()).get_status()["connected"] is False


def test_mqtt5_with_a_persistent_session(broker: Mosquitto) -> None:
    with make(broker, protocol="5", clean_session=False, session_expiry=60, client_id="mcs-v5-session") as driver:
        assert driver.call_tool("valve_setpoint", VALVE)["published"]
        assert driver.get_status()["protocol"] == "5"


def test_bad_tls_files_are_a_configuration_error(tmp_path: Path) -> None:
    (tmp_path / "bad.pem").write_text("not a certificate")
    from mcs.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="ca_file"):
        MqttDriver(PLANT, host="127.0.0.1", tls=True, ca_file=str(tmp_path / "bad.pem"))
    with pytest.raises(ConfigurationError, match="need tls=True"):
        MqttDriver(PLANT, host="127.0.0.1", tls=False, key_file=str(tmp_path / "bad.pem"))
