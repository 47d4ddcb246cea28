"""The safety model (opendbc's, SECURITY.md D3-D8): what may reach the bus, how much, how often.

Every check here refuses; none queues, waits or corrects a value. The driver holds one
lock around all of them and the send itself, so a decision and the frame it allowed are
never separated by an operator's disarm.
"""

from __future__ import annotations

import math
import secrets
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import can

from mcs.errors import ConfigurationError, PolicyDeniedError


@dataclass(frozen=True, slots=True)
class AllowedFrame:
    """One entry of the transmit allow-list: an arbitration id, its id kind and length.

    ``dlc`` is the payload length in bytes; ``None`` accepts the length the database
    gives the message. A frame is sent only when its id, ``is_extended_id`` and length
    all match an entry (opendbc's ``(address, bus, length)`` tuples; one driver is one bus).
    """

    arbitration_id: int
    is_extended_id: bool = False
    dlc: int | None = None

    def __post_init__(self) -> None:
        limit = 0x1FFFFFFF if self.is_extended_id else 0x7FF
        if not 0 <= self.arbitration_id <= limit:
            kind = "extended (29-bit)" if self.is_extended_id else "standard (11-bit)"
            raise ConfigurationError(f"allow-list entry 0x{self.arbitration_id:X} is not a {kind} id")
        if self.dlc is not None and not 0 <= self.dlc <= 64:
            raise ConfigurationError(f"allow-list entry 0x{self.arbitration_id:X}: dlc {self.dlc} is not 0..64")

    def admits(self, frame: can.Message) -> bool:
        return (
            frame.arbitration_id == self.arbitration_id
            and frame.is_extended_id == self.is_extended_id
            and (self.dlc is None or frame.dlc == self.dlc)
        )


