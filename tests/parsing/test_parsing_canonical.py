"""The canonical MCS call is read by a fast path that answers exactly as the full reader."""

from __future__ import annotations

import json
from typing import Any

import pydantic_core
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcs import parse_tool_calls
from mcs.parsing import (
    _PLAIN_NAMES,
    _PLAIN_NAMES_KEPT,
    _canonical_text,
    _known_canonical_call,
    _Names,
    read_tool_calls,
)
from mcs.parsing.text import read_text
from mcs.tools import ToolCall
from mcs.validation import _all_text


def _full_reader(text: str, known: frozenset[str] | None) -> list[Any]:
    """What parse_tool_calls answered before the fast path (it never raises: a reader
    that breaks gives no calls)."""
    names = _Names(known)
    try:
        return names.finish(read_text(text, names.keep))
    except Exception:
        return []


@pytest.mark.parametrize(
    "text",
    [
        '{"tool": "add", "arguments": {"a": 1, "b": 2}}',
        '  {"name": "functions.add", "arguments": {"a": "1"}}\n',
        '{"tool": "get", "arguments": {}}',
        '{"tool": "add", "arguments": {"type": "object", "properties": {"a": {}}}}',  # a schema, not a call
        '{"tool": "Final Answer", "arguments": {"text": "done"}}',
        '{"tool": "add", "arguments": {"a": 1}, "id": "c1"}',
        '{"tool": "add", "parameters": {"a": 1}}',
        '{"tool": "calc\\\\_area", "arguments": {"w": 2}}',
        '{"tool": "add", "arguments": {"note": "</think>"}}',
        '{"tool": "add", "arguments": {"a": NaN}}',
        "{'tool': 'add', 'arguments': {'a': 1}}",
        '{"tool": "add", "arguments": {"a": "\\ud800"}}',
    ],
)
@pytest.mark.parametrize("known", [None, frozenset({"add", "get", "calc_area"})])
def test_the_fast_path_finds_what_the_full_reader_finds(text: str, known: frozenset[str] | None) -> None:
    assert repr(parse_tool_calls(text, known_names=known)) == repr(_full_reader(text, known))


def test_only_exactly_canonical_objects_take_the_fast_path() -> None:
    assert _canonical_text('{"tool": "add", "arguments": {"a": 1}}') is not None
    assert _canonical_text('{"tool": "add", "arguments": {"a": 1}, "id": "x"}') is None
    assert _canonical_text('{"tool": "add", "arguments": "{\\"a\\": 1}"}') is None
    assert _canonical_text('{"tool": "calc\\\\_area", "arguments": {}}') is None
    assert _canonical_text('[{"tool": "add", "arguments": {}}]') is None


names = st.sampled_from(["add", "functions.add", "Final Answer", "a.b", " add ", "", "x" * 300, "add\n"])
values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(name=names, arguments=st.dictionaries(st.text(max_size=10), values, max_size=4),
       key=st.sampled_from(["tool", "name"]))
def test_any_canonical_call_reads_the_same_both_ways(name: str, arguments: dict[str, Any], key: str) -> None:
    text = json.dumps({key: name, "arguments": arguments})
    for known in (None, frozenset({"add", "a.b"})):
        assert parse_tool_calls(text, known_names=known) == _full_reader(text, known)


# What drivers pass: each known name with its input schema (a dict), for the one-frame path.
KNOWN_SCHEMAS: dict[str, Any] = {
    "add": {"type": "object", "properties": {"a": {"type": "integer"}}}, "get": {}, "a.b": {},
    "final_answer": {}, "Final_Answer": {}, "y" * 300: {}, "calc_area": {},
}


@pytest.mark.parametrize(
    "text",
    [
        '{"tool": "add", "arguments": {"a": 1, "b": 2}}',
        '{"name": "add", "arguments": {"a": 1}}',
        '{"tool": "get", "arguments": {}}',
        '{"tool": "unknown", "arguments": {"a": 1}}',
        '{"tool": "final_answer", "arguments": {"text": "done"}}',
        '{"tool": "Final_Answer", "arguments": {"text": "done"}}',
        '{"tool": "a.b", "arguments": {"x": 1}}',
        '{"tool": "' + "y" * 300 + '", "arguments": {}}',
        '{"tool": "add", "arguments": {"type": "object", "properties": {"a": {}}}}',
        '{"tool": "add", "arguments": {"q": "why?"}}',
        '{"tool": "add", "arguments": {"repo": "<repo name>"}}',
        '{"tool": "add", "arguments": {"note": "</think>"}}',
        '{"tool": "calc\\\\_area", "arguments": {"w": 2}}',
        '{"tool": "add", "arguments": {"path": "C:\\\\dir\\\\file"}}',  # a backslash, none before "_"
        '{"tool": "add", "arguments": {"q": "say \\"hi\\"", "path": "a\\\\_b"}}',  # one before "_" later on
        '{"tool": "add", "arguments": {"a": NaN}}',
        '{"tool": "add", "arguments": {"a": "\\ud800"}}',
        '{"tool": "add", "arguments": {"a": 1}, "id": "c1"}',
        '{"tool": "add", "arguments": "{\\"a\\": 1}"}',
        '{"tool": "add", "name": "get", "arguments": {}}',
        ' {"tool": "add", "arguments": {"a": 1}}',
        '{"tool": "add", "arguments": {"a": 1}} trailing',
    ],
)
def test_a_drivers_known_names_with_schemas_read_as_the_full_reader_reads_them(text: str) -> None:
    assert repr(parse_tool_calls(text, known_names=KNOWN_SCHEMAS)) == repr(_full_reader(text, KNOWN_SCHEMAS))


