"""Pythonic calls: ``[f(a=1, b='x'), g()]`` and its variants, read with :mod:`ast`.

Source is only ever *parsed* (``ast.parse``) and argument nodes are read with
``ast.literal_eval``; nothing is evaluated or executed. Accepted shapes: one call, a
list or tuple of calls, calls separated by ``,``, ``;`` or newlines, dotted names
(``spotify.play``), quoted names (``'f'(a=1)``), a list of quoted call strings,
``print(default_api.f(...))`` as Gemini writes it, and a single positional dict
(``f({'a': 1})``). A call with other positional arguments is not returned: without the
schema they cannot be named. A keyword value that is not a literal (``x=2*pi``,
``x=$5000``) is kept as its source text, so schema validation can tell the model what
it expected instead of the call vanishing.
"""

from __future__ import annotations

import ast
import functools
import re
from bisect import bisect_right
from collections.abc import Callable
from keyword import iskeyword
from typing import Any, Final

from mcs.parsing._common import EXPLICIT, GUESSED, WEAK, Found, clean_name, run_end
from mcs.parsing.jsonspans import (
    MISSING,
    BracketIndex,
    dict_key,
    normalise_literal,
    quiet_parse,
    tolerant_value,
)

MAX_CALLS: Final = 256
# A call's name and its `(`: dotted, and with hyphens as some real names have
# (`get_co-ordinate`); in prose "word (aside)" with a space is not a call.
CALL_START: Final = re.compile(r"(?<![\w.\-])([A-Za-z_]\w*(?:[.\-][A-Za-z_]\w*)*)\(")
_JSON_NAMES: Final = {"true": True, "false": False, "null": None, "none": None}
# A hyphenated name in call position, outside quotes; Python would read it as a subtraction.
_HYPHEN_NAME: Final = re.compile(
    r"""('(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")|(?<![\w.\-])([A-Za-z_]\w*(?:\.\w+)*(?:-[A-Za-z_]\w*)+(?:\.\w+)*)(?=\s*\()"""
)
_HYPHEN: Final = "__mcs_hyphen__"
# ['get_personality_traits'](type='ENFJ'): a quoted name in a list, then its arguments.
_LISTED_NAME: Final = re.compile(r"""\[\s*(['"])([A-Za-z_][\w.\-]*)\1\s*\]\s*(?=\()""")
# ['f(a='x')'] and [{'f(a='x')'}]: call strings whose arguments reuse the string's quote.
_QUOTED_CALLS: Final = re.compile(r"""\[\s*\{?\s*(['"])([A-Za-z_][\w.\-]*\s*\(.*\))\1?\s*\}?\s*\]""", re.DOTALL)
_QUOTED_SEPARATOR: Final = r"(?<=\))\s*{q}\s*\}}?\s*,\s*\{{?\s*{q}(?=\s*[A-Za-z_][\w.\-]*\s*\()"
# ['music.create', 'key': 'C', 'chords': 4]: a name, then the pairs of a dict without braces.
_NAME_THEN_PAIRS: Final = re.compile(
    r"""\[\s*(['"])([A-Za-z_][\w.\-]*)\1\s*,\s*((?:['"]\w+['"]\s*:.*?))\s*\]""", re.DOTALL
)
# [lawsuit_details.find, company_name='Apple Inc.', year=2010]: a name, then keywords.
_NAME_THEN_KEYWORDS: Final = re.compile(
    r"""\[\s*(['"]?)([A-Za-z_][\w.\-]*)\1\s*,\s*([A-Za-z_]\w*\s*=(?!=).*?)\s*\)?\s*\]""", re.DOTALL
)


_HYPHEN_HINT: Final = re.compile(r"[A-Za-z_\d]-[A-Za-z_][\w.]*\s*\(")
# The two sides of `_HYPHEN_NAME` apart, for `_rename_hyphenated`: a quoted string (the
# same strings, written so a search skips ahead), a hyphen inside a name, the whole name.
_QUOTED_STRING: Final = re.compile(r"'[^'\\\n]*(?:\\.[^'\\\n]*)*'" r'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"')
_INNER_HYPHEN: Final = re.compile(r"-(?<=\w-)(?=[A-Za-z_])")
_HYPHENATED_CALL: Final = re.compile(r"(?<![\w.\-])[A-Za-z_]\w*(?:\.\w+)*(?:-[A-Za-z_]\w*)+(?:\.\w+)*(?=\s*\()")
# The characters a name may hold (`\w` is `_` and every `str.isalnum` character); matched
# on a reversed text, how far a name reaches back from the character after it.
NAME_RUN: Final = re.compile(r"[\w.\-]*")


