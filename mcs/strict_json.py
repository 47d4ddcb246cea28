"""JSON read as RFC 8259 defines it, for text from a peer.

Python's ``json`` reads ``NaN``, ``Infinity`` and ``-Infinity`` (not JSON) and turns a number
such as ``1e999`` into ``inf``: values no JSON result can carry, which would fail later and
far from their source. :data:`STRICT_JSON` refuses them where they are read, as
``ValueError`` (``json.JSONDecodeError`` for the syntax errors it shares with ``json``).
"""

from __future__ import annotations

import json
import math
from typing import Any


def _not_a_json_number(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:32]} is out of range")
    return value


#: A decoder that refuses ``NaN``, ``Infinity`` and numbers out of float range; built once
#: (``json.loads`` with hooks builds a new decoder on every call). ``STRICT_JSON.decode(text)``.
STRICT_JSON = json.JSONDecoder(parse_constant=_not_a_json_number, parse_float=_finite_float)

__all__ = ["STRICT_JSON"]
