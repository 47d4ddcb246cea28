"""A real mosquitto broker on a free loopback port, with its own config file, for the tests.

Each broker writes its configuration, password file, certificates and log into a folder
of its own; it listens on 127.0.0.1 only. ``restart()`` stops it and starts it again on
the same port (persistence on, so sessions of clients with ``clean_session=False``
survive). ``deny_subscribe`` makes it refuse those SUBSCRIBEs. ``log()`` is everything the broker logged (``log_type all``), so a test can
assert that a refused call never reached it. Also: a plain paho client that records
what it receives, and certificates made with ``cryptography``.
"""

from __future__ import annotations

import datetime
import getpass
import ipaddress
import json
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from support.servers import free_port, start_server, stop

HOST = "127.0.0.1"


def mosquitto_binary() -> str | None:
    found = shutil.which("mosquitto")
    if found is None and Path("/usr/sbin/mosquitto").is_file():
        found = "/usr/sbin/mosquitto"
    return found


def dynamic_security_plugin() -> Path | None:
    """mosquitto's dynamic security plugin (shipped with mosquitto 2.0), if installed."""
    binary = mosquitto_binary()
    roots = [Path("/usr/lib"), Path("/usr/local/lib"), Path("/usr/lib/x86_64-linux-gnu"),
             Path("/usr/lib/aarch64-linux-gnu")]
    if binary is not None:
        roots.insert(0, Path(binary).resolve().parent.parent / "lib")
    for root in roots:
        for found in (root / "mosquitto_dynamic_security.so", root / "mosquitto" / "mosquitto_dynamic_security.so"):
            if found.is_file():
                return found
    return None


@dataclass
class Certificates:
    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    other_ca: Path  # a CA that signed nothing the broker presents


