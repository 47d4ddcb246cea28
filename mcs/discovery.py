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

import contextlib
import json
import math
import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from mcs.tools import Tool, sanitize_tool_name
from mcs.toolsearch import ToolIndex, summary, words

if TYPE_CHECKING:
    from mcs.driver import ToolDriver
    from mcs.pipeline import Invocation

DEFAULT_TOKEN_BUDGET = 8000
#: The discovery description stays under this many tokens (conservative estimate).
MAX_DESCRIPTION_TOKENS = 2600
#: ``describe_tool`` answers above this many characters lose nested field descriptions.
DESCRIBE_MAX_CHARS = 40_000
#: ``search_tools`` queries longer than this are refused (a task is a sentence, not a text).
MAX_QUERY_CHARS = 1000
SEARCH_TOOL = "search_tools"
DESCRIBE_TOOL = "describe_tool"
CALL_TOOL = "call_tool"
_META_KEY = "mcs_meta_tool"
#: ``Tool.meta`` key: the tool leaves the driver with the meta-tools in discovery mode
#: (a tool the model needs to reach the rest, such as a free-form query tool).
ALWAYS_LISTED = "mcs_always_listed"


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


def meta_tool_names(tools: Iterable[Tool]) -> frozenset[str]:
    """The bare names (``call_tool``...) of the meta-tools among ``tools``, prefixed or not."""
    return frozenset(str(tool.meta[_META_KEY]) for tool in tools if is_meta_tool(tool))


def meta_tools(prefix: str | None = None) -> tuple[Tool, Tool]:
    """The two meta-tools a model needs to find tools (names prefixed like the driver's
    own tools): ``search_tools`` and ``describe_tool``."""

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
                "query": {"type": "string", "maxLength": MAX_QUERY_CHARS, "description": "words describing the task"},
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


def call_meta_tool(prefix: str | None = None) -> Tool:
    """``call_tool(name, arguments)``: calls a tool found by search, for clients that can
    only call the tools they were given (native function calling, MCP clients), when only
    the meta-tools left the driver. The driver runs it as a call of the named tool itself
    (:func:`unwrap_call`): same validation, policies, hooks and scopes."""
    return Tool(
        name=sanitize_tool_name(f"{prefix}_{CALL_TOOL}") if prefix else CALL_TOOL,
        description=(
            f"Call a tool found with {SEARCH_TOOL}: its name, and its arguments as "
            f"{DESCRIBE_TOOL} gives their schema."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "the tool's name"},
                "arguments": {"type": "object", "description": "the tool's arguments"},
            },
            "required": ["name"],
        },
        meta={_META_KEY: CALL_TOOL},
    )


def is_call_tool(tool: Tool) -> bool:
    return tool.meta.get(_META_KEY) == CALL_TOOL


def is_describe_tool(tool: Tool) -> bool:
    return tool.meta.get(_META_KEY) == DESCRIBE_TOOL


