"""Discovery mode for large tool sets (MCS spec section 7, "schema-only").

Instead of every schema, the LLM gets a compact index and two meta-tools:
``search_tools`` finds tools by words (or lists one group, page by page) and
``describe_tool`` returns one tool's full description and input schema. Every tool stays
callable by its name in this mode, and every tool can be reached through the meta-tools.

The index does not list tools one by one (GitHub's 623 operations alone would cost far
more than the whole budget); it lists *groups* (a tool's ``meta["group"]``, such as an
OpenAPI tag, else the first word of its name) with their sizes and a few example names,
trimmed to stay under :data:`MAX_DESCRIPTION_TOKENS` whatever the number of tools.
"""

from __future__ import annotations

import json
import math
import re
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from mcs.tools import Tool, sanitize_tool_name

if TYPE_CHECKING:
    from mcs.driver import ToolDriver
    from mcs.pipeline import Invocation

DEFAULT_TOKEN_BUDGET = 8000
#: The discovery description stays under this many tokens (conservative estimate).
MAX_DESCRIPTION_TOKENS = 2600
#: ``describe_tool`` answers above this many characters lose nested field descriptions.
DESCRIBE_MAX_CHARS = 40_000
SEARCH_TOOL = "search_tools"
DESCRIBE_TOOL = "describe_tool"
_META_KEY = "mcs_meta_tool"
_WORD = re.compile(r"[a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SUMMARY_CHARS = 100
_STOP = frozenset({"a", "an", "the", "of", "for", "to", "in", "on", "and", "or", "by", "with", "from", "is", "it", "me", "my"})


def estimate_tokens(text: str) -> int:
    """A cheap, deliberately high token estimate (three characters a token).

    Real tokenizers average closer to four characters a token on English and JSON, so
    staying under a budget by this estimate stays under it for real.
    """
    return math.ceil(len(text) / 3)


def _tool_chars(tool: Tool) -> int:
    return len(json.dumps(tool.to_dict(), ensure_ascii=False, separators=(",", ":"), default=str))


def choose_mode(tools: Iterable[Tool], token_budget: int) -> Literal["inline", "discovery"]:
    """``"discovery"`` when the tools' inline description would exceed ``token_budget``.

    Stops measuring as soon as the budget is passed, so a spec with thousands of large
    tools costs no more to decide than a small one.
    """
    limit = token_budget * 3
    total = 0
    for tool in tools:
        if is_meta_tool(tool):
            continue
        total += _tool_chars(tool)
        if total > limit:
            return "discovery"
    return "inline"


def is_meta_tool(tool: Tool) -> bool:
    return bool(tool.meta.get(_META_KEY))


def meta_tools(prefix: str | None = None) -> tuple[Tool, Tool]:
    """The two meta-tools (names prefixed like the driver's own tools)."""

    def named(name: str) -> str:
        return sanitize_tool_name(f"{prefix}_{name}") if prefix else name

    search = Tool(
        name=named(SEARCH_TOOL),
        description=(
            "Find tools by keywords, or list the tools of one group (page with offset). "
            "Returns names and one-line summaries."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "words describing the task"},
                "group": {"type": "string", "description": "only tools of this group"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
                "offset": {"type": "integer", "minimum": 0, "default": 0},
            },
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
    line = text[0].strip() if text else ""
    return line if len(line) <= _SUMMARY_CHARS else line[: _SUMMARY_CHARS - 3] + "..."


def group_of(tool: Tool) -> str:
    """The group a tool is listed under: ``meta["group"]``, else the first word of its name."""
    group = tool.meta.get("group")
    if isinstance(group, str) and group:
        return group
    words = _words(tool.name)
    return words[0] if words else "other"


def _words(text: str) -> list[str]:
    return _WORD.findall(_CAMEL.sub(" ", text).lower())


def _groups(tools: Sequence[Tool]) -> dict[str, list[Tool]]:
    groups: dict[str, list[Tool]] = {}
    for tool in tools:
        groups.setdefault(group_of(tool), []).append(tool)
    return groups


def _meta_lines(meta: Sequence[Tool]) -> str:
    return "\n".join(
        json.dumps({"name": t.name, "description": t.description, "input_schema": t.input_schema},
                   ensure_ascii=False, separators=(",", ":"))
        for t in meta
    )


def render_description(
    tools: Sequence[Tool], meta: Sequence[Tool], *, model_name: str | None = None,
    max_tokens: int = MAX_DESCRIPTION_TOKENS,
) -> str:
    """The discovery-mode description: how to find tools, the meta-tools, the group index.

    Always within ``max_tokens`` (by :func:`estimate_tokens`): example names per group are
    dropped first, then the least populated groups are summarised in one line.
    """
    search, describe = meta[0].name, meta[1].name
    groups = _groups(tools)
    head = (
        f"{len(tools)} tools are available in {len(groups)} groups. They are not listed here: "
        f"call {search} with keywords (or a group) to find tools, {describe} to read one tool's "
        "parameters, then call that tool by its name with its arguments.\n"
        f"Meta-tools:\n{_meta_lines(meta)}\n"
        "Groups (name, number of tools, example tools):\n"
    )
    ordered = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
    budget_chars = max_tokens * 3 - len(head)

    def render(examples: int, shown: int) -> str:
        lines = []
        for name, members in ordered[:shown]:
            sample = ", ".join(t.name for t in members[:examples])
            more = ", ..." if examples and len(members) > examples else ""
            lines.append(f"- {name} ({len(members)})" + (f": {sample}{more}" if sample else ""))
        rest = ordered[shown:]
        if rest:
            count = sum(len(m) for _, m in rest)
            names = ", ".join(n for n, _ in rest)
            line = f"- {len(rest)} more groups with {count} tools: {names}"
            if len(line) > 400:
                line = line[:397] + "..."
            lines.append(line)
        return "\n".join(lines)

    for examples in (4, 3, 2, 1, 0):
        body = render(examples, len(ordered))
        if len(body) <= budget_chars:
            return head + body
    shown = len(ordered)
    while shown > 0:
        shown = max(0, shown - max(1, shown // 8))
        body = render(0, shown)
        if len(body) <= budget_chars:
            return head + body
    return head + render(0, 0)


# ---------------------------------------------------------------------- search


@dataclass(frozen=True, slots=True)
class _Entry:
    tool: Tool
    group: str
    name_words: frozenset[str]
    title_words: frozenset[str]
    text_words: frozenset[str]


_INDEXES: weakref.WeakKeyDictionary[Any, tuple[int, list[_Entry]]] = weakref.WeakKeyDictionary()


def _index(tools: Sequence[Tool]) -> list[_Entry]:
    entries = []
    for tool in tools:
        if is_meta_tool(tool):
            continue
        extra = " ".join(str(tool.meta.get(k, "")) for k in ("path", "method", "original_name"))
        entries.append(_Entry(
            tool=tool,
            group=group_of(tool),
            name_words=frozenset(_words(tool.name) + _words(tool.original_name)),
            title_words=frozenset(_words(tool.title or "")),
            text_words=frozenset(_words(f"{tool.description[:400]} {extra}")),
        ))
    return entries


def _stem(word: str) -> str:
    for suffix in ("ies", "es", "s"):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def _score(entry: _Entry, words: list[str]) -> float:
    score = 0.0
    group_words = set(_words(entry.group))
    for word in words:
        stem = _stem(word)
        if word in entry.name_words or stem in entry.name_words or any(w.startswith(stem) for w in entry.name_words):
            score += 3
        if word in group_words or stem in group_words:
            score += 2
        if word in entry.title_words or stem in entry.title_words:
            score += 2
        if word in entry.text_words or stem in entry.text_words:
            score += 1
    return score


def search(
    tools: Iterable[Tool], query: str = "", limit: int = 10, *, group: str | None = None,
    offset: int = 0, entries: list[_Entry] | None = None,
) -> dict[str, Any]:
    """Tools matching ``query`` (best first) and/or in ``group``, ``limit`` from ``offset``.

    Returns ``{"total": n, "tools": [{"name", "summary", "group"}], "next_offset"?}``.
    """
    pool = entries if entries is not None else _index(list(tools))
    if group:
        wanted = group.lower()
        pool = [e for e in pool if e.group.lower() == wanted]
    words = [w for w in _words(query) if w not in _STOP]
    if words:
        scored = [(s, e) for e in pool if (s := _score(e, words)) > 0]
        scored.sort(key=lambda item: (-item[0], item[1].tool.name))
        matches = [e for _, e in scored]
    else:
        matches = list(pool)
    page = matches[offset: offset + limit]
    out: dict[str, Any] = {
        "total": len(matches),
        "tools": [{"name": e.tool.name, "summary": _summary(e.tool), "group": e.group} for e in page],
    }
    if offset + limit < len(matches):
        out["next_offset"] = offset + limit
    if not matches:
        known = sorted({e.group for e in (entries or [])})[:40]
        out["hint"] = "No tool matched; try other words, or a group: " + ", ".join(known)
    return out


def _entries_for(driver: ToolDriver) -> list[_Entry]:
    tools = driver.list_tools()
    key = hash(tuple(t.name for t in tools))
    cached = _INDEXES.get(driver)
    if cached is None or cached[0] != key:
        cached = (key, _index(tools))
        _INDEXES[driver] = cached
    return cached[1]


def run_meta_tool(invocation: Invocation, driver: ToolDriver) -> Any:
    """Run ``search_tools`` or ``describe_tool`` for ``driver``."""
    from mcs.errors import InvalidInputError, ToolNotFoundError

    kind = invocation.tool.meta.get(_META_KEY)
    args: Mapping[str, Any] = invocation.arguments
    if kind == SEARCH_TOOL:
        query = str(args.get("query") or "")
        group = args.get("group")
        if not query.strip() and not group:
            raise InvalidInputError(
                f"{invocation.tool.name} needs a 'query' (words) or a 'group' to list.",
                tool=invocation.tool.name,
            )
        entries = _entries_for(driver)
        return search((), query, int(args.get("limit", 10)), group=str(group) if group else None,
                      offset=int(args.get("offset", 0)), entries=entries)
    name = str(args["name"])
    tool = driver.get_tool(name)
    if tool is None or is_meta_tool(tool):
        entries = _entries_for(driver)
        close = search((), name.replace("_", " "), 3, entries=entries)["tools"]
        hint = f" Close matches: {', '.join(t['name'] for t in close)}." if close else ""
        raise ToolNotFoundError(
            f"There is no tool named {name!r}.{hint} Use {SEARCH_TOOL} to find one.",
            tool=invocation.tool.name,
        )
    return describe(tool)


def _strip_descriptions(node: Any, keep_depth: int, depth: int = 0) -> Any:
    """``node`` without ``description`` keys below ``keep_depth`` levels of nesting."""
    if isinstance(node, list):
        return [_strip_descriptions(v, keep_depth, depth) for v in node]
    if not isinstance(node, Mapping):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "description" and depth > keep_depth and isinstance(value, str):
            continue
        if key in ("properties", "$defs", "patternProperties") and isinstance(value, Mapping):
            out[key] = {k: _strip_descriptions(v, keep_depth, depth + 1) for k, v in value.items()}
        else:
            out[key] = _strip_descriptions(value, keep_depth, depth)
    return out


def describe(tool: Tool, max_chars: int = DESCRIBE_MAX_CHARS) -> dict[str, Any]:
    """What ``describe_tool`` answers: the tool's description and full input schema.

    A schema too large to read (Kubernetes' Pod is 240 kB) keeps every field, type, enum
    and required flag, but loses the descriptions of nested fields, deepest first, until
    it fits in ``max_chars``; a ``note`` says so.
    """
    data = tool.to_dict()
    if len(json.dumps(data, ensure_ascii=False, default=str)) <= max_chars:
        return data
    for keep in (3, 2, 1, 0):
        schema = _strip_descriptions(tool.input_schema, keep)
        candidate = {**data, "input_schema": schema}
        if len(json.dumps(candidate, ensure_ascii=False, default=str)) <= max_chars or keep == 0:
            where = f"nested deeper than {keep} levels" if keep else "inside the arguments"
            candidate["note"] = (
                f"Descriptions of fields {where} were left out to keep this short; "
                "names, types, enums and required flags are complete."
            )
            return candidate
    return data
