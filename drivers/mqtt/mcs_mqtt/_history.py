"""Received messages: one bounded history per subscription, waited on by threads or event loops.

The broker connection's network thread appends; readers wait for a message newer than the
one they last saw, either on a thread (``wait``) or in an event loop (``await_``), without
blocking the loop. A history keeps at most ``size`` messages (the oldest are dropped) and,
apart from them, the latest message of at most ``topics`` concrete topics (the topic updated
longest ago is evicted, and counted), so a flood on one topic of a wildcard filter never
pushes out another topic's latest value. Each message is kept as :func:`bounded` cuts it.

A broker sends a topic's retained message (retain flag set) again on every new SUBSCRIBE
that matches it: discovery renewing a filter, or re-subscribing after a reconnect. Such a
re-sent value is recorded in the history, as retained, but never replaces a newer live
message (retain flag clear) as the topic's latest. A retained message is taken as re-sent
when it came on the same connection as that live message (while connected and subscribed,
every newer publish arrives live, so the stored value cannot be newer), or when it equals
the retained value last received for the topic, or a message of the topic still in the
history. After a reconnect, any other retained message may have been published while the
driver was away, so it replaces the live one.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Received:
    """One message as it came off the wire."""

    seq: int
    topic: str
    payload: bytes
    qos: int
    retain: bool
    at: float  # time.time()
    content_type: str | None = None
    user_properties: tuple[tuple[str, str], ...] = ()
    size: int | None = None  # the payload's length on the wire, when ``payload`` holds only its start
    dropped_properties: int = 0  # user properties left out by :func:`bounded`
    link: int = 0  # which of the driver's connections to the broker delivered it (they are counted)

    @property
    def wire_size(self) -> int:
        """The payload's length as it was sent."""
        return len(self.payload) if self.size is None else self.size


def bounded(message: Received, max_bytes: int) -> Received:
    """``message`` as the driver keeps it: at most ``max_bytes`` of payload (the first ones;
    ``size`` says how long it was) and of user properties (whole pairs, in order, up to
    ``max_bytes`` of names and values), so what a peer sends cannot grow a history past
    ``size x max_bytes`` or a result past its caps."""
    payload, size = message.payload, None
    if len(payload) > max_bytes:
        payload, size = payload[:max_bytes], len(payload)
    kept, used = [], 0
    for name, value in message.user_properties:
        used += len(name.encode("utf-8", "surrogatepass")) + len(value.encode("utf-8", "surrogatepass"))
        if used > max_bytes:
            break
        kept.append((name, value))
    dropped = len(message.user_properties) - len(kept)
    if size is None and not dropped:
        return message
    return dataclasses.replace(message, payload=payload, size=size, user_properties=tuple(kept),
                               dropped_properties=dropped)


def without_properties(message: Received) -> Received:
    """``message`` without its user properties, each counted as dropped."""
    if not message.user_properties:
        return message
    return dataclasses.replace(message, user_properties=(),
                               dropped_properties=message.dropped_properties + len(message.user_properties))


