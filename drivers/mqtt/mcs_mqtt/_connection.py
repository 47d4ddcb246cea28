"""One paho-mqtt connection shared by every tool of a driver, for threads and event loops.

What a caller can rely on:

* The first use connects (socket, TLS, CONNECT/CONNACK) within the call's deadline; a
  broker that is down or that refuses the credentials fails that call at once with a
  message saying which, and the next call tries again from scratch.
* Once connected, paho's network thread keeps the connection: when it drops, it reconnects
  with exponential backoff (``reconnect_min_delay`` doubling up to ``reconnect_max_delay``)
  and re-subscribes every filter. A call made during the outage waits for the connection
  within its own deadline, then fails with a clear error; nothing is handed to paho before
  the connection is up, so nothing is sent late.
* A publish returns when the broker acknowledged it (QoS 1/2) or when it was written
  (QoS 0). If the connection drops after sending, paho re-sends it on reconnect (QoS 1:
  at least once). If the deadline passes first, the message is withdrawn: it leaves paho's
  resend queue, and when its PUBLISH is still (even partly) in paho's outgoing byte queue,
  as on a stalled link, the connection is cut so that it never goes out. The error says
  whether the message can still reach the broker (``details.may_be_delivered``).
* Tools share subscriptions: a broker keeps one subscription per filter per client, and a
  later SUBSCRIBE replaces the QoS of an earlier one. So each filter is held on behalf of
  its users (``holder``), at the highest QoS any of them needs; a user never lowers it, and
  when one lets go the filter stays subscribed for the others (at what they still need) and
  is unsubscribed once none is left.
* A subscription the broker refused, or did not acknowledge within the call's deadline, is
  an ExecutionError naming the filter and the broker's reason, on every call that relies
  on it, until the broker grants it (after a reconnect too).
* The async methods never block the event loop: the socket connect runs on a worker
  thread, acknowledgements and state changes wake the loop through ``call_soon_threadsafe``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import socket
import ssl
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode

from mcs.errors import ConfigurationError, ExecutionError, ToolTimeoutError
from mcs_mqtt._history import Received, Signal

Protocol = Literal["3.1.1", "5"]
_AUTH_FAILURES = {4, 5, 0x86, 0x87, 0x8C}  # bad user name or password / not authorized / bad auth method
# Waits end this much before the call's deadline, so the caller gets this module's clear
# error rather than the pipeline's generic TIMEOUT racing it.
_MARGIN = 0.05


# How long a withdrawal waits for paho's network thread to notice the connection it cut.
_ABORT_WAIT = 1.0
# The async path's acknowledgement wait ends this much before the deadline, which cancels
# the call: the time left is the withdrawal's, so its answer says what became of the message.
_ASYNC_ABORT_MARGIN = 0.25
_PUBLISH = 0x30
_INFLIGHT_STATES = (mqtt.mqtt_ms_wait_for_puback, mqtt.mqtt_ms_wait_for_pubrec, mqtt.mqtt_ms_wait_for_pubrel,
                    mqtt.mqtt_ms_wait_for_pubcomp, mqtt.mqtt_ms_resend_pubrel)
# What became of a withdrawn message: "unsent" (it cannot reach the broker) or "maybe".
Recall = Literal["unsent", "maybe"]


def _left(deadline: float | None) -> float | None:
    return None if deadline is None else max(0.0, deadline - _MARGIN - time.monotonic())


def _published(info: mqtt.MQTTMessageInfo, done: dict[int, None]) -> bool:
    """Acknowledged (QoS 1/2) or written (QoS 0). Never raises: paho's ``is_published`` does when
    the message was queued without a connection or dropped with one."""
    return info.mid in done or (info.rc == mqtt.MQTT_ERR_SUCCESS and info.is_published())


def _queued_packet(client: mqtt.Client, mid: int) -> dict[str, Any] | None:
    """The PUBLISH packet of ``mid`` that paho has not wholly written to the socket, if any."""
    queue = getattr(client, "_out_packet", None)
    if queue is None:
        return None
    for packet in list(queue):  # one copy under the GIL: the network thread pops and pushes back meanwhile
        if packet["command"] & 0xF0 == _PUBLISH and packet["mid"] == mid and packet["to_process"] > 0:
            return packet  # type: ignore[no-any-return]
    return None


class _Pending:
    """A withdrawal that cut the connection: once paho's network thread has seen the cut, it
    writes nothing more, so what is left of the packet then never leaves."""

    def __init__(self, packet: dict[str, Any], connection: Connection, drops: int) -> None:
        self.packet = packet
        self.connection = connection
        self.drops = drops

    def observed(self) -> bool:
        return self.connection.drops != self.drops

    def outcome(self) -> Recall:
        return "unsent" if self.observed() and self.packet["to_process"] > 0 else "maybe"


@dataclass(frozen=True)
class BrokerOptions:
    """How to reach the broker. ``password`` and ``key_password`` never appear in messages."""

    host: str
    port: int
    tls: ssl.SSLContext | None = None
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    client_id: str = ""
    protocol: Protocol = "3.1.1"
    clean_session: bool = True
    keepalive: int = 60
    session_expiry: int | None = None
    reconnect_min_delay: int = 1
    reconnect_max_delay: int = 30

    @property
    def where(self) -> str:
        return f"{self.host}:{self.port}"


def tls_context(
    *, ca_file: str | None, cert_file: str | None, key_file: str | None, key_password: str | None,
    check_hostname: bool,
) -> ssl.SSLContext:
    """A client TLS context; files that cannot be loaded are a ConfigurationError naming them."""
    try:
        context = ssl.create_default_context(cafile=ca_file)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigurationError(f"ca_file {ca_file!r} cannot be loaded: {exc}") from None
    context.check_hostname = check_hostname
    if cert_file is not None:
        try:
            context.load_cert_chain(cert_file, key_file, key_password)
        except (OSError, ssl.SSLError) as exc:
            raise ConfigurationError(f"cert_file {cert_file!r} / key_file {key_file!r} cannot be loaded: {exc}") from None
    elif key_file is not None:
        raise ConfigurationError("key_file needs cert_file (the client certificate)")
    return context


@dataclass(eq=False)
class _Filter:
    """One topic filter subscribed on behalf of its holders, and what the broker said of it."""

    holders: dict[object, int] = field(default_factory=dict)  # who uses it, and the QoS each needs
    qos: int = 0  # the QoS of the last SUBSCRIBE sent for it
    mid: int | None = None  # that SUBSCRIBE's message id until the broker answers it
    granted: bool = False  # the broker acknowledged that SUBSCRIBE on the current connection
    refused: str | None = None  # the broker's reason when it refused it

    @property
    def wanted(self) -> int:
        """The highest QoS a holder needs."""
        return max(self.holders.values(), default=0)


class _Ack:
    """Waits for one acknowledgement (PUBACK/PUBCOMP, SUBACK) from the network thread."""

    __slots__ = ("done", "error", "future", "loop")

    def __init__(self, loop: asyncio.AbstractEventLoop | None) -> None:
        self.done = threading.Event()
        self.error: str | None = None
        self.loop = loop
        self.future: asyncio.Future[None] | None = loop.create_future() if loop is not None else None

    def set(self, error: str | None = None) -> None:
        self.error = error
        self.done.set()
        if self.loop is not None and self.future is not None:
            with contextlib.suppress(RuntimeError):
                self.loop.call_soon_threadsafe(_finish, self.future)


def _finish(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


class Connection:
    """The driver's broker connection. Thread-safe; usable from any number of event loops."""

    def __init__(self, options: BrokerOptions, on_message: Callable[[Received], None]) -> None:
        self.options = options
        self._on_message = on_message
        self._client: mqtt.Client | None = None
        self._start_lock = threading.Lock()
        self._lock = threading.Lock()
        self._state = Signal()
        self._connected = False
        self._refused: str | None = None
        self._refused_auth = False
        self._lost_at: float | None = None
        self._last_error: str | None = None
        self._filters: dict[str, _Filter] = {}  # held by the tools, re-sent on every reconnect
        self._sent: dict[int, list[str]] = {}  # SUBSCRIBEs awaiting their SUBACK: the filters of each
        self._answers = Signal()  # the broker answered a SUBSCRIBE
        self._acks: dict[int, _Ack] = {}
        self._failed: dict[int, str] = {}  # publishes the broker refused (MQTT 5 reason codes)
        self._done: dict[int, None] = {}  # recently acknowledged message ids, oldest first
        self._acked = Signal()  # a publish was acknowledged: for waits paho's own event cannot serve
        self._early: dict[int, str | None] = {}
        self._seq = itertools.count(1)
        self.reconnects = 0
        self.drops = 0  # connections lost or cut, counted by the network thread
        self.links = 0  # connections the broker accepted, counted by the network thread: messages carry it
        self._ever_connected = False

    # ------------------------------------------------------------------ state

    @property
    def connected(self) -> bool:
        return self._connected

    def status(self) -> dict[str, Any]:
        """JSON-safe connection facts (no secrets)."""
        return {
            "broker": self.options.where,
            "connected": self._connected,
            "protocol": self.options.protocol,
            "tls": self.options.tls is not None,
            "subscriptions": sorted(f for f, entry in list(self._filters.items()) if entry.granted),
            "reconnects": self.reconnects,
            "last_error": self._last_error,
        }

    # ------------------------------------------------------------------ connecting

    def _new_client(self) -> mqtt.Client:
        o = self.options
        protocol = mqtt.MQTTv5 if o.protocol == "5" else mqtt.MQTTv311
        client = mqtt.Client(
            CallbackAPIVersion.VERSION2,
            client_id=o.client_id or f"mcs-{uuid.uuid4().hex[:12]}",
            protocol=protocol,
            clean_session=o.clean_session if protocol == mqtt.MQTTv311 else None,
        )
        if o.username is not None:
            client.username_pw_set(o.username, o.password)
        if o.tls is not None:
            client.tls_set_context(o.tls)
        client.reconnect_delay_set(o.reconnect_min_delay, o.reconnect_max_delay)
        client.on_connect = self._handle_connect
        client.on_disconnect = self._handle_disconnect
        client.on_publish = self._handle_publish
        client.on_subscribe = self._handle_subscribe
        client.on_unsubscribe = self._handle_unsubscribe
        client.on_message = self._handle_message
        return client

    def _open(self, deadline: float | None) -> None:
        """Connect the socket and start the network thread (blocking; callers bound it)."""
        with self._start_lock:
            if self._client is not None:
                return
            o = self.options
            client = self._new_client()
            remaining = 30.0 if deadline is None else deadline - time.monotonic()
            if remaining <= 0:
                raise ToolTimeoutError(f"No time was left to connect to the MQTT broker at {o.where}.")
            client.connect_timeout = max(0.05, remaining)
            properties = None
            if o.protocol == "5" and o.session_expiry:
                properties = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
                properties.SessionExpiryInterval = o.session_expiry
            self._refused = None
            try:
                client.connect(o.host, o.port, keepalive=o.keepalive,
                               clean_start=o.clean_session if o.protocol == "5" else mqtt.MQTT_CLEAN_START_FIRST_ONLY,
                               properties=properties)
            except ssl.SSLError as exc:
                raise ExecutionError(
                    f"The TLS handshake with the MQTT broker at {o.where} failed ({exc.reason or exc}); "
                    "check ca_file, cert_file and key_file.", details={"broker": o.where, "reason": "tls"},
                ) from None
            except (TimeoutError, OSError) as exc:
                reason = exc.strerror or type(exc).__name__
                raise ExecutionError(
                    f"Cannot reach the MQTT broker at {o.where} ({reason}); is it running? Nothing was sent.",
                    details={"broker": o.where, "reason": "unreachable"},
                ) from None
            self._client = client
            client.loop_start()

    def _after_open_check(self) -> bool:
        return self._connected or self._refused is not None

    def _raise_if_refused(self) -> None:
        if self._refused is not None:
            reason = self._refused
            self._shutdown_client()
            hint = ("Check the username and password options (or the client certificate)."
                    if self._refused_auth else "Check the port, tls, protocol and client_id options.")
            raise ExecutionError(
                f"The MQTT broker at {self.options.where} refused the connection: {reason}. {hint} Nothing was sent.",
                details={"broker": self.options.where, "reason": "refused", "broker_reason": reason},
            )

    def _outage_error(self, waited: float) -> ExecutionError:
        since = f" (lost {time.monotonic() - self._lost_at:.1f} s ago)" if self._lost_at else ""
        last = f": {self._last_error}" if self._last_error else ""
        return ExecutionError(
            f"The MQTT broker at {self.options.where} is unreachable{since}{last}; waited {waited:.1f} s for "
            "it to come back within this call's deadline. Nothing was sent; try again later.",
            details={"broker": self.options.where, "reason": "unreachable", "retryable": True},
        )

    def ensure(self, deadline: float | None) -> mqtt.Client:
        """The connected client; connects first when needed. Raises a clear ExecutionError."""
        client = self._client
        if self._connected and client is not None:
            return client
        started = time.monotonic()
        if self._client is None:
            self._open(deadline)
        limit = deadline - _MARGIN if deadline is not None else started + 30.0
        self._state.wait(self._after_open_check, limit)
        self._raise_if_refused()
        if not self._connected:
            raise self._outage_error(time.monotonic() - started)
        assert self._client is not None
        return self._client

    async def aensure(self, deadline: float | None) -> mqtt.Client:
        """:meth:`ensure` without blocking the event loop."""
        client = self._client
        if self._connected and client is not None:
            return client
        started = time.monotonic()
        if self._client is None:
            await asyncio.to_thread(self._open, deadline)
        limit = deadline - _MARGIN if deadline is not None else started + 30.0
        await self._state.await_(self._after_open_check, limit)
        self._raise_if_refused()
        if not self._connected:
            raise self._outage_error(time.monotonic() - started)
        assert self._client is not None
        return self._client

    # ------------------------------------------------------------------ publishing

    def _send(self, client: mqtt.Client, topic: str, payload: bytes, qos: int, retain: bool,
              properties: Properties | None) -> mqtt.MQTTMessageInfo:
        info = client.publish(topic, payload, qos=qos, retain=retain, properties=properties)
        if info.rc != mqtt.MQTT_ERR_SUCCESS:
            self._check_queued(info, topic, qos)
        return info

    def _check_queued(self, info: mqtt.MQTTMessageInfo, topic: str, qos: int) -> None:
        """After a publish paho did not send at once: raises unless paho queued it for the reconnect."""
        if info.rc == mqtt.MQTT_ERR_NO_CONN and qos == 0:  # QoS 0 is never queued: it is gone
            raise self._outage_error(0.0)
        if info.rc != mqtt.MQTT_ERR_SUCCESS and info.rc != mqtt.MQTT_ERR_NO_CONN:
            raise ExecutionError(f"paho refused to publish to {topic!r}: {mqtt.error_string(info.rc)}.")

    def _acknowledged(self, info: mqtt.MQTTMessageInfo) -> Callable[[], bool]:
        return lambda: _published(info, self._done)

    def _settle(self, info: mqtt.MQTTMessageInfo, topic: str, qos: int, started: float) -> None:
        if _published(info, self._done):
            if not self._failed:  # the common case: no refusal recorded (it is, before the ack is visible)
                return
            with self._lock:
                failure = self._failed.pop(info.mid, None)
            if failure is not None:
                raise ExecutionError(f"The broker refused the publish to {topic!r}: {failure}.",
                                     details={"topic": topic, "reason": failure})
            return
        lost = not self._connected
        recall = self._recall(info, qos)
        if isinstance(recall, _Pending):
            self._state.wait(recall.observed, time.monotonic() + _ABORT_WAIT)
            recall = recall.outcome()
        raise self._unacknowledged(topic, qos, recall, lost, time.monotonic() - started)

    async def _asettle(self, info: mqtt.MQTTMessageInfo, topic: str, qos: int, started: float,
                       deadline: float | None) -> None:
        if not _published(info, self._done):
            lost = not self._connected
            recall = self._recall(info, qos)
            if isinstance(recall, _Pending):
                until = time.monotonic() + _ABORT_WAIT
                await self._state.await_(recall.observed, until if deadline is None else min(until, deadline - _MARGIN))
                recall = recall.outcome()
            raise self._unacknowledged(topic, qos, recall, lost, time.monotonic() - started)
        self._settle(info, topic, qos, started)

    def _unacknowledged(self, topic: str, qos: int, recall: Recall, lost: bool,
                        waited: float) -> ExecutionError | ToolTimeoutError:
        """The error for a publish that did not complete by its deadline, saying what became of it."""
        written = "written" if qos == 0 else "acknowledged by the broker"
        if recall == "unsent":
            fate = "It was not sent and will not be: it was withdrawn."
        elif qos == 0:
            fate = "It may still reach the broker (it had already left this client)."
        else:
            fate = ("It will not be re-sent, but it had already been sent, so it may have reached the broker "
                    "or still reach it.")
        details = {"topic": topic, "reason": "unsent" if recall == "unsent" else "unacknowledged",
                   "may_be_delivered": recall != "unsent"}
        if lost:
            return ExecutionError(
                f"The connection to the MQTT broker at {self.options.where} was lost while publishing to "
                f"{topic!r} and did not come back within {waited:.1f} s. {fate}",
                details={**details, "retryable": True},
            )
        return ToolTimeoutError(f"The publish to {topic!r} was not {written} within {waited:.1f} s. {fate}",
                                details=details)

    def _recall(self, info: mqtt.MQTTMessageInfo, qos: int) -> Recall | _Pending:
        """Take a message that did not complete out of paho's hands, so that nothing goes out after
        the caller was told it failed, and say whether it can have been sent.

        QoS 1/2 messages leave paho's resend queue. A PUBLISH packet still (even partly) in paho's
        outgoing byte queue cannot be taken out of it safely while the network thread writes, so
        the connection is cut instead: paho then drops that queue (its bytes never complete a
        packet the broker would accept) and reconnects; other unacknowledged QoS 1/2 messages are
        re-sent on the new connection as after any drop.
        """
        if qos == 0 and info.rc == mqtt.MQTT_ERR_CONN_LOST:
            return "unsent"  # paho discarded it with the connection it was queued on
        client = self._client
        if client is None:
            return "maybe"
        if qos > 0:
            handed = self._withdraw(client, info.mid)
            if handed != "queued":
                return handed
        packet = _queued_packet(client, info.mid)
        if packet is None:
            return "maybe"  # wholly written to the socket
        sock = client.socket()
        if sock is None:
            return "unsent"  # between connections: paho clears its byte queue before it reconnects
        pending = _Pending(packet, self, self.drops)
        with contextlib.suppress(OSError):
            # The plain socket's shutdown, also under TLS: the network thread still owns the TLS state.
            socket.socket.shutdown(sock, socket.SHUT_RDWR)  # type: ignore[arg-type]
        return pending

    def _withdraw(self, client: mqtt.Client, mid: int) -> Recall | Literal["queued"]:
        """Drop a QoS 1/2 message from paho's resend queue. "queued": its PUBLISH was handed to
        paho's byte queue, whether it left is for the caller to find out."""
        mutex = getattr(client, "_out_message_mutex", None)
        queue = getattr(client, "_out_messages", None)
        if mutex is None or not isinstance(queue, dict):
            return "maybe"
        with mutex:
            message = queue.pop(mid, None)
            if message is None:
                return "maybe"  # acknowledged meanwhile, or already gone
            if message.state in _INFLIGHT_STATES:
                client._inflight_messages = max(0, client._inflight_messages - 1)
        if message.state in (mqtt.mqtt_ms_publish, mqtt.mqtt_ms_queued) and not message.dup:
            return "unsent"  # never handed to a connection
        if message.state in (mqtt.mqtt_ms_wait_for_puback, mqtt.mqtt_ms_wait_for_pubrec) and not message.dup:
            return "queued"
        return "maybe"  # sent on an earlier connection, or (QoS 2) the broker already has it

    def publish(self, topic: str, payload: bytes, qos: int, retain: bool, properties: Properties | None,
                deadline: float | None) -> int:
        """Publish and wait for the acknowledgement; returns the message id.

        When the deadline passes first, the message is withdrawn (see :meth:`_recall`) and the
        error says whether it can still reach the broker (``details.may_be_delivered``)."""
        started = time.monotonic()
        client = self._client
        if client is None or not self._connected:
            client = self.ensure(deadline)
        info = self._send(client, topic, payload, qos, retain, properties)
        if info.rc == mqtt.MQTT_ERR_SUCCESS:  # the common case: paho's own wait, nothing in between
            with contextlib.suppress(RuntimeError):  # paho dropped it with the connection: settled below
                info.wait_for_publish(_left(deadline))
        else:  # queued by paho while the connection dropped: sent when it comes back
            self._acked.wait(self._acknowledged(info), started + 30.0 if deadline is None else deadline - _MARGIN)
        self._settle(info, topic, qos, started)
        return info.mid

    async def apublish(self, topic: str, payload: bytes, qos: int, retain: bool, properties: Properties | None,
                       deadline: float | None) -> int:
        """:meth:`publish` without blocking the event loop; a cancelled call withdraws the message."""
        started = time.monotonic()
        client = await self.aensure(deadline)
        info = self._send(client, topic, payload, qos, retain, properties)
        limit = started + 30.0 if deadline is None else deadline - max(_MARGIN, min(_ASYNC_ABORT_MARGIN, (deadline - started) / 4))
        try:
            await self._acked.await_(self._acknowledged(info), limit)
        except asyncio.CancelledError:
            if not _published(info, self._done):
                self._recall(info, qos)
            raise
        await self._asettle(info, topic, qos, started, deadline)
        return info.mid

    # ------------------------------------------------------------------ subscribing

    def _send_subscribe(self, client: mqtt.Client, topic_filter: str, entry: _Filter, qos: int) -> None:
        """SUBSCRIBE ``topic_filter`` at ``qos``; the caller holds ``self._lock``, so that the
        SUBACK, which the network thread handles under it, always finds the message id."""
        rc, mid = client.subscribe(topic_filter, qos)
        entry.qos, entry.granted, entry.refused = qos, False, None
        entry.mid = mid if rc == mqtt.MQTT_ERR_SUCCESS else None  # not connected: the reconnect sends it
        if entry.mid is not None:
            self._sent[entry.mid] = [topic_filter]

    def _hold(self, client: mqtt.Client, topic_filter: str, qos: int, holder: object, renew: bool) -> _Filter | None:
        """Register ``holder`` on ``topic_filter`` and send a SUBSCRIBE when the filter needs one:
        new, refused, below the QoS now wanted, or ``renew`` (the broker then sends the filter's
        retained messages again). ``None`` when the broker already granted what is wanted."""
        with self._lock:
            entry = self._filters.get(topic_filter)
            if entry is None:
                entry = self._filters[topic_filter] = _Filter()
            entry.holders[holder] = max(qos, entry.holders.get(holder, 0))
            wanted = entry.wanted
            if renew or entry.qos < wanted or (entry.mid is None and not entry.granted):
                self._send_subscribe(client, topic_filter, entry, wanted)
            return None if entry.granted else entry

    def _answered(self, entry: _Filter) -> Callable[[], bool]:
        return lambda: entry.granted or entry.refused is not None or self._client is None

    def _outcome(self, topic_filter: str, entry: _Filter, holder: object, started: float) -> None:
        """Raise unless the broker granted ``entry``: refused (the holder lets go), closed,
        unreachable, or not acknowledged in time (kept: the broker may still answer)."""
        if entry.granted:
            return
        where = self.options.where
        if entry.refused is not None:
            reason = entry.refused
            self.release(topic_filter, holder)
            raise ExecutionError(
                f"The broker refused the subscription to {topic_filter!r}: {reason}. No message of it can be read.",
                details={"filter": topic_filter, "reason": reason})
        waited = time.monotonic() - started
        if self._client is None:
            raise ExecutionError(f"The MQTT driver was closed while subscribing to {topic_filter!r}.",
                                 details={"filter": topic_filter, "reason": "closed"})
        if not self._connected:
            raise self._outage_error(waited)
        raise ExecutionError(
            f"The MQTT broker at {where} did not acknowledge the subscription to {topic_filter!r} within "
            f"{waited:.1f} s, so nothing of it can be read yet; try again (the subscription is kept and "
            "the broker may still acknowledge it).",
            details={"filter": topic_filter, "reason": "unacknowledged", "retryable": True})

    def _limit(self, deadline: float | None, started: float) -> float:
        return started + 30.0 if deadline is None else deadline - _MARGIN

    def subscribe(self, topic_filter: str, qos: int, deadline: float | None, holder: object = "reads", *,
                  renew: bool = False) -> bool:
        """Hold ``topic_filter`` for ``holder`` at ``qos`` at least (kept across reconnects) and
        wait, within the deadline, until the broker has granted it. Returns whether this call
        waited for the broker's acknowledgement (its retained messages follow: see
        :meth:`barrier`); ``False`` when it was already granted.

        Raises:
            ExecutionError: the broker refused it (``details.reason``: its reason code; the
                holder lets go) or did not acknowledge it in time (``unacknowledged``).
        """
        started = time.monotonic()
        client = self.ensure(deadline)
        entry = self._hold(client, topic_filter, qos, holder, renew)
        if entry is None:
            return False
        self._answers.wait(self._answered(entry), self._limit(deadline, started))
        self._outcome(topic_filter, entry, holder, started)
        return True

    async def asubscribe(self, topic_filter: str, qos: int, deadline: float | None, holder: object = "reads", *,
                         renew: bool = False) -> bool:
        """:meth:`subscribe` without blocking the event loop."""
        started = time.monotonic()
        client = await self.aensure(deadline)
        entry = self._hold(client, topic_filter, qos, holder, renew)
        if entry is None:
            return False
        await self._answers.await_(self._answered(entry), self._limit(deadline, started))
        self._outcome(topic_filter, entry, holder, started)
        return True

    def holds(self, topic_filter: str, holder: object = "reads") -> bool:
        """Whether ``holder`` holds ``topic_filter``."""
        entry = self._filters.get(topic_filter)
        return entry is not None and holder in entry.holders

    def release(self, topic_filter: str, holder: object = "reads") -> None:
        """``holder`` no longer uses ``topic_filter``: unsubscribed (best effort) when no holder is
        left, else subscribed again at the QoS the others need when that is lower."""
        with self._lock:
            entry = self._filters.get(topic_filter)
            if entry is None or entry.holders.pop(holder, None) is None:
                return
            client = self._client if self._connected else None
            if not entry.holders:
                del self._filters[topic_filter]
                if client is not None:
                    client.unsubscribe(topic_filter)
            elif entry.wanted < entry.qos and client is not None:
                self._send_subscribe(client, topic_filter, entry, entry.wanted)

    def _barrier_send(self, client: mqtt.Client, loop: asyncio.AbstractEventLoop | None) -> _Ack:
        ack = _Ack(loop)
        rc, mid = client.unsubscribe(f"mcs-barrier/{uuid.uuid4().hex}")
        if rc != mqtt.MQTT_ERR_SUCCESS or mid is None:
            ack.set(None)
            return ack
        with self._lock:
            if mid in self._early:
                ack.set(self._early.pop(mid))
            else:
                self._acks[mid] = ack
        return ack

    def barrier(self, deadline: float | None) -> None:
        """One round trip: returns once the broker answered a packet sent now, so every message
        it queued for us before (the retained burst after a SUBACK) has been received."""
        client = self.ensure(deadline)
        self._barrier_send(client, None).done.wait(_left(deadline))

    async def abarrier(self, deadline: float | None) -> None:
        client = await self.aensure(deadline)
        ack = self._barrier_send(client, asyncio.get_running_loop())
        if not ack.done.is_set() and ack.future is not None:
            remaining = _left(deadline)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(ack.future), remaining)

    # ------------------------------------------------------------------ paho callbacks (network thread)

    def _handle_connect(self, client: mqtt.Client, userdata: Any, flags: Any, reason: ReasonCode,
                        properties: Any) -> None:
        if reason.is_failure:
            self._connected = False
            self._last_error = str(reason)
            if reason.value in _AUTH_FAILURES or not self._ever_connected:
                self._refused = str(reason)
                self._refused_auth = reason.value in _AUTH_FAILURES
                client.disconnect()  # no retry loop against a broker that said no; the next call starts over
            self._state.fire()
            return
        if self._ever_connected:
            self.reconnects += 1
        self.links += 1
        self._ever_connected = True
        self._refused = None
        self._lost_at = None
        with self._lock:
            self._sent.clear()
            wanted = [(f, entry.wanted) for f, entry in self._filters.items()]
            if wanted:
                rc, mid = client.subscribe(wanted)
                sent = mid if rc == mqtt.MQTT_ERR_SUCCESS else None
                for topic_filter, qos in wanted:
                    entry = self._filters[topic_filter]
                    entry.qos, entry.mid, entry.granted, entry.refused = qos, sent, False, None
                if sent is not None:
                    self._sent[sent] = [f for f, _ in wanted]
        self._connected = True
        self._state.fire()

    def _handle_disconnect(self, client: mqtt.Client, userdata: Any, flags: Any, reason: ReasonCode,
                           properties: Any) -> None:
        if self._connected:
            self._lost_at = time.monotonic()
        elif not self._ever_connected and self._refused is None:
            self._refused = "the broker closed the connection before accepting it"
            self._refused_auth = False
            client.disconnect()
        self._connected = False
        self.drops += 1
        with self._lock:
            self._sent.clear()
            for entry in self._filters.values():
                entry.mid, entry.granted = None, False
        if reason.is_failure:
            self._last_error = str(reason)
        self._state.fire()

    def _complete(self, mid: int, error: str | None) -> None:
        with self._lock:
            ack = self._acks.pop(mid, None)
            if ack is None:
                self._early[mid] = error
                if len(self._early) > 1024:  # acks nobody will claim (e.g. re-subscriptions)
                    self._early.pop(next(iter(self._early)))
                return
        ack.set(error)

    def _handle_publish(self, client: mqtt.Client, userdata: Any, mid: int, reason: ReasonCode,
                        properties: Any) -> None:
        # paho marks the message published right after this returns. MQTT 5 brokers may
        # answer "no matching subscribers" (0x10): still a success.
        if reason.is_failure:
            with self._lock:  # callers pop refusals under this lock
                self._failed[mid] = str(reason)
                if len(self._failed) > 1024:
                    self._failed.pop(next(iter(self._failed)))
        # Recent acknowledgements, for waiters woken before paho flags the message (it does
        # right after this callback). Far fewer than the 65,535 message ids: no stale match.
        # Only this thread changes it (callers only look), so it takes no lock.
        done = self._done
        done[mid] = None
        if len(done) > 4096:
            done.pop(next(iter(done)))
        self._acked.fire_soon()

    def _handle_subscribe(self, client: mqtt.Client, userdata: Any, mid: int, reasons: list[ReasonCode],
                          properties: Any) -> None:
        with self._lock:
            filters = self._sent.pop(mid, None)
            for topic_filter, reason in zip(filters or (), reasons, strict=False):
                entry = self._filters.get(topic_filter)
                if entry is None or entry.mid != mid:
                    continue  # let go of meanwhile, or sent again since
                entry.mid = None
                entry.granted = not reason.is_failure
                entry.refused = str(reason) if reason.is_failure else None
        self._answers.fire()

    def _handle_unsubscribe(self, client: mqtt.Client, userdata: Any, mid: int, reasons: Any,
                            properties: Any) -> None:
        self._complete(mid, None)

    def _handle_message(self, client: mqtt.Client, userdata: Any, message: mqtt.MQTTMessage) -> None:
        # An exception here would end paho's network thread (it re-raises what a callback
        # raises) while the connection still looks up: nothing received, nothing
        # acknowledged, no reconnect. A topic that is not UTF-8 is no MQTT topic: dropped.
        try:
            topic = message.topic
        except UnicodeDecodeError:
            self._last_error = "dropped a message whose topic is not UTF-8"
            return
        content_type = None
        user_properties: tuple[tuple[str, str], ...] = ()
        props = message.properties
        if props is not None:
            content_type = getattr(props, "ContentType", None)
            user_properties = tuple(getattr(props, "UserProperty", ()) or ())
        self._on_message(Received(
            seq=next(self._seq), topic=topic, payload=bytes(message.payload), qos=message.qos,
            retain=bool(message.retain), at=time.time(), content_type=content_type, user_properties=user_properties,
            link=self.links,
        ))

    # ------------------------------------------------------------------ closing

    def _shutdown_client(self) -> None:
        with self._start_lock:
            client, self._client = self._client, None
        if client is None:
            return
        with contextlib.suppress(Exception):
            client.disconnect()
        client.loop_stop()
        self._connected = False
        with self._lock:
            acks, self._acks = list(self._acks.values()), {}
        for ack in acks:
            ack.set("the driver was closed")
        self._state.fire()
        self._acked.fire()
        self._answers.fire()

    def close(self) -> None:
        """Disconnect and stop the network thread; the next use connects again."""
        self._shutdown_client()
        with self._lock:
            self._filters.clear()
            self._sent.clear()
