"""The faster readings of long texts give exactly what the plain readings give.

Each shortcut the parser takes on long texts (an index built once, a search led by a
literal, a read without ``ast``) is checked here against the expression it replaces, on
generated texts and on hand-picked edge cases; then whole responses of 50 KB with many
brackets, quotes and code fences are parsed to the calls they hold. Speed is never
asserted.
"""

from __future__ import annotations

import ast
import json
import re
import textwrap
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.parsing_oracles import program_by_its_statements

from mcs.parsing import parse_tool_calls
from mcs.parsing.issued import (
    _CODE_LINE,
    _LIST_MARKER,
    _SENTENCE_END,
    Layout,
    _before_blanks,
    _without_list_marker,
    is_program,
)
from mcs.parsing.jsonspans import (
    _CLOSER_TO_OPENER,
    _OPENERS,
    _STRING_LEAD,
    _TRAILING_COMMA,
    _WHITESPACE,
    MAX_BRACKET_TOKENS,
    MISSING,
    PARSES,
    BracketIndex,
    _string_end,
    forget_parses,
    python_literal,
    quiet_parse,
    repair,
    tolerant_value,
)
from mcs.parsing.pythonic import (
    _HYPHEN,
    _HYPHEN_NAME,
    _NEVER_FIRST,
    CALL_START,
    _parse,
    _parsed_whole,
    _rename_hyphenated,
    _statement_only,
    call_from_node,
    plain_call,
)
from mcs.parsing.text import _NAME_BEFORE_JSON, _candidate, _names_before_json
from mcs.tools import ToolCall

# Texts made of the characters each reading cares about, so generated cases hit them.
_LINE_TEXT = st.text(st.sampled_from(list("ab1é-*+•.) \t:x")), max_size=40)
_CODE_TEXT = st.lists(st.sampled_from(["def ", "import x", "x = 1", "if a:", "  ", "\n", "\n\n", "y", "=", "==", "[i]",
                                       "return", " ", "f(", ")", "#", "else:"]), max_size=16).map("".join)
_NAME_TEXT = st.text(st.sampled_from(list("ab_.-'\"\\( )\n1é")), max_size=40)
_GLM_TEXT = st.text(st.sampled_from(list("ab_.-}{ \n\t\r,x\x0b\u00a0")), max_size=40)


@settings(max_examples=300, deadline=None)
@given(_LINE_TEXT)
def test_list_marker_dropped_from_the_marker_is_the_regex_substitution(line: str) -> None:
    assert _without_list_marker(line) == _LIST_MARKER.sub(" ", line, count=1)


@pytest.mark.parametrize("line", ["1234. a", "  - a", "a -  b", "\t\t12) x", "-\t", "x 1.", "•  y", " 99999) z",
                                  "a  1. b 2. c", "٣. arabic-indic digit", ""])
def test_list_marker_edge_cases_read_as_the_regex_reads_them(line: str) -> None:
    assert _without_list_marker(line) == _LIST_MARKER.sub(" ", line, count=1)


def _regex_rename(source: str) -> str:
    return _HYPHEN_NAME.sub(lambda m: m.group(1) or m.group(2).replace("-", _HYPHEN), source)


@settings(max_examples=400, deadline=None)
@given(_NAME_TEXT)
def test_hyphenated_names_found_from_their_hyphens_are_the_regex_matches(source: str) -> None:
    assert _rename_hyphenated(source) == _regex_rename(source)


@pytest.mark.parametrize("source", [
    "get-co-ordinate(x=1)", "'get-x(1)' and get-y(2)", "a.b-c.d (1)", "x-1(2)", "café-x(1)", "-a(1)",
    "\"it\\\"s a-b(\" c-d(1)", "a-b-c\n(1)", "f(a='x-y(')", "a--b(1)",
])
def test_hyphenated_name_edge_cases_read_as_the_regex_reads_them(source: str) -> None:
    assert _rename_hyphenated(source) == _regex_rename(source)


