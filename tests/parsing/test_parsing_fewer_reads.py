"""What the parser no longer reads gives exactly what reading it gave.

Six readings are skipped on long texts: the arguments of a call found in prose whose
name the caller would drop, the ``ast`` parse of a source that opens with a statement
keyword (``def f(x):``, ``import os``) when only calls are looked for, a second parse of a
fence body already read as one expression, the markup substitution of a gap between two
calls that holds a word and no markup, a name resolved again within a response, and a
fence body read again when a fence restates it.
Each is checked against the full reading on generated and hand-picked sources (calls in
strings, comments, decorators, f-strings, nested and multi-line calls, sources that do
not parse), then on whole responses. Speed is never asserted.
"""

from __future__ import annotations

import ast
import textwrap
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.parsing_oracles import program_by_its_statements

from mcs.parsing import _Names, parse_tool_calls
from mcs.parsing._common import WEAK, Found
from mcs.parsing.issued import Layout, is_program
from mcs.parsing.jsonspans import BracketIndex, forget_parses, parsed_already, quiet_parse
from mcs.parsing.pythonic import (
    _STATEMENT_FIRST,
    _parsed_whole,
    call_at,
    call_from_node,
    parse_whole,
)
from mcs.parsing.text import _MARKUP, _SEPARATION, _groups, _scan_spans
from mcs.tools import ToolCall

# ------------------------------------------------------------------ a dropped call is checked, not read

# Argument pieces that reach every case of `call_from_node`: literals, names, nested calls,
# starred and double-starred arguments, dicts with spread, tuple and expression keys, f-strings.
_ARGUMENT = st.sampled_from([
    "1", "'a'", "x", "a.b", "g(1)", "g(h(x=1))", "[1, y]", "(1, 2)", "{1, 2}", "{'k': 1}", "{'k': g(1)}",
    "{**d}", "{(1, 2): 3}", "{k: 1}", "{'k': [1, {**d}]}", "*a", "**d", "**{'k': 1}", "**{k: 1}", "lambda: 1",
    "f'{x}'", "f'{x!r:>4}'", "rf'\\d{x}'", "1 if x else 2", "x + 2 * y", "...", "1j", "b'x'", "not x",
    "[i for i in y]", "x[0]", "await z", "(yield)", "-1", "{'k': f'{x}'}", "'it''s'",
])
_KEYWORD = st.sampled_from(["a", "b", "key"])


@st.composite
def _call_source(draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(["f", "tools.f", "print", "db.session.add", "get-weather"]))
    positional = draw(st.lists(_ARGUMENT, max_size=3))
    keywords = [f"{key}={value}" if not value.startswith("*") else value
                for key, value in draw(st.lists(st.tuples(_KEYWORD, _ARGUMENT), max_size=3))]
    inner = ", ".join(positional + keywords)
    if name == "print" and draw(st.booleans()):
        inner = f"g({inner})"  # print(g(...)): the call is g's
    return f"{name}({inner})"


def _read(found: Found | None) -> tuple[str, int] | None:
    return None if found is None else (found.name, found.confidence)


def _whole(found: Found) -> tuple[object, ...]:
    """Everything a found call holds (``ast`` nodes as their dump: nodes compare by identity)."""
    positional = [ast.dump(value) if isinstance(value, ast.AST) else value for value in found.positional]
    return found.name, repr(found.arguments), found.id, found.confidence, positional


