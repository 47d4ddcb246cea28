"""Calls in raw model text: tagged formats, fences, JSON and pythonic calls in prose.

Order of attempts (the first that yields a kept call wins):

1. The whole text is JSON (or a damaged JSON literal): read as data
   (:mod:`mcs.parsing.structured`).
2. The whole text is pythonic calls (:mod:`mcs.parsing.pythonic`).
3. A tagged format whose marker is present: Hermes/Qwen ``<tool_call>`` (JSON, the
   Qwen3-Coder ``<function=..><parameter=..>`` XML or GLM-4.5 ``<arg_key>`` XML inside;
   closing tag optional), Llama ``<|python_tag|>`` and ``<function=name>{json}``,
   Mistral ``[TOOL_CALLS]`` (JSON list or ``name[ARGS]{json}``), gpt-oss Harmony
   ``to=functions.name ... <|message|>{json}``, DeepSeek and Kimi K2 special tokens
   (full-width or ASCII), MiniMax/Step3 ``<invoke name=..>``, FunctionGemma and Gemma 4
   ``call:name{key:<escape>v<escape>}``, functionary ``>>>name\\n{json}``, ReAct
   ``Action:``/``Action Input:``.
4. Code fences, every one of them, any language tag; an unclosed last fence runs to
   the end of the text.
5. A scan of the text for balanced JSON values and ``name(...)`` calls, in order of
   position (Granite ``<function_call>``, InternLM, Phi-4 ``<|tool_call|>``,
   ``<|im_start|>`` used as a wrapper, and calls before or after prose land here).
6. GLM-4's bare ``name\\n{json}`` (a guessed name: kept only when known).

Reasoning up to the last ``</think>`` is dropped first (Qwen3, DeepSeek-R1, QwQ draft
calls there that they may not make), reasoning written the other ways is blanked
(:data:`_REASONING`), and markdown-escaped underscores (``calc\\_area``) are unescaped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from itertools import islice
from typing import Any, Final

from mcs.parsing._common import (
    EXPLICIT,
    GUESSED,
    WEAK,
    Found,
    clean_name,
    coerce_arguments,
    looks_like_schema,
    run_end,
    unescape_markdown,
)
from mcs.parsing.issued import (
    Layout,
    comment_takes_back,
    has_placeholder,
    holds_no_call,
    mask_unspoken,
)
from mcs.parsing.jsonspans import (
    MAX_CANDIDATES,
    MISSING,
    BracketIndex,
    decode_at,
    loads_lenient,
)
from mcs.parsing.pythonic import CALL_START, NAME_RUN, call_at, parse_whole
from mcs.parsing.structured import from_data

Keep = Callable[[list[Found]], list[Found]]
"""Drops the calls the caller would not keep (unknown guessed names); see ``mcs.parsing``."""

MAX_DEPTH: Final = 3
_FULLWIDTH_BAR: Final = "\uff5c"  # DeepSeek writes its special tokens with U+FF5C and U+2581
_FULLWIDTH_TOKEN: Final = re.compile("<\uff5c([^\uff5c<>\n]{1,48})\uff5c>")
_NAME_LINE: Final = re.compile(r"\s*([A-Za-z_][\w.\-]*)[ \t]*\r?\n\s*(?=[{\[])")


# ------------------------------------------------------------------ helpers


def _json_after(text: str, position: int, index: BracketIndex | None = None) -> tuple[Any, int] | None:
    """The JSON value at the first ``{``/``[`` at or after ``position`` (spaces/fences between)."""
    length = len(text)
    while position < length and text[position] in " \t\r\n`":
        position += 1
    if text.startswith("json", position):
        position += 4
        while position < length and text[position] in " \t\r\n":
            position += 1
    if position >= length or text[position] not in "{[":
        return None
    return decode_at(text, position, index or BracketIndex(text))


def _args_after(
    text: str, position: int, index: BracketIndex | None = None
) -> tuple[dict[str, Any], int] | None:
    """Arguments as the JSON object at or after ``position``; pass ``index`` when reading
    the same text repeatedly so brackets are paired once."""
    decoded = _json_after(text, position, index)
    if decoded is None:
        return None
    arguments = coerce_arguments(decoded[0])
    if arguments is None or looks_like_schema(arguments):
        return None
    return arguments, decoded[1]


def _segments(text: str, opener: str, closers: tuple[str, ...]) -> Iterator[str]:
    """Bodies after each ``opener``, each ending at a closer, the next opener or the end."""
    position = text.find(opener)
    for _ in range(MAX_CANDIDATES):
        if position == -1:
            return
        start = position + len(opener)
        following = text.find(opener, start)
        end = len(text) if following == -1 else following
        for closer in closers:
            found = text.find(closer, start, end)
            if found != -1:
                end = found
        yield text[start:end]
        position = following


# A value left open before a point: GLM-4.5's `<arg_value>`, Qwen3-Coder's `<parameter=k>`.
_OPEN_VALUE: Final = (("<arg_value>", ("</arg_value>",)), ("<parameter=", ("</parameter>", "</function>")))


def _call_bodies(text: str, opener: str, closers: tuple[str, ...]) -> Iterator[str]:
    """:func:`_segments` for tagged calls, whose values are not escaped: an opener inside
    the call's value (a JSON string, an ``<arg_value>`` or ``<parameter=k>`` not yet
    closed) is the value's text and ends nothing. A value that quotes a page holding
    ``<tool_call>...`` is not a second call (the formats' own parsers read a body to its
    first closer, as here)."""
    index: BracketIndex | None = None
    position = text.find(opener)
    for _ in range(MAX_CANDIDATES):
        if position == -1:
            return
        start = position + len(opener)
        head = start
        while head < len(text) and text[head] in " \t\r\n":
            head += 1
        if head < len(text) and text[head] in "{[":
            index = index or BracketIndex(text)
            decoded = decode_at(text, head, index)
            if decoded is not None:
                head = decoded[1]  # whatever the JSON value holds is inside it
        ends = [found for closer in closers if (found := text.find(closer, head)) != -1]
        end = min(ends, default=len(text))
        following = text.find(opener, head, end)
        if following != -1 and not _value_open(text[start:following]):
            end = following
        yield text[start:end]
        position = text.find(opener, end)


def _value_open(body: str) -> bool:
    """Whether ``body`` ends inside a value it opened (see :data:`_OPEN_VALUE`)."""
    for value_opener, value_closers in _OPEN_VALUE:
        opened = body.rfind(value_opener)
        if opened != -1 and all(body.find(closer, opened) == -1 for closer in value_closers):
            return True
    return False


def _body(text: str) -> list[Found]:
    """Calls in the body of an explicit tag: JSON, pythonic or JSON found by scanning."""
    stripped = text.strip()
    if not stripped:
        return []
    if stripped[0] in "{[":
        value = loads_lenient(stripped)
        if value is not MISSING:
            found, _ = from_data(value)
            if found:
                return found
    whole = parse_whole(stripped)
    if whole:
        return whole
    return _scan(stripped)


# ------------------------------------------------------------------ tagged formats

_XML_PARAMETER: Final = re.compile(
    r"<parameter=([^>\n]{1,200})>\r?\n?(.*?)\r?\n?(?:</parameter>|(?=<parameter=)|(?=</function>)|\Z)",
    re.DOTALL,
)
_FUNCTION_TAG: Final = re.compile(r"<function=([^>\n]{1,256})>")
_GLM_ARGS: Final = re.compile(r"<arg_key>([^<]{0,200})</arg_key>\s*<arg_value>(.*?)(?:</arg_value>|\Z)", re.DOTALL)


def _function_tags(text: str) -> list[Found]:
    """Llama ``<function=f>{json}</function>`` and Qwen3-Coder ``<parameter=k>v`` XML.

    A call's body runs to its ``</function>`` (to the end of the text when none follows),
    or to the end of its JSON object: a ``<function=`` tag inside it is a value's text, as
    these formats do not escape values (a page quoted in ``<parameter=body>`` holding
    ``<function=delete_repo>`` is not a second call).
    """
    found: list[Found] = []
    index = BracketIndex(text)
    position = 0
    for _ in range(MAX_CANDIDATES):
        tag = _FUNCTION_TAG.search(text, position)
        if tag is None:
            break
        name = clean_name(tag.group(1))
        parsed = _args_after(text, tag.end(), index)  # (a `</function>` in a JSON string closes nothing)
        if parsed is not None:
            position = parsed[1]
            if name is not None:
                found.append(Found(name, parsed[0]))
            continue
        closing = text.find("</function>", tag.end())
        end = len(text) if closing == -1 else closing
        body = text[tag.end() : end]
        position = end
        if "<parameter=" in body:
            if name is not None:
                found.append(Found(name, {key.strip(): value for key, value in _XML_PARAMETER.findall(body)}))
            continue
        following = _FUNCTION_TAG.search(text, tag.end(), end)
        if following is not None:
            position = following.start()
        if name is not None and not text[tag.end() : position].strip():
            found.append(Found(name, {}))
    return found


def _glm_xml(body: str) -> Found | None:
    """GLM-4.5 ``name\\n<arg_key>k</arg_key><arg_value>v</arg_value>`` (values stay text)."""
    head = body.split("<arg_key>", 1)[0]
    name = clean_name(head)
    if name is None:
        return None
    return Found(name, {key.strip(): value for key, value in _GLM_ARGS.findall(body)})


def _tool_call_tags(text: str, depth: int, opener: str = "<tool_call>") -> list[Found]:
    found: list[Found] = []
    closers = ("</tool_call>", "<|/tool_call|>", "<tool_call|>")
    for body in _call_bodies(text, opener, closers):
        if "<function=" in body:
            found.extend(_function_tags(body))
        elif "<arg_key>" in body:
            glm = _glm_xml(body)
            if glm is not None:
                found.append(glm)
        else:
            calls = _body(body)
            if not calls:
                named = _NAME_LINE.match(body)  # `<tool_call>name\n{json}` (GLM-4 inside a tag)
                if named is not None:
                    parsed = _args_after(body, named.end())
                    name = clean_name(named.group(1))
                    if parsed is not None and name is not None:
                        calls = [Found(name, parsed[0])]
            found.extend(calls)
    return found


def _mistral(text: str, depth: int) -> list[Found]:
    found: list[Found] = []
    for body in _segments(text, "[TOOL_CALLS]", ("</s>",)):
        stripped = body.strip()
        if not stripped:
            continue
        if stripped[0] in "[{":
            found.extend(_body(stripped))
            continue
        marker = stripped.find("[ARGS]")
        if marker != -1:
            name = clean_name(stripped[:marker].split("[CALL_ID]", 1)[0])
            parsed = _args_after(stripped, marker + len("[ARGS]"))
        else:
            named = re.match(r"([A-Za-z_][\w.\-]*)\s*(?=\{)", stripped)
            if named is None:
                continue
            name = clean_name(named.group(1))
            parsed = _args_after(stripped, named.end())
        if name is not None and parsed is not None:
            found.append(Found(name, parsed[0]))
    return found


def _python_tag(text: str, depth: int) -> list[Found]:
    found: list[Found] = []
    for body in _segments(text, "<|python_tag|>", ("<|eom_id|>", "<|eot_id|>")):
        for call in _body(body):
            if call.name.endswith(".call"):  # built-in tools: brave_search.call(query=...)
                call.name = call.name[: -len(".call")]
            call.confidence = EXPLICIT
            found.append(call)
    return found


_HARMONY: Final = re.compile(r"to=([\w.\-:/]{1,256})")


def _harmony(text: str, depth: int) -> list[Found]:
    """gpt-oss: ``to=functions.f <|constrain|>json<|message|>{...}<|call|>``."""
    found: list[Found] = []
    index = BracketIndex(text)
    for recipient in islice(_HARMONY.finditer(text), MAX_CANDIDATES):
        name = recipient.group(1)
        if "." not in name:  # `to=assistant` carries a tool's result back, not a call
            continue
        following = text.find("<|start|>", recipient.end())
        message = text.find("<|message|>", recipient.end(), len(text) if following == -1 else following)
        if message == -1:
            continue
        name = name[len("functions.") :] if name.startswith("functions.") else name
        clean = clean_name(name)
        parsed = _args_after(text, message + len("<|message|>"), index)
        if clean is not None and parsed is not None:
            found.append(Found(clean, parsed[0]))
    return found


def _special_tokens(text: str, depth: int) -> list[Found]:
    """DeepSeek V3/V3.1 and Kimi K2 frames (full-width tokens already made ASCII)."""
    found: list[Found] = []
    for body in _segments(text, "<|tool_call_begin|>", ("<|tool_call_end|>",)):
        if "<|tool_call_argument_begin|>" in body:  # Kimi: functions.get_weather:0
            call_id, _, rest = body.partition("<|tool_call_argument_begin|>")
            call_id = call_id.strip()
            name = call_id[len("functions.") :] if call_id.startswith("functions.") else call_id
            name = re.sub(r":\d+$", "", name)
            clean = clean_name(name)
            parsed = _args_after(rest, 0)
            if clean is not None and parsed is not None:
                found.append(Found(clean, parsed[0], call_id or None))
        elif "<|tool_sep|>" in body:
            head, _, rest = body.partition("<|tool_sep|>")
            if "invoke name=" in rest:  # StepFun Step-3
                found.extend(_invokes(rest))
                continue
            if head.strip() == "function":  # V3: type, sep, name, newline, fenced JSON
                name_text, _, rest = rest.strip().partition("\n")
            else:  # V3.1: name, sep, JSON
                name_text = head
            clean = clean_name(name_text)
            parsed = _args_after(rest, 0)
            if clean is not None and parsed is not None:
                found.append(Found(clean, parsed[0]))
    return found


_INVOKE: Final = re.compile(r"<(?:\w+:)?invoke\s+name=[\"']([^\"'>\n]{1,256})[\"']\s*>")
_INVOKE_PARAMETER: Final = re.compile(
    r"<(?:\w+:)?parameter\s+name=[\"']([^\"'>\n]{1,200})[\"']\s*>(.*?)(?:</(?:\w+:)?parameter>|\Z)",
    re.DOTALL,
)


_INVOKE_CLOSER: Final = re.compile(r"</(?:\w+:)?invoke\s*>")
# A parameter opened and not closed before the end of the span searched.
_INVOKE_VALUE_OPEN: Final = re.compile(r"<(?:\w+:)?parameter\s+name=[^>\n]*>(?:(?!</(?:\w+:)?parameter>).)*\Z", re.DOTALL)


def _invokes(text: str, depth: int = 0) -> list[Found]:
    """MiniMax-M2 / Step-3 ``<invoke name="f"><parameter name="k">v</parameter></invoke>``."""
    found: list[Found] = []
    position = 0
    for _ in range(MAX_CANDIDATES):
        tag = _INVOKE.search(text, position)
        if tag is None:
            break
        # The body runs to its `</invoke>`, or to the next invoke outside a value when the model
        # left it unclosed: an `<invoke` inside a parameter's value is its text (not escaped).
        closing = _INVOKE_CLOSER.search(text, tag.end())
        end = position = len(text) if closing is None else closing.start()
        for following in islice(_INVOKE.finditer(text, tag.end(), end), MAX_CANDIDATES):
            if not _INVOKE_VALUE_OPEN.search(text, tag.end(), following.start()):
                end = position = following.start()
                break
        name = clean_name(tag.group(1))
        if name is not None:
            body = text[tag.end() : end]
            found.append(Found(name, {k.strip(): v.strip() for k, v in _INVOKE_PARAMETER.findall(body)}))
    return found


_FUNCTIONARY: Final = re.compile(r">>>\s*([A-Za-z_][\w.\-]*)[ \t]*\r?\n?")


def _functionary(text: str, depth: int) -> list[Found]:
    found: list[Found] = []
    index = BracketIndex(text)
    for header in islice(_FUNCTIONARY.finditer(text), MAX_CANDIDATES):
        if header.group(1) == "all":  # `>>>all` carries text for the user
            continue
        parsed = _args_after(text, header.end(), index)
        name = clean_name(header.group(1))
        if parsed is not None and name is not None:
            found.append(Found(name, parsed[0]))
    return found


_REACT: Final = re.compile(r"Action\s*\d*\s*:[ \t]*([^\n]{0,300}?)[ \t]*\r?\n\s*Action\s*\d*\s*Input\s*\d*\s*:[ \t]*")
_IDENTIFIER: Final = re.compile(r"[A-Za-z_][\w.\-]*")


def _react(text: str, depth: int) -> list[Found]:
    """``Action: name`` then ``Action Input: {json}`` (LangChain/CrewAI ReAct)."""
    found: list[Found] = []
    index = BracketIndex(text)
    for action in islice(_REACT.finditer(text), MAX_CANDIDATES):
        parsed = _args_after(text, action.end(), index)
        if parsed is None:
            line_end = text.find("\n", action.end())
            rest = text[action.end() : len(text) if line_end == -1 else line_end].strip()
            if rest.lower() not in ("", "none", "{}", "null"):
                continue  # free text: no argument name to put it under
            parsed = ({}, action.end())
        raw = action.group(1).strip().strip("`*'\"")
        name = clean_name(raw)
        if name is None or name.lower() in ("final answer", "none"):
            continue
        if _IDENTIFIER.fullmatch(name):
            found.append(Found(name, parsed[0]))
        else:  # prose: "I will use get_weather" — the name is guessed from the words
            for word in _IDENTIFIER.findall(name):
                found.append(Found(word, parsed[0], None, GUESSED))
    return found


_GEMMA_CALL: Final = re.compile(r"call:([A-Za-z_][\w.\-]{0,255})\{")
_GEMMA_STRING: Final = re.compile(r"<escape>(.*?)<escape>|<\|\"\|>(.*?)<\|\"\|>", re.DOTALL)
_BARE_KEY: Final = re.compile(r"""("(?:[^"\\\n]|\\.)*")|([{,]\s*)([A-Za-z_][\w\-]*)\s*:""")
_GEMMA_ENDS: Final = ("<end_function_call>", "<tool_call|>", "call:")


