"""What a pasted model reply holds for a driver: each call, how sure the parser is, its fate.

The kind of each call follows the parser's documented rules (:mod:`mcs.parsing`), read
through its public function alone:

* ``explicit``: the format marks it as a call; returned even with no tool names known.
* ``weak``: call-shaped but found by shape alone (``f(x=1)`` in prose); returned without
  tool names, and with them only when the name is known.
* ``guessed``: returned only because the driver's tool names are known (a name inferred
  from context, a ReAct action written as prose).

So parsing with no names known (explicit), with no name list at all (explicit and weak)
and with the driver's names (what the driver reads) tells the three apart.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from typing import Any, Literal

from mcs.driver import ToolDriver
from mcs.parsing import parse_tool_calls
from mcs.tools import Tool, ToolCall

Kind = Literal["explicit", "weak", "guessed"]


def as_reply(text: str) -> Any:
    """A pasted reply as the driver would receive it: JSON documents (a provider's message)
    decoded, anything else kept as text."""
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            return json.loads(stripped)
        except ValueError:
            return text
    return text


def known_names(tools: Iterable[Tool]) -> frozenset[str]:
    """The names a model may use for ``tools``: exposed, original and unprefixed."""
    names: set[str] = set()
    for tool in tools:
        names.update((tool.name, tool.original_name, tool.unprefixed_name))
    return frozenset(names)


def classified_calls(driver: ToolDriver, reply: Any) -> list[tuple[ToolCall, Kind]]:
    """The calls ``driver`` reads in ``reply``, in order, each with its kind."""

    def key(call: ToolCall) -> str:
        tool = driver.get_tool(call.name)
        name = tool.name if tool is not None else call.name
        return json.dumps([name, call.arguments], sort_keys=True, default=str)

    explicit = Counter(key(c) for c in parse_tool_calls(reply, known_names=()))
    shaped = Counter(key(c) for c in parse_tool_calls(reply)) - explicit
    out: list[tuple[ToolCall, Kind]] = []
    for call in parse_tool_calls(reply, known_names=known_names(driver.list_tools())):
        k = key(call)
        kind: Kind
        if explicit[k] > 0:
            explicit[k] -= 1
            kind = "explicit"
        elif shaped[k] > 0:
            shaped[k] -= 1
            kind = "weak"
        else:
            kind = "guessed"
        out.append((call, kind))
    return out
