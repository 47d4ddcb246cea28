"""Find tool calls in LLM output (DESIGN.md, section 5).

One parser, liberal in what it accepts and strict in what it returns.
:func:`parse_tool_calls` takes whatever the model produced (text, bytes, a provider
message as a dict, list or SDK object) and returns every call in it, in order.

What a caller can rely on:

* It never raises, whatever the input.
* It never evaluates anything: Python-literal damage and pythonic calls are *parsed*
  with :mod:`ast`, never run.
* Work is bounded: text beyond :data:`MAX_INPUT_CHARS` is ignored, JSON spans are
  found by a scanner that tries a bounded number of starts, and nested data is walked
  to a bounded depth and size.
* A call whose *name* had to be guessed (GLM-4's bare ``name\\n{json}``, a ReAct action
  written as prose) is returned only when the caller passed ``known_names`` and the
  name is one of them. Calls recognised by shape alone inside prose (``f(x=1)`` in a
  sentence, ``{"fn": {...}}`` keyed by name) are returned without ``known_names``, and
  with it only when the name is known. Explicit calls are always returned, even with an
  unknown name, so the caller can tell the model the tool does not exist.
* With ``known_names``, a name the model sanitised or escaped (``spotify_play`` for
  ``spotify.play`` or the reverse, ``calc\\_area``) is mapped back to the known name.

Module layout: :mod:`~mcs.parsing.structured` (provider messages and decoded JSON),
:mod:`~mcs.parsing.text` (tagged formats, fences, scanning),
:mod:`~mcs.parsing.pythonic` (``ast``), :mod:`~mcs.parsing.jsonspans` (balanced spans
and repair).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any, Final

import pydantic_core

from mcs.parsing._common import (
    EXPLICIT,
    GUESSED,
    MAX_NAME_LENGTH,
    Found,
    bind_positional,
    looks_like_schema,
)
from mcs.parsing.issued import has_placeholder
from mcs.parsing.jsonspans import PARSES, forget_parses
from mcs.parsing.structured import _NOT_CALLS, canonical_call, from_data
from mcs.parsing.text import read_text
from mcs.tools import ToolCall

__all__ = ["MAX_INPUT_CHARS", "parse_tool_calls"]

MAX_INPUT_CHARS: Final = 1_000_000
"""Only the first million characters (or bytes) of a text response are looked at."""

_NOT_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]+")


def _key(name: str) -> str:
    """What ``name`` is compared on to map it onto a known name: its ASCII separators
    (``.``, ``/``, a space, ``\\_``...) read as ``_``. A name with any other character (a
    zero-width space, an accent, a look-alike letter) is only ever itself: such a name is
    not a sanitised spelling of a known one, and must not run it."""
    if not name.isascii():
        return name
    return _NOT_NAME_CHARS.sub("_", name.replace("\\_", "_")).strip("_")


class _Names:
    """Which calls to keep and what to call them, given the caller's ``known_names``.

    ``known_names`` may map each name to its tool's input schema (or to anything with an
    ``input_schema``); the schemas name positional arguments (``f(4, 5)``).
    """

    __slots__ = ("_by_key", "_resolved", "known", "schemas")

    def __init__(self, known: Collection[str] | Mapping[str, Any] | None) -> None:
        self._by_key: dict[str, str] | None = None
        self._resolved: dict[str, str | None] = {}  # a response asks about the same names often
        if type(known) is dict:  # what drivers pass: each name with its schema
            self.known: Collection[str] | None = known
            self.schemas: Mapping[str, Any] = known
            return
        self.known = None
        self.schemas = known if isinstance(known, Mapping) else {}
        if isinstance(known, str):  # one name passed bare
            known = (known,)
        if known is not None:
            self.known = known if isinstance(known, (set, frozenset, dict)) else frozenset(known)

    def resolve(self, name: str) -> str | None:
        """The known name ``name`` stands for, or ``None``."""
        known = self.known
        if known is None:
            return name
        if name in known:
            return name
        if name in self._resolved:
            return self._resolved[name]
        if self._by_key is None:
            self._by_key = {}
            for candidate in known:
                if isinstance(candidate, str):
                    self._by_key.setdefault(_key(candidate), candidate)
        resolved = self._by_key.get(_key(name))
        rest = name
        while resolved is None and "." in rest:  # tools.solve(...): a namespace put in front
            rest = rest.split(".", 1)[1]
            resolved = self._by_key.get(_key(rest))
        self._resolved[name] = resolved
        return resolved

    def _bound(self, call: Found) -> bool:
        """Name ``call``'s positional arguments from its schema; ``False`` when impossible."""
        if not call.positional:
            return True
        resolved = self.resolve(call.name)
        value = self.schemas.get(resolved) if resolved is not None else None
        schema = getattr(value, "input_schema", value)  # a Tool, or the schema itself
        bound = bind_positional(call.positional, call.arguments, schema)
        if bound is None:
            return False
        call.arguments, call.positional = bound, ()
        return True

    def keep(self, found: list[Found]) -> list[Found]:
        if self.known is None:
            return [call for call in found if call.confidence != GUESSED and not call.positional]
        return [
            call for call in found
            if (call.confidence == EXPLICIT or self.resolve(call.name) is not None) and self._bound(call)
        ]

    def finish_explicit(self, call: Found) -> list[ToolCall]:
        """:meth:`finish` of one explicit call without positional arguments (which
        :meth:`keep` always keeps): the canonical call's shorter way."""
        return [ToolCall(self.resolve(call.name) or call.name, call.arguments, call.id)]

    def finish(self, found: list[Found]) -> list[ToolCall]:
        calls = []
        for call in self.keep(found):
            name = self.resolve(call.name) or call.name
            calls.append(ToolCall(name=name, arguments=call.arguments, id=call.id))
        return calls