def _gemma(text: str, depth: int) -> list[Found]:
    """FunctionGemma / Gemma 4: ``call:f{location:<escape>London<escape>,days:3}``."""
    found: list[Found] = []
    ends = dict.fromkeys(_GEMMA_ENDS, -1)  # next position of each end marker, found once
    for call in islice(_GEMMA_CALL.finditer(text), MAX_CANDIDATES):
        start = call.end() - 1
        end = len(text)
        for marker, position in ends.items():
            if position != len(text) and position < call.end():
                position = text.find(marker, call.end())
                ends[marker] = len(text) if position == -1 else position
            end = min(end, ends[marker])
        body = text[start:end]
        body = _GEMMA_STRING.sub(lambda m: json.dumps(m.group(1) if m.group(1) is not None else m.group(2)), body)
        body = _BARE_KEY.sub(lambda m: m.group(1) or f'{m.group(2)}"{m.group(3)}":', body)
        body = body[: body.rfind("}") + 1]
        arguments = coerce_arguments(body) if body else None
        name = clean_name(call.group(1))
        if arguments is not None and name is not None:
            found.append(Found(name, arguments))
    return found


def _tool_call_special(text: str, depth: int) -> list[Found]:
    return _tool_call_tags(text, depth, "<|tool_call|>")