@settings(max_examples=400, deadline=None)
@given(_GLM_TEXT)
def test_glm_names_looked_for_on_brace_lines_are_the_regex_matches(text: str) -> None:
    expected = [(m.start(), m.end(), m.group(1)) for m in _NAME_BEFORE_JSON.finditer(text)]
    assert [(m.start(), m.end(), m.group(1)) for m in _names_before_json(text)] == expected


@settings(max_examples=300, deadline=None)
@given(_CODE_TEXT, st.integers(0, 40), st.integers(0, 40))
def test_code_lines_from_the_index_are_what_a_search_of_the_slice_finds(text: str, low: int, high: int) -> None:
    layout = Layout(text)
    text = layout.text  # the checks read the text with comment lines blanked (`#def ` is no code)
    low, high = min(low, len(text)), min(high, len(text))
    assert layout._code_in(low, high) == (low < high and _CODE_LINE.search(text[low:high]) is not None)
    first = text.rfind("\n", 0, high) + 1
    lowest = max(0, first - 2000)
    before = text.rfind("\n\n", lowest, first)
    paragraph_start = lowest if before == -1 else before + 2
    expected = paragraph_start < first and _CODE_LINE.search(text, paragraph_start, first) is not None
    assert layout._code_before(first) == expected


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from(list("a\n \t\r")), max_size=600), st.integers(0, 600), st.integers(0, 600))
def test_blanks_before_a_position_end_where_a_walk_back_ends(text: str, position: int, floor: int) -> None:
    position = min(position, len(text))
    floor = min(floor, position)
    walked = position
    while walked > floor and text[walked - 1] in "\n \t\r":
        walked -= 1
    assert _before_blanks(text, position, floor) == walked


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from(list("ab\n ")), max_size=60))
def test_line_starts_are_the_positions_after_each_newline(text: str) -> None:
    assert Layout(text)._starts() == [0] + [number + 1 for number, char in enumerate(text) if char == "\n"]


@settings(max_examples=300, deadline=None)
@given(st.text(st.sampled_from(list("ab\n ")), max_size=60), st.integers(0, 60))
def test_a_line_starts_after_the_newline_before_it(text: str, position: int) -> None:
    position = min(position, len(text))
    assert Layout(text).line_start(position) == text.rfind("\n", 0, position) + 1


@pytest.mark.parametrize("position", [0, 1, 4_095, 4_096, 4_097, 9_999, 10_000, 10_001, 12_000, 14_999, 15_001])
def test_a_line_longer_than_the_window_looked_back_over_starts_where_its_newline_is(position: int) -> None:
    text = "a" * 10_000 + "\n" + "b" * 5_000 + "\n"
    assert Layout(text).line_start(position) == text.rfind("\n", 0, position) + 1


# What `_CODE_LINE` was before its indentation was taken whole (`[ \t]*+`).
_CODE_LINE_BACKTRACKING = re.compile(_CODE_LINE.pattern.replace(r"[ \t]*+(?:", r"[ \t]*(?:", 1), re.MULTILINE)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["def ", "import x", "x = 1", "if a:", "  ", "\t", "\n", "y", "=", "==", "[i]", "return",
                                 " ", "f(", ")", "else:", "from a import", "@d", "class ", "a.b", "-=", ":"]),
                max_size=20).map("".join))
def test_code_lines_found_with_their_indentation_taken_whole_are_the_backtracking_ones(text: str) -> None:
    assert _CODE_LINE_BACKTRACKING.pattern != _CODE_LINE.pattern
    found = [match.span() for match in _CODE_LINE.finditer(text)]
    assert found == [match.span() for match in _CODE_LINE_BACKTRACKING.finditer(text)]


_LITERAL_PIECES = st.lists(st.sampled_from(["[", "]", "(", ")", "{", "}", "f", "set", "a.b", "x=1", "'s'", '"d"', ",", " ",
                                            "\n", ":", "1", "true", "null", "//", "# c", "f(", "set(", "**", "+", "if"]),
                           max_size=12).map("".join)


