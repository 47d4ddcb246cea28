"""The receive side: one python-can bus, a ``can.Notifier`` thread, and what it heard.

The notifier feeds :class:`Receiver`, which keeps the last frames of every message the
database knows (raw; decoded only when read), hands frames to live monitors through
bounded queues (counting what a full queue drops), counts error frames, and records a
bus failure instead of swallowing it. Which messages a frame may be is :class:`Routes`'
answer: messages that share a frame id (and id kind) each keep the frames of their length.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

import can

logger = logging.getLogger("mcs_can")

FrameKey = tuple[int, bool]  # (arbitration id, is extended)


class Routes:
    """Which messages of the database a received frame may be.

    A frame id (and id kind) that one message uses is that message's. Where several
    messages share it, a frame may be each one whose length it has (a CAN FD frame's
    length padded to the next size a frame can have counts too); a frame of no sharer's
    length may be any of them. :meth:`may_be` never answers an empty tuple for a known id.
    """

    def __init__(self, messages: Iterable[tuple[str, int, bool, int]]) -> None:
        """``messages``: ``(name, frame id, is extended, length)`` of each message."""
        groups: dict[FrameKey, list[tuple[str, int]]] = {}
        for name, frame_id, extended, length in messages:
            groups.setdefault((frame_id, extended), []).append((name, length))
        self._alone: dict[FrameKey, tuple[str]] = {k: (g[0][0],) for k, g in groups.items() if len(g) == 1}
        self._shared: dict[FrameKey, tuple[tuple[str, int, int], ...]] = {
            k: tuple(sorted((name, length, can.util.dlc2len(can.util.len2dlc(length))) for name, length in g))
            for k, g in groups.items() if len(g) > 1
        }
        #: For each message that shares its frame, the other messages on that frame (sorted).
        self.sharers: dict[str, tuple[str, ...]] = {
            name: tuple(other for other, _, _ in group if other != name)
            for group in self._shared.values() for name, _, _ in group
        }

    def may_be(self, frame: can.Message) -> tuple[str, ...]:
        """The messages ``frame`` may be (sorted by name where several); ``()`` for an id the
        database does not know."""
        key = (frame.arbitration_id, frame.is_extended_id)
        alone = self._alone.get(key)
        if alone is not None:
            return alone
        group = self._shared.get(key)
        if group is None:
            return ()
        size, fd = len(frame.data), frame.is_fd
        fits = tuple(name for name, length, padded in group if size == length or (fd and size == padded))
        return fits or tuple(name for name, _, _ in group)


class Subscription:
    """Frames of one message for one monitor, in a bounded queue; overflow is counted."""

    def __init__(self, message: str, capacity: int, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self.key = message
        self.dropped = 0
        self._loop = loop
        self._queue: queue.Queue[can.Message] | None = None if loop else queue.Queue(capacity)
        self._aqueue: asyncio.Queue[can.Message] | None = asyncio.Queue(capacity) if loop else None

    def put(self, frame: can.Message) -> None:
        if self._queue is not None:
            try:
                self._queue.put_nowait(frame)
            except queue.Full:
                self.dropped += 1
        elif self._loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop closed under us: the monitor is gone
                self._loop.call_soon_threadsafe(self._aput, frame)

    def _aput(self, frame: can.Message) -> None:
        assert self._aqueue is not None
        try:
            self._aqueue.put_nowait(frame)
        except asyncio.QueueFull:
            self.dropped += 1

    def get(self, timeout: float) -> can.Message | None:
        assert self._queue is not None
        try:
            return self._queue.get(timeout=max(0.0, timeout))
        except queue.Empty:
            return None

    async def aget(self, timeout: float) -> can.Message | None:
        assert self._aqueue is not None
        try:
            async with asyncio.timeout(max(0.0, timeout)):
                return await self._aqueue.get()
        except TimeoutError:
            return None


class Receiver(can.Listener):
    """Fed by the notifier thread; read by tool calls on other threads."""

    def __init__(self, routes: Routes, history_size: int, on_failure: Callable[[str], None]) -> None:
        self.routes = routes
        self.history_size = history_size
        #: The last frames each message may be, by message name.
        self.history: dict[str, deque[can.Message]] = {}
        self.counts: dict[str, int] = {}
        self.error_frames = 0
        self.last_error_frame: float | None = None
        self.failure: str | None = None
        #: Set when the bus was reopened: a late failure of the old bus no longer concerns the driver.
        self.retired = False
        self._subscribers: tuple[Subscription, ...] = ()
        self._lock = threading.Lock()
        self._on_failure = on_failure
        self._arrived = threading.Condition()

    def on_message_received(self, msg: can.Message) -> None:
        if msg.is_error_frame:
            self.error_frames += 1
            self.last_error_frame = msg.timestamp
            return
        names = self.routes.may_be(msg)
        if not names:
            return
        for name in names:
            frames = self.history.get(name)
            if frames is None:
                frames = self.history.setdefault(name, deque(maxlen=self.history_size))
            frames.append(msg)
            self.counts[name] = self.counts.get(name, 0) + 1
        for subscription in self._subscribers:
            if subscription.key in names:
                subscription.put(msg)
        if self._waiting:
            with self._arrived:
                self._arrived.notify_all()

    _waiting = 0

    def on_error(self, exc: Exception) -> None:
        """python-can's notifier calls this when receiving failed."""
        self.failed(f"{type(exc).__name__}: {exc}".rstrip(": "))

    def failed(self, failure: str) -> None:
        """Record a bus failure (the first one wins), wake every waiting read, tell the driver."""
        if self.failure is not None:
            return  # python-can's notifier retries a failed recv at once: report the failure once
        self.failure = failure
        logger.error("the CAN bus failed: %s", failure)
        with self._arrived:
            self._arrived.notify_all()
        if not self.retired:
            self._on_failure(failure)

    def latest(self, message: str, count: int) -> list[can.Message]:
        """The last ``count`` frames ``message`` may be, oldest first."""
        frames = self.history.get(message)
        if not frames:
            return []
        return list(frames)[-count:]

    def wait_for(self, message: str, after: int, timeout: float) -> bool:
        """Wait until more than ``after`` frames ``message`` may be arrived, at most ``timeout`` seconds."""
        with self._arrived:
            self._waiting += 1
            try:
                return self._arrived.wait_for(
                    lambda: self.counts.get(message, 0) > after or self.failure is not None, timeout=max(0.0, timeout)
                ) and self.failure is None
            finally:
                self._waiting -= 1

    def subscribe(self, subscription: Subscription) -> None:
        with self._lock:
            self._subscribers = (*self._subscribers, subscription)

    def unsubscribe(self, subscription: Subscription) -> None:
        with self._lock:
            self._subscribers = tuple(s for s in self._subscribers if s is not subscription)