def test_the_one_frame_path_takes_only_known_names_in_texts_without_placeholder_marks() -> None:
    assert _known_canonical_call('{"tool": "add", "arguments": {"a": 1}}', KNOWN_SCHEMAS) is not None
    for text in ('{"tool": "unknown", "arguments": {}}', '{"tool": "add", "arguments": {"q": "why?"}}',
                 '{"tool": "add", "arguments": {"q": "a<b"}}', '{"tool": "final_answer", "arguments": {}}'):
        assert _known_canonical_call(text, KNOWN_SCHEMAS) is None
    assert _known_canonical_call('{"tool": "add", "arguments": {}}', frozenset({"add"})) is None


def test_a_name_the_one_frame_path_refused_is_refused_again_and_one_it_took_is_taken_again() -> None:
    for _ in range(3):
        assert _known_canonical_call('{"tool": "final_answer", "arguments": {}}', KNOWN_SCHEMAS) is None
        assert _known_canonical_call('{"tool": "a.b", "arguments": {}}', KNOWN_SCHEMAS) is None
        call = _known_canonical_call('{"tool": "add", "arguments": {"a": 1}}', KNOWN_SCHEMAS)
        assert call is not None and (call.name, call.arguments, call.id) == ("add", {"a": 1}, None)
    assert "final_answer" not in _PLAIN_NAMES and "a.b" not in _PLAIN_NAMES and "add" in _PLAIN_NAMES


def test_the_names_the_one_frame_path_remembers_stay_bounded() -> None:
    many = {f"tool_{index}": {} for index in range(_PLAIN_NAMES_KEPT + 10)}
    for name in many:
        assert _known_canonical_call(json.dumps({"tool": name, "arguments": {}}), many) is not None
    assert 0 < len(_PLAIN_NAMES) <= _PLAIN_NAMES_KEPT


known_names = st.sampled_from(["add", "get", "a.b", "final_answer", "Final_Answer", "y" * 300, "nope", "calc_area"])
texts = st.text(alphabet=st.sampled_from(list("ab?<>_\\ \"")), max_size=6)


@settings(max_examples=300, deadline=None)
@given(name=known_names, arguments=st.dictionaries(st.text(max_size=10) | texts, values | texts, max_size=4),
       key=st.sampled_from(["tool", "name"]))
def test_any_canonical_call_of_a_known_name_reads_the_same_both_ways(name: str, arguments: dict[str, Any],
                                                                     key: str) -> None:
    text = json.dumps({key: name, "arguments": arguments})
    assert parse_tool_calls(text, known_names=KNOWN_SCHEMAS) == _full_reader(text, KNOWN_SCHEMAS)


def test_only_the_one_frame_path_vouches_for_its_arguments_text() -> None:
    known = {"add": {"type": "object"}}
    canonical = '{"tool": "add", "arguments": {"a": "x"}}'
    assert read_tool_calls(canonical, known) == ([ToolCall("add", {"a": "x"})], True)
    for other in ('Sure: {"tool": "add", "arguments": {"a": "x"}}', "add(a='x')",
                  '{"tool": "add", "arguments": {"a": "\\ud800"}}', {"tool": "add", "arguments": {"a": "x"}}):
        calls, vouched = read_tool_calls(other, known)
        assert not vouched
        assert calls == parse_tool_calls(other, known_names=known)


# Lone surrogates written every way JSON can: escaped (leading, trailing, reversed pair), and raw.
surrogate_texts = st.lists(
    st.one_of(st.characters(blacklist_categories=("Cs",)),
              st.sampled_from(["\\ud800", "\\udfff", "\\udc00\\ud800", "\\ud83d\\ude00"])),
    max_size=12,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(surrogate_texts, surrogate_texts)
def test_what_pydantics_json_reader_decodes_is_always_valid_unicode_text(key: str, value: str) -> None:
    # The premise of read_tool_calls' word: the one-frame path's arguments come from this reader.
    text = '{"' + key.replace('"', "") + '": ["' + value.replace('"', "") + '"]}'
    try:
        decoded = pydantic_core.from_json(text)
    except ValueError:
        return  # refused: nothing is vouched for
    assert _all_text(decoded)
    assert not any(0xD800 <= ord(c) <= 0xDFFF for k, v in decoded.items() for c in k + "".join(v))


def test_a_raw_lone_surrogate_never_reaches_pydantics_json_reader_as_text() -> None:
    with pytest.raises((TypeError, ValueError)):
        pydantic_core.from_json('{"tool": "add", "arguments": {"a": "\ud800"}}')