def _repair_in_full(text: str) -> object:
    """`repair` without the shortcut for lists that start with a call: the literal, then JSON."""
    stripped = text.strip()
    value = python_literal(stripped)
    if value is not MISSING or "," not in stripped:
        return value
    try:
        return json.loads(_TRAILING_COMMA.sub(lambda m: m.group(1) or m.group(2), stripped))
    except ValueError:
        return MISSING


@settings(max_examples=600, deadline=None)
@given(st.sampled_from(["[f(", "[ g (", "[a.b(", "[\n  f (", "[set(", "[set.x(", "[None(", "[true("]), _LITERAL_PIECES)
def test_a_list_that_starts_with_a_call_repairs_as_the_literal_and_json_readings_do(head: str, rest: str) -> None:
    text = head + rest
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert repair(text) == _repair_in_full(text)
    forget_parses()


@pytest.mark.parametrize("text", ["[set()]", "[set ()]", "[ set() , set()]", "[f(x=1)]", "[f(x=1), {'a': 1}]",
                                  "[json.loads('{}')]", "[f(a=1),]", "[s\uff45\uff54()]", "[fé()]"])
def test_lists_that_start_with_a_call_at_the_edges(text: str) -> None:
    assert repair(text) == _repair_in_full(text)
    forget_parses()


def _through_ast(source: str) -> object:
    tree = _parse(source, "eval")
    found = call_from_node(tree.body) if isinstance(tree, ast.Expression) else None
    if found is None:
        return None
    shown = [tolerant_value(value) if isinstance(value, ast.expr) else value for value in found.positional]
    return found.name, repr(found.arguments), repr(shown)


def _through_plain(source: str) -> object:
    found = plain_call(source)
    if found is None:
        return None
    shown = [tolerant_value(value) for value in found.positional]
    return found.name, repr(found.arguments), repr(shown)


_SCALARS = st.one_of(
    st.integers(-10**12, 10**12).map(str),
    st.sampled_from(["1.5", "-0.0", "1e3", "'a'", '"b c"', "True", "none", "null", "false"]),
)
_VALUES = st.one_of(_SCALARS, st.lists(_SCALARS, max_size=3).map(lambda items: "[" + ", ".join(items) + "]"))


@settings(max_examples=200, deadline=None)
@given(st.lists(_VALUES, max_size=3), st.lists(st.tuples(st.sampled_from(["a", "b", "key"]), _VALUES), max_size=3))
def test_a_call_with_plain_values_by_position_reads_as_ast_reads_it(positional: list[str],
                                                                    keywords: list[tuple[str, str]]) -> None:
    source = "tools.f(" + ", ".join(positional + [f"{key}={value}" for key, value in keywords]) + ")"
    fast = _through_plain(source)
    assert fast is None or fast == _through_ast(source)
    if len({key for key, _ in keywords}) == len(keywords):
        assert fast is not None  # the plain reader takes every such call without repeated keywords


@pytest.mark.parametrize("source", ["f(a=1, 2)", "f(*a)", "f(x)", "f(1 if 2 else 3)", "print(f(1))", "f({'a': 1})",
                                    "f(class=1)", "import.f(1)", "f(1" + "0" * 5000 + ")", "f(007)"])
def test_calls_the_plain_reader_leaves_to_ast(source: str) -> None:
    assert plain_call(source) is None


_CALL_PIECES = st.lists(st.sampled_from(["f(a=1)", "g(1)", "[f(x=1)]", "x", " ", "\n", ",", "(", ")", "'s'", "-", "*",
                                         "@d", "1", ".", "~", "//c", "print(f(a=1))", "return f(a=1)",
                                         "{'f': f(a=1)}"]), max_size=5).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(_NEVER_FIRST)), _CALL_PIECES)
def test_what_pythonic_calls_never_start_with_is_never_read_as_calls(first: str, rest: str) -> None:
    source = (first + rest).strip().rstrip(";").strip()
    if source[:1] == first:
        assert _parsed_whole(source, 0) is None