def _rename_hyphenated(source: str) -> str:
    """``_HYPHEN_NAME.sub`` (hyphenated names in call position, outside quotes, renamed),
    found from the hyphens instead of trying a name at every position of the text.

    A name holds no quote, so the quoted strings that hide names are the ones a search
    for quoted strings alone finds; a name starts where its run of name characters does.
    """
    renamed: list[str] = []
    quotes: list[tuple[int, int]] | None = None
    backwards = source[::-1]
    length = len(source)
    cursor = 0
    for hyphen in _INNER_HYPHEN.finditer(source):
        if hyphen.start() < cursor:
            continue  # in the name just renamed
        start = length - run_end(NAME_RUN, backwards, length - hyphen.start())
        name = _HYPHENATED_CALL.match(source, start) if start >= cursor else None
        if name is None:
            continue
        if quotes is None:
            quotes = [(found.start(), found.end()) for found in _QUOTED_STRING.finditer(source)]
        number = bisect_right(quotes, (start, length)) - 1
        if number >= 0 and quotes[number][1] > start:
            continue  # inside a quoted string
        renamed.append(source[cursor:start])
        renamed.append(name.group().replace("-", _HYPHEN))
        cursor = name.end()
    return "".join(renamed) + source[cursor:] if renamed else source


def _parse(source: str, mode: str) -> ast.AST | None:
    renamed = False
    if "-" in source and _HYPHEN_HINT.search(source) and _HYPHEN not in source:
        named = _rename_hyphenated(source)
        renamed, source = named is not source, named
    if ("](" in source or "] (" in source) and _LISTED_NAME.search(source):
        source = _LISTED_NAME.sub(r"\2", source)
    tree = quiet_parse(source, mode)
    return _hyphens_restored(tree) if renamed and tree is not None else tree


def _hyphens_restored(tree: ast.AST) -> ast.AST:
    """``tree`` with the names :func:`_rename_hyphenated` renamed written with their hyphens
    again (changed in place; idempotent). Only a source that held no :data:`_HYPHEN` is
    renamed, so in any other tree the marker is what the model wrote and stays."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and _HYPHEN in node.id:
            node.id = node.id.replace(_HYPHEN, "-")
        elif isinstance(node, ast.Attribute) and _HYPHEN in node.attr:
            node.attr = node.attr.replace(_HYPHEN, "-")
    return tree


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value  # ['math.factorial'(number=5)] (mistral-tiny)
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _literal(node: ast.expr) -> Any:
    if isinstance(node, ast.Name) and node.id.lower() in _JSON_NAMES:
        return _JSON_NAMES[node.id.lower()]
    try:
        return normalise_literal(ast.literal_eval(node))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return MISSING


def _value(node: ast.expr) -> Any:
    """A keyword argument's value; non-literal parts (``2*pi``, ``my_data``) as source text."""
    return tolerant_value(node)


def call_from_node(
    node: ast.expr, confidence: int = EXPLICIT, refuses: Callable[[str], bool] | None = None
) -> Found | None:
    """The call ``node`` stands for, or ``None`` when it is not a literal-argument call.

    ``refuses(name)``, when given, says the caller will drop a call of that name whatever
    its arguments: such a call's arguments are only checked (the same ``None`` for the
    same node), not read, and it comes back without them. Give it only for a node with
    no f-string, from a source short enough that :func:`ast.unparse` cannot run out of
    stack on it (see :func:`_readable`).
    """
    if not isinstance(node, ast.Call):
        return None
    if (  # print(default_api.f(x=1)) (Gemini writing code)
        isinstance(node.func, ast.Name) and node.func.id == "print"
        and len(node.args) == 1 and isinstance(node.args[0], ast.Call) and not node.keywords
    ):
        return call_from_node(node.args[0], confidence, refuses)
    dotted = _dotted(node.func)
    name = clean_name(dotted)
    if name is None:
        return None
    if refuses is not None and refuses(name):
        return Found(name, {}, None, confidence) if _readable_arguments(node) else None
    arguments: dict[str, Any] = {}
    positional: tuple[Any, ...] = ()
    if len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Dict):
        only = _value(node.args[0])  # f({'a': 1}): the arguments as one dict
        if not isinstance(only, dict):
            return None
        arguments = only
    elif node.args:  # named later from the tool's schema (read then), or the call is dropped
        if any(isinstance(arg, ast.Starred) for arg in node.args):
            return None
        positional = tuple(node.args)
    for keyword in node.keywords:
        value = _value(keyword.value) if keyword.arg is not None else _literal(keyword.value)
        if value is MISSING:
            return None
        if keyword.arg is None:  # f(**{'a': 1})
            if not isinstance(value, dict):
                return None
            arguments.update(value)
        else:
            arguments[keyword.arg] = value
    return Found(name, arguments, None, confidence, positional)