@dataclass(frozen=True, slots=True)
class SignalLimit:
    """Configured limits for one signal, on top of the database's range (physical units).

    * ``minimum`` / ``maximum``: the value range a send may use.
    * ``max_step``: the largest change from the value this driver last sent.
    * ``max_rate``: the largest change per second since that send.
    * ``initial``: the value assumed before the first send and after a disarm (an
      actuator at rest), set when the driver was armed, so a first jump from 0 to the
      maximum is refused too (by ``max_step``, and by ``max_rate`` until enough time passed).
    """

    minimum: float | None = None
    maximum: float | None = None
    max_step: float | None = None
    max_rate: float | None = None
    initial: float = 0.0

    def __post_init__(self) -> None:
        # NaN compares false with everything: a NaN bound or last value would pass every check.
        for name in ("minimum", "maximum", "max_step", "max_rate"):
            value = getattr(self, name)
            if value is not None and math.isnan(value):
                raise ConfigurationError(f"signal limit {name} must be a number, got {value!r}")
        if not math.isfinite(self.initial):
            raise ConfigurationError(f"signal limit initial must be a finite number, got {self.initial!r}")
        if self.minimum is not None and self.maximum is not None and self.minimum > self.maximum:
            raise ConfigurationError(f"signal limit minimum {self.minimum} is above its maximum {self.maximum}")
        for name in ("max_step", "max_rate"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ConfigurationError(f"signal limit {name} must be a positive number, got {value!r}")

    @staticmethod
    def of(value: SignalLimit | Mapping[str, Any], where: str) -> SignalLimit:
        if isinstance(value, SignalLimit):
            return value
        if not isinstance(value, Mapping):
            raise ConfigurationError(f"limits[{where!r}] must be a mapping or a SignalLimit")
        known = {"minimum", "maximum", "max_step", "max_rate", "initial", "min", "max"}
        unknown = sorted(set(value) - known)
        if unknown:
            raise ConfigurationError(
                f"limits[{where!r}] has no setting {', '.join(map(repr, unknown))}; "
                "settings: minimum, maximum, max_step, max_rate, initial"
            )
        try:
            return SignalLimit(
                minimum=_float(value.get("minimum", value.get("min"))),
                maximum=_float(value.get("maximum", value.get("max"))),
                max_step=_float(value.get("max_step")),
                max_rate=_float(value.get("max_rate")),
                initial=float(value.get("initial", 0.0)),
            )
        except (TypeError, ValueError) as exc:
            raise ConfigurationError(f"limits[{where!r}]: {exc}") from None


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


class LimitState:
    """The last value sent per limited signal, for the step and rate-of-change checks."""

    def __init__(self, limits: Mapping[tuple[str, str], SignalLimit], clock: Any = time.monotonic) -> None:
        self.limits = dict(limits)
        self._last: dict[tuple[str, str], tuple[float, float]] = {}
        self._clock = clock
        self._rest_since: float = clock()  # when the actuators were last known at rest (armed)

    def check(self, message: str, values: Mapping[str, float], tool: str,
              asked: Mapping[str, float] | None = None) -> dict[tuple[str, str], float]:
        """Refuse a value outside its limits; return what :meth:`commit` records once it is sent.

        ``values`` are what the frame carries; ``asked`` the values the caller gave where the
        signal's resolution rounded them (named in a refusal).

        Raises:
            PolicyDeniedError: naming the signal, the limit and what is allowed now.
        """
        now = self._clock()
        pending: dict[tuple[str, str], float] = {}
        for signal, value in values.items():
            key = (message, signal)
            limit = self.limits.get(key)
            if limit is None:
                continue
            where = f"{message}.{signal}"
            shown = f"{value:g}" if not asked or signal not in asked else \
                f"{asked[signal]:g}, encoded as {value:g} at the signal's resolution,"
            if limit.minimum is not None and value < limit.minimum:
                raise _denied(tool, f"{where} = {shown} is below the configured minimum {limit.minimum:g}", where)
            if limit.maximum is not None and value > limit.maximum:
                raise _denied(tool, f"{where} = {shown} is above the configured maximum {limit.maximum:g}", where)
            previous, when = self._last.get(key, (limit.initial, self._rest_since))
            change = abs(value - _exact(previous)) if type(value) is int else abs(value - previous)
            if limit.max_step is not None and change > limit.max_step:
                low, high = previous - limit.max_step, previous + limit.max_step
                raise _denied(
                    tool,
                    f"{where} may change by at most {limit.max_step:g} per send; from {previous:g} "
                    f"the next value must lie in [{low:g}, {high:g}], got {shown.rstrip(',')}",
                    where, last=previous,
                )
            if limit.max_rate is not None:
                allowed = limit.max_rate * max(0.0, now - when)
                if change > allowed:
                    raise _denied(
                        tool,
                        f"{where} may change by at most {limit.max_rate:g} per second; {now - when:.3f} s after "
                        f"{previous:g} the change may be {allowed:g}, got {change:g} (to {shown.rstrip(',')})",
                        where, last=previous,
                    )
            pending[key] = value
        return pending

    def commit(self, pending: Mapping[tuple[str, str], float]) -> None:
        now = self._clock()
        for key, value in pending.items():
            self._last[key] = (value, now)

    def reset(self) -> None:
        """Forget every last value (after a disarm, actuators are back at rest)."""
        self._last.clear()
        self._rest_since = self._clock()

    def at_rest_from_now(self) -> None:
        """Count the rate of change of a first send from now (arming), not from a disarm long ago."""
        if not self._last:
            self._rest_since = self._clock()


def _exact(value: float) -> float:
    """A whole float as an exact int, so its difference with an int beyond 2**53 is exact."""
    return int(value) if type(value) is float and value.is_integer() else value


def _denied(tool: str, message: str, signal: str, **details: Any) -> PolicyDeniedError:
    return PolicyDeniedError(f"Refused by the safety limits: {message}.", tool=tool,
                             details={"signal": signal, **details})


class RateLimiter:
    """A token bucket over transmitted frames that refuses beyond its budget (never queues).

    ``rate`` frames per second with bursts of ``burst``. Periodic sends reserve their share
    of the rate when they start (``1000 / period_ms``); one-shot sends get what is left.
    """

    def __init__(self, rate: float | None, burst: int, clock: Any = time.monotonic) -> None:
        if rate is not None and not 0 < rate < math.inf:
            raise ConfigurationError(
                f"tx_rate_limit must be a positive number of frames per second (None: no limit), got {rate!r}")
        if not 1 <= burst < math.inf:
            raise ConfigurationError(f"tx_burst must be a number of frames, at least 1, got {burst!r}")
        self.rate = rate
        self.burst = burst
        self.reserved: dict[str, float] = {}
        self._tokens = float(burst)
        self._full = float(burst)  # the bucket's size (burst is set only here)
        self._clock = clock
        self._stamp = clock()
        # free_rate, kept up to date by reserve() and release() (the only writers of
        # ``reserved``) instead of summed on every one-shot send.
        self._free = rate

    @property
    def free_rate(self) -> float | None:
        return self._free

    def _reserved_changed(self) -> None:
        self._free = None if self.rate is None else max(0.0, self.rate - sum(self.reserved.values()))

    def _refill(self) -> None:
        now = self._clock()
        free = self._free
        if free is not None:
            self._tokens = min(self._full, self._tokens + (now - self._stamp) * free)
        self._stamp = now

    def _refusal(self, tool: str) -> PolicyDeniedError:
        free = self.free_rate or 0.0
        wait = (1.0 - self._tokens) / free if free > 0 else None
        hint = f"retry after {wait:.3f} s" if wait is not None else "periodic sends use the whole budget"
        return PolicyDeniedError(
            f"Refused by the transmit rate limit ({self.rate:g} frames/s, bursts of {self.burst}): {hint}.",
            tool=tool, details={"retry_after_s": wait, "rate_limit": self.rate},
        )

    def spend_one(self, tool: str) -> None:
        """Take the token of one one-shot frame, or refuse it beyond the budget. The caller
        holds the transmit lock around this and the send, so nothing sees the token gone
        before the frame is; :meth:`refund_one` gives it back when the frame could not be sent.

        Raises:
            PolicyDeniedError: with ``details["retry_after_s"]``.
        """
        free = self._free  # None exactly when there is no rate limit
        if free is None:
            return
        now = self._clock()  # _refill(), in this frame
        tokens = self._tokens + (now - self._stamp) * free
        self._stamp = now
        if tokens > self._full:
            tokens = self._full
        if tokens < 1.0:
            self._tokens = tokens
            raise self._refusal(tool)
        self._tokens = tokens - 1.0

    def refund_one(self) -> None:
        if self.rate is not None:
            self._tokens = min(self._full, self._tokens + 1.0)

    def check_periodic(self, key: str, period_ms: float, tool: str) -> None:
        """Refuse a periodic send whose rate does not fit beside the ones running.

        Raises:
            PolicyDeniedError: naming the rate left.
        """
        if self.rate is None:
            return
        others = sum(rate for name, rate in self.reserved.items() if name != key)
        wanted = 1000.0 / period_ms
        if others + wanted > self.rate:
            raise PolicyDeniedError(
                f"Refused by the transmit rate limit: every {period_ms:g} ms is {wanted:g} frames/s, but only "
                f"{max(0.0, self.rate - others):g} of {self.rate:g} frames/s are free "
                f"(the shortest period that fits is {1000.0 / max(self.rate - others, 1e-9):g} ms).",
                tool=tool, details={"rate_limit": self.rate, "free_rate": max(0.0, self.rate - others)},
            )

    def reserve(self, key: str, period_ms: float) -> None:
        self._refill()
        self.reserved[key] = 1000.0 / period_ms
        self._reserved_changed()

    def release(self, key: str | None = None) -> None:
        self._refill()
        if key is None:
            self.reserved.clear()
        else:
            self.reserved.pop(key, None)
        self._reserved_changed()


@dataclass(slots=True)
class _Pending:
    digest: str
    frame: dict[str, Any]
    expires: float
    approved: bool


class Approvals:
    """Approval tokens bound to the SHA-256 of one exact frame (and its period), each usable once.

    The first send of a high-risk message issues a token; only the identical frame with
    that token, before the TTL, is sent, and the token is spent. With
    ``operator_approval`` the operator must also :meth:`approve` it out of band.
    """

    def __init__(self, ttl: float, operator_approval: bool, capacity: int = 64, clock: Any = time.monotonic) -> None:
        if not ttl > 0:
            raise ConfigurationError(f"approval_ttl must be a positive number of seconds, got {ttl!r}")
        self.ttl = ttl
        self.operator_approval = operator_approval
        self._pending: OrderedDict[str, _Pending] = OrderedDict()
        self._capacity = capacity
        self._clock = clock

    def issue(self, digest: str, frame: dict[str, Any]) -> str:
        token = secrets.token_urlsafe(16)
        self._pending[token] = _Pending(digest, frame, self._clock() + self.ttl, not self.operator_approval)
        while len(self._pending) > self._capacity:
            self._pending.popitem(last=False)
        return token

    def check(self, token: str, digest: str, tool: str) -> None:
        """Refuse a token that is unknown, spent, expired, unapproved or bound to another frame.

        A token presented with a different frame is spent, so it cannot be probed.

        Raises:
            PolicyDeniedError: saying which.
        """
        pending = self._pending.get(token)
        if pending is None:
            raise PolicyDeniedError(
                "Refused: the approval token is unknown or was already used; call again without "
                "approval_token to get a new one for this frame.", tool=tool, details={"approval": "unknown"},
            )
        if self._clock() > pending.expires:
            del self._pending[token]
            raise PolicyDeniedError(
                f"Refused: the approval token expired (tokens live {self.ttl:g} s); call again without "
                "approval_token to get a new one.", tool=tool, details={"approval": "expired"},
            )
        if pending.digest != digest:
            del self._pending[token]
            raise PolicyDeniedError(
                "Refused: the frame differs from the one the approval token was issued for; the token is "
                "now spent. Call again without approval_token to approve this frame.",
                tool=tool, details={"approval": "mismatch", "approved_sha256": pending.digest, "sha256": digest},
            )
        if not pending.approved:
            raise PolicyDeniedError(
                "Refused: the operator has not approved this frame yet; ask them to approve it, then call "
                "again with the same arguments and approval_token.", tool=tool, details={"approval": "waiting"},
            )

    def spend(self, token: str) -> None:
        self._pending.pop(token, None)

    def approve(self, token: str) -> dict[str, Any]:
        """The operator's approval of one pending token; returns the frame it is bound to.

        Raises:
            KeyError: no such pending token (unknown, spent or evicted).
        """
        pending = self._pending.get(token)
        if pending is None or self._clock() > pending.expires:
            raise KeyError(f"no pending approval {token!r}")
        pending.approved = True
        return dict(pending.frame)

    def pending(self) -> list[dict[str, Any]]:
        now = self._clock()
        return [
            {"approval_token": token, "frame": p.frame, "sha256": p.digest,
             "expires_in_s": round(p.expires - now, 3), "approved": p.approved}
            for token, p in self._pending.items() if p.expires >= now
        ]

    def clear(self) -> None:
        self._pending.clear()


FrameShape = tuple[int, bool, int]  # (arbitration id, is extended, length in bytes)


def allowed_entries(
    entries: Iterable[int | str | AllowedFrame | Mapping[str, Any]],
    shapes: Mapping[str, FrameShape],
    by_id: Mapping[int, list[str]],
) -> list[tuple[AllowedFrame, tuple[str, ...]]]:
    """The allow-list as :class:`AllowedFrame` entries, each with the messages it admits.

    ``shapes`` maps each message name of the database to its frame (id, id kind, length);
    ``by_id`` maps frame ids to message names. A name admits that message only, even when
    another message shares its frame; an id admits every message with that id; an
    :class:`AllowedFrame` (or mapping) admits every message whose frame it matches.

    Raises:
        ConfigurationError: an entry names no message of the database, or is malformed.
    """
    out: list[tuple[AllowedFrame, tuple[str, ...]]] = []
    for entry in entries:
        if isinstance(entry, AllowedFrame):
            out.append((entry, _matching(entry, shapes)))
        elif isinstance(entry, str):
            shape = shapes.get(entry)
            if shape is None:
                raise ConfigurationError(f"allow_send names {entry!r}, which is not a message of the database")
            out.append((AllowedFrame(*shape), (entry,)))
        elif isinstance(entry, int) and not isinstance(entry, bool):
            names = by_id.get(entry, [])
            if not names:
                raise ConfigurationError(
                    f"allow_send names id 0x{entry:X}, which no message of the database uses; "
                    "give {'arbitration_id': ..., 'is_extended_id': ..., 'dlc': ...} to allow it anyway"
                )
            grouped: dict[FrameShape, list[str]] = {}
            for name in names:
                grouped.setdefault(shapes[name], []).append(name)
            out.extend((AllowedFrame(*shape), tuple(named)) for shape, named in grouped.items())
        elif isinstance(entry, Mapping):
            unknown = sorted(set(entry) - {"arbitration_id", "is_extended_id", "dlc"})
            if unknown or "arbitration_id" not in entry:
                raise ConfigurationError(
                    f"allow_send entry {dict(entry)!r}: give arbitration_id, and optionally is_extended_id and dlc"
                )
            frame_id, extended, dlc = entry["arbitration_id"], entry.get("is_extended_id", False), entry.get("dlc")
            if not (_is_int(frame_id) and isinstance(extended, bool) and (dlc is None or _is_int(dlc))):
                # Read as given, never converted: bool("false") would be an extended id.
                raise ConfigurationError(
                    f"allow_send entry {dict(entry)!r}: arbitration_id must be an integer, is_extended_id true "
                    "or false, and dlc an integer or null"
                )
            frame = AllowedFrame(frame_id, extended, dlc)
            out.append((frame, _matching(frame, shapes)))
        else:
            raise ConfigurationError(f"allow_send entry {entry!r} is not a message name, an id or an AllowedFrame")
    return out


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _matching(entry: AllowedFrame, shapes: Mapping[str, FrameShape]) -> tuple[str, ...]:
    """The messages whose frame ``entry`` matches."""
    return tuple(
        name for name, (frame_id, extended, length) in shapes.items()
        if frame_id == entry.arbitration_id and extended == entry.is_extended_id
        and (entry.dlc is None or entry.dlc == length)
    )
