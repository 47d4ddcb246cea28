"""Tool definitions in the native formats of the big APIs (placeholder: replaced by the full module)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcs.tools import Tool


def export_tools(tools: Sequence[Tool], fmt: str) -> list[dict[str, Any]]:
    """``fmt`` is one of ``openai``, ``anthropic``, ``gemini``, ``mcp``."""
    if fmt == "openai":
        return [
            {"type": "function", "function": {"name": t.name, "description": t.description,
                                              "parameters": dict(t.input_schema)}}
            for t in tools
        ]
    raise ValueError(f"unknown tool format {fmt!r}")
