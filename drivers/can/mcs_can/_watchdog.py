"""A watchdog that trips when the operator stops refreshing it (opendbc's heartbeat).

While armed, the operator's loop calls :meth:`Watchdog.feed` (``CanDriver.heartbeat()``)
at least every ``timeout`` seconds, for instance whenever fresh sensor input arrived.
When it does not, :attr:`trip` runs once on the watchdog's thread: the driver stops every
periodic send and disarms.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class Watchdog:
    def __init__(self, timeout: float, trip: Callable[[], None]) -> None:
        if not timeout > 0:
            raise ValueError(f"watchdog_timeout must be a positive number of seconds, got {timeout!r}")
        self.timeout = timeout
        self._trip = trip
        self._deadline = 0.0
        self._wake = threading.Event()
        self._running = False
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        """Start watching from now (arming counts as the first heartbeat)."""
        with self._lock:
            self._deadline = time.monotonic() + self.timeout
            if self._running:
                return
            self._running = True
            self._wake.clear()
            self._thread = threading.Thread(target=self._run, name="mcs-can-watchdog", daemon=True)
            self._thread.start()

    def feed(self) -> None:
        self._deadline = time.monotonic() + self.timeout

    def remaining(self) -> float | None:
        return max(0.0, self._deadline - time.monotonic()) if self._running else None

    def stop(self) -> None:
        with self._lock:
            self._running = False
            self._wake.set()
            thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=self.timeout + 1.0)

    def _run(self) -> None:
        while True:
            left = self._deadline - time.monotonic()
            if self._wake.wait(timeout=max(0.0, left)):
                return  # stopped
            if not self._running:
                return
            if time.monotonic() >= self._deadline:
                with self._lock:
                    self._running = False
                    self._thread = None
                self._trip()
                return