@settings(max_examples=300, deadline=None)
@given(_NAME_TEXT)
def test_the_name_before_a_parenthesis_reaches_back_over_name_characters(text: str) -> None:
    position = 0
    while (found := _candidate(text, position)) is not None:
        start, paren = found
        if paren == -1:
            position = start + 1
            continue
        assert re.fullmatch(r"[\w.\-]+", text[start:paren])
        assert start == 0 or not re.fullmatch(r"[\w.\-]", text[start - 1])
        position = paren + 1


@settings(max_examples=400, deadline=None)
@given(_NAME_TEXT)
def test_the_calls_a_scan_looks_at_are_the_call_start_matches(text: str) -> None:
    found, position = [], 0
    while (candidate := _candidate(text, position)) is not None:
        start, paren = candidate
        if paren != -1:
            found.append((start, paren))
        position = (start if paren == -1 else paren) + 1
    assert found == [(match.start(1), match.end(1)) for match in CALL_START.finditer(text)]


# How sentences were split before the split was led by the blank after their end.
_SENTENCE_END_LOOKING_BACK = re.compile(r"(?<=[.!?])(?<!e\.g\.)(?<!i\.e\.)\s+(?=\S)")


@settings(max_examples=400, deadline=None)
@given(st.text(st.sampled_from(list(".!? \n\tegi.Ab\u00a0")), max_size=40))
def test_sentences_split_at_the_blanks_after_their_end_as_the_looking_back_split_does(text: str) -> None:
    assert _SENTENCE_END.split(text) == _SENTENCE_END_LOOKING_BACK.split(text)
    assert _SENTENCE_END.split(text, 1) == _SENTENCE_END_LOOKING_BACK.split(text, 1)


# ------------------------------------------------------------------ long responses

_KNOWN = {"get_weather": {"type": "object", "properties": {"city": {"type": "string"}}}}
_CALL = ToolCall(name="get_weather", arguments={"city": "Paris"})


def _filler(size: int) -> str:
    """About ``size`` characters of what models paste after an answer: prose with
    brackets and quotes, Python and JavaScript programs, JSON that is not a call,
    unclosed brackets and stray fences."""
    pieces = [
        "The function (as described in [1]) returns {\"temp\": 21} when it's sunny; see `config(a=1)` "
        "or the 'settings' page (section {2}).\n\n",
        "```python\nimport os\n\ndef load(path):\n    with open(path) as f:\n        return f.read()\n\n"
        "result = load('data.txt')\nprint(result)\n```\n\n",
        "```javascript\n// chat client\nvar source = new EventSource('http://localhost/chat');\n"
        "source.onmessage = function(event) {\n  document.querySelector('#log').textContent += event.data;\n};\n```\n\n",
        "### Instruction:\nHow would you sort a list (ascending, or [descending])? Use sorted(items, key=len) "
        "and compare {'a': 1, 'b': [2, 3]} with [x for x in range(3)].\n\n",
        "Unclosed: ( [ { and an open mark: \"it is\n\n",
    ]
    out: list[str] = []
    while sum(map(len, out)) < size:
        out.append(pieces[len(out) % len(pieces)])
    return "".join(out)


def test_a_fenced_call_before_fifty_kilobytes_of_prose_and_programs_is_the_one_call() -> None:
    text = "```python\n[get_weather(city='Paris')]\n```\n\n" + _filler(50_000)
    assert parse_tool_calls(text, known_names=_KNOWN) == [_CALL]


def test_fifty_kilobytes_of_prose_and_programs_hold_no_call() -> None:
    assert parse_tool_calls(_filler(50_000), known_names=_KNOWN) == []


def test_a_tagged_call_after_fifty_kilobytes_of_prose_and_programs_is_found() -> None:
    text = _filler(50_000) + '\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    assert parse_tool_calls(text, known_names=_KNOWN) == [_CALL]


def test_thousands_of_unclosed_brackets_around_a_call_leave_the_call() -> None:
    text = "( [ { " * 3000 + "\n\n<tool_call>\n" + '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    assert parse_tool_calls(text, known_names=_KNOWN) == [_CALL]


