"""Publish rate limits that refuse rather than queue.

Two sliding windows: one per topic and one over all topics. A publish over either budget
is refused at once with ``POLICY_DENIED`` and a ``retry_after`` (seconds) in its details;
nothing waits, nothing is queued, memory stays bounded (a window holds at most its budget
of timestamps, and idle topics are forgotten).
"""

from __future__ import annotations

import re
import threading
import time
from collections import deque
from dataclasses import dataclass

from mcs.errors import ConfigurationError, PolicyDeniedError

_MAX_TRACKED_TOPICS = 10_000
_RATE = re.compile(r"(\d+)\s*/\s*(\d+(?:\.\d+)?)?\s*(s|sec|m|min|h)")
_UNITS = {"s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


@dataclass(frozen=True, slots=True)
class Rate:
    """``count`` publishes per ``seconds``."""

    count: int
    seconds: float

    @classmethod
    def parse(cls, value: object, option: str) -> Rate | None:
        """``"10/s"``, ``"600/min"``, ``"5/2s"``, ``[10, 1.0]`` or ``None`` (no limit)."""
        if value is None:
            return None
        if isinstance(value, Rate):
            return value
        if isinstance(value, list | tuple) and len(value) == 2:
            count, seconds = value
        elif isinstance(value, str) and (match := _RATE.fullmatch(value.strip())):
            count, seconds = int(match.group(1)), float(match.group(2) or 1) * _UNITS[match.group(3)]
        else:
            raise ConfigurationError(f"{option}: {value!r} is not like '10/s', [count, seconds] or null")
        if not isinstance(count, int) or count < 1 or not isinstance(seconds, int | float) or seconds <= 0:
            raise ConfigurationError(f"{option}: a rate needs a count >= 1 and a positive window")
        return cls(int(count), float(seconds))


class _Window:
    __slots__ = ("rate", "stamps")

    def __init__(self, rate: Rate) -> None:
        self.rate = rate
        self.stamps: deque[float] = deque()

    def wait_needed(self, now: float) -> float:
        while self.stamps and now - self.stamps[0] >= self.rate.seconds:
            self.stamps.popleft()
        if len(self.stamps) < self.rate.count:
            return 0.0
        return self.rate.seconds - (now - self.stamps[0])


class RateLimiter:
    """Admits a publish to ``topic`` or raises; thread-safe."""

    def __init__(self, per_topic: Rate | None, total: Rate | None) -> None:
        self.per_topic = per_topic
        self.total = total
        self._total = _Window(total) if total else None
        self._topics: dict[str, _Window] = {}
        self._lock = threading.Lock()

    def admit(self, topic: str, tool: str) -> None:
        if self.per_topic is None and self._total is None:
            return
        now = time.monotonic()
        with self._lock:
            window = None
            if self.per_topic is not None:
                window = self._topics.get(topic)
                if window is None:
                    if len(self._topics) >= _MAX_TRACKED_TOPICS:
                        self._forget_idle(now)
                    window = self._topics[topic] = _Window(self.per_topic)
                wait = window.wait_needed(now)
                if wait > 0:
                    self._refuse(f"{topic!r} already had {self.per_topic.count} publishes in the last "
                                 f"{self.per_topic.seconds:g} s", wait, tool)
            if self._total is not None:
                wait = self._total.wait_needed(now)
                if wait > 0:
                    self._refuse(f"this driver already published {self._total.rate.count} messages in the last "
                                 f"{self._total.rate.seconds:g} s", wait, tool)
                self._total.stamps.append(now)
            if window is not None:
                window.stamps.append(now)

    def _forget_idle(self, now: float) -> None:
        for topic in [t for t, w in self._topics.items() if w.wait_needed(now) == 0 and not w.stamps]:
            del self._topics[topic]

    @staticmethod
    def _refuse(why: str, wait: float, tool: str) -> None:
        retry = round(max(wait, 0.001), 3)
        raise PolicyDeniedError(
            f"Publish refused by the rate limit: {why}. Nothing was sent; retry after {retry:g} s.",
            tool=tool, details={"retry_after": retry},
        )
