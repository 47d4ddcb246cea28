"""What reaches a model is bounded: cut text and values carry a marker; a value nested too
deep for the code after it is recognised without recursion."""

from __future__ import annotations

import json

import pytest

from mcs.truncation import MAX_JSON_DEPTH, cap_result, cap_text, may_nest_deeper, too_deep


def nested(depth: int) -> list[object]:
    """``[[...]]`` with ``depth`` levels of arrays."""
    value: list[object] = []
    for _ in range(depth - 1):
        value = [value]
    return value


def test_text_that_fits_is_returned_unchanged() -> None:
    assert cap_text("héllo", 6) == "héllo"


def test_text_over_the_cap_is_cut_on_a_character_boundary_with_a_marker() -> None:
    cut = cap_text("é" * 10, 5)
    assert cut.startswith("éé") and not cut.startswith("ééé")
    assert "[truncated: the result was cut at 5 bytes" in cut


def test_a_structured_value_over_the_cap_becomes_its_cut_json_text() -> None:
    value = {"items": list(range(100))}
    assert cap_result(value, 10_000) == value
    cut = cap_result(value, 20)
    assert isinstance(cut, str) and cut.startswith(json.dumps(value, separators=(",", ":"))[:20])


def test_nesting_up_to_the_limit_is_not_too_deep_and_one_level_more_is() -> None:
    assert not too_deep(nested(MAX_JSON_DEPTH))
    assert too_deep(nested(MAX_JSON_DEPTH + 1))
    assert too_deep({"a": [{"b": nested(MAX_JSON_DEPTH - 1)}]})
    assert not too_deep({"a": 1, "b": "text"}) and not too_deep("text")


def test_any_depth_is_measured_without_recursion() -> None:
    assert too_deep(nested(200_000))


@pytest.mark.parametrize("depth", [1, MAX_JSON_DEPTH - 1, MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1, 500])
@pytest.mark.parametrize("as_bytes", [False, True])
def test_text_with_few_brackets_skips_the_walk_and_the_walk_agrees(depth: int, as_bytes: bool) -> None:
    text = json.dumps(nested(depth), separators=(",", ":"))
    assert may_nest_deeper(text.encode() if as_bytes else text) == (depth > MAX_JSON_DEPTH)
    if not may_nest_deeper(text):
        assert not too_deep(json.loads(text))


@pytest.mark.parametrize("as_bytes", [False, True])
def test_brackets_of_both_kinds_count_together_strings_included(as_bytes: bool) -> None:
    flat = "[" + ",".join(["{}"] * 10) + ',"[[[["]'  # one level deep; 15 brackets
    text: str | bytes = flat.encode() if as_bytes else flat
    assert may_nest_deeper(text, limit=14) and not may_nest_deeper(text, limit=15)
    assert not too_deep(json.loads(flat), limit=14)