def _readable_arguments(node: ast.Call) -> bool:
    """Whether :func:`call_from_node` reads ``node``'s arguments (rather than giving
    ``None``), without reading them: the same checks in the same cases."""
    if len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Dict):
        return isinstance(_value(node.args[0]), dict)
    if any(isinstance(arg, ast.Starred) for arg in node.args):
        return False
    for keyword in node.keywords:
        if keyword.arg is None:  # f(**{'a': 1})
            if not isinstance(_literal(keyword.value), dict):
                return False
        elif not _readable(keyword.value):
            return False
    return True


def _readable(node: ast.expr, depth: int = 0) -> bool:
    """Whether :func:`tolerant_value` gives a value for ``node`` (not ``MISSING``): the
    containers are checked as it checks them; any other node is a literal or its source
    text, which :func:`ast.unparse` always writes for a node without an f-string (the
    only node it can refuse) parsed from a short source (see :data:`_CHECKED_ONLY_CHARS`)."""
    if depth > 64:
        return False
    if isinstance(node, ast.Dict):
        return all(dict_key(key_node) is not MISSING and _readable(value_node, depth + 1)
                   for key_node, value_node in zip(node.keys, node.values, strict=True))
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(_readable(element, depth + 1) for element in node.elts)
    return True


def _calls_in(node: ast.AST, depth: int = 0) -> list[Found] | None:
    """Every call in an expression that is nothing but calls; ``None`` otherwise."""
    if isinstance(node, ast.Call):
        found = call_from_node(node)
        return None if found is None else [found]
    if isinstance(node, ast.Dict) and node.values and all(isinstance(v, ast.Call) for v in node.values):
        valued = [call_from_node(value) for value in node.values]  # [{'f': f(x=1)}]: the calls
        kept = [call for call in valued if call is not None]
        return kept if len(kept) == len(valued) else None
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and node.elts and depth < 2:
        calls: list[Found] = []
        for element in node.elts[:MAX_CALLS]:
            if isinstance(element, ast.Constant) and isinstance(element.value, str):
                inner = parse_whole(element.value, _depth=depth + 1)  # ['f(a=1)', ...]
            else:
                inner = _calls_in(element, depth + 1)
            if not inner:
                return None
            calls.extend(inner)
        return calls
    return None


# The most common pythonic output, `[f(a=1, b='x'), g.h(c=[1, 2])]`: keyword arguments
# whose values are plain literals. It is read without `ast` (whose parser costs more than
# everything else a call takes); anything else, or anything Python would refuse
# (keywords, repeated arguments), goes to `ast` as before, so the result is the same.
_GAP: Final = r"[ \t\n]*"
_SCALAR: Final = (
    r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?"  # 12, -3.5, 1e5 (never 007 or 1.)
    r"|'[^'\\\x00\r\n\ud800-\udfff]*'|\"[^\"\\\x00\r\n\ud800-\udfff]*\""  # no escapes, nothing ast refuses
    r"|True|False|None|true|false|null|none"
)
_VALUE: Final = rf"(?:{_SCALAR}|\[{_GAP}(?:(?:{_SCALAR}){_GAP}(?:,{_GAP}(?:{_SCALAR}){_GAP})*,?)?{_GAP}\])"
_IDENT: Final = r"[A-Za-z_][A-Za-z0-9_]*"
_ARG: Final = rf"{_IDENT}{_GAP}={_GAP}{_VALUE}"
_CALL: Final = rf"{_IDENT}(?:\.{_IDENT})*\({_GAP}(?:{_ARG}(?:{_GAP},{_GAP}{_ARG})*{_GAP},?)?{_GAP}\)"
@functools.cache
def _plain_patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """The whole-text grammar, one call's head, one argument and one scalar, compiled at
    first use (compiling them costs milliseconds that an import should not)."""
    return (
        re.compile(rf"\[{_GAP}{_CALL}(?:{_GAP},{_GAP}{_CALL})*{_GAP},?{_GAP}\]|{_CALL}"),
        re.compile(rf"({_IDENT}(?:\.{_IDENT})*)\("),
        re.compile(rf"({_IDENT}){_GAP}={_GAP}({_VALUE})"),
        re.compile(_SCALAR),
    )