def unwrap_call(tool: Tool, arguments: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The tool a ``call_tool`` call names and the arguments it passes.

    ``arguments`` may arrive as a JSON string (some models write objects that way).

    Raises:
        InvalidInputError: no tool name, or arguments that are not an object.
    """
    from mcs.errors import InvalidInputError

    name = arguments.get("name")
    inner = arguments.get("arguments", {})
    if isinstance(inner, str):
        with contextlib.suppress(ValueError):
            inner = json.loads(inner) if inner.strip() else {}
    if inner is None:
        inner = {}
    if not isinstance(name, str) or not name.strip():
        raise InvalidInputError(f"{tool.name} needs the 'name' of the tool to call.", tool=tool.name)
    if not isinstance(inner, Mapping):
        raise InvalidInputError(
            f"{tool.name}: 'arguments' must be an object with the arguments of {name}.", tool=tool.name
        )
    return name.strip(), dict(inner)


def exported(tools: Iterable[Tool], *, all_tools: bool = False) -> list[Tool]:
    """The tools to hand to a client that calls tools itself (native function calling, an
    MCP client).

    When ``tools`` hold discovery's meta-tools (a driver above its token budget lists
    them), only the meta-tools, ``call_tool`` among them, and the tools a driver marks
    :data:`ALWAYS_LISTED` (the GraphQL driver's free-form tools); else every tool. With
    ``all_tools``, every tool but the meta-tools.
    """
    listed = list(tools)
    meta = [tool for tool in listed if is_meta_tool(tool)]
    if all_tools or not meta:
        return [tool for tool in listed if not is_meta_tool(tool)]
    return [tool for tool in listed if is_meta_tool(tool) or tool.meta.get(ALWAYS_LISTED)]

def group_of(tool: Tool) -> str:
    """The group a tool is listed under: ``meta["group"]``, else the first word of its name."""
    group = tool.meta.get("group")
    if isinstance(group, str) and group:
        return group
    found = words(tool.name)
    return found[0] if found else "other"


def _words(text: str) -> list[str]:
    """Lower-case words of ``text`` (:func:`mcs.toolsearch.words`); the GraphQL driver's
    schema search uses it."""
    return words(text)


def _stem(word: str) -> str:
    """A plural's singular (``charges`` -> ``charge``, ``policies`` -> ``policy``): the light
    stemming the GraphQL driver's schema search uses (tool search stems with Snowball)."""
    for suffix in ("ies", "es", "s"):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


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
    max_tokens: int = MAX_DESCRIPTION_TOKENS, schemas: bool = True,
) -> str:
    """The discovery-mode description: how to find tools, the meta-tools, the group index.

    With a ``call_tool`` among ``meta``, found tools are called through it (the client
    was given the meta-tools only); ``schemas=False`` leaves out the meta-tools' own
    definitions (an MCP server's instructions: the client lists them already).
    Always within ``max_tokens`` (by :func:`estimate_tokens`): example names per group are
    dropped first, then the least populated groups are summarised in one line.
    """
    search, describe = meta[0].name, meta[1].name
    caller = next((t.name for t in meta if is_call_tool(t)), None)
    then = (
        f"then call it with {caller} (its name and arguments)" if caller
        else "then call that tool by its name with its arguments"
    )
    groups = _groups(tools)
    head = (
        f"{len(tools)} tools are available in {len(groups)} groups. They are not listed here: "
        f"call {search} with keywords (or a group) to find tools, {describe} to read one tool's "
        f"parameters, {then}.\n"
        + (f"Meta-tools:\n{_meta_lines(meta)}\n" if schemas else "")
        + "Groups (name, number of tools, example tools):\n"
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


class _Catalog:
    """A driver's tools as search sees them: their groups, and a ranked index built on
    first use (see :mod:`mcs.toolsearch`)."""

    __slots__ = ("_index", "groups", "tools")

    def __init__(self, tools: Iterable[Tool]) -> None:
        self.tools = [tool for tool in tools if not is_meta_tool(tool)]
        self.groups = {tool.name: group_of(tool) for tool in self.tools}
        self._index: ToolIndex | None = None

    @property
    def index(self) -> ToolIndex:
        if self._index is None:
            self._index = ToolIndex(self.tools)
        return self._index


_CATALOGS: weakref.WeakKeyDictionary[Any, tuple[int, _Catalog]] = weakref.WeakKeyDictionary()


def search(
    tools: Iterable[Tool], query: str = "", limit: int = 10, *, group: str | None = None,
    offset: int = 0, entries: _Catalog | None = None,
) -> dict[str, Any]:
    """Tools matching ``query`` (best first, ranked with BM25) and/or in ``group``,
    ``limit`` from ``offset``.

    Returns ``{"total": n, "tools": [{"name", "summary", "group"}], "next_offset"?}``;
    summaries are plain text (markup removed). Without ``query``, a group's tools are
    listed in their order.
    """
    catalog = entries if entries is not None else _Catalog(tools)
    wanted = group.lower() if group else None
    if words(query):
        found, total = catalog.index.search(query, limit, offset, group=wanted)
    else:
        members = [t for t in catalog.tools if wanted is None or catalog.groups[t.name].lower() == wanted]
        found, total = members[offset : offset + limit], len(members)
    out: dict[str, Any] = {
        "total": total,
        "tools": [{"name": t.name, "summary": summary(t), "group": catalog.groups[t.name]} for t in found],
    }
    if offset + limit < total:
        out["next_offset"] = offset + limit
    if not total:
        known = sorted(set(catalog.groups.values()))[:40]
        out["hint"] = "No tool matched; try other words, or a group: " + ", ".join(known)
    return out


def _entries_for(driver: ToolDriver) -> _Catalog:
    tools = driver.list_tools()
    key = hash(tuple(t.name for t in tools))
    cached = _CATALOGS.get(driver)
    if cached is None or cached[0] != key:
        cached = (key, _Catalog(tools))
        _CATALOGS[driver] = cached
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
    if kind != DESCRIBE_TOOL:  # call_tool is unwrapped when the call is prepared
        raise InvalidInputError(f"{invocation.tool.name} is not run on its own.", tool=invocation.tool.name)
    name = str(args["name"])
    tool = driver.get_tool(name)
    if tool is None or is_meta_tool(tool):
        entries = _entries_for(driver)
        close = search((), name[:MAX_QUERY_CHARS].replace("_", " "), 3, entries=entries)["tools"]
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
