"""Payloads as bytes on the wire and as JSON values for the model, by content type.

* JSON (``application/json``, ``*+json``, ``text/json``): the value is serialised compactly
  (UTF-8); received bytes are parsed back.
* Text (``text/*``): a string is sent as UTF-8 (other values as their JSON text); received
  bytes are decoded as UTF-8.
* Anything else is binary: the model gives and gets base64 text.

A received payload that does not decode as its content type says comes back as base64
with ``decode_error`` saying why, never as an exception: so does JSON that is not strictly
JSON (``NaN``, ``Infinity``, a number beyond a float's range, which no JSON result can
carry) or that nests deeper than :data:`mcs.truncation.MAX_JSON_DEPTH`. Large payloads are cut at a byte
cap with an explicit ``[truncated ...]`` marker.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from typing import Any, Literal

from mcs.errors import InvalidInputError
from mcs.strict_json import STRICT_JSON
from mcs.truncation import MAX_JSON_DEPTH, may_nest_deeper, too_deep

Kind = Literal["json", "text", "binary"]


def kind_of(content_type: str) -> Kind:
    media = content_type.split(";", 1)[0].strip().lower()
    if media.endswith("/json") or media.endswith("+json"):
        return "json"
    if media.startswith("text/") or media in ("application/xml", "application/yaml", "application/x-yaml"):
        return "text"
    return "binary"


_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
# The C encoder _JSON.encode builds anew for every value, built once with the same settings
# (it keeps no state between values). Without circular-reference markers, a cycle ends in
# RecursionError instead of ValueError; both are refused alike below.
_MAKE_ENCODER: Any = getattr(json.encoder, "c_make_encoder", None)  # None without the _json accelerator
_C_ENCODER: Any = (
    None if _MAKE_ENCODER is None
    else _MAKE_ENCODER(None, _JSON.default, json.encoder.encode_basestring, None, ":", ",", False, False, False)
)


def _json_text(value: Any) -> str:
    """``value`` as compact JSON text (NaN and infinity refused with ValueError)."""
    if _C_ENCODER is None:
        return _JSON.encode(value)
    return "".join(_C_ENCODER(value, 0))


@dataclass(frozen=True, slots=True)
class Codec:
    content_type: str
    kind: Kind = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", kind_of(self.content_type))

    def encode(self, value: Any, tool: str) -> bytes:
        """The exact bytes to publish for ``value``; ``INVALID_INPUT`` when it cannot be."""
        kind = self.kind
        if kind == "json":
            try:
                return _json_text(value).encode("utf-8")
            except (ValueError, RecursionError) as exc:  # NaN or infinity, a cycle: not JSON
                raise InvalidInputError(f"payload is not valid JSON: {exc}", tool=tool,
                                        details={"field": "payload"}) from None
        if kind == "text":
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            return text.encode("utf-8")
        if not isinstance(value, str):
            raise InvalidInputError(f"payload must be base64 text for {self.content_type}.", tool=tool,
                                    details={"field": "payload"})
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise InvalidInputError(f"payload is not valid base64 (content type {self.content_type}).",
                                    tool=tool, details={"field": "payload"}) from None

    def decode(self, data: bytes, max_bytes: int, size: int | None = None) -> dict[str, Any]:
        """What the model sees of a received payload: ``payload`` (+ markers), JSON-safe.
        ``size``: the payload's length on the wire when ``data`` is only its start."""
        size = len(data) if size is None else size
        if size > max_bytes or len(data) < size:
            shown = data[:max_bytes].decode("utf-8", errors="replace")
            return {
                "payload": f"{shown} [truncated: {size} bytes, first {min(max_bytes, len(data))} shown]",
                "truncated": True, "bytes": size,
            }
        kind = self.kind
        if kind == "binary":
            return {"payload": base64.b64encode(data).decode("ascii"), "payload_encoding": "base64"}
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return _undecodable(data, f"not UTF-8 text ({exc.reason} at byte {exc.start})")
        if kind == "text":
            return {"payload": text}
        if not text.strip():
            return _undecodable(data, "empty, not JSON")
        try:
            value = STRICT_JSON.decode(text)
        except RecursionError:
            return _undecodable(data, f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
        except ValueError as exc:
            return _undecodable(data, f"not valid JSON ({exc})")
        if may_nest_deeper(text) and too_deep(value):
            return _undecodable(data, f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
        return {"payload": value}


def _undecodable(data: bytes, why: str) -> dict[str, Any]:
    return {"payload": base64.b64encode(data).decode("ascii"), "payload_encoding": "base64", "decode_error": why}


def preview(data: bytes, limit: int = 200, size: int | None = None) -> str:
    """A short readable view of any payload (for topic discovery); ``size``: its length on
    the wire when ``data`` is only its start."""
    size = len(data) if size is None else size
    text = data[:limit].decode("utf-8", errors="replace")
    return text + (f" [truncated: {size} bytes]" if size > limit else "")