def _tool_call_plain(text: str, depth: int) -> list[Found]:
    return _tool_call_tags(text, depth)


def _function_tag_reader(text: str, depth: int) -> list[Found]:
    return _function_tags(text)


# Marker substring -> reader; a reader runs only when its marker is in the text.
_TAGGED: Final[tuple[tuple[str, Callable[[str, int], list[Found]]], ...]] = (
    ("<tool_call>", _tool_call_plain),
    ("<|tool_call|>", _tool_call_special),
    ("[TOOL_CALLS]", _mistral),
    ("<|python_tag|>", _python_tag),
    ("<function=", _function_tag_reader),
    ("<|tool_call_begin|>", _special_tokens),
    ("<|message|>", _harmony),
    ("invoke name=", _invokes),
    ("call:", _gemma),
    (">>>", _functionary),
    ("Action", _react),
)


# ------------------------------------------------------------------ fences and scanning


def _scan_spans(
    text: str, admit: Callable[[int, int], bool] | None = None, refuses: Callable[[str], bool] | None = None
) -> list[tuple[list[Found], int, int, bool]]:
    """Every JSON call value and ``name(...)`` call in ``text`` with its span, in order,
    and whether it is written in a call syntax (a JSON call object, not code).

    ``admit(start, previous_end)``, when given, is asked before a candidate is parsed;
    a candidate it refuses is skipped (its inside is still looked at). A ``name(...)``
    call whose name ``refuses`` refuses may come back without its arguments (see
    :func:`~mcs.parsing.pythonic.call_at`): give it only when such calls are dropped.
    """
    spans: list[tuple[list[Found], int, int, bool]] = []
    index = BracketIndex(text)
    backwards = text[::-1]
    position = 0
    previous_end = 0
    for _ in range(MAX_CANDIDATES):
        candidate = _candidate(text, position, backwards)
        if candidate is None:
            break
        start, paren = candidate
        if admit is not None and not admit(start, previous_end):
            position = (paren if paren != -1 else start) + 1
            continue
        if paren == -1:  # `{` or `[`
            decoded = decode_at(text, start, index)
            if decoded is not None and isinstance(decoded[0], (dict, list)):
                calls, strings = from_data(decoded[0], deep=True)
                explicit = bool(calls) and _all_explicit(calls)
                if not calls and strings and isinstance(decoded[0], list):
                    for string in strings[:MAX_CANDIDATES]:  # ['f(a=1)', ...]
                        calls.extend(parse_whole(string) or [])
                if calls:
                    spans.append((calls, start, decoded[1], explicit))
                    previous_end = decoded[1]
                position = decoded[1]  # everything inside was looked at
                continue
            position = start + 1
        else:
            called = call_at(text, start, paren, index, refuses)
            if called is not None:
                spans.append(([called[0]], start, called[1], False))
                position = previous_end = called[1]
            else:
                position = paren + 1
    return spans