def test_a_call_before_thousands_of_empty_lines_is_the_one_call() -> None:
    text = "```python\n[get_weather(city='Paris')]\n```\n" + "\n" * 20_000 + "###\n" + "\n" * 20_000 + "{"
    assert parse_tool_calls(text, known_names=_KNOWN) == [_CALL]


def test_one_long_line_of_calls_in_prose_keeps_the_calls_it_always_kept() -> None:
    line = "We call " + ", ".join(f"get_weather(city='C{n}')" for n in range(300)) + " in a sentence."
    assert parse_tool_calls("```python\n[get_weather(city='Paris')]\n```\n\n" + line, known_names=_KNOWN) == [_CALL]


# ------------------------------------------------------------------ ast parses shared or skipped

_SOURCE = st.lists(st.sampled_from([
    "x = 1", "f(a=1)", "\n", "    ", "\t", "\\\n", "\\", '"""', "'a'", "#c", "if a:", "def g():", "return 1",
    "[1, 2]", "(", ")", ";", " \n", "\r\n", "\x0c", "\u00a0", "import os", "print(1)", "*a", "yield x", ",",
    "(yield)", "await g", "lambda: 1", "x := 1", "a if b else c", "**k", "=",
]), max_size=10).map("".join)


def _parsed_or_none(source: str, mode: str) -> ast.AST | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ast.parse(source, mode=mode)
        except (SyntaxError, ValueError):
            return None


@settings(max_examples=600, deadline=None)
@given(_SOURCE)
def test_what_parses_as_an_expression_parses_as_one_expression_statement(source: str) -> None:
    # `_parsed_whole` skips the expression parse when the statement parse says otherwise.
    expression = _parsed_or_none(source, "eval")
    module = _parsed_or_none(source, "exec")
    if isinstance(expression, ast.Expression):
        assert isinstance(module, ast.Module) and len(module.body) == 1 and isinstance(module.body[0], ast.Expr)
    source = source.strip()  # as `_parsed_whole` gets it (`f(a=1)\n    ` parses as a statement only)
    expression = _parsed_or_none(source, "eval")
    module = _parsed_or_none(source, "exec")
    if (  # and the other way: that statement's value is what the expression parse gives
        source and ";" not in source and isinstance(module, ast.Module) and len(module.body) == 1
        and isinstance(module.body[0], ast.Expr) and not _statement_only(module.body[0].value)
    ):
        assert isinstance(expression, ast.Expression)
        assert ast.dump(expression.body) == ast.dump(module.body[0].value)


def _program_by_dedent(body: str) -> bool:
    """`is_program` as it read every body before: the dedented body parsed."""
    module = quiet_parse(textwrap.dedent(body), "exec")
    return program_by_its_statements(module)


@settings(max_examples=800, deadline=None)
@given(_SOURCE)
def test_a_fence_body_read_stripped_is_a_program_exactly_when_its_dedented_reading_is(body: str) -> None:
    assert is_program(body) == _program_by_dedent(body)


@pytest.mark.parametrize("body", [
    "\n\nimport os\nx = 1\n  \n", "  x = 1\ny = 2", "x = 1 \\\n   \n2\n", "x = 1;;", "\u00a0x = 1", "\x0cx = 1",
    "def f():\n    return 1\n    \n", "[f(a=1)]\n", "\r\nf(a=1)\r\n",
])
def test_fence_bodies_at_the_edges_of_the_stripped_reading(body: str) -> None:
    assert is_program(body) == _program_by_dedent(body)


def _pairs_by_search(text: str) -> dict[int, int]:
    """Bracket pairing as it was written before: a search from each token."""
    pairs: dict[int, int] = {}
    stack: list[tuple[str, int]] = []
    pos = 0
    while (found := re.compile(r"""[{}\[\]()"']""").search(text, pos)) is not None:
        index = found.start()
        char = text[index]
        pos = index + 1
        if char in _OPENERS:
            stack.append((char, index))
        elif char in _CLOSER_TO_OPENER:
            for depth in range(len(stack) - 1, -1, -1):
                if stack[depth][0] == _CLOSER_TO_OPENER[char]:
                    pairs[stack[depth][1]] = index
                    del stack[depth:]
                    break
        elif stack:
            back = index - 1
            while back >= 0 and text[back] in _WHITESPACE:
                back -= 1
            if back >= 0 and text[back] in _STRING_LEAD:
                end = _string_end(text, index, char)
                if end is not None:
                    pos = end + 1
    return pairs