def make_certificates(folder: Path) -> Certificates:
    """A CA, a server certificate for 127.0.0.1/localhost and a client certificate, as PEM files."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.UTC)

    def write_key(key: Any, path: Path) -> Path:
        path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
        return path

    def ca(name: str) -> tuple[Any, Any]:
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
                .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                             content_commitment=False, key_encipherment=False,
                                             data_encipherment=False, key_agreement=False,
                                             encipher_only=False, decipher_only=False), critical=True)
                .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
                .sign(key, hashes.SHA256()))
        return key, cert

    def leaf(ca_key: Any, ca_cert: Any, name: str, server: bool) -> tuple[Any, Any]:
        key = ec.generate_private_key(ec.SECP256R1())
        builder = (x509.CertificateBuilder()
                   .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
                   .issuer_name(ca_cert.subject).public_key(key.public_key())
                   .serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(minutes=5))
                   .not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                   .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                                  critical=False)
                   .add_extension(x509.ExtendedKeyUsage(
                       [ExtendedKeyUsageOID.SERVER_AUTH if server else ExtendedKeyUsageOID.CLIENT_AUTH]),
                       critical=False))
        if server:
            builder = builder.add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address(HOST)), x509.DNSName("localhost")]), critical=False)
        return key, builder.sign(ca_key, hashes.SHA256())

    ca_key, ca_cert = ca("MCS test CA")
    _, other_cert = ca("Some other CA")
    server_key, server_cert = leaf(ca_key, ca_cert, "127.0.0.1", True)
    client_key, client_cert = leaf(ca_key, ca_cert, "mcs-test-client", False)

    def write_cert(cert: Any, path: Path) -> Path:
        path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        return path

    return Certificates(
        ca=write_cert(ca_cert, folder / "ca.pem"),
        server_cert=write_cert(server_cert, folder / "server.pem"),
        server_key=write_key(server_key, folder / "server.key"),
        client_cert=write_cert(client_cert, folder / "client.pem"),
        client_key=write_key(client_key, folder / "client.key"),
        other_ca=write_cert(other_cert, folder / "other-ca.pem"),
    )


@dataclass
class Mosquitto:
    """One mosquitto process and its folder."""

    folder: Path
    users: dict[str, str] = field(default_factory=dict)
    certificates: Certificates | None = None
    require_certificate: bool = False
    deny_subscribe: tuple[str, ...] = ()  # filter patterns whose SUBSCRIBE the broker refuses
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def log_file(self) -> Path:
        return self.folder / "mosquitto.log"

    def _config(self) -> Path:
        lines = [
            f"listener {self.port} {HOST}",
            f"user {getpass.getuser()}",  # as root, mosquitto would drop to a user that cannot write here
            "persistence true",
            f"persistence_location {self.folder}/",
            "autosave_interval 0",
            f"log_dest file {self.log_file}",
            "log_type all",
            "set_tcp_nodelay true",
        ]
        if self.users:
            password_file = self.folder / "passwords"
            password_file.write_text("".join(f"{u}:{p}\n" for u, p in self.users.items()))
            subprocess.run([self._passwd(), "-U", str(password_file)], check=True, capture_output=True)
            lines += ["allow_anonymous false", f"password_file {password_file}"]
        else:
            lines.append("allow_anonymous true")
        if self.deny_subscribe:
            lines += self._dynamic_security()
        if self.certificates is not None:
            c = self.certificates
            lines += [f"cafile {c.ca}", f"certfile {c.server_cert}", f"keyfile {c.server_key}",
                      f"require_certificate {'true' if self.require_certificate else 'false'}"]
        path = self.folder / "mosquitto.conf"
        path.write_text("\n".join(lines) + "\n")
        return path

    def _dynamic_security(self) -> list[str]:
        """Config lines for mosquitto's dynamic security plugin, refusing ``deny_subscribe`` to
        anonymous clients. (mosquitto 2.0's ``acl_file`` checks only what is delivered: it
        acknowledges every SUBSCRIBE.)"""
        plugin = dynamic_security_plugin()
        assert plugin is not None, "mosquitto's dynamic security plugin is not installed"
        acls = [{"acltype": "subscribePattern", "topic": topic, "priority": 0, "allow": False}
                for topic in self.deny_subscribe]
        config = {
            "defaultACLAccess": {"publishClientSend": True, "publishClientReceive": True, "subscribe": True,
                                 "unsubscribe": True},
            "clients": [], "anonymousGroup": "anonymous",
            "groups": [{"groupname": "anonymous", "roles": [{"rolename": "limited"}]}],
            "roles": [{"rolename": "limited", "acls": acls}],
        }
        path = self.folder / "dynamic-security.json"
        path.write_text(json.dumps(config))
        return [f"plugin {plugin}", f"plugin_opt_config_file {path}"]

    @staticmethod
    def _passwd() -> str:
        binary = mosquitto_binary()
        assert binary is not None
        found = shutil.which("mosquitto_passwd") or str(Path(binary).with_name("mosquitto_passwd"))
        if not Path(found).exists():
            found = "/usr/bin/mosquitto_passwd"
        return found

    def start(self) -> None:
        binary = mosquitto_binary()
        assert binary is not None, "mosquitto is not installed (scripts/system-deps.sh installs it)"
        self.process = start_server([binary, "-c", self._config()], self.port)

    def stop(self) -> None:
        if self.process is not None:
            stop(self.process)
            self.process = None

    def restart(self, between: Callable[[], None] | None = None) -> None:
        """Stop the broker, run ``between`` while it is down, start it again on the same port."""
        self.stop()
        if between is not None:
            between()
        self.start()

    def log(self) -> str:
        return self.log_file.read_text(errors="replace") if self.log_file.exists() else ""


@contextmanager
def running_mosquitto(folder: Path, **options: Any) -> Iterator[Mosquitto]:
    folder.mkdir(parents=True, exist_ok=True)
    broker = Mosquitto(folder, **options)
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


class Observer:
    """A bare paho client subscribed to ``topic_filter``: what really went over the broker."""

    def __init__(self, port: int, topic_filter: str, *, qos: int = 1, client_id: str | None = None,
                 clean_session: bool = True, protocol: int = mqtt.MQTTv311) -> None:
        self.messages: list[mqtt.MQTTMessage] = []
        self._cond = threading.Condition()
        self._subscribed = threading.Event()
        self.topic_filter = topic_filter
        self.qos = qos
        kwargs: dict[str, Any] = {"client_id": client_id or f"observer-{time.monotonic_ns()}", "protocol": protocol}
        if protocol != mqtt.MQTTv5:
            kwargs["clean_session"] = clean_session
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, **kwargs)
        self.client.reconnect_delay_set(1, 2)
        self.client.on_connect = self._on_connect
        self.client.on_subscribe = lambda *args: self._subscribed.set()
        self.client.on_message = self._on_message
        self.client.connect(HOST, port)
        self.client.loop_start()
        assert self._subscribed.wait(10), "the observer could not subscribe"

    def _on_connect(self, client: mqtt.Client, userdata: Any, flags: Any, reason: Any, properties: Any) -> None:
        if not reason.is_failure:
            client.subscribe(self.topic_filter, self.qos)

    def _on_message(self, client: mqtt.Client, userdata: Any, message: mqtt.MQTTMessage) -> None:
        with self._cond:
            self.messages.append(message)
            self._cond.notify_all()

    def wait_for(self, count: int, timeout: float = 10.0) -> list[mqtt.MQTTMessage]:
        with self._cond:
            self._cond.wait_for(lambda: len(self.messages) >= count, timeout)
            return list(self.messages)

    def payloads(self) -> list[bytes]:
        with self._cond:
            return [bytes(m.payload) for m in self.messages]

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def publish_raw(port: int, topic: str, payload: bytes, *, retain: bool = False, qos: int = 1) -> None:
    """Publish from a plain paho client (a device), waiting until the broker has it."""
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"device-{time.monotonic_ns()}")
    client.connect(HOST, port)
    client.loop_start()
    try:
        client.publish(topic, payload, qos=qos, retain=retain).wait_for_publish(10)
    finally:
        client.disconnect()
        client.loop_stop()