def _as_data(response: Any) -> Any:
    if isinstance(response, (str, bytes, bytearray, memoryview, dict, list)):
        return response
    dump = getattr(response, "model_dump", None)
    if callable(dump):  # openai / anthropic / google-genai SDK objects (pydantic)
        return dump()
    if isinstance(response, Mapping):
        return dict(response)
    if isinstance(response, tuple):
        return list(response)
    return response


def _canonical_text(text: str) -> Found | None:
    """The call when ``text`` is exactly one canonical MCS call (``{"tool"|"name": ...,
    "arguments": {...}}``), read with one ``json.loads``; ``None`` for anything else.

    The fast path for the most common input: it returns what the full reader would,
    and leaves every other text (markdown escapes, reasoning, damage, a placeholder left
    to fill in such as ``<repo name>``) to it. pydantic's JSON reader (Rust) decodes such
    a call in a third of the time of ``json.loads``.
    """
    if len(text) > MAX_INPUT_CHARS or (text[:1] != "{" and not text.lstrip().startswith("{")) or "\\_" in text:
        return None
    angled = "<" in text  # looked for once: both the think tag and most placeholders have one
    if angled and "</think>" in text:
        return None
    try:
        value = pydantic_core.from_json(text)
    except (ValueError, TypeError):  # TypeError: an unpaired surrogate cannot be read as UTF-8
        return None
    call = canonical_call(value) if type(value) is dict else None
    if call is not None and (angled or "?" in text) and has_placeholder(call.arguments):
        return None
    return call


_CANONICAL_STARTS: Final = ('{"tool":', '{"name":')
_PLAIN_NAMES: Final[set[str]] = set()
"""Known names :func:`_known_canonical_call` found to be identifiers of at most
:data:`MAX_NAME_LENGTH` characters and not a final answer; only names a caller listed as
known are added, and the set is emptied when it holds :data:`_PLAIN_NAMES_KEPT`."""
_PLAIN_NAMES_KEPT: Final = 4096
_new_object = object.__new__
_set_call_name, _set_call_arguments, _set_call_id = (
    ToolCall.__dict__[field].__set__ for field in ("name", "arguments", "id")
)