@settings(max_examples=600, deadline=None)
@given(_call_source())
def test_a_dropped_call_is_a_call_exactly_when_its_arguments_read(source: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            node = ast.parse(source, mode="eval").body
        except SyntaxError:
            return
    read = call_from_node(node, WEAK)
    checked = call_from_node(node, WEAK, refuses=lambda name: True)
    assert _read(checked) == _read(read)
    if checked is not None:
        assert checked.arguments == {} and checked.positional == ()


@settings(max_examples=400, deadline=None)
@given(_call_source(), st.booleans())
def test_a_call_found_in_text_ends_where_it_ended_whether_or_not_it_is_dropped(source: str, dropped: bool) -> None:
    text = f"x = 1\n{source}\n"
    index = BracketIndex(text)
    start, paren = text.index(source), text.index("(")
    read = call_at(text, start, paren, index)
    checked = call_at(text, start, paren, index, refuses=lambda name: dropped)
    assert (read is None) == (checked is None)
    if read is not None and checked is not None:
        assert (checked[0].name, checked[1]) == (read[0].name, read[1])
        if not dropped:
            assert _whole(checked[0]) == _whole(read[0])


@pytest.mark.parametrize("source", [
    "f(**x)", "f(*a)", "f({**a})", "f(x={(1, 2): 3})", "f(x={a: 1})", "f(x=[{**a}])", "f({'a': g(1)})", "f({1: 2})",
    "print(g(x=1))", "print(g(*a))", "f(x=f'{y}')", "f(x=f'{y!r:>{w}}')", "f(x=1)(y=2)", "f(x=lambda: g(1))",
    "f(a, b, c=d.e)", "f(x=" + "1 + " * 80 + "1)", "f(x='\t')",
])
def test_dropped_calls_at_the_edges_of_reading_are_what_reading_gives(source: str) -> None:
    text = f"{source}\n"
    index = BracketIndex(text)
    read = call_at(text, 0, text.index("("), index)
    checked = call_at(text, 0, text.index("("), index, refuses=lambda name: True)
    assert (read is None) == (checked is None)
    assert (read and (read[0].name, read[1])) == (checked and (checked[0].name, checked[1]))


def _pasted_program(known_call: str) -> str:
    return textwrap.dedent(f"""\
        Here is how to do it:

        {known_call}

        #tests/test_app.py
        import unittest
        from app import app, db, User

        class AppTestCase(unittest.TestCase):
            @patch.object(db, "session", autospec=True)
            def setUp(self):
                self.app = app.test_client()
                db.create_all()

            def test_user(self):
                user = User(username='test_user', password=f"{{secret}}")
                db.session.add(user)  # add(user) is a comment
                self.assertEqual(len(User.query.all()), 1)
                print("db.session.add(user) inside a string")
                migrations.AlterField(model_name='user', name='email',
                                      field=models.EmailField(max_length=254))
        render(request, 'chat.html', {{'response': response_message}})
        this line does not parse ( [
        """)


_KNOWN = {"get_weather": {"type": "object", "properties": {"city": {"type": "string"}}}}


@pytest.mark.parametrize("known_call", [
    "get_weather(city='Paris')", "[get_weather(city='Paris')]", "print(get_weather(city='Paris'))",
    "get_weather(city=f'{x}')", "get_weather(city='Paris', **{'unit': 'C'})",
])
def test_spans_found_with_dropped_calls_unread_are_the_spans_found_reading_them(known_call: str) -> None:
    text = _pasted_program(known_call)
    layout = Layout(text)
    names = _Names(_KNOWN)

    def refuses(name: str) -> bool:
        return not names.keep([Found(name, {}, None, WEAK)])

    read = _scan_spans(text, layout.may_start)
    checked = _scan_spans(text, layout.may_start, refuses)
    assert any(refuses(calls[0].name) for calls, *_ in checked)  # the program's calls are found, unread
    assert any(not refuses(calls[0].name) for calls, *_ in checked)  # and the known call, read
    assert [(start, end, [call.name for call in calls]) for calls, start, end, _ in checked] == [
        (start, end, [call.name for call in calls]) for calls, start, end, _ in read
    ]
    kept = [(start, end, [_whole(call) for call in calls]) for calls, start, end, _ in checked
            if not refuses(calls[0].name)]
    assert kept == [(start, end, [_whole(call) for call in calls]) for calls, start, end, _ in read
                    if not refuses(calls[0].name)]


def test_a_known_call_before_a_pasted_program_is_the_one_call() -> None:
    assert parse_tool_calls(_pasted_program("get_weather(city='Paris')"), known_names=_KNOWN) == [
        ToolCall(name="get_weather", arguments={"city": "Paris"})
    ]


def test_a_pasted_program_alone_holds_no_known_call() -> None:
    assert parse_tool_calls(_pasted_program("That is all."), known_names=_KNOWN) == []


# ------------------------------------------------------------------ statement keywords first

_STATEMENT_REST = st.lists(st.sampled_from([
    "f(a=1)", "x", " ", "\n", "\n    ", ":", "(", ")", "[", "]", "=", ",", ";", "'s'", "#c", "import y", "as z",
    "in g(b=2)", "-", "return f(x=1)", "\\\n", "print(f(a=1))", "{'f': f(a=1)}",
]), max_size=8).map("".join)
_STATEMENT_KEYWORDS = ["def", "class", "import", "from", "if", "elif", "else", "for", "while", "with", "try", "except",
                       "finally", "async", "global", "nonlocal", "del", "assert", "raise", "pass", "break", "continue"]


@settings(max_examples=800, deadline=None)
@given(st.sampled_from(_STATEMENT_KEYWORDS), st.sampled_from([" ", "\t", "  "]), st.sampled_from(["f", "x", "_a", "g-h"]),
       _STATEMENT_REST)
def test_a_source_opening_with_a_statement_keyword_holds_no_calls(keyword: str, blank: str, name: str,
                                                                  rest: str) -> None:
    source = f"{keyword}{blank}{name}{rest}".strip().rstrip(";").strip()
    assert _STATEMENT_FIRST.match(source)
    forget_parses()
    assert _parsed_whole(source, 0) is None  # the full reading, which the keyword now skips
    assert parse_whole(source) is None


@pytest.mark.parametrize("source", [
    "del (x=1)", "del(x=1)", "import-f(a=1)", "def-f(a=1)", "if(a=1)", "from . import x", "return f(a=1)",
    "not f(a=1)", "await f(a=1)", "match(a=1)", "print f(a=1)", "lambda: f(a=1)", "defer(a=1)", "iffy(a=1)",
])
def test_sources_the_statement_keywords_leave_to_the_full_reading(source: str) -> None:
    assert _STATEMENT_FIRST.match(source) is None or source.split()[0] in _STATEMENT_KEYWORDS


# ------------------------------------------------------------------ a fence parsed once

_BODY = st.lists(st.sampled_from([
    "x = 1", "f(a=1)", "[f(a=1), g(b=2)]", "[[1, 2], [3]]", "{'name': 'f', 'parameters': {'a': 1}}", "'doc'",
    "1 + 2", "await g", "(yield)", "lambda: 1", "a if b else c", "*a, b", "x := 1", "\n", "    ", "#c", "(", ")",
    ";", "return f(x=1)", "{1, 2}", "(1, 2)", "print(1)", "g-h(a=1)", "['f'](a=1)",
]), max_size=6).map("".join)


def _program_unshared(body: str) -> bool:
    """`is_program` as it read every body before: its own statement parse, nothing shared."""
    forget_parses()
    stripped = body.strip()
    whole = stripped if stripped and stripped[-1] not in ";\\" and stripped == body.strip(" \t\r\n") and (
        not body[: len(body) - len(body.lstrip())] or body[: len(body) - len(body.lstrip())][-1] == "\n"
    ) else None
    module = quiet_parse(whole or textwrap.dedent(body), "exec")
    forget_parses()
    return program_by_its_statements(module)


@settings(max_examples=800, deadline=None)
@given(_BODY, st.sampled_from(["", "\n", "  ", "\n\n"]))
def test_a_fence_read_as_one_expression_first_is_a_program_exactly_when_its_own_parse_says(body: str,
                                                                                          around: str) -> None:
    body = around + body + around
    expected = _program_unshared(body)
    parse_whole(body.strip())  # what reads a fence first, leaving its parse behind
    try:
        assert is_program(body) == expected
    finally:
        forget_parses()


def test_a_fence_read_as_a_list_of_data_is_judged_from_that_reading() -> None:
    body = "[{'name': 'f', 'parameters': {'a': 1}}]"
    assert parse_whole(body) is None
    assert isinstance(parsed_already(body, "eval"), ast.Expression)
    assert is_program(body) is False
    forget_parses()
    assert parsed_already(body, "eval") is None


# ------------------------------------------------------------------ names resolved once per response


@pytest.mark.parametrize("name", ["spotify.play", "spotify_play", "tools.spotify_play", "calc\\_area", "calc_area",
                                  "unknown", "a.b.c.spotify.play", ""])
def test_a_name_resolves_the_same_the_second_time_as_the_first(name: str) -> None:
    known = {"spotify.play": {}, "calc_area": {}}
    names = _Names(known)
    first = names.resolve(name)
    assert names.resolve(name) == first == _Names(known).resolve(name)


# ------------------------------------------------------------------ spans grouped without a substitution


def _groups_by_substitution(text: str, spans: list[tuple[list[Found], int, int, bool]]) -> list[list[int]]:
    """`_groups` as it read every gap before: markup taken away first, then the separators."""
    groups: list[list[int]] = []
    for number, span in enumerate(spans):
        if groups:
            between = _MARKUP.sub(" ", text[spans[groups[-1][-1]][2] : span[1]])
            if _SEPARATION.fullmatch(between) and "\n\n" not in between.replace(" ", "").replace("\t", ""):
                groups[-1].append(number)
                continue
        groups.append([number])
    return groups


_GAP = st.lists(st.sampled_from([" ", "\n", "\n\n", "\n \n", ",", ";", "[", "]", "<br>", "<b>x</b>", "[TOOL_CALLS]",
                                 "and", "1.", "12)", "-", "*", "`", "'", '"', "\u2022", "é", "_", "<", "(", ")"]),
                max_size=6).map("".join)


@settings(max_examples=600, deadline=None)
@given(st.lists(_GAP, min_size=1, max_size=5))
def test_calls_are_grouped_as_when_every_gap_lost_its_markup_first(gaps: list[str]) -> None:
    text, spans = "", []
    for gap in gaps:
        text += gap
        spans.append(([Found("f", {"a": 1})], len(text), len(text) + 6, False))
        text += "f(a=1)"
    grouped = [[spans.index(span) for span in group] for group in _groups(text, spans)]
    assert grouped == _groups_by_substitution(text, spans)


# ------------------------------------------------------------------ a restated fence read once

_CALL_OBJECT = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
_WEATHER = {"get_weather": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}


def test_a_fence_after_the_same_fence_framed_out_is_read_as_its_own() -> None:
    # The first fence is negated. The second, with the same body, is a call in a call syntax:
    # words to the reader ("you can") do not take it back, as they would a call found by shape.
    text = (f"Do not run this one:\n```json\n{_CALL_OBJECT}\n```\n\n"
            f"You can use this call:\n```json\n{_CALL_OBJECT}\n```\n")
    assert parse_tool_calls(text, known_names=_WEATHER) == [ToolCall("get_weather", {"city": "Paris"})]


def test_a_call_restated_in_fences_is_returned_once() -> None:
    fence = "```python\n[get_weather(city='Paris')]\n```"
    text = f"{fence}\n\n### Response:\n\n{fence}\n\n### Response:\n{fence}\n"
    assert parse_tool_calls(text, known_names=_WEATHER) == [ToolCall("get_weather", {"city": "Paris"})]


def test_a_fence_tagged_as_output_is_not_read_as_the_same_body_untagged() -> None:
    body = "get_weather(city='Rome')"
    printed = f"It printed:\n```output\n{body}\n```\n\nNow the call:\n```python\n{body}\n```\n"
    assert parse_tool_calls(printed, known_names=_WEATHER) == [ToolCall("get_weather", {"city": "Rome"})]
    called = f"The call:\n```python\n{body}\n```\n\nIt printed:\n```output\n{body}\n```\n"
    assert parse_tool_calls(called, known_names=_WEATHER) == [ToolCall("get_weather", {"city": "Rome"})]


def test_a_restated_fence_with_positional_arguments_gives_records_named_from_the_schema() -> None:
    fence = "```python\nget_weather('Paris')\n```"
    calls = parse_tool_calls(f"{fence}\nThen again:\n{fence}\n", known_names=_WEATHER)
    assert calls == [ToolCall("get_weather", {"city": "Paris"})]
