"""Find tool calls in LLM output (DESIGN.md, section 5).

Placeholder: only the MCS canonical JSON object is understood here; the full parser
(every provider message and raw-text format) replaces this module.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from mcs.tools import ToolCall

__all__ = ["parse_tool_calls"]


def parse_tool_calls(llm_response: Any) -> list[ToolCall]:
    """Every tool call in ``llm_response``, in order; ``[]`` when there is none. Never raises."""
    data: Any = llm_response
    if isinstance(llm_response, str):
        try:
            data = json.loads(llm_response)
        except ValueError:
            return []
    if isinstance(data, Mapping):
        name = data.get("tool", data.get("name"))
        arguments = data.get("arguments", data.get("parameters", {}))
        if isinstance(name, str) and isinstance(arguments, dict):
            return [ToolCall(name=name, arguments=arguments)]
    return []
