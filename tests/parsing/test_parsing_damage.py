"""Damaged JSON that has one clear reading is repaired; damage without one gives no call."""

from __future__ import annotations

import pytest

from mcs import parse_tool_calls
from mcs.tools import ToolCall


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "[{'name': 'spotify.play', 'arguments': {'artist': 'Taylor Swift', 'duration': 20}}]",
            [ToolCall("spotify.play", {"artist": "Taylor Swift", "duration": 20})],
        ),
        (
            '<tool_call>\n{"arguments": {\'function\': \'x^3\', \'start_x\': -2}, "name": \'integrate\'}\n</tool_call>',
            [ToolCall("integrate", {"function": "x^3", "start_x": -2})],
        ),
        (
            '<tool_call>\n{"arguments": {"number": 450, "formatted": True}, "name": "fmt"}\n</tool_call>',
            [ToolCall("fmt", {"number": 450, "formatted": True})],
        ),
        (
            '{"name": "f", "arguments": {"a": [1, 2,], "b": true,},}',
            [ToolCall("f", {"a": [1, 2], "b": True})],
        ),
        (
            "{'name': 'f', 'arguments': {'on': true, 'off': false, 'none': null}}",
            [ToolCall("f", {"on": True, "off": False, "none": None})],
        ),
        (
            '{"name": "plot", "arguments": {"start": 0.0, "end": 6.2832,  // 2 * pi\n "n": 5}}',
            [ToolCall("plot", {"start": 0.0, "end": 6.2832, "n": 5})],
        ),
        (
            '{"name": "plot", "arguments": {"end": 2 * 3.14159}}',
            [ToolCall("plot", {"end": "2 * 3.14159"})],
        ),
        (
            '{"name": "calc\\_area", "arguments": {"base": 10}}',
            [ToolCall("calc_area", {"base": 10})],
        ),
        (
            '{"name": "f", "arguments": "{\\"a\\": 1}"}',
            [ToolCall("f", {"a": 1})],
        ),
    ],
    ids=[
        "python-dict-single-quotes",
        "mixed-quotes-inside-tool-call",
        "python-true",
        "trailing-commas",
        "json-words-in-python-dict",
        "line-comment",
        "expression-kept-as-text",
        "markdown-escaped-name",
        "json-string-arguments",
    ],
)
def test_damage_is_repaired(text: str, expected: list[ToolCall]) -> None:
    assert parse_tool_calls(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "f", "arguments": {"a": ',
        '{"name": "f", "arguments": "not json at all"}',
        '{"name": "f", "arguments": [1, 2]}',
        "{'name': 'f', 'arguments': {1+2j: 3}}",
    ],
    ids=["truncated", "string-arguments", "list-arguments", "complex-key"],
)
def test_arguments_without_an_object_reading_give_no_call(text: str) -> None:
    assert parse_tool_calls(text) == []