_OPENING: Final = re.compile(r"[\[{(]")
_NAME_FIRST: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
def _candidate(text: str, position: int, backwards: str | None = None) -> tuple[int, int] | None:
    """The next place a call may start at or after ``position``: ``(start, -1)`` for a
    ``{`` or ``[``, ``(name_start, paren)`` for ``name(``. Searching for the brackets and
    looking back for the name is far faster than a regex for ``name(`` over prose.
    ``backwards`` is ``text[::-1]`` when the caller looks at many candidates."""
    search = _OPENING.search
    if backwards is None:
        backwards = text[::-1]
    length = len(text)
    while True:
        found = search(text, position)
        if found is None:
            return None
        at = found.start()
        if text[at] != "(":
            return at, -1
        # text[at - 1] is backwards[length - at]: the name is read from its last character
        start = length - run_end(NAME_RUN, backwards, length - at)
        # The run before `(` is every name character there is: a run without `.` or `-` is
        # one word, which `CALL_START` takes exactly when it starts with an ASCII letter or `_`.
        if start < at and (
            text[start] in _NAME_FIRST if text.find(".", start, at) == -1 and text.find("-", start, at) == -1
            else CALL_START.fullmatch(text, start, at + 1) is not None
        ):
            return start, at
        position = at + 1


