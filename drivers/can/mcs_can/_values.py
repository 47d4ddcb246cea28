"""CAN frames and decoded signal values as JSON can carry them.

* A frame is ``{"arbitration_id", "id_hex", "is_extended_id", "is_fd", "bitrate_switch",
  "dlc", "data_hex"}``; ``dlc`` is the payload length in bytes (python-can's meaning),
  ``data_hex`` the payload as lowercase hex.
* A choice (value table entry) is its name; a float that JSON cannot hold (NaN, infinity)
  is its text; an integer beyond +/-2**53 (what a JavaScript client reads exactly) is a
  decimal string.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from typing import Any

import can
from cantools.database.namedsignalvalue import NamedSignalValue

_SAFE_INT = 2**53


def json_value(value: Any) -> Any:
    """One decoded signal value, JSON-safe (see the module docstring)."""
    if isinstance(value, NamedSignalValue):
        return str(value.name)
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if -_SAFE_INT <= value <= _SAFE_INT else str(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, str):
        return value
    return str(value)


def json_signals(decoded: Mapping[str, Any]) -> dict[str, Any]:
    return {name: json_value(value) for name, value in decoded.items()}


def describe_frame(frame: can.Message) -> dict[str, Any]:
    """The exact frame, JSON-safe: what a dry run shows and what an approval is bound to."""
    return {
        "arbitration_id": frame.arbitration_id,
        "id_hex": f"0x{frame.arbitration_id:0{8 if frame.is_extended_id else 3}X}",
        "is_extended_id": frame.is_extended_id,
        "is_fd": frame.is_fd,
        "bitrate_switch": frame.bitrate_switch,
        "dlc": frame.dlc,
        "data_hex": bytes(frame.data).hex(),
    }


def frame_digest(frame: can.Message, period_ms: float | None) -> str:
    """SHA-256 over everything that reaches the bus: id, flags, length, bytes and the period."""
    material = "|".join((
        f"{frame.arbitration_id:x}",
        "x" if frame.is_extended_id else "s",
        "fd" if frame.is_fd else "classic",
        "brs" if frame.bitrate_switch else "-",
        str(frame.dlc),
        bytes(frame.data).hex(),
        "once" if period_ms is None else f"every {period_ms!r} ms",
    ))
    return hashlib.sha256(material.encode("ascii")).hexdigest()