_WORDS: Final = {"True": True, "False": False, "None": None, "true": True, "false": False, "null": None,
                 "none": None}


def _plain_scalar(text: str) -> Any:
    if text[0] in "'\"":
        return text[1:-1]
    if text in _WORDS:
        return _WORDS[text]
    return float(text) if any(c in text for c in ".eE") else int(text)


def _take_keyword(arg: re.Match[str], one_scalar: re.Pattern[str], arguments: dict[str, Any]) -> bool:
    """Add the literal keyword argument ``arg`` matched to ``arguments``; ``False`` when
    Python refuses it (``class=1``, ``a=1, a=2``), so that ast says what it makes of it."""
    name, raw = arg.group(1), arg.group(2)
    if iskeyword(name) or name in arguments:
        return False
    if raw[0] == "[":
        arguments[name] = [_plain_scalar(m.group(0)) for m in one_scalar.finditer(raw, 1)]
    else:
        arguments[name] = _plain_scalar(raw)
    return True


def _plain_calls(source: str) -> list[Found] | None:
    """The calls of ``source`` when it is plain pythonic calls (see above), else ``None``."""
    grammar, one_call, one_arg, one_scalar = _plain_patterns()
    if grammar.fullmatch(source) is None:
        return None
    # The grammar matched: read it front to back (never searching, so text inside a
    # string value is never taken for a call).
    calls: list[Found] = []
    position = _skip(source, 1 if source[0] == "[" else 0)
    while position < len(source) and source[position] != "]":
        call = one_call.match(source, position)
        if call is None or len(calls) == MAX_CALLS:
            return None
        if any(iskeyword(part) for part in call.group(1).split(".")):
            return None  # `import.f(...)`: Python refuses it; let ast say so
        arguments: dict[str, Any] = {}
        position = _skip(source, call.end())
        while source[position] != ")":
            arg = one_arg.match(source, position)
            try:
                if arg is None or not _take_keyword(arg, one_scalar, arguments):
                    return None
            except ValueError:  # a number too long for `int`: let ast say what it makes of it
                return None
            position = _skip(source, arg.end(), ",")
        name = clean_name(call.group(1))
        if name is None:
            return None
        calls.append(Found(name, arguments, None, EXPLICIT))
        position = _skip(source, position + 1, ",")
    return calls


# One call as `call_at` reads it: literal values by position, then literal keywords.
_ONE_CALL: Final = (
    rf"{_IDENT}(?:\.{_IDENT})*\({_GAP}(?:(?:{_VALUE}(?:{_GAP},{_GAP}{_VALUE})*(?:{_GAP},{_GAP}{_ARG})*"
    rf"|{_ARG}(?:{_GAP},{_GAP}{_ARG})*){_GAP},?)?{_GAP}\)"
)