def _scan(text: str) -> list[Found]:
    """Every call in ``text`` by shape alone (inside an explicit tag, where the tag says it is a call)."""
    found: list[Found] = []
    for calls, _, _, _ in _scan_spans(text):
        found.extend(call for call in calls if call not in found)
    return found


def _blocks(text: str, layout: Layout, keep: Keep, depth: int) -> list[Found]:
    """Calls that stand as blocks of their own, in order, minus those framed as not issued.

    A fence is one block (unless it holds a program); outside fences, a call counts when
    it stands alone on its lines, and calls with nothing but separators between them
    share one framing. A call's framing never reaches back past the call block before
    it. A call repeated in a later block is the same call restated ("Therefore, the
    final answer is: ...") and is returned once.
    """
    blocks: list[tuple[int, int, list[Found]]] = []  # (position, paragraph, calls)
    fences = layout.fences()
    prose = text
    if fences:
        parts = []
        cursor = 0
        for start, _, _, end in fences:
            parts.append(text[cursor:start])
            parts.append(" " * (end - start))
            cursor = end
        parts.append(text[cursor:])
        prose = "".join(parts)
    # A call the caller would not keep is only a span here (its arguments are never read):
    # `_keepable` refuses it below, and nothing else looks at its arguments.
    refuses = _refuser(keep)
    spans = [span for span in _scan_spans(prose, layout.may_start, refuses) if not layout.unspoken(span[1])]
    if spans and not fences and _nothing_else(text, spans):
        return [call for calls, _, _, _ in spans for call in keep(calls)]  # the response is the calls
    items: list[tuple[int, Any]] = [(fence[0], fence) for fence in fences]
    items.extend((group[0][1], group) for group in _groups(text, spans))
    items.sort(key=lambda item: item[0])
    floor = 0
    # A block right after a framed-out one (nothing but blanks and markup between: "Do not
    # run these:" and two fences) is framed out with it; its own lead-in stops at the first.
    taken_back_until = -1
    bounds = [(span_start, span_end) for _, span_start, span_end, _ in spans]
    numbers = {bound: number for number, bound in enumerate(bounds)}
    fence_reads: dict[tuple[bool, str], list[Found]] = {}
    for _, item in items:
        if isinstance(item, tuple):  # a fence
            start, body_start, body_end, end = item
            body = text[body_start:body_end]
            calls = _fence_calls_once(body, item, layout, keep, depth, fence_reads)
            if not calls:
                continue
            explicit = body.lstrip()[:1] in "{[<" and _all_explicit(calls) and not _PYTHONIC_START.match(body)
            framed = _follows(text, taken_back_until, start) or layout.framed_out(
                start, end, explicit=explicit, names=_names(calls), floor=floor
            )
            if framed:
                taken_back_until = end
            floor = end
            calls = keep(_demote(calls))
            if calls and not framed:
                blocks.append((start, start, calls))
            continue
        group = item
        start, end = group[0][1], group[-1][2]
        group_floor, floor = floor, end
        # The checks are pure, so the cheapest go first: a call the caller would not keep
        # (an unknown name in a program the model pasted) needs no look at its lines, and
        # the framing (the dearest) only matters for a group with a call left standing.
        standing = [
            span for span in group
            if _keepable(span[0], keep)
            and layout.standalone(bounds, numbers[span[1], span[2]], explicit=span[3])
            and not layout.in_code(span[1], span[2])
        ]
        if not standing:
            continue
        every = [call for calls, _, _, _ in group for call in calls]
        explicit = all(span[3] for span in group)
        if _follows(text, taken_back_until, start) or layout.framed_out(
            start, end, explicit=explicit, names=_names(every), floor=group_floor
        ):
            taken_back_until = end
            continue
        for calls, span_start, _, _ in standing:
            kept = keep(calls)
            if kept:
                blocks.append((span_start, text.rfind("\n\n", 0, span_start), kept))
    if len(blocks) < 2:
        return blocks[0][2] if blocks else []
    blocks.sort(key=lambda block: block[0])
    found: list[Found] = []
    earlier: set[str] = set()
    paragraph = blocks[0][1]
    this_block: set[str] = set()
    for _, block, calls in blocks:
        if block != paragraph:
            earlier |= this_block
            this_block = set()
            paragraph = block
        for call in calls:
            key = _call_key(call)
            if key in earlier:
                continue
            this_block.add(key)
            found.append(call)
    return found


