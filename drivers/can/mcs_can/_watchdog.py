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
    """Trips once when :meth:`feed` is not called for ``timeout`` seconds after :meth:`start`.

    Each start runs a thread of its own with its own wake-up event, so a thread that a
    :meth:`halt` told to end never watches on for a later start. The driver starts and
    halts it under its transmit lock, together with the armed state, and joins a halted
    thread after releasing that lock (a tripping thread needs the lock to disarm).
    """

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
            wake = self._wake = threading.Event()
            self._thread = threading.Thread(target=self._run, args=(wake,), name="mcs-can-watchdog", daemon=True)
            self._thread.start()

    def feed(self) -> None:
        self._deadline = time.monotonic() + self.timeout

    def remaining(self) -> float | None:
        return max(0.0, self._deadline - time.monotonic()) if self._running else None

    def halt(self) -> threading.Thread | None:
        """Stop watching at once, without waiting; the thread to join, if one was running.
        Once this returns, that thread does not trip."""
        with self._lock:
            self._running = False
            self._wake.set()
            thread, self._thread = self._thread, None
        return thread

    def stop(self) -> None:
        """:meth:`halt`, then wait for the thread to end (unless called from it)."""
        join(self.halt(), self.timeout + 1.0)

    def _run(self, wake: threading.Event) -> None:
        while True:
            if wake.wait(timeout=max(0.0, self._deadline - time.monotonic())):
                return  # halted
            with self._lock:
                if wake.is_set() or not self._running:
                    return  # halted while it woke up
                if time.monotonic() < self._deadline:
                    continue  # fed meanwhile
                self._running = False
                self._thread = None
            self._trip()
            return


def join(thread: threading.Thread | None, timeout: float) -> None:
    """Wait for ``thread`` to end, unless it is ``None`` or the calling thread."""
    if thread is not None and thread is not threading.current_thread():
        thread.join(timeout=timeout)
