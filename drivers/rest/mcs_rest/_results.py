"""What a call returns besides plain JSON values and text, and the JSON-safe form of a result.

A call's result always passes ``json.dumps``: a binary body is a
:class:`mcs.content.Binary` (``{"content_type": ..., "base64": ...}``, plus
``"truncated": true`` when cut), and an integer beyond +/-(2**53 - 1), which a JavaScript
client would round, is its decimal text.
"""

from __future__ import annotations

import contextlib
import json
import re
from typing import Any

import orjson

from mcs.content import Binary
from mcs.truncation import MAX_JSON_DEPTH, may_nest_deeper, too_deep

#: The largest integer a JavaScript client reads exactly (``Number.MAX_SAFE_INTEGER``).
SAFE_INTEGER = 2**53 - 1
#: A run of 16 digits: a body without one holds no integer beyond SAFE_INTEGER.
_WIDE_DIGITS = re.compile(rb"\d{16}")


class BinaryBody(bytes):
    """A binary response body as read; ``content_type`` says what it is, ``truncated`` if it was cut."""

    content_type: str
    truncated: bool

    def __new__(cls, data: bytes, content_type: str, truncated: bool = False) -> BinaryBody:
        obj = super().__new__(cls, data)
        obj.content_type = content_type
        obj.truncated = truncated
        return obj

    def __repr__(self) -> str:
        return f"BinaryBody({len(self)} bytes, {self.content_type!r}{', truncated' if self.truncated else ''})"


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _orjson_loads(body: bytes) -> Any:
    """orjson's parse; a body orjson refuses is parsed once more by the standard library
    only to tell one nested past orjson's limit (``RecursionError``) from one that is not JSON."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        with contextlib.suppress(ValueError):
            json.loads(body, parse_constant=_refuse_constant)
        raise


class TooDeep(ValueError):
    """A JSON body nested deeper than :data:`MAX_JSON_DEPTH`."""


def load_json(body: bytes) -> tuple[Any, bool]:
    """``body`` parsed as JSON, and whether it may hold integers beyond :data:`SAFE_INTEGER`.

    Such a body is parsed with every integer exact (orjson would turn one beyond 64 bits
    into a float). ``NaN`` and ``Infinity`` are refused as orjson refuses them.

    Raises:
        TooDeep: the body nests arrays and objects deeper than :data:`MAX_JSON_DEPTH`.
        ValueError: the body is not JSON.
    """
    try:
        if _WIDE_DIGITS.search(body) is None:
            value, wide = _orjson_loads(body), False
        else:
            value, wide = json.loads(body, parse_constant=_refuse_constant), True
    except RecursionError:
        raise TooDeep(f"the JSON nests deeper than {MAX_JSON_DEPTH} levels") from None
    if may_nest_deeper(body) and too_deep(value):
        raise TooDeep(f"the JSON nests deeper than {MAX_JSON_DEPTH} levels")
    return value, wide


def json_safe(value: Any, wide_ints: bool) -> Any:
    """``value`` as a call returns it: a :class:`BinaryBody` as a :class:`~mcs.content.Binary`,
    and, when ``wide_ints``, every integer beyond :data:`SAFE_INTEGER` as its text."""
    if isinstance(value, BinaryBody):
        return Binary.of(bytes(value), value.content_type, truncated=value.truncated)
    return _narrowed(value) if wide_ints else value


def _narrowed(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if -SAFE_INTEGER <= value <= SAFE_INTEGER else str(value)
    if isinstance(value, dict):
        return {key: _narrowed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_narrowed(item) for item in value]
    return value
