"""Balanced JSON spans in free text, and repair of the damage models do to JSON.

Nothing here uses a greedy ``{.*}`` regex. A span is decoded with
``json.JSONDecoder.raw_decode`` from a candidate ``{`` or ``[``, which stops at the end
of the value or at the first error, so a failed attempt costs only the prefix it read.
When strict JSON fails, the span's end comes from one linear pass that pairs brackets
(:class:`BracketIndex`), and the slice is read as a Python literal
(``ast.literal_eval``: single quotes, ``True``/``None``, trailing commas), then again
with JSON's ``true``/``false``/``null`` swapped in. ``eval`` is never used.

Work is bounded: callers try at most :data:`MAX_CANDIDATES` starts per text, the
bracket pass reads at most :data:`MAX_BRACKET_TOKENS` structural characters, and a
span longer than :data:`MAX_REPAIR_CHARS` is only accepted as strict JSON.
"""

from __future__ import annotations

import ast
import json
import re
import warnings
from collections.abc import Iterator
from typing import Any, Final

MAX_CANDIDATES: Final = 256
MAX_BRACKET_TOKENS: Final = 200_000
MAX_REPAIR_CHARS: Final = 100_000


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final[Any] = _Missing()
"""Returned instead of a value when text could not be decoded (``None`` is a valid value)."""

_DECODER = json.JSONDecoder()
_STARTS = re.compile(r"[\[{]")
_TOKENS = re.compile(r"""[{}\[\]()"']""")
_STARTS_OR_PAREN = re.compile(r"[{\[(]")
_OPENERS = {"{": "{", "[": "[", "(": "("}
_CLOSER_TO_OPENER = {"}": "{", "]": "[", ")": "("}
# A quote opens a string only where a value or key can start; apostrophes in prose don't.
_STRING_LEAD = frozenset("{[(,:=")
_WHITESPACE = frozenset(" \t\r\n")
_JSON_WORDS = re.compile(
    r"""("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')|\b(true|false|null)\b"""
)
_PY_WORDS = {"true": "True", "false": "False", "null": "None"}
_COMMENT = re.compile(r"""("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')|//[^\n]*""")
# A list whose first item is a call of an ASCII name (`set()` apart, a literal to Python): no
# Python literal (a call is none, and only a dict or a list of dicts keeps expressions as
# text) and no JSON.
_CALL_FIRST = re.compile(r"\[\s*([A-Za-z_][A-Za-z0-9_]*)(?:\.[A-Za-z_][A-Za-z0-9_]*)*\s*\(")
_TRAILING_COMMA = re.compile(r"""("(?:[^"\\\n]|\\.)*")|,\s*([}\]])""")


def _string_end(text: str, start: int, quote: str) -> int | None:
    """Index of the quote closing the string opened at ``start``, on the same line."""
    pos = start + 1
    while True:
        end = text.find(quote, pos)
        if end == -1 or text.find("\n", pos, end) != -1:
            return None
        backslashes = 0
        back = end - 1
        while back > start and text[back] == "\\":
            backslashes += 1
            back -= 1
        if backslashes % 2 == 0:
            return end
        pos = end + 1


