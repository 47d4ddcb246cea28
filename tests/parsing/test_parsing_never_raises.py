"""Whatever it is given, the parser returns a list of ToolCall and never raises."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mcs import parse_tool_calls
from mcs.parsing import MAX_INPUT_CHARS
from mcs.tools import ToolCall

FRAGMENTS = [
    "<tool_call>", "</tool_call>", "{", "}", "[", "]", "(", ")", '"', "'", ",", ":", "=",
    "```", "```json\n", "[TOOL_CALLS]", "[ARGS]", "<|python_tag|>", "<function=f>", "</function>",
    "<parameter=a>", "<arg_key>", "<arg_value>", "Action:", "\nAction Input:", "to=functions.f",
    "<|message|>", "<|tool_call_begin|>", "<|tool_sep|>", "<\uff5ctool\u2581call\u2581begin\uff5c>",
    ">>>", "\\_", "True", "null", "name", "arguments", '"name": "f"', '"arguments": {', "f(", "a=1",
    "\n", " ", "...", "\\", "<invoke name=\"f\">", "print(", "default_api.",
]

text_soup = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=8)), max_size=40).map("".join)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=12),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(
        st.sampled_from(["name", "tool", "arguments", "parameters", "function", "tool_calls", "content",
                         "type", "input", "args", "functionCall", "parts", "choices", "message", "id"])
        | st.text(max_size=6),
        children,
        max_size=4,
    ),
    max_leaves=25,
)


def _check(result: Any) -> None:
    assert isinstance(result, list)
    for call in result:
        assert isinstance(call, ToolCall)
        assert isinstance(call.name, str) and call.name
        assert isinstance(call.arguments, dict)


@settings(deadline=None, max_examples=400)
@given(text_soup, st.none() | st.sets(st.sampled_from(["f", "a", "name"])))
def test_any_text_built_from_format_markers(text: str, known: set[str] | None) -> None:
    _check(parse_tool_calls(text, known_names=known))


@settings(deadline=None, max_examples=200)
@given(st.text(max_size=300))
def test_any_unicode_text(text: str) -> None:
    _check(parse_tool_calls(text))


@settings(deadline=None, max_examples=200)
@given(st.binary(max_size=300))
def test_any_bytes(raw: bytes) -> None:
    _check(parse_tool_calls(raw))


@settings(deadline=None, max_examples=200)
@given(json_values)
def test_any_nested_data_and_its_json_text(value: Any) -> None:
    _check(parse_tool_calls(value))
    _check(parse_tool_calls(json.dumps(value)))


def test_objects_of_any_type() -> None:
    class Broken:
        def model_dump(self) -> Any:
            raise RuntimeError("SDK bug")

    for value in (None, 3, 2.5, object(), Broken(), {1: 2}, [None], (1, 2), {"tool_calls": None}, ToolCall("x")):
        _check(parse_tool_calls(value))


def test_deep_nesting() -> None:
    depth = 100_000
    _check(parse_tool_calls("[" * depth + "]" * depth))
    _check(parse_tool_calls("{\"a\":" * depth))
    nested: Any = {"name": "f", "arguments": {}}
    for _ in range(5_000):
        nested = {"x": nested}
    _check(parse_tool_calls(nested))


def test_huge_inputs_are_cut_at_the_documented_limit() -> None:
    call = '{"name": "f", "arguments": {}}'
    assert parse_tool_calls("x" * (MAX_INPUT_CHARS - 100) + "\n" + call) == [ToolCall("f", {})]
    assert parse_tool_calls("x" * MAX_INPUT_CHARS + "\n" + call) == []


def test_huge_adversarial_texts_return() -> None:
    size = MAX_INPUT_CHARS
    for text in (
        "{" * size,
        "[" * size,
        "f(" * (size // 2),
        '{"a": "' + "x" * size,
        "```\n" * (size // 4),
        "<tool_call>" * (size // 11),
        "Action: a\nAction Input: {" * (size // 30),
        "'a', " * (size // 5),
        "a." * (size // 2),
        "to=functions.f <|message|>{" * (size // 28),
        ">>>f\n{" * (size // 6),
        "<function=f><parameter=a>" * (size // 25),
        "<tool_call>f\n<arg_key>a</arg_key><arg_value>" * (size // 45),
        "<invoke name=\"f\"><parameter name=\"a\">" * (size // 40),
        "name\n{" * (size // 6),
        "\\_" * (size // 2),
        "\n" * size,
        "}.a" * (size // 3),
        "x=$1, " * (size // 6),
        "> a\n" * (size // 4 - 10) + "f(x=1)",
        "> a\nb\n" * (size // 6),
        ' "a\n' * (size // 4),
    ):
        _check(parse_tool_calls(text))
