"""Fixtures for the MQTT driver: real mosquitto brokers (plain, with passwords, with TLS) on
free loopback ports, the test specs, and drivers connected to a broker."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcs_mqtt import MqttDriver
from mqtt_broker import (
    Certificates,
    Mosquitto,
    Observer,
    make_certificates,
    mosquitto_binary,
    running_mosquitto,
)
from mqtt_specs import LIGHTS, USERS

HERE = Path(__file__).resolve().parent


# paho-mqtt leaves the TLS socket of a failed handshake for the garbage collector to close
# (Client._ssl_wrap_socket raises from do_handshake() without closing the socket it made),
# so CPython reports it as unclosed. Only that warning, only for these tests.
_PAHO_TLS_LEAK = [
    "ignore:unclosed <ssl.SSLSocket:ResourceWarning",
    "ignore:Exception ignored in. <ssl.SSLSocket:pytest.PytestUnraisableExceptionWarning",
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.path)).parents:
            for spec in _PAHO_TLS_LEAK:
                item.add_marker(pytest.mark.filterwarnings(spec))


@pytest.fixture(scope="session")
def mosquitto_installed() -> None:
    if mosquitto_binary() is None:
        pytest.skip("mosquitto is not installed (make test installs it through scripts/system-deps.sh)")


@pytest.fixture(scope="session")
def broker(mosquitto_installed: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mosquitto]:
    """One anonymous broker shared by the tests that only publish and read."""
    with running_mosquitto(tmp_path_factory.mktemp("mosquitto")) as running:
        yield running


@pytest.fixture
def own_broker(mosquitto_installed: None, tmp_path: Path) -> Iterator[Mosquitto]:
    """A broker for one test (restarts, logs that must start empty)."""
    with running_mosquitto(tmp_path / "broker") as running:
        yield running


@pytest.fixture(scope="session")
def auth_broker(mosquitto_installed: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mosquitto]:
    with running_mosquitto(tmp_path_factory.mktemp("mosquitto-auth"), users=USERS) as running:
        yield running


@pytest.fixture(scope="session")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return make_certificates(tmp_path_factory.mktemp("certificates"))


@pytest.fixture(scope="session")
def tls_broker(mosquitto_installed: None, tmp_path_factory: pytest.TempPathFactory,
               certificates: Certificates) -> Iterator[Mosquitto]:
    """TLS with client certificates required, and passwords."""
    with running_mosquitto(tmp_path_factory.mktemp("mosquitto-tls"), users=USERS, certificates=certificates,
                           require_certificate=True) as running:
        yield running


@pytest.fixture
def connect(broker: Mosquitto) -> Iterator[Any]:
    """``connect(spec=LIGHTS, **options)``: a driver on the shared broker, closed after the test."""
    made: list[MqttDriver] = []

    def build(spec: Any = LIGHTS, **options: Any) -> MqttDriver:
        options.setdefault("host", "127.0.0.1")
        options.setdefault("port", broker.port)
        options.setdefault("timeout", 10)
        driver = MqttDriver(spec, **options)
        made.append(driver)
        return driver

    yield build
    for driver in made:
        driver.close()


@pytest.fixture
def observe(broker: Mosquitto) -> Iterator[Any]:
    """``observe("lights/#")``: a plain paho subscriber on the shared broker."""
    made: list[Observer] = []

    def build(topic_filter: str, **options: Any) -> Observer:
        observer = Observer(broker.port, topic_filter, **options)
        made.append(observer)
        return observer

    yield build
    for observer in made:
        observer.close()
