"""Plain pythonic calls are read without ast, with exactly the result ast gives."""

from __future__ import annotations

import ast
import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcs.parsing.pythonic import _parsed_whole, _plain_calls, parse_whole


def _through_ast(text: str) -> Any:
    return _parsed_whole(text.strip(), 0)


def _shown(calls: Any) -> str:
    """``repr`` of the calls with positional ``ast`` nodes shown by content, not address."""
    if calls is None:
        return "None"
    return repr([dataclasses.replace(call, positional=tuple(
        ast.dump(value) if isinstance(value, ast.AST) else value for value in call.positional)) for call in calls])


@pytest.mark.parametrize(
    "text",
    [
        "[calculate_triangle_area(base=10, height=5, unit='units')]",
        "f()",
        "[a.b(x=[1, 'y', -2.5], z=None), g(k=true, n=null)]",
        "[f(a='g(x=1)'), h( b = [ ] , ) ,]",
        "[ f(a=1e5, b=-0, c=-0.0, d=\"double\") ]",
        "f(a=[1,2,],b='')",
        "[functions.get_weather(city='Paris')]",
    ],
)
def test_plain_calls_read_as_ast_reads_them(text: str) -> None:
    fast = _plain_calls(text)
    assert fast is not None
    assert repr(fast) == repr(_through_ast(text))


@pytest.mark.parametrize(
    "text",
    ["f(a=1, a=2)", "f(class=1)", "f(a=007)", "import.f(a=1)", "f(1)", "f(a={'b': 1})", "f(a='it\\'s')",
     "f(a=1.)", "f(a=x)", "[f(a=1)] and more", "f(a=[[1]])", "f(a='line\nbreak')",
     "[f(a=" + "9" * 5000 + "), g(b=1)]"],  # more digits than Python converts to an int
)
def test_anything_else_is_left_to_ast(text: str) -> None:
    assert _plain_calls(text) is None
    assert _shown(parse_whole(text)) == _shown(_through_ast(text))


identifiers = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
scalars = st.one_of(
    st.integers(-10**20, 10**20).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr).filter(lambda t: re.fullmatch(r"-?\d+\.\d+(e[-+]\d+)?", t)),
    st.text(st.characters(blacklist_characters="'\\\n", blacklist_categories=("Cs",)), max_size=8).map(lambda t: f"'{t}'"),
    st.sampled_from(["True", "False", "None", "true", "false", "null", "none"]),
)
values = st.one_of(scalars, st.lists(scalars, max_size=3).map(lambda items: "[" + ", ".join(items) + "]"))
calls = st.builds(
    lambda name, args: f"{name}({', '.join(f'{k}={v}' for k, v in args)})",
    st.lists(identifiers, min_size=1, max_size=2).map(".".join),
    st.lists(st.tuples(identifiers, values), max_size=4),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(calls, min_size=1, max_size=3), st.booleans())
def test_generated_plain_calls_read_the_same_both_ways(items: list[str], bracketed: bool) -> None:
    text = "[" + ", ".join(items) + "]" if bracketed or len(items) > 1 else items[0]
    assert _shown(parse_whole(text)) == _shown(_through_ast(text))


def test_every_bfcl_output_the_plain_reader_takes_reads_as_ast_reads_it(corpus: Path) -> None:
    outputs = corpus / "bfcl" / "v1" / "model_outputs"
    checked = 0
    for path in sorted(outputs.glob("*/*_result.json")):
        for line in path.read_text().splitlines():
            result = json.loads(line)["result"] if line.strip() else None
            if not isinstance(result, str):
                continue
            source = result.strip().rstrip(";").strip()
            fast = _plain_calls(source) if source else None
            if fast is not None:
                checked += 1
                assert repr(fast) == repr(_parsed_whole(source, 0)), source
    assert checked > 1000



@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("get-weather(city='Paris')", ["get-weather"]),
        ("[a.b-c(x=1), d-e(y=2)]", ["a.b-c", "d-e"]),
        ("a__mcs_hyphen__b(x=1)", ["a__mcs_hyphen__b"]),  # what the model wrote, by either reader
    ],
)
def test_hyphenated_names_read_as_written(text: str, names: list[str]) -> None:
    assert [call.name for call in parse_whole(text) or []] == names
    assert [call.name for call in _through_ast(text) or []] == names


def test_a_hyphenated_call_inside_an_argument_keeps_its_hyphen_in_the_source_text() -> None:
    calls = parse_whole("f(x=g-h(1), y=[1, a.b-c(2)])")
    assert calls is not None
    assert calls[0].arguments == {"x": "g-h(1)", "y": [1, "a.b-c(2)"]}
