"""What the CAN tests share: the demo database, the corpus folder, reading what a sniffer saw, and a
virtual bus that can be made to hold its sends (a congested transmit queue)."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import can
import mcs_can
from mcs_can import CanDriver

ROOT = Path(__file__).resolve().parents[3]
DEMO_DBC = Path(mcs_can.__file__).with_name("demo.dbc")
DBC_CORPUS = ROOT / ".." / "shared" / "corpus" / "dbc"

CRUISE = {"TargetSpeed": 80, "Mode": "Active", "Acceleration": 0.5}
CRUISE_BYTES = bytes.fromhex("5002f401")


def drain(bus: can.BusABC) -> list[can.Message]:
    """Every frame already delivered to ``bus`` (the virtual bus delivers during send())."""
    frames = []
    while (frame := bus.recv(timeout=0)) is not None:
        frames.append(frame)
    return frames


def collect(bus: can.BusABC, count: int, timeout: float = 5.0) -> list[can.Message]:
    """Wait for ``count`` frames on ``bus`` (at most ``timeout`` seconds)."""
    frames: list[can.Message] = []
    deadline = time.monotonic() + timeout
    while len(frames) < count and (left := deadline - time.monotonic()) > 0:
        frame = bus.recv(timeout=left)
        if frame is not None:
            frames.append(frame)
    return frames


def frame_tuples(frames: list[can.Message]) -> list[tuple[int, bool, int, bytes]]:
    return [(f.arbitration_id, f.is_extended_id, f.dlc, bytes(f.data)) for f in frames]


class _OverVirtual(can.BusABC):
    """A bus that sends and receives through a virtual bus on ``channel``: a subclass
    changes what a send or an opening does."""

    def __init__(self, channel: str) -> None:
        self.inner = can.Bus(interface="virtual", channel=channel)
        super().__init__(channel=channel)

    def send(self, msg: can.Message, timeout: float | None = None) -> None:
        self.inner.send(msg, timeout=timeout)

    def _recv_internal(self, timeout: float | None) -> tuple[can.Message | None, bool]:
        return self.inner.recv(timeout), False

    def shutdown(self) -> None:
        self.inner.shutdown()
        super().shutdown()


class CongestedBus(_OverVirtual):
    """A virtual bus whose transmit queue is full until ``clear`` is set: a send waits for it
    (up to its timeout), as a controller with a full TX buffer makes it wait."""

    def __init__(self, channel: str) -> None:
        self.clear = threading.Event()
        self.clear.set()
        self.waiting = threading.Event()
        super().__init__(channel)

    def send(self, msg: can.Message, timeout: float | None = None) -> None:
        if not self.clear.is_set():
            self.waiting.set()
            if not self.clear.wait(timeout):
                raise can.CanOperationError("transmit buffer full")
        super().send(msg, timeout=timeout)


def block_the_bus(driver: CanDriver, bus: CongestedBus) -> threading.Thread:
    """Another caller's frame stuck in the full transmit queue, holding the bus for ~1 s."""
    bus.clear.clear()
    slow = threading.Thread(target=lambda: driver.call_tool("send_CruiseCommand", CRUISE))
    slow.start()
    assert bus.waiting.wait(2.0)
    threading.Timer(1.0, bus.clear.set).start()
    return slow


class SlowToOpenBus(_OverVirtual):
    """A virtual bus that takes ``open_delay`` seconds to open (a remote or USB interface
    coming back): python-can opens it as interface ``slow-virtual``, under
    :func:`slow_to_open_interface`."""

    open_delay = 0.0

    def __init__(self, channel: str, **kwargs: object) -> None:
        time.sleep(type(self).open_delay)
        super().__init__(channel)


SLOW_INTERFACE = "slow-virtual"
