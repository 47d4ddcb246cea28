"""The CAN driver: a CAN database's messages as LLM tools on a python-can bus, silent until armed."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import json
import logging
import math
import os
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping
from typing import Any

import can
from cantools.database.can import Database as CantoolsDatabase

from mcs.driver import DriverMeta, ToolDriver, refuse_unknown_options
from mcs.errors import (
    ConfigurationError,
    ExecutionError,
    InvalidInputError,
    PolicyDeniedError,
    ToolTimeoutError,
)
from mcs.pipeline import Invocation
from mcs.tools import Tool
from mcs_can import _database
from mcs_can._bus import BusLink, FrameKey, Routes, Subscription, set_listen_only
from mcs_can._periodic import Periodic
from mcs_can._safety import (
    AllowedFrame,
    Approvals,
    LimitState,
    RateLimiter,
    SignalLimit,
    allowed_entries,
)
from mcs_can._signals import MessageSpec, SpecCache
from mcs_can._tools import (
    MONITOR,
    READ,
    SEND,
    STATUS,
    STOP,
    Limits,
    send_names,
    send_tool,
    shared_tools,
)
from mcs_can._values import describe_frame, frame_digest, json_signals, json_value
from mcs_can._watchdog import Watchdog, join

__version__ = "0.1.0"

logger = logging.getLogger("mcs_can")
audit_log = logging.getLogger("mcs_can.audit")

_NOT_ARMED = (
    "Refused: actuation is not armed. Only the operator can arm the CAN driver (outside this "
    "conversation); until then every send is refused. Use dry_run to see the frame a send would produce."
)
_CLASSIC_MAX = 8
_ANSWER_S = 0.05  # what a read or monitor leaves of its call's time to answer before the deadline
_FD_LENGTHS = frozenset((*range(9), 12, 16, 20, 24, 32, 48, 64))  # the payload lengths a CAN FD DLC names


class CanDriver(ToolDriver):
    """A CAN database (DBC, KCD, SYM, ARXML) as MCS tools on one python-can bus.

    The driver starts **disarmed**: the bus is put in listen-only state where the
    interface supports it, and every send answers ``POLICY_DENIED`` until the operator
    calls :meth:`arm` (a method, never a tool). :meth:`disarm` stops every periodic send
    before it returns. Only frames on the ``allow_send`` list ever reach the bus.

    ``dbc`` is the database: a DBC, KCD, SYM or ARXML file, or a ``cantools`` ``Database``.
    Keyword arguments, besides :class:`mcs.ToolDriver`'s (``timeout``, ``prefix``,
    ``description_mode``, ...):

    Database
        * ``database_format`` (from the extension), ``encoding`` (cantools' default).
        * ``strict`` (True): cantools' strict loading. ``False`` loads what cantools refuses
          strictly and names what it left out or did not check in :attr:`skipped`.

    Bus (python-can)
        * ``interface`` (``"virtual"``), ``channel`` (``"mcs-can"``), ``bitrate``, ``fd``
          (CAN FD frames allowed), ``data_bitrate``, ``bitrate_switch`` (FD frames sent with
          BRS), ``bus_options`` (further ``can.Bus`` keyword arguments), or ``bus``: an
          open ``can.BusABC`` the caller owns (not shut down by :meth:`close`).

    Safety
        * ``allow_send``: message names, frame ids (of database messages) or
          :class:`AllowedFrame` entries; nothing by default. A name admits that message
          only, even when another shares its frame; an id or an entry, every message on it.
        * ``limits``: ``{"Message.Signal": SignalLimit | {"minimum", "maximum", "max_step",
          "max_rate", "initial"}}`` on top of the database's ranges.
        * ``tx_rate_limit`` (50 frames/s, ``None``: none) and ``tx_burst`` (5): one budget for
          one-shot and periodic sends; beyond it a send is refused, never queued.
        * ``high_risk``: message names or ids whose sends need an approval token bound to
          the exact frame; ``approval_ttl`` (60 s); ``operator_approval`` (False): the
          operator must also :meth:`approve` each token.
        * ``watchdog_timeout`` (1.0 s, ``None``: off): while armed, the operator calls
          :meth:`heartbeat` at least this often or the driver stops every periodic send
          and disarms.
        * ``keep_periodic_after_session`` (False): by default a periodic send started by an
          MCP client stops when that client's session ends (stdio closes, the HTTP session
          is deleted or expires); ``True`` keeps it running until :meth:`disarm`, the
          watchdog or ``stop_periodic``.
        * ``dry_run`` (False): simulation mode, every send returns its frame unsent.
        * ``send_tools``: ``"allowed"`` (default: send tools only for allow-listed
          messages) or ``"all"``.

    Receive side
        * ``history_size`` (32 frames per message), ``max_wait_s`` (5 s),
          ``monitor_max_frames`` (500), ``monitor_max_seconds`` (10 s).

    Raises:
        ConfigurationError: the database cannot be loaded (the message names the file and
            the place), the bus cannot be opened, or an option is wrong.
    """

    enforces_deadline = True

    def __init__(
        self,
        dbc: str | os.PathLike[str] | CantoolsDatabase,
        *,
        database_format: str | None = None,
        encoding: str | None = None,
        strict: bool = True,
        interface: str = "virtual",
        channel: str | int = "mcs-can",
        bitrate: int | None = None,
        fd: bool = False,
        data_bitrate: int | None = None,
        bitrate_switch: bool = True,
        bus_options: Mapping[str, Any] | None = None,
        bus: can.BusABC | None = None,
        allow_send: Iterable[int | str | AllowedFrame | Mapping[str, Any]] = (),
        limits: Mapping[str, SignalLimit | Mapping[str, Any]] | None = None,
        tx_rate_limit: float | None = 50.0,
        tx_burst: int = 5,
        high_risk: Iterable[int | str] = (),
        approval_ttl: float = 60.0,
        operator_approval: bool = False,
        watchdog_timeout: float | None = 1.0,
        keep_periodic_after_session: bool = False,
        dry_run: bool = False,
        send_tools: str = "allowed",
        history_size: int = 32,
        max_wait_s: float = 5.0,
        monitor_max_frames: int = 500,
        monitor_max_seconds: float = 10.0,
        name: str | None = None,
        **options: Any,
    ) -> None:
        refuse_unknown_options(CanDriver, options, "the CAN driver")
        super().__init__(**options)
        if send_tools not in ("allowed", "all"):
            raise ConfigurationError(f"send_tools must be 'allowed' or 'all', got {send_tools!r}")
        for option, value in (("history_size", history_size), ("monitor_max_frames", monitor_max_frames)):
            if not isinstance(value, int) or value < 1:
                raise ConfigurationError(f"{option} must be a positive integer, got {value!r}")
        for option, number in (("max_wait_s", max_wait_s), ("monitor_max_seconds", monitor_max_seconds)):
            if not 0 < number < math.inf:
                raise ConfigurationError(f"{option} must be a positive number of seconds, got {number!r}")
        if watchdog_timeout is not None and not 0 < watchdog_timeout < math.inf:
            raise ConfigurationError(
                f"watchdog_timeout must be a positive number of seconds (None: no watchdog), got {watchdog_timeout!r}")
        self.database = _database.load(dbc, database_format=database_format, encoding=encoding, strict=strict)
        for line in self.database.skipped:
            logger.warning("%s: %s", self.database.source, line)
        self.fd = bool(fd)
        self.bitrate_switch = bool(bitrate_switch) and self.fd
        self.dry_run = bool(dry_run)
        self._specs = SpecCache(self.database.messages)
        self._routes = Routes(
            (m.name, m.frame_id, bool(m.is_extended_frame), int(m.length)) for m in self.database.messages
        )
        shapes: dict[str, tuple[int, bool, int]] = {}
        by_id: dict[int, list[str]] = {}
        for message in self.database.messages:
            shapes[message.name] = (message.frame_id, bool(message.is_extended_frame), int(message.length))
            by_id.setdefault(message.frame_id, []).append(message.name)
        entries = allowed_entries(allow_send, shapes, by_id)
        self.allowed: tuple[AllowedFrame, ...] = tuple(entry for entry, _ in entries)
        #: The messages each allow-list entry admits (``bus_status`` shows them).
        self._allowed_messages: tuple[tuple[str, ...], ...] = tuple(names for _, names in entries)
        #: The messages the allow-list admits, by name: two messages sharing a frame (id, id kind,
        #: length) are two verdicts, so allowing one by name never allows the other.
        self._admitted_messages = frozenset(name for _, names in entries for name in names)
        # The allow-list as sets, for the last gate before the bus: (id, extended, length) of the
        # entries with a length, (id, extended) of those without (AllowedFrame.admits, in one lookup).
        self._admitted_frames = frozenset(
            (e.arbitration_id, e.is_extended_id, e.dlc) for e in self.allowed if e.dlc is not None)
        self._admitted_any_length = frozenset(
            (e.arbitration_id, e.is_extended_id) for e in self.allowed if e.dlc is None)
        #: The description heads of the kinds of frame the last gate admitted, per message (:meth:`_admitted_head`).
        self._admitted_heads: dict[tuple[str, int, bool, bool, bool, int, bool], dict[str, Any]] = {}
        for message_name in sorted(self._admitted_messages):
            reason = self.database.unchecked.get(message_name)
            if reason is not None:
                raise ConfigurationError(
                    f"allow_send admits {message_name}, which fails cantools' strict checks ({reason}); "
                    "such a message is decoded but never sent"
                )
        self._limits = self._parse_limits(limits or {})
        for limited_message, limited_signal in self._limits:
            spec = self._specs[limited_message]
            spec.limited = (*spec.limited, limited_signal)
        self._high_risk = self._resolve_messages(high_risk, "high_risk", by_id)
        self._refuse_shared_frames(shapes)
        self._rate = RateLimiter(tx_rate_limit, tx_burst)
        self._approvals = Approvals(approval_ttl, operator_approval)
        self._state = LimitState(self._limits)
        self._periodic: dict[str, Periodic] = {}
        #: The session each periodic send ends with (a ``SessionLifetime`` of the caller's MCP session).
        self._owners: dict[str, Any] = {}
        self._keep_periodic = bool(keep_periodic_after_session)
        self._armed = False
        self._tx_lock = threading.RLock()
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None  # async sends (made on the first)
        self._pool_lock = threading.Lock()
        self._reopen_lock = threading.Lock()
        self._pending_reopen: concurrent.futures.Future[None] | None = None
        self._watchdog = Watchdog(watchdog_timeout, self._watchdog_tripped) if watchdog_timeout is not None else None
        self._send_tools = send_tools
        self._shared_limits = Limits(
            history_size=history_size, max_wait_s=float(max_wait_s), monitor_max_frames=monitor_max_frames,
            monitor_max_seconds=float(monitor_max_seconds),
            min_period_ms=max(1.0, 1000.0 / tx_rate_limit) if tx_rate_limit else 1.0,
        )
        self._tool_list: list[Tool] | None = None
        self._sendable: dict[str, MessageSpec] = {}
        source = os.path.basename(self.database.source)
        fmt = (database_format or os.path.splitext(source)[1].lstrip(".") or "dbc").upper()
        self.meta = DriverMeta(
            id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"mcs-driver-can:{source}")),
            name=name or "can",
            version=__version__,
            protocol="CAN",
            transport="CAN FD" if self.fd else "CAN",
            spec_format=fmt if fmt in ("DBC", "KCD", "SYM", "ARXML") else "DBC",
            capabilities=("healthcheck", "status", "stream"),
            prefix=self.prefix,
        )
        self.interface = interface
        self.channel = channel
        bus_kwargs: dict[str, Any] = dict(bus_options or {})
        if bitrate is not None:
            bus_kwargs["bitrate"] = bitrate
        if data_bitrate is not None:
            bus_kwargs["data_bitrate"] = data_bitrate
        if self.fd:
            bus_kwargs["fd"] = True

        def open_bus() -> can.BusABC:
            try:
                return can.Bus(interface=interface, channel=channel, **bus_kwargs)
            except Exception as exc:
                raise ConfigurationError(
                    f"cannot open the CAN bus (interface={interface!r}, channel={channel!r}): {exc}"
                ) from None

        self._link = BusLink(None if bus is not None else open_bus, bus, self._routes, history_size,
                             self._bus_failed)

    # ------------------------------------------------------------------ configuration

    def _resolve_messages(self, entries: Iterable[int | str], option: str,
                          by_id: Mapping[int, list[str]]) -> frozenset[str]:
        names: set[str] = set()
        for entry in entries:
            if isinstance(entry, str) and entry in self._specs:
                names.add(entry)
            elif isinstance(entry, int) and not isinstance(entry, bool) and entry in by_id:
                names.update(by_id[entry])
            else:
                raise ConfigurationError(f"{option} names {entry!r}, which is not a message (name or id) of the database")
        return frozenset(names)

    def _refuse_shared_frames(self, shapes: Mapping[str, tuple[int, bool, int]]) -> None:
        """Refuse an allowed message whose frame id (and id kind) another message also uses,
        when that other message has limits, or is high-risk and the allowed one is not: a
        node reading the other message takes the allowed one's bytes for its signals, so its
        limits or approval would not hold.

        Raises:
            ConfigurationError: naming both messages and what to change.
        """
        on_frame: dict[FrameKey, list[str]] = {}
        for name, (frame_id, extended, _) in shapes.items():
            on_frame.setdefault((frame_id, extended), []).append(name)
        limited = {message for message, _ in self._limits}
        for (frame_id, extended), names in on_frame.items():
            if len(names) < 2:
                continue
            where = f"frame 0x{frame_id:X} ({'extended' if extended else 'standard'} id)"
            for sender in names:
                if sender not in self._admitted_messages:
                    continue
                for other in names:
                    if other != sender and other in limited:
                        raise ConfigurationError(
                            f"allow_send admits {sender}, whose {where} also carries {other}, which has limits; "
                            f"a node reading {other} would take {sender}'s bytes for its signals, unchecked. "
                            f"Allow only one of the messages sent on {where}"
                        )
                    if other != sender and other in self._high_risk and sender not in self._high_risk:
                        raise ConfigurationError(
                            f"allow_send admits {sender}, whose {where} also carries {other}, which is high-risk; "
                            f"name {sender} in high_risk too, or do not allow it"
                        )

    def _parse_limits(self, limits: Mapping[str, SignalLimit | Mapping[str, Any]]) -> dict[tuple[str, str], SignalLimit]:
        out: dict[tuple[str, str], SignalLimit] = {}
        for where, value in limits.items():
            message, _, signal = str(where).partition(".")
            spec = self._specs.get(message)
            if spec is None or signal not in spec.signals:
                raise ConfigurationError(
                    f"limits names {where!r}; give 'Message.Signal' of the database"
                    + (f" (signals of {message}: {', '.join(spec.signals)})" if spec is not None else "")
                )
            limit = SignalLimit.of(value, str(where))
            resolution = abs(spec.signals[signal].scale)
            if limit.max_step is not None and not spec.signals[signal].is_float and limit.max_step < resolution:
                raise ConfigurationError(
                    f"limits[{where!r}]: max_step {limit.max_step:g} is below the signal's resolution "
                    f"{resolution:g}, so no send could ever change it; give at least {resolution:g}"
                )
            out[(message, signal)] = limit
        return out

    @property
    def skipped(self) -> tuple[str, ...]:
        """What lenient loading (``strict=False``) left out or did not check, one line each."""
        return self.database.skipped

    @property
    def bus(self) -> can.BusABC:
        """The python-can bus the driver listens and sends on."""
        return self._link.bus

    # ------------------------------------------------------------------ the operator's API

    @property
    def armed(self) -> bool:
        return self._armed

    def arm(self) -> None:
        """Allow sends (of allow-listed frames, within the limits) until :meth:`disarm`.

        The operator's call, never a tool: nothing an LLM emits can reach it. It enables
        only what the driver was configured with; a failed bus is reopened first. With a
        watchdog, arming counts as the first heartbeat.
        """
        with self._tx_lock:
            self._link.ensure()
            if self._link.receiver.failure is not None:
                raise ExecutionError(f"cannot arm: the CAN bus failed ({self._link.receiver.failure})")
            if not self._armed:
                self._state.at_rest_from_now()
            self._armed = True
            set_listen_only(self._link.bus, False)
            # Under the lock, with the armed state: an arm() racing a disarm() must not leave
            # the driver armed with the watchdog stopped (or disarmed with it running).
            if self._watchdog is not None:
                self._watchdog.start()
        self._audit("armed")

    def disarm(self, reason: str = "operator") -> None:
        """Stop every periodic send, forget pending approvals and last values, refuse sends.

        When this returns, no further frame of this driver reaches the bus.
        """
        with self._tx_lock:
            was_armed = self._armed
            self._armed = False
            stopped = list(self._periodic)
            for task in self._periodic.values():
                task.stop()
            self._periodic.clear()
            self._owners.clear()
            self._rate.release()
            self._approvals.clear()
            self._state.reset()
            set_listen_only(self._link.bus, True)
            halted = self._watchdog.halt() if self._watchdog is not None else None
        if self._watchdog is not None:  # joined outside the lock: a tripping watchdog waits for it
            join(halted, self._watchdog.timeout + 1.0)
        if was_armed or stopped:
            self._audit("disarmed", reason=reason, stopped=stopped)

    def heartbeat(self) -> None:
        """Refresh the watchdog (the operator's loop calls it while its inputs are fresh)."""
        if self._watchdog is not None:
            self._watchdog.feed()

    def approve(self, token: str) -> dict[str, Any]:
        """The operator approves a pending high-risk frame; returns the frame it is bound to.

        Needed only with ``operator_approval=True``.

        Raises:
            KeyError: no pending approval has that token.
        """
        with self._tx_lock:
            frame = self._approvals.approve(token)
        self._audit("approved", frame=frame)
        return frame

    def pending_approvals(self) -> list[dict[str, Any]]:
        """The approvals waiting to be used, with the exact frame each is bound to."""
        with self._tx_lock:
            return self._approvals.pending()

    def _watchdog_tripped(self) -> None:
        assert self._watchdog is not None
        logger.warning("watchdog: no heartbeat for %g s; disarming", self._watchdog.timeout)
        self.disarm(reason=f"watchdog: no heartbeat for {self._watchdog.timeout:g} s")

    def _bus_failed(self, failure: str) -> None:
        self.disarm(reason=f"bus error: {failure}")

    def _periodic_failed(self, exc: Exception) -> None:
        self._link.receiver.failed(f"periodic send failed: {type(exc).__name__}: {exc}")  # disarms

    # ------------------------------------------------------------------ tools

    def _list_tools(self) -> Iterable[Tool]:
        if self._tool_list is None:
            sendable = [
                self._specs[m.name] for m in self.database.messages
                if m.name not in self.database.unchecked
                and (self._send_tools == "all" or m.name in self._admitted_messages)
            ]
            tools: list[Tool] = []
            min_period = self._shared_limits.min_period_ms
            for tool_name, spec in zip(send_names([s.name for s in sendable]), sendable, strict=True):
                ranges = self._ranges(spec)
                tools.append(send_tool(tool_name, spec, ranges, spec.controls,
                                       high_risk=spec.name in self._high_risk, min_period_ms=min_period))
            self._sendable = {spec.name: spec for spec in sendable}
            tools.extend(shared_tools(list(self._specs), list(self._sendable), self._shared_limits))
            self._tool_list = tools
        return self._tool_list

    def _ranges(self, spec: MessageSpec) -> dict[str, tuple[float | None, float | None]]:
        ranges = {}
        for signal, sig in spec.signals.items():
            limit = self._limits.get((spec.name, signal))
            if limit is None:
                continue
            low = sig.minimum if limit.minimum is None else max(limit.minimum, sig.minimum) \
                if sig.minimum is not None else limit.minimum
            high = sig.maximum if limit.maximum is None else min(limit.maximum, sig.maximum) \
                if sig.maximum is not None else limit.maximum
            ranges[signal] = (low, high)
        return ranges

    def _call_tool(self, invocation: Invocation) -> Any:
        kind = invocation.tool.meta.get("kind")
        if kind == SEND:
            return self._send(invocation)
        if kind == READ:
            return self._read(invocation)
        if kind == MONITOR:
            return self._monitor(invocation)
        if kind == STOP:
            return self._stop(invocation)
        if kind == STATUS:
            return self.get_status()
        raise ExecutionError(f"{invocation.tool.name} is not a tool of the CAN driver", tool=invocation.tool.name)

    def _tool_runner(self, tool: Tool) -> Callable[[Invocation], Any]:
        """A send tool's calls go to :meth:`_send`, as :meth:`_call_tool` sends them (its
        kind is fixed with the tool); every other tool's, and all of a subclass that has its
        own ``_call_tool``, to :meth:`_call_tool`."""
        if tool.meta.get("kind") == SEND and type(self)._call_tool is CanDriver._call_tool:
            return self._send
        return self._call_tool

    async def _acall_tool(self, invocation: Invocation) -> Any:
        kind = invocation.tool.meta.get("kind")
        if kind == MONITOR:
            return await self._amonitor(invocation)
        if kind == READ and not invocation.arguments.get("wait_s"):
            await self._areopen(invocation)
            return self._read_now(invocation)  # answered from memory: nothing to wait for
        if kind == STATUS:
            return self.get_status()
        # Sends hold the transmit lock and may block in the interface: off the event loop.
        if kind == SEND and type(self)._call_tool is CanDriver._call_tool:
            return await self._asend(invocation)
        return await asyncio.to_thread(self._call_tool, invocation)

    async def _asend(self, invocation: Invocation) -> dict[str, Any]:
        """:meth:`_send` on a worker thread. When the awaiting task is cancelled, the send is
        refused if it has not taken the transmit lock yet, and a periodic send it started
        anyway (it held the lock as the cancellation came) is stopped once it returns."""
        gave_up = threading.Event()
        context = contextvars.copy_context()  # what asyncio.to_thread passes on
        future = self._send_pool().submit(context.run, self._send, invocation, gave_up)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            gave_up.set()
            future.add_done_callback(self._stop_if_started)  # at once when it has already returned
            raise

    def _send_pool(self) -> concurrent.futures.ThreadPoolExecutor:
        with self._pool_lock:  # not the transmit lock: this runs on the event loop
            if self._pool is None:
                self._pool = concurrent.futures.ThreadPoolExecutor(4, thread_name_prefix="mcs-can-send")
            return self._pool

    def _stop_if_started(self, future: concurrent.futures.Future[dict[str, Any]]) -> None:
        """Stop the periodic send a cancelled call started (on a thread of its own: it waits for the lock)."""
        if future.cancelled() or future.exception() is not None:
            return
        result = future.result()
        if result.get("sent") and "period_ms" in result:
            threading.Thread(target=self._stop_cancelled, args=(result["message"],), daemon=True).start()

    def _stop_cancelled(self, name: str) -> None:
        with self._tx_lock:
            self._owners.pop(name, None)
            task = self._periodic.pop(name, None)
            if task is not None:
                task.stop()
                self._rate.release(name)
        if task is not None:
            self._audit("periodic_stopped", stopped=[name], reason="the call that started it was cancelled")

    def _stream_tool(self, invocation: Invocation) -> Iterator[Any]:
        if invocation.tool.meta.get("kind") != MONITOR:
            yield from super()._stream_tool(invocation)
            return
        self._reopen(invocation)
        spec, window, cap = self._monitor_plan(invocation)
        subscription = Subscription(spec.name, cap)
        receiver = self._link.receiver
        receiver.subscribe(subscription)
        try:
            for _ in range(cap):
                frame = subscription.get(window - time.monotonic())
                if frame is None:
                    break
                yield self._decoded(spec, frame)
            self._raise_if_failed(invocation)
        finally:
            receiver.unsubscribe(subscription)

    async def _astream_tool(self, invocation: Invocation) -> AsyncIterator[Any]:
        if invocation.tool.meta.get("kind") != MONITOR:
            yield await self._acall_tool(invocation)
            return
        await self._areopen(invocation)
        spec, window, cap = self._monitor_plan(invocation)
        subscription = Subscription(spec.name, cap, asyncio.get_running_loop())
        receiver = self._link.receiver
        receiver.subscribe(subscription)
        try:
            for _ in range(cap):
                frame = await subscription.aget(window - time.monotonic())
                if frame is None:
                    break
                yield self._decoded(spec, frame)
            self._raise_if_failed(invocation)
        finally:
            receiver.unsubscribe(subscription)

    # ------------------------------------------------------------------ sending

    def _send(self, invocation: Invocation, gave_up: threading.Event | None = None) -> dict[str, Any]:
        """Check and send (or start the periodic send of) one frame. Nothing is sent when the
        call's deadline passes, or ``gave_up`` is set, before it holds the transmit lock."""
        tool = invocation.tool.name
        spec = self._sendable[invocation.tool.meta["message"]]
        arguments = invocation.arguments
        controls = spec.controls
        dry = self.dry_run or bool(arguments.get(controls.dry_run, False))
        period = arguments.get(controls.period_ms)
        if not dry and not self._armed:
            raise PolicyDeniedError(_NOT_ARMED, tool=tool, details={"armed": False})
        plan = spec.plan
        names = plan.names
        # values_for's answer for a dict of exactly every signal of a message that is not multiplexed
        # (the arguments themselves), without its frame; anything else is values_for's to work out.
        values = arguments if plan.fixed and type(arguments) is dict and len(arguments) == len(names) \
            and names.issuperset(arguments) else spec.values_for(arguments, tool)
        try:
            # strict=False only where the validated schema already proved what the strict check checks (SendPlan).
            data = spec.message.encode(values, scaling=True, padding=False, strict=plan.strict)
        except Exception as exc:
            raise InvalidInputError(
                f"{spec.name} cannot be encoded: {' '.join(str(exc).split())}", tool=tool,
                details={"message": spec.name},
            ) from None
        frame = can.Message(
            arbitration_id=spec.frame_id, is_extended_id=spec.is_extended, is_fd=spec.is_fd,
            bitrate_switch=spec.is_fd and self.bitrate_switch, data=data, check=False,
        )
        # The limits check the values the frame carries: a coarse resolution rounds what was asked.
        # (None, not two empty dicts, for a message without limits: nothing built per send.)
        limited, rounded = spec.limited_values(values, data) if spec.limited else (None, None)
        high_risk = spec.name in self._high_risk
        token = arguments.get(controls.approval_token) if high_risk else None
        lifetime = self._lifetime(invocation) if period is not None and not dry else None
        lock = self._tx_lock
        deadline = invocation.deadline
        # What ``with`` does, without looking up and calling __enter__/__exit__; a caller whose
        # deadline passes while another send holds the bus gets its answer then, with nothing sent.
        # A free lock (the common case) is taken without working out a timeout first; blocking and
        # timeout are given by position (the lock's keyword parsing costs more than the acquire).
        if not lock.acquire(False) and not lock.acquire(
                True, -1 if deadline is None else max(0.0, deadline - time.monotonic())):
            raise self._gave_up(invocation, "its deadline passed while another send held the bus")
        try:
            if gave_up is not None and gave_up.is_set():
                raise self._gave_up(invocation, "it was cancelled while another send held the bus")
            if deadline is not None and time.monotonic() >= deadline:
                raise self._gave_up(invocation, "its deadline passed while another send held the bus")
            # The last gate's verdict and the description head, kept per message and kind of frame (see _admitted_head).
            kind = (spec.name, frame.arbitration_id, frame.is_extended_id, frame.is_fd, frame.bitrate_switch,
                    frame.dlc, self.fd)
            head = self._admitted_heads.get(kind)
            if head is None:
                head = self._admitted_head(frame, kind, tool)
            described = head.copy()  # {**head, "data_hex": ...} in the same key order, built faster
            described["data_hex"] = frame.data.hex()  # a bytearray: describe_frame's bytes(...).hex() without the copy
            if period is None and spec.name in self._periodic:
                raise self._periodic_running(spec.name, tool)
            pending = self._state.check(spec.name, limited, tool, rounded) if limited else None
            if dry:
                self._audit("dry_run", invocation, frame=described, period_ms=period)
                result: dict[str, Any] = {"dry_run": True, "sent": False, "message": spec.name,
                                          "frame": described, "armed": self._armed}
                if period is not None:
                    result["period_ms"] = period
                if high_risk:
                    result["approval_required"] = True
                return result
            if not self._armed:  # disarmed while this call was encoding
                raise PolicyDeniedError(_NOT_ARMED, tool=tool, details={"armed": False})
            digest = frame_digest(frame, period) if high_risk else ""
            if high_risk and token is None:
                issued = self._approvals.issue(digest, described)
                self._audit("approval_issued", invocation, frame=described, sha256=digest)
                return {
                    "sent": False, "approval_required": True, "message": spec.name, "frame": described,
                    "frame_sha256": digest, "approval_token": issued, "expires_in_s": self._approvals.ttl,
                    "next": f"Call {tool} again with the same arguments and approval_token to send this frame"
                            + (" once the operator approved it." if self._approvals.operator_approval else "."),
                }
            if token is not None:
                self._approvals.check(str(token), digest, tool)
            if period is None:
                self._rate.spend_one(tool)
                link = self._link
                try:
                    if link.receiver.failure is not None:  # what ensure() looks at first: reopen a failed bus
                        link.ensure()
                    try:
                        left = None if deadline is None else deadline - time.monotonic()
                        link.bus.send(frame, timeout=left if left is None or left > 0.0 else 0.0)  # max(0.0, left)
                    except can.CanError as exc:
                        raise self._send_failed(frame, invocation, exc) from None
                except BaseException:
                    self._rate.refund_one()  # the frame did not go: its token is not spent
                    raise
            else:
                self._start_periodic(spec, frame, float(period), tool)
                self._bind(spec.name, lifetime)
            if token is not None:
                self._approvals.spend(str(token))
            if pending:
                self._state.commit(pending)
        finally:
            lock.release()
        if audit_log.isEnabledFor(logging.INFO):  # what _audit asks first, without the call when nobody listens
            self._audit("sent" if period is None else "periodic_started", invocation, frame=described,
                        period_ms=period)
        out: dict[str, Any] = {"sent": True, "message": spec.name, "frame": described}
        if period is not None:
            out["period_ms"] = period
        return out

    def _periodic_running(self, name: str, tool: str) -> PolicyDeniedError:
        """A one-shot send of a message sent periodically would alternate with the periodic
        frames on the bus, each step checked against the last send but not against them."""
        running = self._periodic[name].period_ms
        return PolicyDeniedError(
            f"Refused: {name} is being sent every {running:g} ms. Change its values with period_ms={running:g}, "
            "or call stop_periodic first; a one-shot send would alternate with the periodic frames.",
            tool=tool, details={"periodic_ms": running},
        )

    def _gave_up(self, invocation: Invocation, why: str) -> ToolTimeoutError:
        self._audit("send_abandoned", invocation, reason=why)
        return ToolTimeoutError(f"Nothing was sent: {why}.", tool=invocation.tool.name,
                                details={"sent": False})

    def _check_frame(self, frame: can.Message, message: str, tool: str) -> None:
        """The last gate before the bus: the allow-list (the message by name, its frame by id,
        id kind and length), and what the bus can carry."""
        if message not in self._admitted_messages:
            kind = "extended" if frame.is_extended_id else "standard"
            raise PolicyDeniedError(
                f"Refused: {message} (frame 0x{frame.arbitration_id:X}, {kind} id, {frame.dlc} bytes) is not on the "
                "transmit allow-list; only the operator's configuration can add it.",
                tool=tool, details={"frame": describe_frame(frame), "message": message, "allowed": False},
            )
        if frame.dlc > _CLASSIC_MAX and not (self.fd and frame.is_fd):
            carrier = f"{message} is a classic CAN frame" if self.fd else "this bus is classic CAN"
            raise PolicyDeniedError(
                f"Refused: a {frame.dlc}-byte frame needs CAN FD, and {carrier} (at most 8 bytes).",
                tool=tool, details={"frame": describe_frame(frame)},
            )
        if frame.is_fd and not self.fd:
            raise PolicyDeniedError("Refused: this bus is not configured for CAN FD frames.", tool=tool,
                                    details={"frame": describe_frame(frame)})
        if frame.is_fd and frame.dlc not in _FD_LENGTHS:
            raise PolicyDeniedError(
                f"Refused: {message} has {frame.dlc} bytes, and a CAN FD frame carries 0 to 8, 12, 16, 20, 24, 32, "
                "48 or 64; a controller would pad it, so the bus would not carry this frame.",
                tool=tool, details={"frame": describe_frame(frame)},
            )
        key = (frame.arbitration_id, frame.is_extended_id)
        if (*key, frame.dlc) not in self._admitted_frames and key not in self._admitted_any_length:
            kind = "extended" if frame.is_extended_id else "standard"
            raise PolicyDeniedError(
                f"Refused: frame 0x{frame.arbitration_id:X} ({kind} id, {frame.dlc} bytes) is not on the transmit "
                "allow-list; only the operator's configuration can add it.",
                tool=tool, details={"frame": describe_frame(frame), "allowed": False},
            )

    def _admitted_head(
        self, frame: can.Message, kind: tuple[str, int, bool, bool, bool, int, bool], tool: str
    ) -> dict[str, Any]:
        """:meth:`_check_frame` for a message and kind of frame not seen yet (``kind``: the
        message's name, the frame's id, id kind, FD, BRS, length and the driver's ``fd``),
        then the head of its :func:`describe_frame` (all but the bytes), kept under ``kind``
        with that verdict. A database has a few hundred messages at most, and the gate looks
        only at what ``kind`` holds and at the allow-list the driver was built with, never at
        the bytes: what it admitted once it admits again. Two messages sharing a frame have
        verdicts of their own. Refusals raise and are not kept."""
        self._check_frame(frame, kind[0], tool)
        head = self._admitted_heads[kind] = {k: v for k, v in describe_frame(frame).items() if k != "data_hex"}
        return head

    def _send_failed(self, frame: can.Message, invocation: Invocation, exc: can.CanError) -> ExecutionError:
        """What a frame the bus refused leads to: audited, sending disarmed, and the error."""
        described = describe_frame(frame)
        self._audit("send_failed", invocation, frame=described, error=str(exc))
        self.disarm(reason=f"send failed: {exc}")
        return ExecutionError(
            f"The CAN bus did not take the frame ({type(exc).__name__}: {exc}). Sending was disarmed as a "
            "precaution; the operator must arm it again.",
            tool=invocation.tool.name, details={"frame": described, "can_error": str(exc)},
        )

    def _start_periodic(self, spec: MessageSpec, frame: can.Message, period_ms: float, tool: str) -> None:
        """Start (or change) the periodic send of ``spec``. A new task sends its first frame at
        once, so it takes that frame's token like a one-shot send: stopping and starting again,
        or switching periods, cannot send faster than the budget. Changing only the data of a
        running task sends nothing at once and takes no token."""
        self._rate.check_periodic(spec.name, period_ms, tool)
        running = self._periodic.get(spec.name)
        if running is not None and running.period_ms == period_ms:
            running.modify(frame)
        else:
            self._rate.spend_one(tool)
            try:
                if running is not None:
                    running.stop()
                self._link.ensure()
                self._periodic[spec.name] = Periodic(self._link.bus, frame, period_ms, self._tx_lock,
                                                     self._periodic_failed)
            except BaseException:
                self._rate.refund_one()
                raise
        self._rate.reserve(spec.name, period_ms)

    def _lifetime(self, invocation: Invocation) -> Any:
        """The session a periodic send of this call ends with: the caller's MCP session
        (``context.session.lifetime``), or ``None`` (no such session, stateless serving,
        ``keep_periodic_after_session``)."""
        if self._keep_periodic:
            return None
        return getattr(invocation.context.session, "lifetime", None)

    def _bind(self, name: str, lifetime: Any) -> None:
        """Tie the periodic send ``name`` to ``lifetime`` (under the transmit lock): it stops
        when that session ends. Whoever changes a periodic send last owns it."""
        if lifetime is None:
            self._owners.pop(name, None)
            return
        self._owners[name] = lifetime
        lifetime.on_end(f"mcs_can:{id(self)}", functools.partial(self._session_ended, lifetime))

    def _session_ended(self, lifetime: Any) -> None:
        """Stop every periodic send the ended session owns, and audit it."""
        with self._tx_lock:
            stopped = self._stop_periodic([n for n, owner in self._owners.items() if owner is lifetime])
        if stopped:
            logger.warning("the MCP session that started %s ended; stopped", ", ".join(stopped))
            self._audit("periodic_stopped", stopped=stopped, reason="the MCP session that started it ended")

    def _stop(self, invocation: Invocation) -> dict[str, Any]:
        wanted = invocation.arguments.get("message")
        with self._tx_lock:
            stopped = self._stop_periodic([wanted] if wanted is not None else list(self._periodic))
        if stopped:
            self._audit("periodic_stopped", invocation, stopped=stopped)
        return {"stopped": stopped, "running": sorted(self._periodic)}

    def _stop_periodic(self, names: list[str]) -> list[str]:
        """Stop the periodic sends of ``names`` and free their rate (the caller holds the
        transmit lock); the names of those that were running."""
        stopped = []
        for name in names:
            self._owners.pop(name, None)
            task = self._periodic.pop(name, None)
            if task is not None:
                task.stop()
                self._rate.release(name)
                stopped.append(name)
        return stopped

    # ------------------------------------------------------------------ receiving

    def _message(self, invocation: Invocation) -> MessageSpec:
        name = invocation.arguments["message"]
        spec = self._specs.get(name)
        if spec is None:  # the schema's enum already refuses it; kept for direct callers
            raise InvalidInputError(f"{name!r} is not a message of the database", tool=invocation.tool.name)
        return spec

    def _reopen(self, invocation: Invocation) -> None:
        """Reopen a failed bus the driver owns (:meth:`BusLink.ensure`) before a read or a
        monitor, waiting no longer than the call's deadline leaves it (less what it needs to
        answer); without a deadline, until the bus is open.

        Raises:
            ExecutionError: the reopen did not finish in that time (it goes on: a later call
                finds the bus open).
            ConfigurationError: the bus cannot be opened.
        """
        if not self._needs_reopen():
            return
        failure, limit = self._link.receiver.failure, self._reopen_limit(invocation)
        if limit is None:
            self._link.ensure()
            return
        try:
            self._reopening().result(timeout=limit)
        except concurrent.futures.TimeoutError:
            raise self._reopen_too_slow(invocation, failure, limit) from None

    async def _areopen(self, invocation: Invocation) -> None:
        """:meth:`_reopen` for the event loop: the reopen runs on its own thread, awaited."""
        if not self._needs_reopen():
            return
        failure, limit = self._link.receiver.failure, self._reopen_limit(invocation)
        try:
            await asyncio.wait_for(asyncio.wrap_future(self._reopening()), limit)
        except TimeoutError:
            raise self._reopen_too_slow(invocation, failure, limit or 0.0) from None

    def _needs_reopen(self) -> bool:
        return self._link.receiver.failure is not None and self._link.owned

    @staticmethod
    def _reopen_limit(invocation: Invocation) -> float | None:
        remaining = invocation.remaining()
        return None if remaining is None else max(0.0, remaining - _ANSWER_S)

    def _reopening(self) -> concurrent.futures.Future[None]:
        """The reopen under way, or one started now on a thread of its own (one at a time:
        callers that come while it runs wait for the same one)."""
        with self._reopen_lock:
            pending = self._pending_reopen
            if pending is None or pending.done():
                pending = self._pending_reopen = concurrent.futures.Future()
                pending.set_running_or_notify_cancel()  # a caller that gives up cannot cancel it for the others
                threading.Thread(target=self._run_reopen, args=(pending,), name="mcs-can-reopen",
                                 daemon=True).start()
            return pending

    def _run_reopen(self, pending: concurrent.futures.Future[None]) -> None:
        try:
            self._link.ensure()
        except BaseException as exc:
            pending.set_exception(exc)
        else:
            pending.set_result(None)

    @staticmethod
    def _reopen_too_slow(invocation: Invocation, failure: str | None, limit: float) -> ExecutionError:
        return ExecutionError(
            f"The CAN bus failed ({failure}) and reopening it did not finish within the {limit:.2f} s this "
            "call had left; it goes on, so call again shortly.",
            tool=invocation.tool.name, details={"bus_failure": failure, "retryable": True},
        )

    def _raise_if_failed(self, invocation: Invocation) -> None:
        failure = self._link.receiver.failure
        if failure is not None:
            raise ExecutionError(
                f"The CAN bus failed ({failure}); values may be stale. The next call reopens the bus.",
                tool=invocation.tool.name, details={"bus_failure": failure},
            )

    def _decoded(self, spec: MessageSpec, frame: can.Message, signal: str | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"timestamp": frame.timestamp}
        if spec.name in self._routes.sharers:
            others = [name for name in self._routes.may_be(frame) if name != spec.name]
            if others:
                out["may_also_be"] = others
        try:
            decoded: Mapping[str, Any] = spec.message.decode(  # type: ignore[assignment]
                bytes(frame.data), decode_choices=True, scaling=True, allow_truncated=True, allow_excess=True)
        except Exception as exc:
            out["error"] = f"cannot decode: {' '.join(str(exc).split())}"
            out["data_hex"] = bytes(frame.data).hex()
            return out
        if signal is None:
            out["signals"] = json_signals(decoded)
        else:
            out["value"] = json_value(decoded.get(signal))
        return out

    def _read(self, invocation: Invocation) -> dict[str, Any]:
        self._reopen(invocation)
        return self._read_now(invocation)

    def _read_now(self, invocation: Invocation) -> dict[str, Any]:
        """A read of the bus as it is (:meth:`_reopen` is the caller's)."""
        spec = self._message(invocation)
        arguments = invocation.arguments
        signal = arguments.get("signal")
        if signal is not None and signal not in spec.signals:
            raise InvalidInputError(
                f"{spec.name} has no signal {signal!r}; its signals: {', '.join(spec.signals)}.",
                tool=invocation.tool.name, details={"signal": signal},
            )
        receiver = self._link.receiver
        self._raise_if_failed(invocation)
        wait = float(arguments.get("wait_s") or 0.0)
        remaining = invocation.remaining()
        if remaining is not None:
            wait = min(wait, max(0.0, remaining - _ANSWER_S))
        waited_out = False
        if wait > 0:
            waited_out = not receiver.wait_for(spec.name, receiver.counts.get(spec.name, 0), wait)
            self._raise_if_failed(invocation)
        frames = receiver.latest(spec.name, int(arguments.get("count", 1)))
        result: dict[str, Any] = {"message": spec.name, "arbitration_id": spec.frame_id}
        self._add_sharers(result, spec)
        if signal is not None:
            result["signal"] = signal
            if spec.signals[signal].unit:
                result["unit"] = spec.signals[signal].unit
        if not frames:
            result["received"] = False
            result["note"] = f"no frame of {spec.name} has been received since the driver started"
        else:
            now = time.time()
            result["received"] = True
            result["frames"] = [self._decoded(spec, frame, signal) for frame in frames]
            result["age_s"] = round(max(0.0, now - frames[-1].timestamp), 6)
        if waited_out:
            result["waited"] = f"no new frame within {wait:g} s"
        health = self._link.health()
        if len(health) > 1 or health["error_frames"]:
            result["bus"] = health
        return result

    def _add_sharers(self, result: dict[str, Any], spec: MessageSpec) -> None:
        """Name the other messages on ``spec``'s frame id, where there are any: a frame of
        such an id is decoded as each message it may be (:class:`~mcs_can._bus.Routes`), and
        each frame says in ``may_also_be`` which others it fits."""
        sharers = self._routes.sharers.get(spec.name)
        if sharers:
            result["shares_frame_with"] = list(sharers)

    def _monitor_plan(self, invocation: Invocation) -> tuple[MessageSpec, float, int]:
        """The message, the window's end and the frame cap of a monitor (the bus reopened
        by the caller, :meth:`_reopen` or :meth:`_areopen`, first: the window is what is left)."""
        self._raise_if_failed(invocation)
        spec = self._message(invocation)
        limits = self._shared_limits
        duration = min(float(invocation.arguments.get("duration_s", min(1.0, limits.monitor_max_seconds))),
                       limits.monitor_max_seconds)
        remaining = invocation.remaining()
        if remaining is not None:
            duration = min(duration, max(0.0, remaining - _ANSWER_S))
        cap = min(int(invocation.arguments.get("max_frames", min(50, limits.monitor_max_frames))),
                  limits.monitor_max_frames)
        return spec, time.monotonic() + duration, cap

    def _monitor_result(self, spec: MessageSpec, frames: list[dict[str, Any]], cap: int, started: float,
                        subscription: Subscription) -> dict[str, Any]:
        result: dict[str, Any] = {
            "message": spec.name, "arbitration_id": spec.frame_id, "count": len(frames),
            "window_s": round(time.monotonic() - started, 3), "frames": frames,
        }
        self._add_sharers(result, spec)
        if len(frames) >= cap:
            result["truncated"] = f"[truncated at max_frames={cap}]"
        if subscription.dropped:
            result["dropped"] = subscription.dropped
        health = self._link.health()
        if len(health) > 1 or health["error_frames"]:
            result["bus"] = health
        return result

    def _monitor(self, invocation: Invocation) -> dict[str, Any]:
        started = time.monotonic()
        self._reopen(invocation)
        spec, window, cap = self._monitor_plan(invocation)
        subscription = Subscription(spec.name, cap)
        receiver = self._link.receiver
        receiver.subscribe(subscription)
        frames: list[dict[str, Any]] = []
        try:
            while len(frames) < cap:
                frame = subscription.get(window - time.monotonic())
                if frame is None:
                    break
                frames.append(self._decoded(spec, frame))
        finally:
            receiver.unsubscribe(subscription)
        self._raise_if_failed(invocation)
        return self._monitor_result(spec, frames, cap, started, subscription)

    async def _amonitor(self, invocation: Invocation) -> dict[str, Any]:
        started = time.monotonic()
        await self._areopen(invocation)
        spec, window, cap = self._monitor_plan(invocation)
        subscription = Subscription(spec.name, cap, asyncio.get_running_loop())
        receiver = self._link.receiver
        receiver.subscribe(subscription)
        frames: list[dict[str, Any]] = []
        try:
            while len(frames) < cap:
                frame = await subscription.aget(window - time.monotonic())
                if frame is None:
                    break
                frames.append(self._decoded(spec, frame))
        finally:
            receiver.unsubscribe(subscription)
        self._raise_if_failed(invocation)
        return self._monitor_result(spec, frames, cap, started, subscription)

    # ------------------------------------------------------------------ capabilities

    def get_status(self) -> dict[str, Any]:
        """Armed or not, periodic sends, the allow-list, rate budget and bus health (JSON-safe)."""
        with self._tx_lock:
            periodic = {name: task.describe() for name, task in self._periodic.items()}
            armed = self._armed
        remaining = self._watchdog.remaining() if self._watchdog is not None else None
        status: dict[str, Any] = {
            "armed": armed,
            "dry_run_mode": self.dry_run,
            "listen_only": "controller" if self._link.hardware_listen_only else "driver",
            "periodic": periodic,
            "allowed": [
                {"arbitration_id": e.arbitration_id, "is_extended_id": e.is_extended_id, "dlc": e.dlc,
                 "messages": list(names)}
                for e, names in zip(self.allowed, self._allowed_messages, strict=True)
            ],
            "tx_rate_limit": self._rate.rate,
            "bus": {"interface": self.interface, "channel": str(self.channel), **self._link.health()},
        }
        if remaining is not None:
            status["watchdog_remaining_s"] = round(remaining, 3)
        if self.database.skipped:
            status["database_skipped"] = len(self.database.skipped)
        return status

    def healthcheck(self) -> dict[str, Any]:
        """``{"status": "ok"}``, or ``{"status": "error", "failure": ...}`` when the bus failed."""
        failure = self._link.receiver.failure
        return {"status": "ok"} if failure is None else {"status": "error", "failure": failure}

    # ------------------------------------------------------------------ audit and lifetime

    def _audit(self, event: str, invocation: Invocation | None = None, **fields: Any) -> None:
        if not audit_log.isEnabledFor(logging.INFO):
            return
        record: dict[str, Any] = {"event": event}
        if invocation is not None:
            record["tool"] = invocation.tool.name
            record["agent_id"] = invocation.context.agent_id
            record["request_id"] = invocation.context.request_id
        record.update({k: v for k, v in fields.items() if v is not None})
        audit_log.info(json.dumps(record, default=str, sort_keys=True))

    def close(self) -> None:
        """Stop every periodic send (fail-safe), disarm, stop listening and release the bus."""
        self.disarm(reason="closed")
        self._link.close()
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False)
