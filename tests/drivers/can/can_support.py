"""What the CAN tests share: the demo database, the corpus folder, and reading what a sniffer saw."""

from __future__ import annotations

import time
from pathlib import Path

import can
import mcs_can

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