def _refuser(keep: Keep) -> Callable[[str], bool]:
    """Whether ``keep`` refuses a call found by shape (``WEAK``) by its name alone
    (:func:`_keepable`), asked once per name."""
    refused: dict[str, bool] = {}

    def refuses(name: str) -> bool:
        if name not in refused:
            refused[name] = not _keepable([Found(name, {}, None, WEAK)], keep)
        return refused[name]

    return refuses


def _keepable(calls: list[Found], keep: Keep) -> bool:
    """Whether ``keep`` may keep any of ``calls``: asked by name alone, on stand-ins.
    ``keep`` changes a call only when it names its positional arguments, and a call whose
    name it refuses is refused whatever its arguments, so ``False`` is exact."""
    return bool(keep([Found(call.name, {}, None, call.confidence) for call in calls]))


_SEPARATION: Final = re.compile(r"(?:[\s,;\[\](){}`'\"*+\u2022-]|\d{1,3}[.)])*")


def _groups(
    text: str, spans: list[tuple[list[Found], int, int, bool]]
) -> list[list[tuple[list[Found], int, int, bool]]]:
    """Spans with nothing but separators between them (no words, no blank line), grouped."""
    groups: list[list[tuple[list[Found], int, int, bool]]] = []
    for span in spans:
        if groups:
            between = text[groups[-1][-1][2] : span[1]]
            # A letter is never a separator, and without `<` or `[` there is no markup to
            # take it away: most spans have words between them, seen without a substitution.
            if "<" in between or "[" in between or _LETTER.search(between) is None:
                between = _MARKUP.sub(" ", between)
            if _SEPARATION.fullmatch(between) and "\n\n" not in between.replace(" ", "").replace("\t", ""):
                groups[-1].append(span)
                continue
        groups.append([span])
    return groups


def _fence_calls_once(
    body: str,
    fence: tuple[int, int, int, int],
    layout: Layout,
    keep: Keep,
    depth: int,
    reads: dict[tuple[bool, str], list[Found]],
) -> list[Found]:
    """:func:`_fence_calls`, read once per body in a text (models restate an answer in
    several fences): a later fence with the same body, tagged as output or not as the first
    one was, gets fresh records of what the first one gave, as the caller changes the
    records it is given."""
    key = (_output_fence(layout, fence), body)
    known = reads.get(key)
    if known is None:
        calls = _fence_calls(body, fence, layout, keep, depth)
        reads[key] = [Found(c.name, c.arguments, c.id, c.confidence, c.positional) for c in calls]
        return calls
    return [Found(c.name, c.arguments, c.id, c.confidence, c.positional) for c in known]


def _fence_calls(
    body: str, fence: tuple[int, int, int, int], layout: Layout, keep: Keep, depth: int
) -> list[Found]:
    """The calls a fence holds: all of its body when that is calls; none when it is a program,
    what a program printed (a fence tagged ``output``, ``log``, ``console``...) or an
    interpreter session (``>>> f(x=1)``)."""
    stripped = body.strip()
    if not stripped:
        return []
    if _output_fence(layout, fence) or _REPL.search(body):
        return []
    whole = parse_whole(stripped) if stripped[0] not in "{<" else None
    if whole is not None:  # nothing but calls: no program
        return [call for call in keep(whole) if "<" not in body or not has_placeholder(call.arguments)]
    if stripped[0] not in "{<" and (layout.holds_program(fence) or holds_no_call(body)):
        return []
    # `parse_whole` already said `stripped` is not pythonic calls: the reader below need not ask again
    return read_text(body, keep, depth + 1, not_pythonic=stripped if stripped[0] not in "{<" else None)


def _output_fence(layout: Layout, fence: tuple[int, int, int, int]) -> bool:
    """Whether the fence's tag says it holds what something printed (:data:`_OUTPUT_FENCES`)."""
    return layout.original[fence[0] + 3 : fence[1]].strip().lower() in _OUTPUT_FENCES


_PYTHONIC_START: Final = re.compile(r"\s*\[\s*[A-Za-z_'\"]")
# Fence tags for what something printed or answered, never for what the model calls.
_OUTPUT_FENCES: Final = frozenset({
    "output", "out", "log", "logs", "stdout", "stderr", "console", "terminal", "shell-session", "result",
    "results", "response", "traceback", "pytb", "pycon",
})
_REPL: Final = re.compile(r"^[ \t]*>>> [A-Za-z_]", re.MULTILINE)  # (functionary's `>>>name` has no space)
_MARKUP: Final = re.compile(r"<[^<>\n]{0,80}>|\[/?[A-Z_]{3,20}\]")
_NOT_ONLY_CALLS: Final = re.compile("[^\\W_]|\\?|[\u274c\u26d4\U0001f6ab\u2716]")  # (❌ ⛔ 🚫 ✖: not to do)


def _nothing_else(text: str, spans: list[tuple[list[Found], int, int, bool]]) -> bool:
    """Whether ``text`` holds nothing but these calls, tags and punctuation (a question
    mark asks about the calls: ``delete_repo(name='prod')?``; a cross marks one not to make)."""
    cursor = 0
    for _, start, end, _ in spans:
        if _NOT_ONLY_CALLS.search(_MARKUP.sub(" ", text[cursor:start])):
            return False
        cursor = end
    return not _NOT_ONLY_CALLS.search(_MARKUP.sub(" ", text[cursor:]))


_DOUBLE_QUOTED: Final = re.compile(r'"[^"\n]*"')
_LETTER: Final = re.compile(r"[^\W\d_]")


