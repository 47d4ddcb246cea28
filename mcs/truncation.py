"""Capping what reaches a model: cut text and values at a byte size, with an explicit marker.

Every result a driver hands to a model is bounded (DESIGN.md, section 11). A cut result
says so in words the model can act on: ``[truncated: ...]`` with a hint to ask for less.
"""

from __future__ import annotations

import json
from typing import Any

DEFAULT_HINT = "ask for less, for example with a smaller page size, a limit or a filter"


def truncation_marker(max_bytes: int, hint: str = DEFAULT_HINT, *, what: str = "response") -> str:
    """The line appended to a result cut at ``max_bytes``: ``[truncated: ...]``."""
    return f"\n[truncated: the {what} was cut at {max_bytes} bytes; {hint}]"


def cap_text(text: str, max_bytes: int, *, what: str = "result", hint: str = DEFAULT_HINT) -> str:
    """``text`` unchanged when its UTF-8 form fits ``max_bytes``; else its first
    ``max_bytes`` bytes (cut on a character boundary) and the marker."""
    if len(text) * 4 <= max_bytes:  # cannot be over, whatever the characters
        return text
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return text
    kept = data[:max_bytes].decode("utf-8", "ignore")
    return kept + truncation_marker(max_bytes, hint, what=what)


def cap_result(value: Any, max_bytes: int, *, what: str = "result") -> Any:
    """``value`` when it fits ``max_bytes`` (text, or JSON for structured values); else
    the text (or the JSON text) cut with :func:`cap_text`. Bytes are cut and left bytes."""
    if isinstance(value, str):
        return cap_text(value, max_bytes, what=what)
    if isinstance(value, bytes | bytearray):
        return bytes(value[:max_bytes])
    if value is None or isinstance(value, bool | int | float):
        return value
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        return value
    if len(text.encode("utf-8", "surrogatepass")) <= max_bytes:
        return value
    return cap_text(text, max_bytes, what=what)


#: How deep a result read from a peer's JSON may nest arrays and objects: far beyond what
#: APIs send, and far below what Python's recursion allows the code that handles a result
#: after it (``json.dumps``, the MCP server, schema checks); orjson alone reads 1,024 levels.
MAX_JSON_DEPTH = 128


def may_nest_deeper(text: str | bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether JSON ``text`` holds more than ``limit`` ``[`` and ``{`` together. When it
    does not, what it parses to cannot nest deeper than ``limit``, and :func:`too_deep`
    need not walk it: a count over the text is far cheaper than the walk. ``True`` says
    only that the walk must decide (brackets inside strings count too)."""
    if isinstance(text, str):
        return text.count("[") + text.count("{") > limit
    return text.count(b"[") + text.count(b"{") > limit


def too_deep(value: Any, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether ``value`` (parsed JSON) nests arrays and objects more than ``limit`` deep;
    walked without recursion, so any depth can be asked about."""
    if not isinstance(value, dict | list):
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, dict) else node
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False
