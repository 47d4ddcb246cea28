"""Periodic sends through python-can's ``send_periodic`` machinery, stoppable at once.

python-can's software task (``ThreadBasedCyclicSendTask``, what ``send_periodic`` uses on
interfaces without a cyclic-send engine of their own, the virtual bus among them) checks
its stop flag only between sleeps, so a frame can still leave after ``stop()`` returned.
The driver hands that task a :class:`_Gate` instead of the bus: each send goes through
the driver's transmit lock and is dropped once the task is stopped, so after
:meth:`Periodic.stop` returns no frame of it reaches the bus. Interfaces with their own
cyclic engine (socketcan's BCM, several vendor drivers) get ``bus.send_periodic`` as is;
their ``stop()`` removes the job from the engine synchronously.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, cast

import can
from can.broadcastmanager import CyclicSendTaskABC, ThreadBasedCyclicSendTask

logger = logging.getLogger("mcs_can")


class _Gate:
    """What the software task sees as its bus: sends only while its task is live."""

    def __init__(self, bus: can.BusABC, lock: threading.RLock) -> None:
        self.bus = bus
        self.lock = lock
        self.live = True

    def send(self, msg: can.Message, timeout: float | None = None) -> None:
        with self.lock:
            if self.live:
                self.bus.send(msg, timeout=timeout)


def _software(bus: can.BusABC) -> bool:
    return type(bus)._send_periodic_internal is can.BusABC._send_periodic_internal


class Periodic:
    """One message sent every ``period_ms`` until stopped."""

    def __init__(
        self,
        bus: can.BusABC,
        frame: can.Message,
        period_ms: float,
        lock: threading.RLock,
        on_error: Callable[[Exception], None],
    ) -> None:
        self.frame = frame
        self.period_ms = period_ms
        self._gate: _Gate | None = None
        self._lock = lock

        def failed(exc: Exception) -> bool:
            on_error(exc)
            return False  # stop the task

        if _software(bus):
            self._gate = _Gate(bus, lock)
            self.task: CyclicSendTaskABC = ThreadBasedCyclicSendTask(
                bus=cast(Any, self._gate), lock=threading.Lock(), messages=frame,
                period=period_ms / 1000.0, on_error=failed,
            )
        else:
            self.task = bus.send_periodic(frame, period_ms / 1000.0, store_task=False)

    def modify(self, frame: can.Message) -> None:
        """Send ``frame`` from the next period on (same id; python-can's ``modify_data``)."""
        modify = getattr(self.task, "modify_data", None)
        if modify is None:
            raise RuntimeError("this interface's periodic task cannot change its data")
        modify(frame)
        self.frame = frame

    def stop(self) -> None:
        """Stop; once this returns, no frame of this task reaches the bus."""
        with self._lock:
            if self._gate is not None:
                self._gate.live = False
            try:
                self.task.stop()
            except Exception:  # the bus may already be gone; the gate is closed regardless
                logger.exception("stopping a periodic send failed")

    def describe(self) -> dict[str, Any]:
        return {"period_ms": self.period_ms, "arbitration_id": self.frame.arbitration_id,
                "data_hex": bytes(self.frame.data).hex()}