@functools.cache
def _one_call_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The grammar of one call with positional values, and one value (compiled at first use)."""
    return re.compile(_ONE_CALL), re.compile(_VALUE)


def plain_call(source: str) -> Found | None:
    """The call ``source`` is when it is one call with plain literal arguments, by
    position then by keyword (``f('a', 2, key=[1])``), read without ``ast``; else ``None``.

    What :func:`call_from_node` makes of ``ast``'s reading of the same source: a value
    given by position is kept as the node ``ast`` would give (a constant, or a list of
    constants), named later from the tool's schema.
    """
    grammar, one_value = _one_call_patterns()
    if grammar.fullmatch(source) is None:
        return None
    _, one_call, one_arg, one_scalar = _plain_patterns()
    call = one_call.match(source)
    if call is None or any(iskeyword(part) for part in call.group(1).split(".")):
        return None  # `import.f(...)`: Python refuses it; let ast say so
    arguments: dict[str, Any] = {}
    positional: list[ast.expr] = []
    position = _skip(source, call.end())
    try:
        while source[position] != ")":
            arg = one_arg.match(source, position)
            if arg is not None:
                if not _take_keyword(arg, one_scalar, arguments):
                    return None
                position = _skip(source, arg.end(), ",")
                continue
            value = one_value.match(source, position)
            if value is None or arguments:  # the grammar puts every value before the keywords
                return None
            raw = value.group(0)
            if raw[0] == "[":
                items: list[ast.expr] = [ast.Constant(_plain_scalar(m.group(0))) for m in one_scalar.finditer(raw, 1)]
                positional.append(ast.List(elts=items, ctx=ast.Load()))
            else:
                positional.append(ast.Constant(_plain_scalar(raw)))
            position = _skip(source, value.end(), ",")
    except ValueError:  # a number too long for `int`: let ast say what it makes of it
        return None
    name = clean_name(call.group(1))
    if name is None:
        return None
    return Found(name, arguments, None, EXPLICIT, tuple(positional))


def _skip(source: str, position: int, separator: str = "") -> int:
    """The position after blanks (and one ``separator`` with its blanks) from ``position``."""
    length = len(source)
    while position < length and source[position] in " \t\n":
        position += 1
    if separator and position < length and source[position] == separator:
        position += 1
        while position < length and source[position] in " \t\n":
            position += 1
    return position


# What pythonic calls cannot start with: Python refuses these first characters, or reads
# what follows as an operation on a value (`-f(x)`, `@decorator`, `1(x)`), never as calls;
# JavaScript comments, HTML and shell prompts end here without being parsed.
_NEVER_FIRST: Final = frozenset("/%&|^<>=!$?`)]},:;.*@-+~0123456789")
# What pythonic calls cannot start with either: a keyword that opens a statement other than
# an expression or `return`, then a name (`def f(x):`, `import os`, `for x in y:`). Python
# reads such a source as that statement or refuses it, and the readers for what it refuses
# need a `[` first or a `(` right after the first name; so it is not parsed to find out.
_STATEMENT_FIRST: Final = re.compile(
    r"(?:def|class|import|from|if|elif|else|for|while|with|try|except|finally|async|global|nonlocal"
    r"|del|assert|raise|pass|break|continue)[ \t]+[A-Za-z_]"
)


def parse_whole(text: str, *, _depth: int = 0) -> list[Found] | None:
    """The calls when all of ``text`` is pythonic calls (see the module docstring).

    ``None`` when any part of it is something else.
    """
    source = text.strip().rstrip(";").strip()
    if not source or _depth > 2 or source[0] in _NEVER_FIRST:
        return None
    plain = _plain_calls(source)
    if plain is not None:
        return plain
    return None if _STATEMENT_FIRST.match(source) else _parsed_whole(source, _depth)


def _statement_only(value: ast.expr) -> bool:
    """Whether an expression statement's value may be one that only a statement allows
    (``*a, b``, ``yield x``): for a stripped source (a trailing blank line with spaces is a
    statement's only), the two grammars differ only there and in ``;``, so for any other
    value the expression parse of the same source is this value."""
    if isinstance(value, ast.Tuple):
        return any(isinstance(element, ast.Starred) for element in value.elts)
    return isinstance(value, (ast.Starred, ast.Yield, ast.YieldFrom))


def _parsed_whole(source: str, _depth: int) -> list[Found] | None:
    """:func:`parse_whole` through ``ast``, for every shape the plain reader leaves
    (``source`` is stripped)."""
    module = None
    if "\n" in source or ";" in source:
        # Read as statements first: what parses as one expression parses as a module of
        # exactly that one expression statement, so any other module (a program, or a
        # failed parse) says the expression parse fails without paying for it (a failed
        # parse costs Python a second pass for its error message). The module is needed
        # below anyway.
        module = _parse(source, "exec")
        only = module.body[0] if isinstance(module, ast.Module) and len(module.body) == 1 else None
        if isinstance(only, ast.Expr):
            if ";" in source or _statement_only(only.value):
                tree = _parse(source, "eval")
            else:  # the expression parse would give this very expression
                return _calls_in(only.value, _depth)
        else:
            tree = None
    else:
        tree = _parse(source, "eval")
    if isinstance(tree, ast.Expression):
        return _calls_in(tree.body, _depth)
    quoted = _QUOTED_CALLS.fullmatch(source)
    if quoted is not None:  # ['f(a='x')']: the quotes of the string reused inside it
        calls: list[Found] = []
        for part in re.split(_QUOTED_SEPARATOR.format(q=re.escape(quoted.group(1))), quoted.group(2)):
            inner = parse_whole(part, _depth=_depth + 1)
            if not inner:
                return None
            calls.extend(inner)
        return calls
    pairs = _NAME_THEN_PAIRS.fullmatch(source)
    if pairs is not None:  # ['music.create', 'key': 'C', 'chords': 4]
        tree = _parse(f"{pairs.group(2)}(**{{{pairs.group(3)}}})", "eval")
        found = call_from_node(tree.body, GUESSED) if isinstance(tree, ast.Expression) else None
        return None if found is None else [found]
    flat = _NAME_THEN_KEYWORDS.fullmatch(source)
    if flat is not None:  # [lawsuit_details.find, company_name='Apple'] (Llama 3)
        found = lenient_call(f"{flat.group(2)}({flat.group(3)})", GUESSED)
        return None if found is None else [found]
    if ";" not in source and "\n" not in source:
        if source[0] == "[" and source[-1] == "]":
            source = source[1:-1]
        found = lenient_call(source)
        return None if found is None else [found]
    # `f(a=1); g(b=2)` or one call per line (the source has `;` or a newline: parsed above)
    if not isinstance(module, ast.Module) or not module.body:
        return None
    calls = []
    for statement in module.body[:MAX_CALLS]:
        if not isinstance(statement, (ast.Expr, ast.Return)) or statement.value is None:
            return None  # `return f(x=1)` is the call as much as `f(x=1)` is
        inner = _calls_in(statement.value, _depth)
        if not inner:
            return None
        calls.extend(inner)
    return calls


# How long a call's source may be for its arguments to be checked without being read
# (`call_from_node`'s `refuses`): `ast.unparse` recurses once per nesting level of an
# expression, and a source this short cannot nest deep enough to exhaust the stack.
_CHECKED_ONLY_CHARS: Final = 200
_FSTRING_PREFIX: Final = re.compile(r"[fF][rR]?['\"]")  # also finds rf"..": the f is next to the quote


def call_at(
    text: str, start: int, open_paren: int, index: BracketIndex, refuses: Callable[[str], bool] | None = None
) -> tuple[Found, int] | None:
    """A call written at ``text[start:]`` whose ``(`` is at ``open_paren``, and its end.

    ``refuses`` (see :func:`call_from_node`): a call the caller will drop by its name
    comes back without its arguments, when reading them is all that would be skipped.
    """
    close = index.closer(open_paren)
    if close is None:
        return None
    source = text[start : close + 1]
    plain = plain_call(source)  # what `ast` would read, without its parser
    if plain is not None:
        plain.confidence = WEAK
        return plain, close + 1
    tree = _parse(source, "eval")
    if isinstance(tree, ast.Expression):
        checked_only = (  # where `call_from_node` may check arguments without reading them
            refuses is not None and len(source) <= _CHECKED_ONLY_CHARS and _FSTRING_PREFIX.search(source) is None
        )
        found = call_from_node(tree.body, WEAK, refuses if checked_only else None)
    else:
        found = lenient_call(source, WEAK)
    return None if found is None else (found, close + 1)


_LENIENT_CALL: Final = re.compile(r"\s*([A-Za-z_][\w.\-]*)\s*\((.*)\)\s*", re.DOTALL)
_KEYWORD: Final = re.compile(r"(?:^|,)\s*([A-Za-z_]\w*)\s*=(?![=>])")


def lenient_call(source: str, confidence: int = EXPLICIT) -> Found | None:
    """``f(a='Let's go', b=$5000)``: keyword calls Python cannot parse, split at ``, name=``.

    A value that still does not parse is kept as text (without its outer quotes), so
    schema validation can tell the model what it expected.
    """
    match = _LENIENT_CALL.fullmatch(source)
    if match is None:
        return None
    inner = match.group(2)
    keywords = list(_KEYWORD.finditer(inner))
    if not keywords or (keywords[0].start() != 0 and inner[: keywords[0].start()].strip()):
        return None
    arguments: dict[str, Any] = {}
    for number, keyword in enumerate(keywords):
        end = keywords[number + 1].start() if number + 1 < len(keywords) else len(inner)
        raw = inner[keyword.end() : end].strip()
        if not raw:
            return None
        tree = _parse(raw, "eval")
        value = _value(tree.body) if isinstance(tree, ast.Expression) else MISSING
        if value is MISSING:  # kept as text: validation tells the model what was expected
            quoted = len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\""
            value = raw[1:-1] if quoted else raw
        arguments[keyword.group(1)] = value
    name = clean_name(match.group(1))
    return None if name is None else Found(name, arguments, None, confidence)


__all__ = ["CALL_START", "NAME_RUN", "call_at", "call_from_node", "lenient_call", "parse_whole"]
