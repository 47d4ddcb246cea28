"""Per-model shaping of tool schemas.

Some clients (Gemini's function declarations, several OpenAI-compatible servers) reject
``$ref`` and ``$defs``. :func:`inline_refs` replaces each local reference by the schema
it names, down to ``depth`` levels of recursion; deeper, a recursive type becomes a
plain object whose description says so, so the schema stays finite.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from mcs.tools import Tool

_PREFIX = "#/$defs/"


def inline_schema(schema: Mapping[str, Any], depth: int = 2) -> dict[str, Any]:
    """``schema`` without ``$ref``/``$defs``: local references expanded ``depth`` times."""
    defs = schema.get("$defs") or {}

    def walk(node: Any, seen: dict[str, int]) -> Any:
        if isinstance(node, list):
            return [walk(v, seen) for v in node]
        if not isinstance(node, Mapping):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_PREFIX):
            name = ref[len(_PREFIX):]
            count = seen.get(name, 0)
            if name not in defs or count >= depth:
                return {"type": "object", "description": f"A {name} (recursive; same shape as above)."}
            expanded = walk(defs[name], {**seen, name: count + 1})
            extra = {k: walk(v, seen) for k, v in node.items() if k != "$ref"}
            return {**expanded, **extra} if isinstance(expanded, dict) else expanded
        return {k: walk(v, seen) for k, v in node.items() if k != "$defs"}

    if not defs:
        return dict(schema)
    result = walk(schema, {})
    return result if isinstance(result, dict) else dict(schema)


def inline_refs(tool: Tool, depth: int = 2) -> Tool:
    """``tool`` with its input schema passed through :func:`inline_schema` (same object if no refs)."""
    if "$defs" not in tool.input_schema:
        return tool
    return replace(tool, input_schema=inline_schema(tool.input_schema, depth))