@settings(max_examples=800, deadline=None)
@given(st.text(st.sampled_from(list("{}[]()\"',:= \t\n\\ab")), max_size=40))
def test_brackets_pair_as_a_search_from_each_token_pairs_them(text: str) -> None:
    assert BracketIndex(text).closer(0) == _pairs_by_search(text).get(0)
    assert BracketIndex(text)._match() == _pairs_by_search(text)
    assert BracketIndex(text)._match_counted() == _pairs_by_search(text)  # (a text past the budget's length)


def test_a_text_with_more_tokens_than_the_budget_pairs_only_the_first_ones() -> None:
    text = "[" * 3 + "'a]'" + "]" * 3 + "(" * MAX_BRACKET_TOKENS + "{}"
    assert BracketIndex(text)._match() == {2: 7, 1: 8, 0: 9}  # (the `]` in the string closes nothing)


def test_no_parse_is_kept_from_one_response_to_the_next() -> None:
    text = "```python\nimport os\nx = f(a=1)\n```\n\n" + "f(a=1) and g(b)\n" * 3
    parse_tool_calls(text, known_names=_KNOWN)
    parse_tool_calls([{"name": "f", "arguments": "{'a': 1}"}])  # decoded data parses too
    assert not PARSES


def test_only_short_sources_are_remembered_up_to_a_total_and_forgotten_after_a_response() -> None:
    sources = [f"[{n}, {'x' * 9_000!r}]" for n in range(12)] + [f"[{'y' * 20_000!r}]"]
    forget_parses()  # what other tests parsed directly, outside a response
    try:
        trees = [quiet_parse(source, "eval") for source in sources]
        assert all(isinstance(tree, ast.Expression) for tree in trees)
        assert sum(len(source) for source, _ in PARSES) <= 64_000
        assert ("[" + repr("y" * 20_000) + "]", "eval") not in PARSES
        assert quiet_parse(sources[0], "eval") is trees[0]  # remembered: parsed once
    finally:
        forget_parses()
    assert not PARSES


def _explanation_with_a_pasted_program(call: str) -> str:
    """What the slowest BFCL outputs look like: the call in a fence, then the same
    explanation repeated, then a program pasted without a fence."""
    explanation = (
        "The function call should look like this: `['get_weather(city=\'Paris\')']`.\n\n"
        "The returned list should be in the format: `[func1(params_name=params_value, params_name2=params_value2...), "
        "func2(params)]`.\n\n"
    )
    program = (
        "from fastapi import APIRouter, Depends\n\nrouter = APIRouter()\n\n"
        "@router.post(\"/register\", response_model=schemas.UserResponse)\n"
        "def create_user(user: schemas.UserCreate, db: Session = Depends(get_db)):\n"
        "    user.password = utils.hash(user.password)\n    db.add(new_user)\n    db.commit()\n"
        "    return {\"access_token\": access_token, \"token_type\": \"bearer\"}\n\n"
    )
    return f"```python\n{call}\n```\n\n" + explanation * 8 + "'''\n\n" + program * 3


def test_a_fenced_call_before_repeated_explanations_and_a_pasted_program_is_the_one_call() -> None:
    text = _explanation_with_a_pasted_program("[get_weather(city='Paris')]")
    assert parse_tool_calls(text, known_names=_KNOWN) == [_CALL]
    assert parse_tool_calls(text) == [_CALL]


def test_repeated_explanations_and_a_pasted_program_alone_hold_no_call() -> None:
    text = _explanation_with_a_pasted_program("import os")
    assert parse_tool_calls(text, known_names=_KNOWN) == []