class BracketIndex:
    """Matching closer for every ``{``, ``[`` and ``(`` of a text, computed once, lazily.

    Quotes count as strings only inside brackets and where a value may start, and a
    string must close on its line, so prose apostrophes and stray quotes do not swallow
    the rest of the text. A closer with no matching opener is ignored; an opener whose
    closer never comes has no entry.
    """

    __slots__ = ("_pairs", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self._pairs: dict[int, int] | None = None

    def closer(self, position: int) -> int | None:
        if self._pairs is None:
            self._pairs = self._match()
        return self._pairs.get(position)

    def _match(self) -> dict[int, int]:
        text = self.text
        if len(text) > MAX_BRACKET_TOKENS:  # the budget can run out: every token is counted
            return self._match_counted()
        pairs: dict[int, int] = {}
        stack: list[int] = []  # where the open brackets are
        pos = 0  # where the next token is looked for: a string just read is skipped
        tokens, openers = _TOKENS.search, _STARTS_OR_PAREN.search
        # Outside every bracket a closer or a quote changes nothing: only the next opener counts.
        while (found := (tokens if stack else openers)(text, pos)) is not None:
            index = found.start()
            pos = index + 1
            char = text[index]
            if char in "{[(":
                stack.append(index)
            elif char in _CLOSER_TO_OPENER:
                want = _CLOSER_TO_OPENER[char]
                if text[stack[-1]] == want:  # the usual case: the innermost opener
                    pairs[stack.pop()] = index
                    continue
                for depth in range(len(stack) - 2, -1, -1):
                    if text[stack[depth]] == want:
                        pairs[stack[depth]] = index
                        del stack[depth:]
                        break
            else:  # a quote inside brackets
                back = index - 1
                while back >= 0 and text[back] in _WHITESPACE:
                    back -= 1
                if back >= 0 and text[back] in _STRING_LEAD:
                    end = _string_end(text, index, char)
                    if end is not None:
                        pos = end + 1
        return pairs

    def _match_counted(self) -> dict[int, int]:
        """:meth:`_match` for a text long enough to hold more tokens than the budget: every
        bracket and quote outside a string read counts, the first ones are paired."""
        text = self.text
        pairs: dict[int, int] = {}
        stack: list[tuple[str, int]] = []
        pos = 0  # tokens before it sit in a string just read
        budget = MAX_BRACKET_TOKENS
        for found in _TOKENS.finditer(text):
            index = found.start()
            if index < pos:
                continue
            budget -= 1
            if budget < 0:
                break
            char = text[index]
            if char in _OPENERS:
                stack.append((char, index))
            elif char in _CLOSER_TO_OPENER:
                want = _CLOSER_TO_OPENER[char]
                if stack and stack[-1][0] == want:  # the usual case: the innermost opener
                    pairs[stack.pop()[1]] = index
                    continue
                for depth in range(len(stack) - 2, -1, -1):
                    if stack[depth][0] == want:
                        pairs[stack[depth][1]] = index
                        del stack[depth:]
                        break
            elif stack:  # a quote inside brackets
                back = index - 1
                while back >= 0 and text[back] in _WHITESPACE:
                    back -= 1
                if back >= 0 and text[back] in _STRING_LEAD:
                    end = _string_end(text, index, char)
                    if end is not None:
                        pos = end + 1
        return pairs


def _quiet_literal_eval(text: str) -> Any:
    """``ast.literal_eval(text)``, whose first step is ``ast.parse(text.lstrip(" \\t"),
    mode="eval")``: that parse goes through :func:`_parsed` (shared within a response)."""
    return ast.literal_eval(_parsed(text.lstrip(" \t"), "eval"))


def normalise_literal(value: Any, depth: int = 0) -> Any:
    """A Python literal as the JSON value it stands for, or ``MISSING``.

    Tuples and sets become lists, bytes become text, number keys become strings;
    complex numbers, ``...`` and tuple keys have no JSON reading.
    """
    if depth > 64:
        return MISSING
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            converted = normalise_literal(item, depth + 1)
            if converted is MISSING or not isinstance(key, (str, int, float, bool)):
                return MISSING
            out[key if isinstance(key, str) else str(key)] = converted
        return out
    if isinstance(value, (list, tuple, set, frozenset)):
        items = []
        for item in value:
            converted = normalise_literal(item, depth + 1)
            if converted is MISSING:
                return MISSING
            items.append(converted)
        return items
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return MISSING


# What each source parsed to in each mode (the tree, or the class of the error the parse
# raised) while a response is read: its checks ask for the same slice more than once (a
# span decoded as a literal and then as an expression, a fence body by two checks).
# Parsing is a pure function of (source, mode) and the trees are only read, never changed,
# so a repeated parse returns what it returned the first time, whichever text asked first.
# `parse_tool_calls` empties it when a response is read (`forget_parses`): nothing is kept
# from one response to the next (with threads, until one of the responses read at once is
# done). Only short sources are kept, up to a total, so a hostile text cannot make it hold
# many large trees: past the total, sources are parsed as before.
PARSES: Final[dict[tuple[str, str], Any]] = {}
_KEPT_CHARS: Final = 64_000  # sources kept at once, in characters (each at most a quarter)
_kept = [0]  # characters of the sources kept now


def forget_parses() -> None:
    """Drop what :func:`quiet_parse` remembers (called when a response has been read)."""
    if PARSES:
        PARSES.clear()
        _kept[0] = 0


def _remember(source: str, mode: str, outcome: Any) -> None:
    size = len(source)
    if size <= _KEPT_CHARS // 4 and _kept[0] + size <= _KEPT_CHARS:
        PARSES[(source, mode)] = outcome
        _kept[0] += size


def _parsed(source: str, mode: str) -> ast.AST:
    """``ast.parse(source, mode=mode)`` (parsing only, nothing runs), its warnings silenced;
    raises what the parse raised (its class). Once per source until :func:`forget_parses`."""
    known = PARSES.get((source, mode))
    if known is not None:
        if isinstance(known, type):
            raise known
        return known  # type: ignore[no-any-return]
    try:
        if "\\" in source:  # invalid escapes warn; under -W error that would lose the value
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                tree = ast.parse(source, mode=mode)
        else:
            tree = ast.parse(source, mode=mode)
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError) as error:
        _remember(source, mode, type(error))
        raise
    if not source.isascii():
        _names_as_written(tree, source)
    _remember(source, mode, tree)
    return tree


