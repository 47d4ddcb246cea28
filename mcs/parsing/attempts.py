"""Replies that *tried* to call a tool but hold no call that can run.

:func:`parse_tool_calls` returns the calls a reply holds; a reply cut off by a token
limit, or whose call is too damaged to read, holds none, and would pass for the model's
final answer. :func:`find_damaged_calls` finds those, so the LLM loop and ``mcs call``
can tell the model what went wrong instead of ending the conversation.

What counts as an attempt (each is something a model writes only to call, never in an
answer):

* a call-shaped JSON object (``{"tool": ...``, ``{"name": ...``, ``{"function": ...``)
  that is still open when the text ends: the reply was cut off;
* a reply that is nothing but a call-shaped JSON object (possibly in one code fence)
  that cannot be read;
* a call marker at the start of a line outside code fences (``<tool_call>``,
  ``[TOOL_CALLS]``, ``<|python_tag|>``, ``<function_call>``, ``<function=``) with no
  readable call after it;
* a provider tool call (OpenAI ``tool_calls``, Responses ``function_call``) whose
  arguments cannot be read: it has an id that must be answered.

A JSON object or a marker inside prose that closes (an example, a quotation) is not an
attempt: the MCS chaining rule keeps such a reply a true answer. Calls naming a tool
that does not exist are found by :func:`parse_tool_calls` itself (explicit calls are
returned whatever their name); :func:`unknown_tool_message` words the answer to them.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from mcs.parsing import parse_tool_calls
from mcs.parsing.issued import Layout
from mcs.parsing.text import without_reasoning

__all__ = ["DamagedCall", "find_damaged_calls", "unknown_tool_message"]

DamageKind = Literal["cut_off", "unreadable"]

_EXCERPT: Final = 120
_CALL_OPENING = re.compile(
    r"""\{\s*["'](tool|name|function|tool_name)["']\s*:\s*(?:["']([\w.\-/:]{1,128})|\{)"""
)
_ARGUMENTS_KEY = re.compile(r"""["'](?:arguments|parameters|args|input)["']\s*:""")
_MARKER = re.compile(
    r"^[ \t]*(<tool_call>|<function_call>|<tool_calls>|\[TOOL_CALLS\]|<\|python_tag\|>|<function=)",
    re.MULTILINE,
)
_FENCE = re.compile(r"^[ \t]*```", re.MULTILINE)
_WHOLE_FENCE = re.compile(r"\A```[\w-]*\s*\n(.*?)\n?```\s*\Z", re.DOTALL)


@dataclass(frozen=True, slots=True)
class DamagedCall:
    """One attempted call that cannot run.

    ``kind`` is ``"cut_off"`` (the text ended inside the call) or ``"unreadable"``.
    ``name`` is the tool it names when that much could be read; ``id`` the provider's
    call id, which needs an answer; ``excerpt`` the start of the damaged call.
    """

    kind: DamageKind
    name: str | None
    excerpt: str
    id: str | None = None

    @property
    def message(self) -> str:
        """What to tell the model: what went wrong, that nothing ran, what to do."""
        target = f"Your call to {self.name}" if self.name else "Your tool call"
        if self.kind == "cut_off":
            return (
                f"{target} was cut off before it ended, so nothing ran: {self.excerpt!r}. "
                "Send the complete call again; if its arguments are long, make them shorter."
            )
        return (
            f"{target} could not be read, so nothing ran: {self.excerpt!r}. Write the call "
            "again as the system message shows, with its arguments as one valid JSON object."
        )


def unknown_tool_message(name: str, tools: Sequence[str]) -> str:
    """The answer to a call naming no tool: the close names, then the tools there are."""
    close = difflib.get_close_matches(name, tools, n=3, cutoff=0.6)
    hint = f" Did you mean {', '.join(close)}?" if close else ""
    listing = (", ".join(tools[:20]) + (", ..." if len(tools) > 20 else "")) or "none"
    return f"There is no tool named {name!r}.{hint} Available tools: {listing}."


def _excerpt(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _EXCERPT else text[:_EXCERPT] + "..."


def _object_end(text: str, start: int) -> int | None:
    """Index just past the object opening at ``text[start]``, or ``None`` if it never closes."""
    depth, quote, escaped = 0, "", False
    for index in range(start, len(text)):
        char = text[index]
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return index + 1
    return None


def _outside_fences(text: str) -> Iterator[tuple[int, int]]:
    """The ``(start, end)`` ranges of ``text`` that are not inside a ``` code fence."""
    position, inside = 0, False
    for fence in _FENCE.finditer(text):
        if not inside:
            yield position, fence.start()
        inside = not inside
        position = fence.end()
    if not inside:
        yield position, len(text)


def _call_shaped(opening: re.Match[str], text: str) -> bool:
    """``{"tool": ...`` always; ``{"name": ...`` only with an arguments key after it
    (``{"name": "Paris", "population": ...}`` is data, not a call)."""
    return opening.group(1) != "name" or _ARGUMENTS_KEY.search(text, opening.end()) is not None


def _issued_at(layout: Layout, position: int) -> bool:
    """Whether an attempt starting at ``position`` is the model's own: not in unspoken text
    (quoted, commented, a tool's result echoed), not framed out (negated, an example,
    quoted...), as for the calls the parser returns (docs/parsing.md)."""
    if layout.unspoken(position):
        return False
    fence = layout.fence_at(position)
    start = position if fence is None else fence[0]
    return not layout.framed_out(start, len(layout.text), explicit=True, follow=False)


def _damage_in_text(text: str) -> DamagedCall | None:
    text = without_reasoning(text)  # a draft in reasoning was not sent
    layout = Layout(text)
    openings = [m for m in _CALL_OPENING.finditer(text) if _call_shaped(m, text)]
    if openings and _object_end(text, openings[-1].start()) is None:
        last = openings[-1]
        if not _issued_at(layout, last.start()):
            return None  # the model quoted, declined or showed a call and was cut off: an answer
        return DamagedCall("cut_off", last.group(2), _excerpt(text[last.start():]))
    stripped = text.strip()
    fenced = _WHOLE_FENCE.match(stripped)
    body = fenced.group(1).strip() if fenced else stripped
    whole = _CALL_OPENING.match(body)
    if whole is not None and _call_shaped(whole, body):
        return DamagedCall("unreadable", whole.group(2), _excerpt(body))
    for start, end in _outside_fences(text):
        marker = _MARKER.search(text, start, end)
        while marker is not None and not _issued_at(layout, marker.start(1)):
            marker = _MARKER.search(text, marker.end(), end)
        if marker is not None:
            named = _CALL_OPENING.search(text, marker.end())
            return DamagedCall("unreadable", named.group(2) if named else None,
                               _excerpt(text[marker.start(1):]))
    return None


def _native_damage(arguments: str) -> DamageKind:
    start = arguments.find("{")
    return "cut_off" if start >= 0 and _object_end(arguments, start) is None else "unreadable"


def _provider_calls(data: Any) -> Iterable[tuple[str, str | None, Any]]:
    """``(id, name, arguments)`` of each OpenAI chat or Responses tool call in ``data``."""
    if isinstance(data, list):
        for item in data:
            if isinstance(item, Mapping) and item.get("type") == "function_call":
                yield str(item.get("call_id") or item.get("id") or ""), item.get("name"), item.get("arguments")
        return
    if not isinstance(data, Mapping):
        return
    for call in data.get("tool_calls") or ():
        function = call.get("function") if isinstance(call, Mapping) else None
        if isinstance(function, Mapping):
            yield str(call.get("id") or ""), function.get("name"), function.get("arguments")
    output = data.get("output")
    if isinstance(output, list):
        yield from _provider_calls(output)


def _unreadable_arguments(arguments: Any) -> bool:
    if not isinstance(arguments, str) or not arguments.strip():
        return False
    try:
        return not isinstance(json.loads(arguments), dict)
    except ValueError:
        return True


def _text_of(data: Any) -> str | None:
    if isinstance(data, str):
        return data
    if isinstance(data, bytes | bytearray):
        return bytes(data).decode("utf-8", "replace")
    if isinstance(data, Mapping):
        content = data.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            parts = [p.get("text") for p in content if isinstance(p, Mapping)]
            return "".join(p for p in parts if isinstance(p, str)) or None
    return None


def find_damaged_calls(llm_response: Any) -> list[DamagedCall]:
    """The attempted calls in ``llm_response`` that :func:`parse_tool_calls` cannot return.

    Takes what the parser takes (text, a provider message as dicts, an SDK object).
    ``[]`` for a reply whose calls all parse, and for a true answer. Never raises.
    """
    try:
        data = llm_response.model_dump() if callable(getattr(llm_response, "model_dump", None)) else llm_response
        calls = parse_tool_calls(data)
        parsed_ids = {call.id for call in calls if call.id}
        damaged = [
            DamagedCall(_native_damage(args), name if isinstance(name, str) else None, _excerpt(args), call_id)
            for call_id, name, args in _provider_calls(data)
            if call_id and call_id not in parsed_ids and _unreadable_arguments(args)
        ]
        if damaged or calls:
            return damaged
        text = _text_of(data)
        found = _damage_in_text(text) if text else None
        return [found] if found is not None else []
    except Exception:  # like the parser: a detector bug must not crash an agent
        return []
