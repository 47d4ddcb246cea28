"""What every format reader hands back, and the argument normalisation they share.

A reader produces :class:`Found` records; :mod:`mcs.parsing` turns them into
:class:`mcs.tools.ToolCall` once names are resolved. Each record says how sure the
reader is that it is a call at all:

* ``EXPLICIT``: the format marks it as a call (a provider message, a ``<tool_call>`` tag,
  ``{"name": ..., "arguments": ...}``, a whole response that is a pythonic call list).
  Always returned, so the caller can tell the model when it named an unknown tool.
* ``WEAK``: call-shaped but found by shape alone (an object keyed by its name, a
  ``f(x=1)`` inside prose). Returned without ``known_names``; with it, only if known.
* ``GUESSED``: the name was inferred from context (GLM's bare ``name\\n{json}``, a ReAct
  action written as prose). Returned only when the name is in ``known_names``.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from mcs.parsing.jsonspans import MISSING, loads_lenient, tolerant_value

MAX_NAME_LENGTH = 256
# A tool name as models write it: identifiers, dots, dashes, slashes and colons.
NAME_RE = re.compile(r"[A-Za-z_][\w.\-/:]*")
_NAMESPACES: Final = ("functions.", "default_api.")
_MARKDOWN_UNDERSCORE = re.compile(r"(?<!\\)\\_")


EXPLICIT: Final = 0
WEAK: Final = 1
GUESSED: Final = 2


@dataclass(slots=True)
class Found:
    """One call as a reader saw it, before name resolution.

    ``positional`` holds arguments written without a name (``f(4, 5)``), as values or as
    the ``ast`` nodes they were written as (read only once they can be named); they are
    named from the tool's schema once the name is resolved, or the call is dropped.
    """

    name: str
    arguments: dict[str, Any]
    id: str | None = None
    confidence: int = EXPLICIT
    positional: tuple[Any, ...] = ()


def unescape_markdown(text: str) -> str:
    """``calc\\_area`` (markdown-escaped by chat models) becomes ``calc_area``."""
    # "\\" first: one character is found by memchr, "\\_" by a slower two-character search
    return _MARKDOWN_UNDERSCORE.sub("_", text) if "\\" in text and "\\_" in text else text


def run_end(run: re.Pattern[str], text: str, position: int) -> int:
    """Where the run ``run`` (a pattern that may match nothing, such as ``[\\w.]*``)
    starting at ``position`` ends."""
    found = run.match(text, position)
    return position if found is None else found.end()


def clean_name(value: Any) -> str | None:
    """A usable tool name from ``value``, or ``None`` when it cannot be one."""
    if not isinstance(value, str):
        return None
    if value.isidentifier() and len(value) <= MAX_NAME_LENGTH:  # the common case: nothing to clean
        return value
    name = unescape_markdown(value).strip().strip("`'\"").strip()
    if not name or len(name) > MAX_NAME_LENGTH or "\n" in name:
        return None
    for prefix in _NAMESPACES:  # functions.get_weather (OpenAI/gpt-oss), default_api.f (Gemini)
        if name.startswith(prefix) and len(name) > len(prefix):
            return name[len(prefix) :]
    return name


def bind_positional(
    positional: tuple[Any, ...], arguments: dict[str, Any], schema: Any
) -> dict[str, Any] | None:
    """``arguments`` with ``positional`` named from ``schema``, or ``None`` when that has
    more than one reading.

    Positional values take the schema's properties in declared order, as Python binds
    them; there is one reading only when there are no more values than properties, no
    property is given twice, and every required property ends up with a value.
    """
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    if not isinstance(properties, dict) or len(positional) > len(properties):
        return None
    names = list(properties)[: len(positional)]
    if any(name in arguments for name in names):
        return None
    values = [tolerant_value(value) if isinstance(value, ast.expr) else value for value in positional]
    if MISSING in values:
        return None
    bound = {**dict(zip(names, values, strict=True)), **arguments}
    required = schema.get("required", [])
    if not isinstance(required, list) or any(name not in bound for name in required):
        return None
    return bound


def looks_like_schema(arguments: dict[str, Any]) -> bool:
    """True for a JSON Schema echoed back (a tool *definition*, not a call)."""
    return isinstance(arguments.get("properties"), dict) and arguments.get("type") in (
        "object",
        "dict",
    )


def coerce_arguments(value: Any) -> dict[str, Any] | None:
    """Arguments as a dict: objects as they are, JSON (even double-encoded) decoded.

    ``None`` and an empty string mean "no arguments". Anything that is not an object
    after decoding gives ``None`` (the caller drops the candidate).
    """
    for _ in range(3):  # a JSON string holding a JSON string holding an object, at most
        if value is None:
            return {}
        if isinstance(value, dict):
            return value
        if not isinstance(value, str):
            return None
        text = value.strip()
        if not text:
            return {}
        decoded = loads_lenient(text)
        if decoded is MISSING:
            return None
        value = decoded
    return value if isinstance(value, dict) else None