# An identifier as Python's tokenizer reads it: the longest run of ASCII letters, digits,
# `_` and non-ASCII characters (a combining accent included, so no shorter name is taken).
_IDENTIFIER_CHARS: Final = r"[A-Za-z0-9_\u0080-\U0010ffff]+"
_IDENTIFIER_AT: Final = re.compile(_IDENTIFIER_CHARS)
_IDENTIFIER_ENDING: Final = re.compile(_IDENTIFIER_CHARS + "$")
_LINE_BREAK: Final = re.compile(r"\r\n|\r|\n")  # the line ends Python counts
_WINDOW: Final = 4 * 300  # bytes: an identifier longer than a name may be is not read whole


def _names_as_written(tree: ast.AST, source: str) -> None:
    """Every name, attribute and keyword in ``tree`` as ``source`` writes it (changed in place).

    Python reads identifiers in their NFKC form, so ``delete_repo`` written in fullwidth or
    mathematical bold letters would come out as ``delete_repo``. A look-alike
    name is another name (docs/parsing.md, ``known_names``): it must never run the tool it
    resembles. Node offsets count UTF-8 bytes, hence the encoded lines.
    """
    lines = [line.encode("utf-8") for line in _LINE_BREAK.split(source)]

    def written(line: int, start: int, end: int | None = None) -> str | None:
        """The identifier starting at byte ``start`` of ``line``, or ending at byte ``end``."""
        if not 0 < line <= len(lines):
            return None
        if end is None:  # (a window: an identifier is short, a line may be long)
            found = _IDENTIFIER_AT.match(lines[line - 1][start : start + _WINDOW].decode("utf-8", "ignore"))
        else:
            found = _IDENTIFIER_ENDING.search(lines[line - 1][max(0, end - _WINDOW) : end].decode("utf-8", "ignore"))
        return None if found is None else found.group()

    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            name = written(node.lineno, node.col_offset)
            if name is not None and name != node.id:
                node.id = name
        elif isinstance(node, ast.Attribute) and node.end_lineno is not None and node.end_col_offset is not None:
            name = written(node.end_lineno, 0, node.end_col_offset)
            if name is not None and name != node.attr:
                node.attr = name
        elif isinstance(node, ast.keyword) and node.arg is not None:
            name = written(node.lineno, node.col_offset)
            if name is not None and name != node.arg:
                node.arg = name


def parsed_already(source: str, mode: str) -> ast.AST | None:
    """The tree :func:`quiet_parse` gave for ``source`` in ``mode`` while this response is
    read, if it parsed and was remembered; ``None`` otherwise (nothing is parsed here)."""
    known = PARSES.get((source, mode))
    return None if known is None or isinstance(known, type) else known


def quiet_parse(source: str, mode: str) -> ast.AST | None:
    """``ast.parse`` (parsing only, nothing runs); ``None`` on any failure."""
    try:
        return _parsed(source, mode)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


_JSON_NAMES: Final = {"true": True, "false": False, "null": None, "none": None}