class Signal:
    """Wakes whoever waits for "something changed": threads and event loops alike."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._waiting = 0
        self._loops: dict[asyncio.Future[None], asyncio.AbstractEventLoop] = {}

    @property
    def condition(self) -> threading.Condition:
        return self._cond

    @property
    def waiters(self) -> int:
        """How many threads and event loops wait on this signal right now."""
        return self._waiting + len(self._loops)

    def fire(self) -> None:
        with self._cond:
            self._cond.notify_all()
            futures, self._loops = self._loops, {}
        for future, loop in futures.items():
            with contextlib.suppress(RuntimeError):  # that loop is closed: nobody waits there any more
                loop.call_soon_threadsafe(_resolve, future)

    def fire_soon(self) -> None:
        """:meth:`fire`, skipped when nobody waits (the hot path of every acknowledgement)."""
        if self._loops or self._waiting:
            self.fire()

    def wait(self, check: Callable[[], bool], deadline: float) -> bool:
        """Block until ``check()`` is true or ``deadline`` (``time.monotonic``); returns ``check()``."""
        with self._cond:
            self._waiting += 1
            try:
                while not check():
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        return False
                    self._cond.wait(remaining)
                return True
            finally:
                self._waiting -= 1

    async def await_(self, check: Callable[[], bool], deadline: float) -> bool:
        """The event-loop twin of :meth:`wait`."""
        loop = asyncio.get_running_loop()
        while True:
            with self._cond:
                if check():
                    return True
                future: asyncio.Future[None] = loop.create_future()
                self._loops[future] = loop
            if check():  # it came true between the check and the registration: no fire will follow
                with self._cond:
                    self._loops.pop(future, None)
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return check()
            try:
                await asyncio.wait_for(future, remaining)
            except TimeoutError:
                with self._cond:
                    self._loops.pop(future, None)
                return check()


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


@dataclass
class History:
    """The last ``size`` messages of one subscription filter, oldest first, and the latest
    message of each of its last ``topics`` concrete topics, least recently updated first."""

    size: int
    topics: int = 200
    signal: Signal = field(default_factory=Signal)
    messages: deque[Received] = field(init=False)
    latest: OrderedDict[str, Received] = field(init=False)
    evicted: int = 0  # topics whose latest message was dropped to keep ``topics``
    last_seq: int = 0
    retained: dict[str, bytes] = field(init=False)  # per topic of ``latest``: its last retained value's digest

    def __post_init__(self) -> None:
        self.messages = deque(maxlen=self.size)
        self.latest = OrderedDict()
        self.retained = {}

    def append(self, message: Received) -> None:
        """Record ``message``; it becomes its topic's latest unless it is a retained value the
        broker re-sent that is not newer than the live message kept (see the module's text)."""
        with self.signal.condition:
            if not self._resent(message):
                latest = self.latest
                if message.topic in latest:
                    latest.move_to_end(message.topic)
                latest[message.topic] = message
                if len(latest) > self.topics:
                    topic, _ = latest.popitem(last=False)
                    self.retained.pop(topic, None)
                    self.evicted += 1
            if message.retain:
                self.retained[message.topic] = _digest(message)
            self.messages.append(message)
            self.last_seq = max(self.last_seq, message.seq)
        self.signal.fire()

    def _resent(self, message: Received) -> bool:
        """Whether ``message`` is a retained value re-sent by the broker, older than (or the same
        as) the live message its topic holds as latest. The caller holds the lock."""
        if not message.retain:
            return False
        live = self.latest.get(message.topic)
        if live is None or live.retain:
            return False
        if live.link == message.link:  # connected since: a newer value would have come live
            return True
        if self.retained.get(message.topic) == _digest(message):
            return True
        return any(m.topic == message.topic and m.payload == message.payload and m.wire_size == message.wire_size
                   for m in self.messages)

    def snapshot(self, after: int = 0, match: Callable[[Received], bool] | None = None) -> list[Received]:
        with self.signal.condition:
            return [m for m in self.messages if m.seq > after and (match is None or match(m))]

    def latest_per_topic(self, match: Callable[[Received], bool], count: int) -> list[Received]:
        """The latest message of each matching topic, newest first, at most ``count`` topics;
        however many messages other topics received since."""
        found: list[Received] = []
        with self.signal.condition:
            for message in reversed(self.latest.values()):
                if match(message):
                    found.append(message)
                    if len(found) >= count:
                        break
        return found


def _digest(message: Received) -> bytes:
    """What tells two values of a topic apart: a digest of the payload kept and its length."""
    return hashlib.blake2b(message.payload, digest_size=16).digest() + message.wire_size.to_bytes(8, "big")


def headers(user_properties: tuple[tuple[str, str], ...]) -> dict[str, str | list[str]]:
    """MQTT 5 user properties by name, in the order they came: a name sent once maps to its
    value, a name sent more than once (MQTT allows it) to the list of all its values."""
    out: dict[str, str | list[str]] = {}
    for name, value in user_properties:
        known = out.get(name)
        if known is None:
            out[name] = value
        elif isinstance(known, list):
            known.append(value)
        else:
            out[name] = [known, value]
    return out


def message_view(message: Received, decoded: dict[str, Any], parameters: dict[str, str] | None) -> dict[str, Any]:
    """The JSON-safe record a read tool returns for one message."""
    out: dict[str, Any] = {"topic": message.topic}
    if parameters:
        out["parameters"] = parameters
    out.update(decoded)
    out["qos"] = message.qos
    out["retained"] = message.retain
    out["received_at"] = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(message.at)) + f".{int(message.at % 1 * 1000):03d}Z"
    if message.user_properties:
        out["headers"] = headers(message.user_properties)
    if message.dropped_properties:
        out["headers_truncated"] = (f"[truncated: {message.dropped_properties} more user propert"
                                    f"{'y' if message.dropped_properties == 1 else 'ies'} not shown]")
    return out