def read_known_call(text: str, known: Any) -> tuple[str, dict[str, Any]] | None:
    """``(name, arguments)`` when ``text`` is exactly one canonical MCS call whose name is,
    as written, one of ``known`` (a dict of names, as drivers pass them), and nothing in the
    text can be a placeholder or a think tag (no ``<``, no ``?``); ``None`` for any other
    text, which :func:`read_other_calls` then reads. Never raises.

    The call :func:`parse_tool_calls` returns for such a text (:func:`_canonical_text`,
    :func:`canonical_call`, :meth:`_Names.finish_explicit`), found in one frame: a name that
    is an identifier needs no cleaning, a known name resolves to itself, and without ``<``
    or ``?`` the placeholder check has nothing to look at. pydantic's JSON reader decoded
    the arguments, so every string and key in them is valid Unicode text (it refuses lone
    surrogates, escaped or raw).
    """
    # "\\" first: one character is found by memchr, "\\_" by a slower two-character search (most
    # texts have no backslash at all, so the second scan runs only when the first finds one).
    if type(known) is not dict or not text.startswith(_CANONICAL_STARTS) or len(text) > MAX_INPUT_CHARS \
            or "<" in text or "?" in text or ("\\" in text and "\\_" in text):
        return None  # (the name first, as models and json.dumps write it: other JSON is not read twice)
    try:
        value = pydantic_core.from_json(text)
        if type(value) is not dict or len(value) != 2 or "arguments" not in value:
            return None
        name = value.get("tool", value.get("name"))
        arguments = value["arguments"]
        if type(name) is not str or type(arguments) is not dict or name not in known \
                or ("properties" in arguments and looks_like_schema(arguments)):  # (no "properties": not a schema)
            return None
    except Exception:  # ValueError, TypeError: not JSON, or an unpaired surrogate that cannot be UTF-8
        return None
    if name not in _PLAIN_NAMES:  # the checks below look at the name alone: a name they passed passes again
        if not name.isidentifier() or len(name) > MAX_NAME_LENGTH or name.lower() in _NOT_CALLS:
            return None
        if len(_PLAIN_NAMES) >= _PLAIN_NAMES_KEPT:
            _PLAIN_NAMES.clear()
        _PLAIN_NAMES.add(name)
    return name, arguments


def _known_canonical_call(text: str, known: Any) -> ToolCall | None:
    """:func:`read_known_call` as a :class:`ToolCall`, built without the frozen dataclass's
    ``__init__`` (the same object: its fields are slots)."""
    found = read_known_call(text, known)
    if found is None:
        return None
    call: ToolCall = _new_object(ToolCall)
    _set_call_name(call, found[0])
    _set_call_arguments(call, found[1])
    _set_call_id(call, None)
    return call


def _parse(response: Any, names: _Names) -> list[ToolCall]:
    data = response if type(response) is str else _as_data(response)
    if isinstance(data, (bytes, bytearray, memoryview)):
        data = bytes(data[:MAX_INPUT_CHARS]).decode("utf-8", "replace")
    if isinstance(data, str):
        fast = _canonical_text(data)
        if fast is not None:
            return names.finish_explicit(fast)
        return names.finish(read_text(data[:MAX_INPUT_CHARS], names.keep))
    if not isinstance(data, (dict, list)):
        return []
    found, strings = from_data(data)
    calls = names.finish(found)
    if calls:
        return calls
    for text in strings[:64]:  # message text with no structured call: a text-mode model
        calls.extend(names.finish(read_text(text[:MAX_INPUT_CHARS], names.keep)))
    return calls


def parse_tool_calls(
    llm_response: Any, *, known_names: Collection[str] | Mapping[str, Any] | None = None
) -> list[ToolCall]:
    """Every tool call in ``llm_response``, in order; ``[]`` when there is none.

    ``llm_response`` may be text, bytes (decoded as UTF-8, bad bytes replaced), a
    provider message or completion as dicts and lists, or an SDK object with
    ``model_dump()``. ``known_names`` (the tool names the caller offers) enables the
    guessed formats and maps sanitised names back; given as a mapping of each name to
    its input JSON Schema, it also names positional arguments (``f(4, 5)``) when the
    schema allows one reading. See the module docstring for the exact rules. Arguments are always a dict; ``id`` is the provider's call id when the
    format has one. Never raises.
    """
    return read_tool_calls(llm_response, known_names)[0]


def read_tool_calls(
    llm_response: Any, known_names: Collection[str] | Mapping[str, Any] | None = None
) -> tuple[list[ToolCall], bool]:
    """:func:`parse_tool_calls`, and whether its answer is the one canonical call of a
    known name whose arguments pydantic's JSON reader decoded from the text: then every
    string and key in them is valid Unicode text (the reader refuses lone surrogates,
    escaped or raw), so a validator need not look for one again. Never raises."""
    if type(llm_response) is str:
        call = _known_canonical_call(llm_response, known_names)
        if call is not None:
            return [call], True
    return read_other_calls(llm_response, known_names), False


def read_other_calls(
    llm_response: Any, known_names: Collection[str] | Mapping[str, Any] | None = None
) -> list[ToolCall]:
    """:func:`parse_tool_calls` of a response that is not a text :func:`read_known_call`
    reads (a caller that tried it first). Never raises."""
    try:
        return _parse(llm_response, _Names(known_names))
    except Exception:  # the contract is "never raises": a parser bug must not crash an agent
        return []
    finally:
        if PARSES:  # the slices its checks asked for more than once were parsed once
            forget_parses()