def dict_key(key_node: ast.expr | None) -> Any:
    """The key of one entry of a dict display as :func:`tolerant_value` keeps it: a string,
    number or bool literal; ``MISSING`` for anything else (``{**spread}`` has no key node)."""
    if key_node is None:
        return MISSING
    try:
        key = ast.literal_eval(key_node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return MISSING
    return key if isinstance(key, (str, int, float, bool)) else MISSING


def tolerant_value(node: ast.expr, depth: int = 0) -> Any:
    """A parsed value where every non-literal part is kept as its source text.

    ``{"end_range": 2 * 3.14159}`` gives ``{"end_range": "2 * 3.14159"}``: the call
    survives and schema validation can tell the model what it expected.
    """
    if depth > 64:
        return MISSING
    if isinstance(node, ast.Dict):
        out: dict[str, Any] = {}
        for key_node, value_node in zip(node.keys, node.values, strict=True):
            key = dict_key(key_node)
            value = MISSING if key is MISSING else tolerant_value(value_node, depth + 1)
            if value is MISSING:
                return MISSING
            out[key if isinstance(key, str) else str(key)] = value
        return out
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = [tolerant_value(element, depth + 1) for element in node.elts]
        return MISSING if any(item is MISSING for item in items) else items
    if isinstance(node, ast.Name) and node.id.lower() in _JSON_NAMES:
        return _JSON_NAMES[node.id.lower()]
    try:
        value = normalise_literal(ast.literal_eval(node))
        if value is not MISSING:
            return value
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    try:  # an expression, a name, `...`: its source text
        return ast.unparse(node)
    except (ValueError, TypeError, AttributeError, RecursionError):
        return MISSING


def python_literal(text: str) -> Any:
    """``text`` read as a Python literal, or ``MISSING``.

    JSON's ``true``/``false``/``null`` and ``//`` comments are accepted; inside an
    object (or a list of objects), a part that is an expression rather than a literal
    (``2 * pi``) is kept as its source text.
    """
    unparsable = False
    try:
        value = normalise_literal(_quiet_literal_eval(text))
        if value is not MISSING:
            return value
    except SyntaxError:
        unparsable = True
    except (ValueError, TypeError, MemoryError, RecursionError):
        pass  # `...` or an expression inside: kept as text below
    source = text
    if "//" in source:
        source = _COMMENT.sub(lambda m: m.group(1) or "", source)
    if ("true" in source or "false" in source or "null" in source) and _JSON_WORDS.search(source):
        source = _JSON_WORDS.sub(lambda m: m.group(1) or _PY_WORDS[m.group(2)], source)
    if unparsable and source is text and text[:1] not in " \t":
        return MISSING  # the same source, which Python just refused to parse
    tree = quiet_parse(source, "eval")
    if not isinstance(tree, ast.Expression):
        return MISSING
    body = tree.body
    # Only objects (or a list of objects) keep expressions as text: `[f(x=1), g()]` is
    # pythonic calls, not a list of two strings.
    if isinstance(body, ast.Dict) or (
        isinstance(body, ast.List) and body.elts and all(isinstance(e, ast.Dict) for e in body.elts)
    ):
        return tolerant_value(body)
    return MISSING


def repair(text: str) -> Any:
    """Decode damaged JSON: Python literals, JSON words in Python, trailing commas."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[":
        return MISSING
    if stripped[0] == "[" and (first := _CALL_FIRST.match(stripped)) is not None and first.group(1) != "set":
        return MISSING  # `[f(x=1), ...]` (pythonic calls in a list): neither a literal nor JSON
    value = python_literal(stripped)
    if value is not MISSING:
        return value
    if "," in stripped:
        without_commas = _TRAILING_COMMA.sub(lambda m: m.group(1) or m.group(2), stripped)
        try:
            return json.loads(without_commas)
        except (ValueError, RecursionError):
            pass
    return MISSING


def loads_lenient(text: str) -> Any:
    """``json.loads``, falling back to :func:`repair`; ``MISSING`` when neither reads it."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return repair(text)


def decode_at(text: str, start: int, index: BracketIndex) -> tuple[Any, int] | None:
    """The value starting at ``text[start]`` and the index just past it, or ``None``."""
    try:
        return _DECODER.raw_decode(text, start)
    except (ValueError, RecursionError):
        pass
    close = index.closer(start)
    if close is None or close - start > MAX_REPAIR_CHARS:
        return None
    value = repair(text[start : close + 1])
    return None if value is MISSING else (value, close + 1)


def candidate_starts(text: str, start: int = 0, end: int | None = None) -> Iterator[int]:
    """Positions of ``{`` and ``[`` in ``text[start:end]``, at most :data:`MAX_CANDIDATES`."""
    finder = _STARTS.finditer(text, start) if end is None else _STARTS.finditer(text, start, end)
    for count, found in enumerate(finder):
        if count >= MAX_CANDIDATES:
            return
        yield found.start()
