"""Discovery mode for large tool sets (MCS spec section 7, "schema-only").

Instead of every schema, the LLM gets a compact index (name and one line per tool) and
two meta-tools: ``search_tools`` finds tools by words, ``describe_tool`` returns one
tool's full schema. Every tool stays callable by its name in this mode.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from mcs.tools import Tool, sanitize_tool_name

if TYPE_CHECKING:
    from mcs.driver import ToolDriver
    from mcs.pipeline import Invocation

DEFAULT_TOKEN_BUDGET = 8000
SEARCH_TOOL = "search_tools"
DESCRIBE_TOOL = "describe_tool"
_META_KEY = "mcs_meta_tool"
_WORD = re.compile(r"[a-z0-9]+")


def estimate_tokens(text: str) -> int:
    """A cheap token estimate (about four characters a token) for choosing the mode."""
    return len(text) // 4 + 1


def choose_mode(tools: Iterable[Tool], token_budget: int) -> Literal["inline", "discovery"]:
    size = sum(len(json.dumps(t.to_dict(), ensure_ascii=False)) for t in tools if not is_meta_tool(t))
    return "discovery" if size // 4 > token_budget else "inline"


def is_meta_tool(tool: Tool) -> bool:
    return bool(tool.meta.get(_META_KEY))


def meta_tools(prefix: str | None = None) -> tuple[Tool, Tool]:
    def named(name: str) -> str:
        return sanitize_tool_name(f"{prefix}_{name}") if prefix else name

    search = Tool(
        name=named(SEARCH_TOOL),
        description="Find tools by keywords; returns names and one-line summaries.",
        input_schema={
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "words describing the task"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
            },
            "required": ["query"],
        },
        meta={_META_KEY: SEARCH_TOOL},
    )
    describe = Tool(
        name=named(DESCRIBE_TOOL),
        description="Return the full description and input schema of one tool by name.",
        input_schema={
            "type": "object",
            "properties": {"name": {"type": "string", "description": "the tool's name"}},
            "required": ["name"],
        },
        meta={_META_KEY: DESCRIBE_TOOL},
    )
    return search, describe


def _summary(tool: Tool) -> str:
    text = (tool.title or tool.description or "").strip().splitlines()
    line = text[0] if text else ""
    return line if len(line) <= 80 else line[:77] + "..."


def render_description(
    tools: Sequence[Tool], meta: Sequence[Tool], *, model_name: str | None = None
) -> str:
    index = "\n".join(f"- {t.name}: {_summary(t)}" for t in tools)
    helpers = json.dumps([t.to_dict() for t in meta], ensure_ascii=False)
    return (
        f"{len(tools)} tools are available. Use {meta[0].name} or {meta[1].name} to read a "
        f"tool's parameters before calling it by its name.\nMeta-tools: {helpers}\nIndex:\n{index}"
    )


def search(tools: Iterable[Tool], query: str, limit: int = 10) -> list[dict[str, str]]:
    words = set(_WORD.findall(query.lower()))
    scored: list[tuple[int, str, Tool]] = []
    for tool in tools:
        if is_meta_tool(tool):
            continue
        haystack = f"{tool.name} {tool.title or ''} {tool.description}".lower()
        score = sum(3 if w in tool.name.lower() else 1 for w in words if w in haystack)
        if score:
            scored.append((-score, tool.name, tool))
    scored.sort(key=lambda item: (item[0], item[1]))
    return [{"name": t.name, "summary": _summary(t)} for _, _, t in scored[:limit]]


def run_meta_tool(invocation: Invocation, driver: ToolDriver) -> Any:
    kind = invocation.tool.meta.get(_META_KEY)
    if kind == SEARCH_TOOL:
        limit = int(invocation.arguments.get("limit", 10))
        return search(driver.list_tools(), str(invocation.arguments["query"]), limit)
    tool = driver.get_tool(str(invocation.arguments["name"]))
    if tool is None or is_meta_tool(tool):
        from mcs.errors import ToolNotFoundError

        raise ToolNotFoundError(
            f"There is no tool named {invocation.arguments['name']!r}; use {SEARCH_TOOL} to find one.",
            tool=invocation.tool.name,
        )
    return tool.to_dict()
