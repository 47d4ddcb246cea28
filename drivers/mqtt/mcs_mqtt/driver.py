"""The MQTT driver: publish and read through a real broker, described by AsyncAPI or a topic map."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import re
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from mcs.driver import DriverMeta, ToolDriver, refuse_unknown_options
from mcs.errors import ConfigurationError, ExecutionError, InvalidInputError, PolicyDeniedError
from mcs.pipeline import Invocation
from mcs.tools import Tool
from mcs_mqtt import _spec
from mcs_mqtt._codec import Codec, preview
from mcs_mqtt._connection import BrokerOptions, Connection, Protocol, tls_context
from mcs_mqtt._history import History, Received, bounded, message_view, without_properties
from mcs_mqtt._limits import Rate, RateLimiter
from mcs_mqtt._operations import Limits, Plan, ToolBuilder
from mcs_mqtt._topics import AllowList, TopicTemplate, check_size, covers

__version__ = "0.1.0"

_MARGIN = 0.05  # seconds kept before the call's deadline to return what a read has, not a TIMEOUT
_READS = "reads"  # the holder of the read tools' subscriptions (discovery calls hold theirs each)


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-zA-Z0-9]+", "_", text).strip("_").lower()
    return (slug or "mqtt")[:40]


@dataclass(frozen=True, slots=True)
class _ReadRequest:
    plan: Plan
    topic_filter: str
    key_filter: str
    parameters: dict[str, Any]
    mode: str
    count: int
    until: float

    def matches(self, message: Received) -> bool:
        assert self.plan.template is not None
        found = self.plan.template.parameters_of(message.topic)
        return found is not None and all(str(v) == found.get(k) for k, v in self.parameters.items())


class MqttDriver(ToolDriver):
    """One tool per AsyncAPI operation (or topic-map entry), over one shared broker connection.

    ``spec`` is an AsyncAPI 2.0-2.6 / 3.x document or a topic map: a path or a mapping.
    Keyword arguments, besides :class:`mcs.ToolDriver`'s (``timeout``, ``prefix``, ...):

    * Broker: ``host``, ``port`` (1883, or 8883 with TLS), ``server`` (which of the spec's
      servers when ``host`` is not given), ``tls``, ``ca_file``, ``cert_file``, ``key_file``,
      ``key_password``, ``tls_check_hostname``, ``username``, ``password``, ``client_id``,
      ``protocol`` (``"3.1.1"`` or ``"5"``), ``clean_session``, ``keepalive``,
      ``session_expiry`` (MQTT 5), ``reconnect_min_delay`` / ``reconnect_max_delay`` (s).
    * Publishing: ``default_qos`` (1) and ``retain`` (False) where the spec has no MQTT
      binding; ``operations={"turnOn": {"qos": 2, "retain": True, "destructive": False}}``
      overrides per operation (``"clear_retained": True`` lets an empty payload delete the
      retained value; otherwise an empty retained publish is refused); ``destructive``
      (True) for the ``destructiveHint``;
      ``publish_allow``: topic globs that narrow the spec's channels (a publish outside
      them is ``POLICY_DENIED``);
      ``rate_limit`` per topic (``"10/s"``) and ``rate_limit_total`` (``"100/s"``), or
      ``None``; ``dry_run=True`` simulates every publish; ``read_only=True`` offers no
      publish tool.
    * Reading: ``subscribe_allow``: topic globs that narrow the spec's channels for reads
      as well as subscriptions: a read tool's call whose topic filter matches none is
      ``POLICY_DENIED`` before anything is subscribed, even for a channel the spec declares;
      ``history_size`` (100 messages per subscription), ``max_latest_topics`` (200: the
      topics per subscription whose latest message ``latest`` reads keep, apart from that
      history; the one updated longest ago is evicted), ``max_subscriptions`` (64),
      ``max_read_count`` (50), ``default_wait`` (2 s), ``max_wait`` (30 s),
      ``max_payload_bytes`` (64 KiB per message, read or published), ``max_result_bytes`` (256 KiB
      of JSON per read; a first message over it is cut to fit),
      ``discover_window`` (10 s), ``max_topics`` (200). Discovery (topic maps) watches the
      map's own topics; ``#`` or a wider ``discover`` filter only where ``subscribe_allow``
      allows it.
    * ``allow_format_characters`` (False): let channel parameter values (for publish and
      read) hold invisible format characters (Unicode category Cf: U+200B, U+200D, U+2060,
      U+FEFF, bidi controls...); refused by default, since a topic holding one looks like
      another. Topics from the spec are never checked for them.
    * ``name``: the driver's name (default: from the spec's title).

    Raises:
        ConfigurationError: the spec cannot be loaded (the message names the file and the
            place) or an option is wrong.
    """

    enforces_deadline = True

    def __init__(
        self,
        spec: Any = None,
        *,
        host: str | None = None,
        port: int | None = None,
        server: str | None = None,
        tls: bool | None = None,
        ca_file: str | None = None,
        cert_file: str | None = None,
        key_file: str | None = None,
        key_password: str | None = None,
        tls_check_hostname: bool = True,
        username: str | None = None,
        password: str | None = None,
        client_id: str | None = None,
        protocol: str = "3.1.1",
        clean_session: bool | None = None,
        keepalive: int | None = None,
        session_expiry: int | None = None,
        reconnect_min_delay: int = 1,
        reconnect_max_delay: int = 30,
        default_qos: int = 1,
        retain: bool = False,
        destructive: bool = True,
        operations: Mapping[str, Mapping[str, Any]] | None = None,
        publish_allow: Sequence[str] | str | None = None,
        subscribe_allow: Sequence[str] | str | None = None,
        rate_limit: Any = "10/s",
        rate_limit_total: Any = "100/s",
        dry_run: bool = False,
        read_only: bool = False,
        history_size: int = 100,
        max_latest_topics: int = 200,
        max_subscriptions: int = 64,
        max_read_count: int = 50,
        default_wait: float = 2.0,
        max_wait: float = 30.0,
        max_payload_bytes: int = 65_536,
        max_result_bytes: int = 262_144,
        discover_window: float = 10.0,
        max_topics: int = 200,
        allow_format_characters: bool = False,
        name: str | None = None,
        **options: Any,
    ) -> None:
        refuse_unknown_options(MqttDriver, options, "the MQTT driver")
        super().__init__(**options)
        if spec is None:
            raise ConfigurationError("the MQTT driver needs spec=: an AsyncAPI document or a topic map (path or mapping)")
        self.spec = _spec.load(spec)
        for number, option in ((history_size, "history_size"), (max_latest_topics, "max_latest_topics"),
                               (max_subscriptions, "max_subscriptions"),
                               (max_read_count, "max_read_count"), (max_payload_bytes, "max_payload_bytes"),
                               (max_result_bytes, "max_result_bytes"), (max_topics, "max_topics")):
            if not isinstance(number, int) or number < 1:
                raise ConfigurationError(f"{option} must be a whole number >= 1, got {number!r}")
        if default_qos not in (0, 1, 2):
            raise ConfigurationError(f"default_qos must be 0, 1 or 2, got {default_qos!r}")
        if not 0 < default_wait <= max_wait:
            raise ConfigurationError("default_wait must be > 0 and at most max_wait")
        self.limits = Limits(
            max_count=max_read_count, default_wait=float(default_wait), max_wait=float(max_wait),
            max_payload_bytes=max_payload_bytes, max_result_bytes=max_result_bytes,
            discover_window=float(discover_window), max_topics=max_topics,
        )
        self.simulate = bool(dry_run)
        self.publish_allow = AllowList(_globs(publish_allow, "publish_allow"), "Publish")
        self.subscribe_allow = AllowList(_globs(subscribe_allow, "subscribe_allow"), "Subscribe")
        self.rate_limiter = RateLimiter(Rate.parse(rate_limit, "rate_limit"), Rate.parse(rate_limit_total, "rate_limit_total"))
        self.history_size = history_size
        self.max_latest_topics = max_latest_topics
        self.max_subscriptions = max_subscriptions
        self._discover_within = self._discovery_scope()
        builder = ToolBuilder(
            self.spec, default_qos=default_qos, default_retain=bool(retain), destructive=bool(destructive),
            overrides=dict(operations or {}), read_only=bool(read_only), limits=self.limits,
            format_characters=bool(allow_format_characters),
        )
        self._plans = {plan.tool.name: plan for plan in builder.plans()}
        self.broker = self._broker_options(
            host=host, port=port, server=server, tls=tls, ca_file=ca_file, cert_file=cert_file, key_file=key_file,
            key_password=key_password, tls_check_hostname=tls_check_hostname, username=username, password=password,
            client_id=client_id, protocol=protocol, clean_session=clean_session, keepalive=keepalive,
            session_expiry=session_expiry, reconnect_min_delay=reconnect_min_delay,
            reconnect_max_delay=reconnect_max_delay,
        )
        self.meta = DriverMeta(
            id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"mcs-driver-mqtt:{self.spec.title}")),
            name=name or _slug(self.spec.title),
            version=__version__,
            protocol="MQTT",
            transport="MQTT",
            spec_format=self.spec.spec_format,
            capabilities=("stream", "status"),
            prefix=self.prefix,
        )
        self._connection: Connection | None = None
        self._publish_properties: dict[str, Properties] = {}
        self._histories: dict[str, History] = {}
        self._watchers: dict[int, tuple[str, Callable[[Received], None]]] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ configuration

    def _discovery_scope(self) -> tuple[TopicTemplate, ...] | None:
        """Fix the filters ``discover_topics`` watches (topic maps only; ``None`` for none) and
        return the channels it may report, or ``None`` when the operator widened it.

        Discovery stays within the map's own topics unless ``subscribe_allow`` says otherwise:
        a map without ``discover`` watches its channels' filters (those ``subscribe_allow``
        permits), or ``#`` when a configured ``subscribe_allow`` allows ``#``. A ``discover``
        filter of the map must lie within one of its channels, or be on ``subscribe_allow``.

        Raises:
            ConfigurationError: a ``discover`` filter is outside the allowed scope.
        """
        if self.spec.discover is None:
            return None
        templates = tuple(TopicTemplate.of(op.address) for op in self.spec.operations)
        own = tuple(dict.fromkeys(template.wide_filter() for template in templates))
        configured = self.subscribe_allow.globs is not None
        if self.spec.discover_default:
            wide = configured and self.subscribe_allow.allows("#")
            filters = ("#",) if wide else tuple(f for f in own if self.subscribe_allow.allows(f))
            self.spec.discover = filters or None
            return None if wide else templates
        widened = False
        for topic_filter in self.spec.discover:
            within = any(covers(channel, topic_filter) for channel in own)
            if not within and not configured:
                raise ConfigurationError(
                    f"discover filter {topic_filter!r} reaches beyond the topic map's own topics "
                    f"({', '.join(own)}); to discover more, allow it with the subscribe_allow option"
                )
            if not self.subscribe_allow.allows(topic_filter):
                raise ConfigurationError(f"discover filter {topic_filter!r} is not on the subscribe_allow list")
            widened = widened or not within
        return None if widened else templates

    def _broker_options(self, *, host: str | None, port: int | None, server: str | None, tls: bool | None,
                        ca_file: str | None, cert_file: str | None, key_file: str | None,
                        key_password: str | None, tls_check_hostname: bool, username: str | None,
                        password: str | None, client_id: str | None, protocol: str, clean_session: bool | None,
                        keepalive: int | None, session_expiry: int | None, reconnect_min_delay: int,
                        reconnect_max_delay: int) -> BrokerOptions | None:
        chosen: _spec.Server | None = None
        if server is not None:
            chosen = self.spec.servers.get(server)
            if chosen is None:
                known = ", ".join(self.spec.servers) or "none"
                raise ConfigurationError(f"the spec has no MQTT server {server!r} (its MQTT servers: {known})")
        elif host is None and self.spec.servers:
            chosen = next(iter(self.spec.servers.values()))
        if protocol not in ("3.1.1", "5", "311", "3", "v5"):
            raise ConfigurationError(f"protocol must be '3.1.1' or '5', got {protocol!r}")
        proto: Protocol = "5" if protocol in ("5", "v5") else "3.1.1"
        use_tls = tls if tls is not None else bool(ca_file or cert_file or (chosen.tls if chosen else False))
        context = None
        if use_tls:
            context = tls_context(ca_file=ca_file, cert_file=cert_file, key_file=key_file,
                                  key_password=key_password, check_hostname=tls_check_hostname)
        elif cert_file or key_file:
            raise ConfigurationError("cert_file/key_file need tls=True")
        the_host = host or (chosen.host if chosen else None)
        if not the_host:
            return None
        the_port = port or (chosen.port if chosen and host is None else None) or (8883 if use_tls else 1883)
        if not isinstance(the_port, int) or not 0 < the_port < 65536:
            raise ConfigurationError(f"port must be 1-65535, got {the_port!r}")
        if keepalive is not None and (not isinstance(keepalive, int) or keepalive < 1):
            raise ConfigurationError("keepalive must be a whole number of seconds >= 1")
        if not 1 <= reconnect_min_delay <= reconnect_max_delay:
            raise ConfigurationError("reconnect delays need 1 <= reconnect_min_delay <= reconnect_max_delay")
        return BrokerOptions(
            host=the_host, port=the_port, tls=context, username=username, password=password,
            client_id=client_id or (chosen.client_id if chosen else None) or "",
            protocol=proto,
            clean_session=clean_session if clean_session is not None else
            (chosen.clean_session if chosen and chosen.clean_session is not None else True),
            keepalive=keepalive or (chosen.keepalive if chosen and chosen.keepalive else 60),
            session_expiry=session_expiry,
            reconnect_min_delay=int(reconnect_min_delay), reconnect_max_delay=int(reconnect_max_delay),
        )

    @property
    def connection(self) -> Connection:
        """The shared broker connection (created on first use, connected on first call)."""
        if self._connection is None:
            with self._lock:
                if self._connection is None:
                    if self.broker is None:
                        raise ExecutionError(
                            "This MQTT driver has no broker: give the host option (the spec names no MQTT server)."
                        )
                    self._connection = Connection(self.broker, self._dispatch)
        return self._connection

    def get_status(self) -> dict[str, Any]:
        """The connection's state: broker, connected, subscriptions, reconnects, last error."""
        if self._connection is None:
            where = self.broker.where if self.broker else None
            return {"broker": where, "connected": False, "subscriptions": [], "reconnects": 0, "last_error": None}
        return self._connection.status()

    # ------------------------------------------------------------------ tools

    def _list_tools(self) -> Iterable[Tool]:
        return [plan.tool for plan in self._plans.values()]

    def _plan(self, invocation: Invocation) -> Plan:
        return self._plans[invocation.tool.unprefixed_name]

    def _call_tool(self, invocation: Invocation) -> Any:
        plan = self._plan(invocation)
        if plan.kind == "publish":
            return self._publish(plan, invocation)
        if plan.kind == "read":
            return self._read(plan, invocation)
        return self._discover(invocation)

    async def _acall_tool(self, invocation: Invocation) -> Any:
        plan = self._plan(invocation)
        if plan.kind == "publish":
            return await self._apublish(plan, invocation)
        if plan.kind == "read":
            return await self._aread(plan, invocation)
        return await self._adiscover(invocation)

    # ------------------------------------------------------------------ publish

    def _outgoing(self, plan: Plan, invocation: Invocation) -> tuple[str, bytes, Codec, dict[str, Any] | None]:
        """Topic, exact payload bytes and codec; or the dry-run answer. Every check happens here."""
        tool = invocation.tool.name
        args = invocation.arguments
        topic = plan.publish_topic(args, tool)
        self.publish_allow.check(topic, tool)
        payload = args.get("payload")
        codec = plan.codec_for(payload)
        data = b"" if "payload" not in args else codec.encode(payload, tool)
        if len(data) > self.limits.max_payload_bytes:
            raise InvalidInputError(
                f"The payload would be {len(data)} bytes; this driver publishes at most "
                f"{self.limits.max_payload_bytes} (max_payload_bytes).", tool=tool,
                details={"payload_bytes": len(data), "max_payload_bytes": self.limits.max_payload_bytes},
            )
        if plan.retain and not data:
            self._check_clearing(plan, topic, tool)
        if not (self.simulate or args.get("dry_run")):
            return topic, data, codec, None
        shown: dict[str, Any] = {
            "dry_run": True, "topic": topic, "qos": plan.qos, "retain": plan.retain, "bytes": len(data),
            "content_type": codec.content_type, "payload_base64": base64.b64encode(data).decode("ascii"),
        }
        if plan.retain and not data:
            shown["cleared_retained"] = True
        with contextlib.suppress(UnicodeDecodeError):
            shown["payload_text"] = data.decode("utf-8")
        return topic, data, codec, shown

    @staticmethod
    def _check_clearing(plan: Plan, topic: str, tool: str) -> None:
        """An empty retained publish deletes the broker's retained value: ``POLICY_DENIED``
        unless the operator allowed it (``operations.<name>.clear_retained``)."""
        if plan.clear_retained:
            return
        name = plan.tool.meta.get("original_name", tool)
        raise PolicyDeniedError(
            f"An empty payload on the retained topic {topic!r} would delete the broker's retained value; "
            f"this driver does not allow that for {tool}. Nothing was sent. Send a non-empty payload "
            f"(the operator can allow clearing with operations.{name}.clear_retained).",
            tool=tool, details={"topic": topic, "retain": True, "bytes": 0},
        )

    def _properties(self, codec: Codec) -> Properties | None:
        """The MQTT 5 publish properties of ``codec``'s messages (``None`` on 3.1.1): built
        once per content type and shared by every publish, since nothing changes them after."""
        if self.broker is None or self.broker.protocol != "5":
            return None
        properties = self._publish_properties.get(codec.content_type)
        if properties is None:
            properties = Properties(PacketTypes.PUBLISH)  # type: ignore[no-untyped-call]
            properties.ContentType = codec.content_type
            if codec.kind != "binary":
                properties.PayloadFormatIndicator = 1
            properties = self._publish_properties.setdefault(codec.content_type, properties)
        return properties

    def _published(self, plan: Plan, topic: str, data: bytes, mid: int) -> dict[str, Any]:
        result = {"published": True, "topic": topic, "qos": plan.qos, "retain": plan.retain, "bytes": len(data),
                  "message_id": mid, "acknowledged": plan.qos > 0}
        if plan.retain and not data:
            result["cleared_retained"] = True
        return result

    def _publish(self, plan: Plan, invocation: Invocation) -> Any:
        topic, data, codec, dry = self._outgoing(plan, invocation)
        if dry is not None:
            return dry
        self.rate_limiter.admit(topic, invocation.tool.name)
        mid = self.connection.publish(topic, data, plan.qos, plan.retain, self._properties(codec), invocation.deadline)
        return self._published(plan, topic, data, mid)

    async def _apublish(self, plan: Plan, invocation: Invocation) -> Any:
        topic, data, codec, dry = self._outgoing(plan, invocation)
        if dry is not None:
            return dry
        self.rate_limiter.admit(topic, invocation.tool.name)
        mid = await self.connection.apublish(topic, data, plan.qos, plan.retain, self._properties(codec),
                                             invocation.deadline)
        return self._published(plan, topic, data, mid)

    # ------------------------------------------------------------------ read

    def _request(self, plan: Plan, invocation: Invocation) -> _ReadRequest:
        tool = invocation.tool.name
        args = invocation.arguments
        assert plan.template is not None
        parameters = {k: v for k, v in plan.parameters(args).items() if v is not None}
        topic_filter = plan.template.filter(parameters, tool)
        check_size(topic_filter, tool)
        self.subscribe_allow.check(topic_filter, tool)
        wide = plan.template.wide_filter()
        key_filter = wide if wide in self._histories or self.subscribe_allow.allows(wide) else topic_filter
        wait = float(args.get("wait_s", self.limits.default_wait))
        until = time.monotonic() + wait
        if invocation.deadline is not None:
            until = min(until, invocation.deadline - _MARGIN)
        return _ReadRequest(plan, topic_filter, key_filter, parameters, str(args.get("mode", "latest")),
                            int(args.get("count", 1)), until)

    def _new_history(self, key_filter: str) -> tuple[History, bool]:
        """The history of ``key_filter`` and whether it is new (needs subscribing)."""
        with self._lock:
            history = self._histories.get(key_filter)
            if history is not None:
                return history, False
            if len(self._histories) >= self.max_subscriptions:
                raise ExecutionError(
                    f"This driver already holds {self.max_subscriptions} subscriptions (max_subscriptions); "
                    "read with fewer distinct parameter values.")
            history = History(self.history_size, self.max_latest_topics)
            self._histories[key_filter] = history
            return history, True

    def _drop_history(self, key_filter: str) -> None:
        with self._lock:
            self._histories.pop(key_filter, None)

    def _history(self, request: _ReadRequest, deadline: float | None) -> tuple[History, int]:
        """The subscription's history and the sequence number "next" counts from, once the
        broker has granted the subscription (a new history subscribes afresh, so the retained
        messages come to it). Raises the connection's error when it did not."""
        history, new = self._new_history(request.key_filter)
        start = 0 if new else history.last_seq
        try:
            connection = self.connection
            if connection.subscribe(request.key_filter, request.plan.qos, deadline, _READS, renew=new):
                connection.barrier(deadline)
        except BaseException:
            self._release_history(request.key_filter)
            raise
        return history, start

    async def _ahistory(self, request: _ReadRequest, deadline: float | None) -> tuple[History, int]:
        history, new = self._new_history(request.key_filter)
        start = 0 if new else history.last_seq
        try:
            connection = self.connection
            if await connection.asubscribe(request.key_filter, request.plan.qos, deadline, _READS, renew=new):
                await connection.abarrier(deadline)
        except BaseException:
            self._release_history(request.key_filter)
            raise
        return history, start

    def _release_history(self, key_filter: str) -> None:
        """After a failed subscription: drop the history unless the connection still holds its
        filter for reads (a subscription not yet acknowledged is kept: the broker may still
        answer, and the retained messages then go to the history)."""
        connection = self._connection
        if connection is None or not connection.holds(key_filter, _READS):
            self._drop_history(key_filter)

    def _ready(self, request: _ReadRequest, history: History, start: int) -> Callable[[], bool]:
        if request.mode == "latest":
            return lambda: bool(history.latest_per_topic(request.matches, 1))
        return lambda: len(self._live(request, history, start)) >= request.count

    def _arrived(self, request: _ReadRequest, history: History, after: int) -> Callable[[], bool]:
        return lambda: bool(self._live(request, history, after))

    @staticmethod
    def _live(request: _ReadRequest, history: History, start: int) -> list[Received]:
        return [m for m in history.snapshot(start, request.matches) if not m.retain]

    def _read_result(self, request: _ReadRequest, history: History, start: int) -> dict[str, Any]:
        if request.mode == "latest":
            found = history.latest_per_topic(request.matches, request.count)
        else:
            found = self._live(request, history, start)[: request.count]
        records, left_out, cut = self._views(request.plan, found)
        result: dict[str, Any] = {"topic": request.topic_filter, "mode": request.mode, "messages": records}
        if left_out or cut:
            result["truncated"] = self._capped(left_out, cut)
        if not found:
            result["note"] = f"No message on {request.topic_filter} within the wait."
        if request.mode == "latest" and history.evicted:
            result["evicted"] = self._evicted(request.key_filter, history.evicted)
        return result

    def _evicted(self, key_filter: str, evicted: int) -> str:
        """The marker of a ``latest`` read whose subscription dropped topics' latest values."""
        topics = "topic" if evicted == 1 else "topics"
        return (f"[{evicted} {topics} of {key_filter} evicted: this driver keeps the latest value of at most "
                f"{self.max_latest_topics} topics per subscription (max_latest_topics), dropping the one updated "
                "longest ago; an evicted topic is kept again when it next publishes]")

    def _capped(self, left_out: int, cut: bool) -> str:
        """The marker of a read whose messages did not fit ``max_result_bytes`` as they were."""
        said = [f"{left_out} more message(s) not shown"] if left_out else []
        if cut:
            said.insert(0, "the first message was cut to fit (its own [truncated ...] markers say what was left out)")
        return f"[truncated: {'; '.join(said)}; the result cap is {self.limits.max_result_bytes} bytes]"

    def _views(self, plan: Plan, found: list[Received]) -> tuple[list[dict[str, Any]], int, bool]:
        """The records of ``found`` that fit ``max_result_bytes`` of JSON together, how many
        were left out, and whether the first one had to be cut (see :meth:`_fit`) to fit."""
        records: list[dict[str, Any]] = []
        cap = self.limits.max_result_bytes
        size = 0
        for index, message in enumerate(found):
            record = self._view(plan, message)
            size += _json_size(record)
            if size > cap:
                if records:
                    return records, len(found) - index, False
                fitted = self._fit(plan, message, cap)
                return ([fitted] if fitted else []), len(found) - (1 if fitted else 0), fitted is not None
            records.append(record)
        return records, 0, False

    def _fit(self, plan: Plan, message: Received, cap: int) -> dict[str, Any] | None:
        """The record of ``message`` within ``cap`` bytes of JSON: its payload cut short with
        the ``[truncated ...]`` marker ``max_payload_bytes`` uses, then, if that is not
        enough, its user properties left out too (counted in ``headers_truncated``). ``None``
        when even its topic and the markers alone exceed ``cap``."""
        for kept in (message, without_properties(message)):
            fitted, low, high = None, 0, min(cap, len(message.payload))
            while low <= high:  # the most payload bytes that fit (escapes make JSON longer than the bytes)
                middle = (low + high) // 2
                record = self._view(plan, kept, middle)
                if _json_size(record) <= cap:
                    fitted, low = record, middle + 1
                else:
                    high = middle - 1
            if fitted is not None or not message.user_properties:
                return fitted
        return None

    def _view(self, plan: Plan, message: Received, max_bytes: int | None = None) -> dict[str, Any]:
        """The record of ``message``, its payload cut at ``max_bytes`` (``max_payload_bytes`` by default)."""
        codec = plan.codec if plan.messages else Codec(message.content_type or "application/json")
        assert plan.template is not None
        parameters = plan.template.parameters_of(message.topic)
        limit = self.limits.max_payload_bytes if max_bytes is None else max_bytes
        decoded = codec.decode(message.payload, limit, message.size)
        return message_view(message, decoded, parameters)

    def _read(self, plan: Plan, invocation: Invocation) -> Any:
        request = self._request(plan, invocation)
        history, start = self._history(request, invocation.deadline)
        history.signal.wait(self._ready(request, history, start), request.until)
        return self._read_result(request, history, start)

    async def _aread(self, plan: Plan, invocation: Invocation) -> Any:
        request = self._request(plan, invocation)
        history, start = await self._ahistory(request, invocation.deadline)
        await history.signal.await_(self._ready(request, history, start), request.until)
        return self._read_result(request, history, start)

    # ------------------------------------------------------------------ streams (monitors)

    def _stream_tool(self, invocation: Invocation) -> Iterator[Any]:
        """Yield a read tool's messages as they arrive: ``count`` of them within ``wait_s``."""
        plan = self._plan(invocation)
        if plan.kind != "read":
            yield from super()._stream_tool(invocation)
            return
        request = self._request(plan, invocation)
        history, seen = self._history(request, invocation.deadline)
        sent = 0
        if request.mode == "latest":
            history.signal.wait(self._ready(request, history, seen), request.until)
            seen = history.last_seq
            for message in history.latest_per_topic(request.matches, request.count):
                yield self._view(plan, message)
                sent += 1
        while sent < request.count:
            if not history.signal.wait(self._arrived(request, history, seen), request.until):
                return
            for message in self._live(request, history, seen)[: request.count - sent]:
                seen = message.seq
                sent += 1
                yield self._view(plan, message)

    async def _astream_tool(self, invocation: Invocation) -> AsyncIterator[Any]:
        plan = self._plan(invocation)
        if plan.kind != "read":
            yield await self._acall_tool(invocation)
            return
        request = self._request(plan, invocation)
        history, seen = await self._ahistory(request, invocation.deadline)
        sent = 0
        if request.mode == "latest":
            await history.signal.await_(self._ready(request, history, seen), request.until)
            seen = history.last_seq
            for message in history.latest_per_topic(request.matches, request.count):
                yield self._view(plan, message)
                sent += 1
        while sent < request.count:
            if not await history.signal.await_(self._arrived(request, history, seen), request.until):
                return
            for message in self._live(request, history, seen)[: request.count - sent]:
                seen = message.seq
                sent += 1
                yield self._view(plan, message)

    # ------------------------------------------------------------------ discovery (topic maps)

    def _watch(self, seen: dict[str, dict[str, Any]], limit: int) -> Callable[[Received], None]:
        within = self._discover_within

        def record(message: Received) -> None:
            if within is not None and all(t.parameters_of(message.topic) is None for t in within):
                return  # a topic the wide filter of a channel such as home/room-{room}/temp also matches
            entry = seen.get(message.topic)
            if entry is None:
                if len(seen) >= limit:
                    return
                entry = seen[message.topic] = {"topic": message.topic, "messages": 0, "retained": False}
            entry["messages"] += 1
            entry["retained"] = entry["retained"] or message.retain
            entry["last_payload"] = preview(message.payload, size=message.wire_size)
            entry["last_bytes"] = message.wire_size

        return record

    def _discovery_setup(self, invocation: Invocation) -> tuple[dict[str, dict[str, Any]], int, float, tuple[str, ...]]:
        args = invocation.arguments
        window = float(args.get("window_s", min(2.0, self.limits.discover_window)))
        until = time.monotonic() + window
        if invocation.deadline is not None:
            until = min(until, invocation.deadline - _MARGIN)
        seen: dict[str, dict[str, Any]] = {}
        token = id(seen)
        filters = self.spec.discover or ()
        with self._lock:
            for topic_filter in filters:
                self._watchers[token + hash(topic_filter)] = (topic_filter, self._watch(seen, int(args.get("max_topics", 50))))
        return seen, token, until, filters

    def _discovery_end(self, seen: dict[str, dict[str, Any]], token: int, filters: tuple[str, ...]) -> dict[str, Any]:
        with self._lock:
            for topic_filter in filters:
                self._watchers.pop(token + hash(topic_filter), None)
        connection = self._connection
        if connection is not None:
            for topic_filter in filters:  # the reads' subscriptions stay, at their QoS
                connection.release(topic_filter, token)
        topics = sorted(seen.values(), key=lambda entry: str(entry["topic"]))
        return {"filters": list(filters), "topics": topics, "count": len(topics)}

    def _discover(self, invocation: Invocation) -> Any:
        seen, token, until, filters = self._discovery_setup(invocation)
        try:
            for topic_filter in filters:  # renewed: the broker sends the retained messages again
                self.connection.subscribe(topic_filter, 0, invocation.deadline, token, renew=True)
            threading.Event().wait(max(0.0, until - time.monotonic()))
        finally:
            result = self._discovery_end(seen, token, filters)
        return result

    async def _adiscover(self, invocation: Invocation) -> Any:
        seen, token, until, filters = self._discovery_setup(invocation)
        try:
            for topic_filter in filters:
                await self.connection.asubscribe(topic_filter, 0, invocation.deadline, token, renew=True)
            await asyncio.sleep(max(0.0, until - time.monotonic()))
        finally:
            result = self._discovery_end(seen, token, filters)
        return result

    # ------------------------------------------------------------------ incoming messages

    def _dispatch(self, message: Received) -> None:
        """Called on paho's network thread for every message: feed histories and watchers."""
        message = bounded(message, self.limits.max_payload_bytes)
        with self._lock:
            histories = [h for f, h in self._histories.items() if mqtt.topic_matches_sub(f, message.topic)]
            watchers = [w for f, w in self._watchers.values() if mqtt.topic_matches_sub(f, message.topic)]
        for history in histories:
            history.append(message)
        for watcher in watchers:
            watcher(message)

    # ------------------------------------------------------------------ closing

    def close(self) -> None:
        """Disconnect from the broker and forget every subscription and history."""
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()
        with self._lock:
            self._histories.clear()
            self._watchers.clear()


def _json_size(record: dict[str, Any]) -> int:
    """The size of ``record`` as UTF-8 JSON, in bytes."""
    return len(json.dumps(record, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass"))


def _globs(value: Sequence[str] | str | None, option: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not all(isinstance(g, str) and g for g in value):
        raise ConfigurationError(f"{option} must be a list of topic globs")
    return tuple(value)


__all__ = ["MqttDriver"]
