"""What a pasted model reply holds for a driver: each call, how sure the parser is, its fate.

The kind of each call follows the parser's documented rules (:mod:`mcs.parsing`), read
through its public function alone:

* ``explicit``: the format marks it as a call; returned even with no tool names known.
* ``weak``: call-shaped but found by shape alone (``f(x=1)`` in prose); returned without
  tool names, and with them only when the name is known.
* ``guessed``: returned only because the driver's tool names are known (a name inferred
  from context, a ReAct action written as prose).

So parsing with no names known (explicit), with no name list at all (explicit and weak)
and with the driver's names and schemas (what the driver reads) tells the three apart.
A call the model only mentioned (in a quote, an example, a sentence that negates it) is
no call at all, for the parser and so for the page. Calls the model *tried* to make but
that cannot be read (cut off, damaged) are found by
:func:`mcs.parsing.attempts.find_damaged_calls`, as the LLM loop does.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Literal

from mcs.driver import ToolDriver
from mcs.parsing import parse_tool_calls
from mcs.parsing.attempts import find_damaged_calls
from mcs.tools import ToolCall

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


def classified_calls(driver: ToolDriver, reply: Any) -> list[tuple[ToolCall, Kind]]:
    """The calls ``driver`` reads in ``reply``, in order, each with its kind."""

    def key(call: ToolCall) -> str:
        tool = driver.get_tool(call.name)
        name = tool.name if tool is not None else call.name
        return json.dumps([name, call.arguments], sort_keys=True, default=str)

    explicit = Counter(key(c) for c in parse_tool_calls(reply, known_names=()))
    shaped = Counter(key(c) for c in parse_tool_calls(reply)) - explicit
    out: list[tuple[ToolCall, Kind]] = []
    # The driver's own names and input schemas: what process_llm_response reads with.
    for call in parse_tool_calls(reply, known_names=driver._known_names()):
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


def damaged_calls(reply: Any) -> list[dict[str, Any]]:
    """The calls ``reply`` tried to make that cannot be read (cut off or damaged), each with
    what the model would be told; nothing of them can run."""
    return [
        {"tool": damage.name, "damage": damage.kind, "excerpt": damage.excerpt, "id": damage.id,
         "message": damage.message}
        for damage in find_damaged_calls(reply)
    ]
