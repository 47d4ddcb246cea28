"""Reliability controls of the call pipeline: a circuit breaker per upstream, and rate and
concurrency limits per agent (SECURITY.md G2 and G4).

Both are admission decisions, taken after the policies and before anything runs: a
refused call reaches no driver and fires only the error hooks (with its error). Give them to a driver as constructor
options (``ToolDriver(circuit_breaker=..., rate_limit=...)``) or set them on
:class:`~mcs.pipeline.Controls`.

:class:`CircuitBreaker`
    After ``failures`` consecutive failures of one upstream (timeouts, execution errors
    other than a 4xx answer), calls to it fail at once, without any I/O, with
    ``EXECUTION_ERROR`` "circuit open ... retry after T s" (``details``:
    ``retryable``, ``retry_after``). After ``cooldown`` seconds exactly one call (the
    probe) is let through: its success closes the circuit, its failure opens it again; a
    probe with no outcome (cancelled, or refused by the rate limit) leaves it half-open.
    Errors on the caller's side (invalid input, policy denials, unknown tools) never count.

:class:`RateLimit`
    Per agent (``AgentContext.agent_id``, unless ``per_agent=False``) and, unless
    ``per_tool=False``, per tool: at most ``concurrent`` calls at once and ``calls`` per
    ``period`` seconds (a token bucket, so a burst of ``calls`` is allowed, then one call
    per ``period / calls``).
    Excess calls are refused at once, never queued: ``POLICY_DENIED`` with
    ``retry_after``. State is kept for at most ``max_tracked`` keys (idle ones are
    forgotten first), so untrusted agent ids cannot grow memory without bound.

    The agent id is the caller's word (RFC-0001 section 17: "agent identity must be treated
    as untrusted input"; on the RFC-0001 server it is the ``X-Agent-Id`` header): a caller
    who may choose it escapes a per-agent budget by choosing a new one. ``per_agent=False``
    holds every caller to one budget (per tool unless ``per_tool=False``), which no id can
    escape. Behind ``mcs serve`` with OAuth the id is the token's, and per agent is sound.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from mcs.errors import ErrorCode, ExecutionError, PolicyDeniedError, ToolCallError

__all__ = ["CircuitBreaker", "RateLimit", "counts_as_failure"]


def counts_as_failure(error: ToolCallError) -> bool:
    """Whether an error says the upstream is unwell (so it counts for a circuit breaker).

    Timeouts and execution errors do, except an execution error carrying an HTTP status
    below 500 other than 408 and 429: that upstream answered, the request was wrong.
    """
    if error.code == ErrorCode.TIMEOUT:
        return True
    if error.code != ErrorCode.EXECUTION_ERROR:
        return False
    status = error.details.get("status")
    return not (isinstance(status, int) and status < 500 and status not in (408, 429))


@dataclass
class _Circuit:
    failures: int = 0
    opened_at: float | None = None
    probing: bool = False


class CircuitBreaker:
    """Fail fast once an upstream failed ``failures`` times in a row (see the module doc)."""

    def __init__(self, failures: int = 5, cooldown: float = 30.0, *, clock: Callable[[], float] = time.monotonic) -> None:
        if failures < 1:
            raise ValueError("failures must be at least 1")
        if cooldown <= 0:
            raise ValueError("cooldown must be a positive number of seconds")
        self.failures = failures
        self.cooldown = cooldown
        self._clock = clock
        self._circuits: dict[str, _Circuit] = {}
        self._lock = threading.Lock()

    def state(self, upstream: str = "") -> str:
        """``"closed"``, ``"open"`` or ``"half-open"`` (a probe may go, or is under way)."""
        with self._lock:
            circuit = self._circuits.get(upstream)
            if circuit is None or circuit.opened_at is None:
                return "closed"
            if circuit.probing or self._clock() - circuit.opened_at >= self.cooldown:
                return "half-open"
            return "open"

    def admit(self, upstream: str, tool: str) -> bool:
        """Let a call to ``upstream`` go; ``True`` when it is the probe of an open circuit.

        Raises:
            ExecutionError: the circuit is open (``details["retry_after"]`` in seconds).
        """
        with self._lock:
            circuit = self._circuits.get(upstream)
            if circuit is None or circuit.opened_at is None:
                return False
            waited = self._clock() - circuit.opened_at
            if waited >= self.cooldown and not circuit.probing:
                circuit.probing = True
                return True
            retry_after = max(self.cooldown - waited, 0.0) if not circuit.probing else min(self.cooldown, 1.0)
        where = f" to {upstream}" if upstream else ""
        raise ExecutionError(
            f"{tool} was not run: the circuit{where} is open after {self.failures} failures in a row; "
            f"retry after {math.ceil(retry_after * 10) / 10:g} s.",
            tool=tool,
            details={"retryable": True, "retry_after": round(retry_after, 3), "category": "circuit_open"},
        )

    def abandon(self, upstream: str) -> None:
        """The probe to ``upstream`` ended without an outcome (cancelled, or refused before
        it ran): the circuit stays as it was, and the next call may be the probe."""
        with self._lock:
            circuit = self._circuits.get(upstream)
            if circuit is not None:
                circuit.probing = False

    def record(self, upstream: str, error: ToolCallError | None, *, probe: bool) -> None:
        """Count the outcome of an admitted call (``error`` is ``None`` on success)."""
        with self._lock:
            circuit = self._circuits.setdefault(upstream, _Circuit())
            if probe:
                circuit.probing = False
            if error is None:
                circuit.failures, circuit.opened_at = 0, None
                return
            if not counts_as_failure(error):
                return
            circuit.failures += 1
            if probe or circuit.failures >= self.failures:
                circuit.opened_at = self._clock()


@dataclass
class _Bucket:
    tokens: float
    updated: float
    running: int = 0


class RateLimit:
    """At most ``concurrent`` calls at once and ``calls`` per ``period`` s, per agent (see the module doc)."""

    def __init__(
        self,
        *,
        calls: int | None = None,
        period: float = 60.0,
        concurrent: int | None = None,
        per_tool: bool = True,
        per_agent: bool = True,
        max_tracked: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if calls is None and concurrent is None:
            raise ValueError("a RateLimit needs calls=, concurrent=, or both")
        if (calls is not None and calls < 1) or (concurrent is not None and concurrent < 1):
            raise ValueError("calls and concurrent must be at least 1")
        if period <= 0:
            raise ValueError("period must be a positive number of seconds")
        self.calls = calls
        self.period = period
        self.concurrent = concurrent
        self.per_tool = per_tool
        self.per_agent = per_agent
        self.max_tracked = max_tracked
        self._clock = clock
        self._buckets: OrderedDict[tuple[str, str], _Bucket] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def _rate(self) -> float:
        return (self.calls or 1) / self.period

    def _bucket(self, key: tuple[str, str], now: float) -> _Bucket:
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= self.max_tracked:
                self._forget_idle(now)
            bucket = _Bucket(float(self.calls or 0), now)
            self._buckets[key] = bucket
        else:
            self._buckets.move_to_end(key)
            if self.calls is not None:
                bucket.tokens = min(float(self.calls), bucket.tokens + (now - bucket.updated) * self._rate)
            bucket.updated = now
        return bucket

    def _forget_idle(self, now: float) -> None:
        for key in list(self._buckets)[: max(1, len(self._buckets) // 10)]:
            bucket = self._buckets[key]
            full = self.calls is None or bucket.tokens + (now - bucket.updated) * self._rate >= self.calls
            if bucket.running == 0 and full:
                del self._buckets[key]
        if len(self._buckets) >= self.max_tracked:  # all busy: forget the least recent anyway
            self._buckets.popitem(last=False)

    def acquire(self, agent: str, tool: str) -> Callable[[], None]:
        """Take a slot for ``agent`` calling ``tool``; returns the function that gives it back.

        Raises:
            PolicyDeniedError: over a limit (``details["retry_after"]`` in seconds).
        """
        key = (agent if self.per_agent else "", tool if self.per_tool else "")
        with self._lock:
            now = self._clock()
            bucket = self._bucket(key, now)
            if self.concurrent is not None and bucket.running >= self.concurrent:
                who = f"of {agent!r}" if self.per_agent else "of all agents together"
                reason = f"{self.concurrent} calls {who} are already running"
                retry_after = min(1.0, self.period / (self.calls or 60))
            elif self.calls is not None and bucket.tokens < 1.0:
                who = repr(agent) if self.per_agent else "all agents together"
                reason = f"{who} made {self.calls} calls in {self.period:g} s"
                retry_after = (1.0 - bucket.tokens) / self._rate
            else:
                bucket.tokens -= 1.0 if self.calls is not None else 0.0
                bucket.running += 1
                return lambda: self._release(key)
        raise PolicyDeniedError(
            f"The call to {tool} was refused by the rate limit: {reason}; retry after "
            f"{math.ceil(retry_after * 10) / 10:g} s.",
            tool=tool,
            details={"retryable": True, "retry_after": round(retry_after, 3), "category": "rate_limited"},
        )

    def _release(self, key: tuple[str, str]) -> None:
        with self._lock:
            bucket = self._buckets.get(key)
            if bucket is not None and bucket.running > 0:
                bucket.running -= 1