def _follows(text: str, previous_end: int, start: int) -> bool:
    """Whether ``start`` follows ``previous_end`` (``-1``: nothing) with only blanks,
    markup and punctuation between."""
    return 0 <= previous_end <= start and _LETTER.search(_MARKUP.sub(" ", text[previous_end:start])) is None


def _plainly_next(text: str, previous: int, position: int) -> bool:
    """Whether a format marker at ``position`` starts its line and only the previous
    call's content (JSON, tags) lies between it and the marker before (ending at
    ``previous``): nothing can quote, comment or frame it."""
    line_start = text.rfind("\n", 0, position) + 1
    if text[line_start:position].strip() or "<!--" in text:
        return False
    between = _MARKUP.sub(" ", _DOUBLE_QUOTED.sub(" ", text[previous:line_start]))
    return _LETTER.search(between) is None


def _names(calls: list[Found]) -> tuple[str, ...]:
    return tuple({call.name.rsplit(".", 1)[-1] for call in calls})


def _all_explicit(calls: list[Found]) -> bool:
    return all(call.confidence == EXPLICIT for call in calls)


def _call_key(call: Found) -> str:
    return call.name + json.dumps(call.arguments, sort_keys=True, default=str)


# A name starts after a non-name character, or after a dot that follows punctuation
# (`...}.db_fetch_records`); never inside a dotted run, so the scan stays linear.
_NAME_BEFORE_JSON: Final = re.compile(r"(?:(?<![\w.\-])|(?<=[^\w\s]\.))([A-Za-z_][\w.\-]*)[ \t]*\r?\n\s*(?=\{)")


_BLANKS: Final = re.compile(r"\s*")


def _names_before_json(text: str) -> Iterator[re.Match[str]]:
    """``_NAME_BEFORE_JSON.finditer(text)``, looked for only on the lines whose name could
    lead to a ``{``: a match's name ends its line, and only blanks lie between its newline
    and the brace, so the newline is the first of the blanks right before a ``{``. Each
    run of blanks is read once (a search from every newline would read a long run of
    empty lines once per line)."""
    backwards: str | None = None
    length = len(text)
    resume = 0  # where the whole-text search would go on from
    brace = text.find("{")
    while brace != -1:
        newline = -1
        if brace and text[brace - 1].isspace():  # `\s` is `str.isspace`
            if backwards is None:
                backwards = text[::-1]
            newline = text.find("\n", length - run_end(_BLANKS, backwards, length - brace), brace)
        if newline != -1:
            low = max(resume, text.rfind("\n", 0, newline) + 1)
            named = _NAME_BEFORE_JSON.search(text, low, brace + 1) if low <= newline else None
            if named is not None and named.start() < newline:
                resume = named.end()
                yield named
        brace = text.find("{", brace + 1)


def _glm_bare(text: str, layout: Layout) -> list[Found]:
    """GLM-4 ``name\\n{json}``, at the start or after prose (the name is a guess), when
    the model issued it: not in unspoken text, not framed out (negated, an example,
    quoted...), like any call found by shape; in a fence, the fence's framing counts."""
    found: list[Found] = []
    index = BracketIndex(text)
    floor = 0
    for named in islice(_names_before_json(text), MAX_CANDIDATES):
        parsed = _args_after(text, named.end(), index)
        name = clean_name(named.group(1))
        if parsed is None or name is None:
            continue
        start, end = named.start(1), parsed[1]
        fence = layout.fence_at(start)
        if layout.unspoken(start) or layout.framed_out(
            start if fence is None else fence[0], end if fence is None else fence[3], names=(name,), floor=floor,
            sentences=1,  # GLM glues the name to its preamble ("...with these parameters.name"): its last sentence
        ):
            floor = end
            continue
        floor = end
        found.append(Found(name, parsed[0], None, GUESSED))
    return found


# ------------------------------------------------------------------ entry point


def _demote(found: list[Found]) -> list[Found]:
    """Code in a fence may be an example rather than a call: explicit becomes weak."""
    for call in found:
        if call.confidence == EXPLICIT:
            call.confidence = WEAK
    return found


# Reasoning in the other ways models write it, each unclosed to the end of the text (an
# answer cut off while thinking): <think> (left open), <thinking>, <reasoning>, <thought>,
# Seed's <seed:think>, Magistral's [THINK], Kimi's ◁think▷, OpenThoughts' begin_of_thought,
# and gpt-oss Harmony's analysis channel (its calls go on the commentary channel).
# A tagged kind runs to the *last* closer of its kind (greedy), as `</think>` does: reasoning
# can quote a page that holds the closer and a call after it, so the first closer may be the
# page's; only the last one is surely the model's.
_REASONING: Final = re.compile(
    r"<(think|thinking|reasoning|thought|seed:think)>(?:.*</\1>|.*)|"
    r"\[THINK\](?:.*\[/THINK\]|.*)|"
    "\u25c1think\u25b7(?:.*\u25c1/think\u25b7|.*)|"
    r"<\|begin_of_thought\|>(?:.*<\|end_of_thought\|>|.*)|"
    r"<\|channel\|>analysis<\|message\|>.*?(?=<\|end\|>|<\|start\|>|\Z)",
    re.DOTALL,
)
_REASONING_ANGLED: Final = ("<think", "<reasoning>", "<thought>", "<seed:think>", "<|begin_of_thought|>",
                            "<|channel|>analysis")