def test_a_program_fence_after_blank_lines_is_still_a_program() -> None:
    text = "```python\n\n\nimport requests\nresult = get_weather(city='Paris')\n  \nprint(result)\n```"
    assert parse_tool_calls(text, known_names=_KNOWN) == []


# Framing verdicts are kept by the text they read (a model repeats a call with the same
# words around it): a verdict read from the memo is the one a fresh layout gives.
_FRAMING_TEXT = st.lists(st.sampled_from([
    "Do not run this:", "You can run:", "Here is the call:", "f(x=1)", "g(y=2)", " ", "\n", "\n\n",
    "This is only an example.", "f is not available in the provided tools.", "<|im_start|>", "maybe",
    "{\"name\": \"f\", \"arguments\": {}}", ".", "Sure!",
]), max_size=14).map("".join)


@settings(max_examples=200, deadline=None)
@given(_FRAMING_TEXT, st.lists(st.tuples(st.integers(0, 200), st.integers(0, 60), st.booleans(), st.booleans(),
                                         st.sampled_from([(), ("f",), ("g",)]), st.integers(0, 200)), max_size=8))
def test_framing_verdicts_kept_by_their_text_are_the_ones_read_afresh(
    text: str, asks: list[tuple[int, int, bool, bool, tuple[str, ...], int]]
) -> None:
    shared = Layout(text)
    for start, length, explicit, follow, names, floor in asks:
        start = min(start, len(text))
        end, floor = min(len(text), start + length), min(floor, start)
        assert shared.framed_out(start, end, explicit=explicit, follow=follow, names=names, floor=floor) == \
            Layout(text).framed_out(start, end, explicit=explicit, follow=follow, names=names, floor=floor)


def test_the_same_follow_up_takes_back_only_the_call_it_names() -> None:
    text = ("[get_weather(city='Paris')]\n\ndelete_repo is not available in the provided tools.\n\n"
            "[delete_repo(name='x')]\n\ndelete_repo is not available in the provided tools.")
    assert parse_tool_calls(text, known_names={"get_weather": {}, "delete_repo": {}}) == [_CALL]


def test_the_same_lead_in_takes_back_a_call_in_prose_but_not_one_in_a_call_syntax() -> None:
    text = 'You can run:\n[get_weather(city="Paris")]\n\nYou can run:\n{"name": "get_weather", "arguments": {"city": "Rome"}}'
    assert parse_tool_calls(text, known_names=_KNOWN) == [ToolCall("get_weather", {"city": "Rome"})]


def test_a_call_repeated_per_made_up_turn_then_one_taken_back() -> None:
    turn = '<|im_start|>assistant\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n'
    text = turn * 30 + 'Do not run this:\n{"name": "delete_repo", "arguments": {"name": "x"}}'
    calls = parse_tool_calls(text, known_names={"get_weather": {}, "delete_repo": {}})
    assert calls and all(call == _CALL for call in calls)  # (one paragraph: each turn's call is returned)


def test_a_call_after_hundreds_of_docstring_quote_lines_is_the_one_call() -> None:
    # deepseek-coder's tail: the answer, then hundreds of lines of `"""` (quotes side by side
    # everywhere, for any reading that looks for strings written in pieces)
    text = "\n            return [\"get_weather(city='Paris')\"]\n" + '            """\n' * 400
    assert parse_tool_calls(text, known_names=_KNOWN) == [_CALL]
    assert parse_tool_calls(text) == [_CALL]


def test_a_call_grouped_through_a_long_run_of_separators_keeps_the_first_calls_framing() -> None:
    # The calls share one block however far apart the separators put them: the negation before
    # the first takes back the last, 2,400 characters on (beyond any lead-in's reach).
    text = "Never call these:\ncleanup(x=1)\n" + ";\n" * 1200 + "[get_weather(city='Paris')]"
    assert parse_tool_calls(text, known_names=_KNOWN) == []
    assert parse_tool_calls("cleanup(x=1)\n" + ";\n" * 1200 + "[get_weather(city='Paris')]",
                            known_names=_KNOWN) == [_CALL]