def set_listen_only(bus: can.BusABC, listen_only: bool) -> bool:
    """Put the controller in passive (listen-only) or active state where the interface can.

    Returns False when the interface has no such state (python-can raises
    ``NotImplementedError``); the driver's own gate is then what keeps the bus silent.
    """
    try:
        bus.state = can.BusState.PASSIVE if listen_only else can.BusState.ACTIVE
    except (NotImplementedError, can.CanError):
        return False
    return True


class BusLink:
    """One bus with its notifier; reopened on the next call after a failure when the driver owns it."""

    def __init__(
        self,
        open_bus: Callable[[], can.BusABC] | None,
        given: can.BusABC | None,
        routes: Routes,
        history_size: int,
        on_failure: Callable[[str], None],
    ) -> None:
        self._open_bus = open_bus
        self._given = given
        self._routes = routes
        self._history_size = history_size
        self._on_failure = on_failure
        self._lock = threading.Lock()
        self.bus: can.BusABC
        self.receiver: Receiver
        self.notifier: can.Notifier | None = None
        self.hardware_listen_only = False
        self.recovered_from: str | None = None
        self._start()

    @property
    def owned(self) -> bool:
        return self._given is None

    def _start(self, recovered_from: str | None = None) -> None:
        if self._given is not None:
            self.bus = self._given
        else:
            assert self._open_bus is not None
            self.bus = self._open_bus()
        receiver = Receiver(self._routes, self._history_size, self._failed)
        self.hardware_listen_only = set_listen_only(self.bus, True)
        self.notifier = can.Notifier(self.bus, [receiver], timeout=0.05)
        if recovered_from is not None:
            self.recovered_from = recovered_from
        # Published last: whoever sees the bus healthy again (the receiver has no failure)
        # finds it listening, and finds what it recovered from.
        self.receiver = receiver

    def _failed(self, failure: str) -> None:
        # The notifier thread would retry the failed bus in a tight loop; stop it from another
        # thread (a thread cannot join itself), then let the driver fail safe.
        notifier = self.notifier
        if notifier is not None:
            threading.Thread(target=self._halt, args=(notifier,), name="mcs-can-halt", daemon=True).start()
        self._on_failure(failure)

    @staticmethod
    def _halt(notifier: can.Notifier) -> None:
        with contextlib.suppress(Exception):
            notifier.stop(timeout=1.0)

    def ensure(self) -> None:
        """Reopen a failed bus the driver owns (the next call after a failure reconnects)."""
        if self.receiver.failure is None or not self.owned:
            return
        with self._lock:
            if self.receiver.failure is None:
                return
            failure = self.receiver.failure
            self._stop()
            self._start(recovered_from=failure)
            logger.info("the CAN bus was reopened after a failure: %s", failure)

    def _stop(self) -> None:
        self.receiver.retired = True
        notifier, self.notifier = self.notifier, None
        if notifier is not None:
            with contextlib.suppress(Exception):
                notifier.stop(timeout=1.0)
        if self.owned:
            with contextlib.suppress(Exception):
                self.bus.shutdown()

    def close(self) -> None:
        with self._lock:
            self._stop()

    def health(self) -> dict[str, Any]:
        receiver = self.receiver
        out: dict[str, Any] = {"error_frames": receiver.error_frames}
        if receiver.failure is not None:
            out["failure"] = receiver.failure
        if self.recovered_from is not None:
            out["recovered_from"] = self.recovered_from
        return out
