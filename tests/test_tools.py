"""Tool names: the provider alphabet, stable hashes on truncation, uniqueness."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcs.tools import (
    MAX_TOOL_NAME_LENGTH,
    TOOL_NAME_PATTERN,
    Tool,
    ToolCall,
    sanitize_tool_name,
    unique_tool_names,
)


@pytest.mark.parametrize("name", ["", "a.b", "has space", "x" * 65, "café", "a/b"])
def test_a_tool_refuses_names_outside_the_alphabet(name: str) -> None:
    with pytest.raises(ValueError, match="sanitize_tool_name"):
        Tool(name=name)


@pytest.mark.parametrize("name", ["a", "get_user", "GET-users_by-id", "x" * 64, "v2"])
def test_a_tool_accepts_names_inside_the_alphabet(name: str) -> None:
    assert Tool(name=name).name == name


def test_to_dict_omits_what_is_not_set() -> None:
    assert Tool(name="ping").to_dict() == {
        "name": "ping",
        "input_schema": {"type": "object", "properties": {}},
    }
    full = Tool(
        name="get", title="Get", description="Fetch.", output_schema={"type": "string"},
        meta={"secret_location": "header"},
    ).to_dict()
    assert full["title"] == "Get" and full["description"] == "Fetch."
    assert full["output_schema"] == {"type": "string"}
    assert "meta" not in full and "secret_location" not in str(full)


def test_original_name_comes_from_meta() -> None:
    assert Tool(name="spotify_play", meta={"original_name": "spotify.play"}).original_name == "spotify.play"
    assert Tool(name="spotify_play").original_name == "spotify_play"


def test_each_tool_gets_its_own_default_schema() -> None:
    first, second = Tool(name="a"), Tool(name="b")
    assert first.input_schema is not second.input_schema


def test_tool_call_arguments_default_to_an_empty_dict() -> None:
    call = ToolCall(name="ping")
    assert call.arguments == {} and call.id is None
    assert ToolCall("add", {"a": 1}, "call_1").id == "call_1"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("spotify.play", "spotify_play"),
        ("GET /users/{id}", "GET_users_id"),
        ("already_fine-1", "already_fine-1"),
        ("...", "tool"),
        ("__x__", "x"),
        ("café au lait", "caf_au_lait"),
    ],
)
def test_sanitize_maps_into_the_alphabet(raw: str, expected: str) -> None:
    assert sanitize_tool_name(raw) == expected


def test_truncated_names_end_with_a_stable_hash_of_the_whole_original() -> None:
    long = "repos/" + "very_long_segment/" * 10 + "get"
    name = sanitize_tool_name(long)
    assert len(name) <= MAX_TOOL_NAME_LENGTH
    assert name.endswith("_" + hashlib.sha256(long.encode()).hexdigest()[:8])
    assert sanitize_tool_name(long) == name


def test_long_names_sharing_a_prefix_stay_distinct() -> None:
    prefix = "a" * 80
    assert sanitize_tool_name(prefix + "_get") != sanitize_tool_name(prefix + "_put")


def test_max_length_is_honoured_and_bounded() -> None:
    assert len(sanitize_tool_name("b" * 40, max_length=20)) == 20
    with pytest.raises(ValueError):
        sanitize_tool_name("x", max_length=5)


@given(st.text(max_size=200))
def test_sanitize_always_gives_a_valid_name(raw: str) -> None:
    name = sanitize_tool_name(raw)
    assert TOOL_NAME_PATTERN.match(name)
    assert sanitize_tool_name(raw) == name


def test_unique_names_keep_order_and_resolve_collisions() -> None:
    names = unique_tool_names(["a.b", "a_b", "a/b", "c"])
    assert names[0] == "a_b"
    assert names[3] == "c"
    assert len(set(names)) == 4
    assert all(TOOL_NAME_PATTERN.match(n) for n in names)


def test_a_collision_suffix_does_not_depend_on_unrelated_names() -> None:
    alone = unique_tool_names(["a.b", "a_b"])
    with_others = unique_tool_names(["zzz", "a.b", "qqq", "a_b"])
    assert alone[1] == with_others[3]


@given(st.lists(st.text(max_size=100), max_size=30))
def test_unique_names_are_unique_and_valid(raw: list[str]) -> None:
    names = unique_tool_names(raw)
    assert len(names) == len(raw)
    assert len(set(names)) == len(names)
    assert all(TOOL_NAME_PATTERN.match(n) for n in names)