def without_reasoning(text: str) -> str:
    """``text`` after its last ``</think>``, other reasoning blanked (:data:`_REASONING`):
    reasoning drafts calls the model may not make, only the answer counts.

    A ``</think>`` in text the model did not say (a page it quotes or echoes, found as
    :func:`~mcs.parsing.issued.mask_unspoken` finds it) ends nothing: cut there, the answer
    would lose the opener of the quotation and the page's call after it would be read as
    the model's. When every ``</think>`` is in such text, none ends reasoning.
    """
    thought_end = _reasoning_end(text)
    if thought_end != -1:
        text = text[thought_end + len("</think>") :]
    # (most texts have no `<`: one look for it spares a look for each angled marker)
    if ("<" in text and any(marker in text for marker in _REASONING_ANGLED)) or "THINK]" in text \
            or "\u25c1think" in text:
        text = _REASONING.sub(_blank_reasoning, text)
    return text


def _reasoning_end(text: str) -> int:
    """Where the last ``</think>`` the model said starts (see :func:`without_reasoning`)."""
    last = text.rfind("</think>")
    if last == -1:
        return -1
    masked = mask_unspoken(text)  # same length: a blanked `<` is a quoted closer
    position = last
    while position != -1 and masked[position] != "<":
        position = text.rfind("</think>", 0, position)
    return position


def _blank_reasoning(match: re.Match[str]) -> str:
    """A reasoning region as blanks, its line breaks kept (what follows keeps its lines)."""
    return re.sub(r"[^\n]", " ", match.group(0))


def _normalise_tokens(text: str) -> str:
    """DeepSeek's full-width ``<\uff5ctool\u2581call\u2581begin\uff5c>`` becomes ``<|tool_call_begin|>``."""
    return _FULLWIDTH_TOKEN.sub(lambda m: "<|" + m.group(1).replace("\u2581", "_") + "|>", text)


def read_text(text: str, keep: Keep, depth: int = 0, not_pythonic: str | None = None) -> list[Found]:
    """The calls in ``text`` that ``keep`` keeps, from the first strategy that yields any.

    A call whose arguments are placeholders to fill in (``<city_name>``) is a template,
    not a call, and is left out. ``not_pythonic`` is a text the caller already found is
    not pythonic calls (a fence's body): it is not read as such again.
    """
    calls = _read_text(text, keep, depth, not_pythonic)
    if "<" in text or "?" in text:  # no placeholder can be written without one of these
        calls = [call for call in calls if not has_placeholder(call.arguments)]
    return calls


def _read_text(text: str, keep: Keep, depth: int, not_pythonic: str | None = None) -> list[Found]:
    if depth > MAX_DEPTH:
        return []
    text = unescape_markdown(without_reasoning(text))
    stripped = text.strip()
    if not stripped:
        return []
    first = stripped[0]
    second = stripped[1:].lstrip()[:1]
    pythonic_first = first == "[" and (second.isalpha() or second == "_")
    if first in "{[" and not pythonic_first:
        value = loads_lenient(stripped)
        if value is not MISSING:
            calls, strings = from_data(value)
            if not calls:
                for string in strings[:MAX_CANDIDATES]:
                    calls.extend(read_text(string, keep, depth + 1) if depth < MAX_DEPTH else [])
            calls = keep(calls)
            if calls:
                return calls
    if (first == "[" or first.isalpha() or first == "_") and stripped != not_pythonic:
        calls = keep(parse_whole(stripped) or [])
        if calls and not (("#" in stripped or "//" in stripped) and comment_takes_back(stripped)):
            return calls
    if _FULLWIDTH_BAR in text:
        text = _normalise_tokens(text)
    layout = Layout(text)  # where quotes, comments and code are (docs: "issued, not mentioned")
    armed = None
    # Six markers start with `<`, four of them with `<|`: a text without those is not
    # searched for each of them (a search reads the whole text).
    angle = "<" in text
    pipe = angle and "<|" in text
    for marker, reader in _TAGGED:
        if (marker[0] == "<" and not (pipe if marker[1] == "|" else angle)) or marker not in text:
            continue
        calls = keep(reader(text, depth))
        if calls:  # framing is only looked at when it matters
            armed = _disarm(text, layout, marker)
            if armed is text:
                return calls
            calls = keep(reader(armed, depth)) if marker in armed else []
            if calls:
                return calls
    calls = _blocks(text, layout, keep, depth)
    if calls:
        return calls
    return keep(_glm_bare(text, layout))


def _disarm(text: str, layout: Layout, marker: str) -> str:
    """``text`` with the ``marker`` occurrences blanked that are unspoken, sit in a program
    fence or are framed as not issued (negated, quoted, an example), so the marker's
    reader does not see them; ``text`` itself when there is none."""
    out: list[str] | None = None
    position = text.find(marker)
    previous = 0
    disarm = False
    for number in range(MAX_CANDIDATES):  # the readers look at no more than this either
        if position == -1:
            break
        if number == 0 and not text[:position].strip():
            disarm = False  # the response opens with it: nothing leads in or quotes it
        elif layout.unspoken(position):
            # before the check below: a tool's result echoed right after a call holds no
            # letters that frame it (`<tool_response>` is markup), yet its calls are not made
            disarm = True
        elif number > 0 and _plainly_next(text, previous, position):
            pass  # right after the one before, at the start of its line: framed as that one is
        elif (fence := layout.fence_at(position)) is not None:
            disarm = layout.holds_program(fence) or layout.framed_out(fence[0], fence[3], explicit=True)
        else:
            disarm = layout.framed_out(
                position, position + len(marker), explicit=True, follow=False, floor=previous
            )
        previous = position + len(marker)
        if disarm:
            if out is None:
                out = list(text)
            out[position : position + len(marker)] = " " * len(marker)
        position = text.find(marker, position + len(marker))
    return text if out is None else "".join(out)


__all__ = ["Keep", "read_text", "without_reasoning"]
