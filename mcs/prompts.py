"""Prompt templates per model family (DESIGN.md, section 6).

Placeholder: one default template. The template registry (files in ``prompts/``, glob
selection, validation at load, user overrides) replaces this module.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from mcs.tools import Tool


class PromptRegistry:
    """Templates by model-name glob; the full registry replaces this placeholder."""


def render_function_description(tools: Sequence[Tool], *, model_name: str | None = None) -> str:
    """The tools as an LLM-readable JSON list."""
    return json.dumps([tool.to_dict() for tool in tools], indent=1, ensure_ascii=False)


def render_system_message(
    *,
    function_description: str,
    model_name: str | None,
    driver_name: str,
    registry: PromptRegistry | None = None,
) -> str:
    """A complete system prompt teaching the MCS JSON call format."""
    return (
        f"You can use the tools of {driver_name}:\n{function_description}\n\n"
        'To call a tool, answer with only a JSON object: {"tool": NAME, "arguments": {...}}.'
    )
