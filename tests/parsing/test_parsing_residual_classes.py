"""The shapes weaker models write calls in, each read where it has one reading (docs/parsing.md).

Positional arguments are named from the tool's schema, given as ``known_names``
(name -> input schema); without a schema, or with more than one way to name them, the
call is dropped rather than guessed.
"""

from __future__ import annotations

from typing import Any

from support.recording import RecordingDriver

from mcs import parse_tool_calls
from mcs.tools import ToolCall


def schema(*names: str, required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": {name: {} for name in names}, "required": list(required)}


LYRICS = ToolCall("get_song_lyrics", {"song_title": "Bohemian Rhapsody", "artist_name": "Queen"})


def test_a_quoted_call_string_whose_arguments_use_the_same_quote() -> None:
    text = "['get_song_lyrics(song_title='Bohemian Rhapsody', artist_name='Queen')']"
    assert parse_tool_calls(text) == [LYRICS]


def test_several_such_call_strings_in_one_list() -> None:
    text = "['get_song_lyrics(song_title='Bohemian Rhapsody', artist_name='Queen')', 'play(song='Queen')']"
    assert parse_tool_calls(text) == [LYRICS, ToolCall("play", {"song": "Queen"})]


def test_the_same_inside_a_set() -> None:
    text = "[{'musical_scale(key='C#', scale_type='major')}]"
    assert parse_tool_calls(text) == [ToolCall("musical_scale", {"key": "C#", "scale_type": "major"})]


def test_arguments_written_as_key_equals_value_strings_after_the_name() -> None:
    text = "['music.create', 'key=C', 'chords=4']"
    expected = [ToolCall("music.create", {"key": "C", "chords": 4})]
    assert parse_tool_calls(text, known_names=["music.create"]) == expected
    assert parse_tool_calls(text) == []  # the name is a guess: only for a known tool


def test_several_keywords_in_one_string_and_arguments_in_parentheses() -> None:
    assert parse_tool_calls("['t_test', 'group1=[1, 2], group2=[3, 4]']", known_names=["t_test"]) == [
        ToolCall("t_test", {"group1": [1, 2], "group2": [3, 4]})
    ]
    text = "['emission', '(vehicle=\"gas\", miles=15000)', 'emission', '(vehicle=\"EV\", miles=15000)']"
    assert parse_tool_calls(text, known_names=["emission"]) == [
        ToolCall("emission", {"vehicle": "gas", "miles": 15000}), ToolCall("emission", {"vehicle": "EV", "miles": 15000})
    ]


def test_arguments_written_as_the_pairs_of_a_dict_without_its_braces() -> None:
    assert parse_tool_calls("['music.create', 'key': 'C', 'chords': 4]", known_names=["music.create"]) == [
        ToolCall("music.create", {"key": "C", "chords": 4})
    ]


def test_a_name_then_keywords_in_a_list() -> None:
    assert parse_tool_calls("[lawsuit.find, company='Apple Inc.', year=2010]", known_names=["lawsuit.find"]) == [
        ToolCall("lawsuit.find", {"company": "Apple Inc.", "year": 2010})
    ]


def test_a_name_then_one_object_per_call() -> None:
    text = '["get_rating", {"ASIN": "B01"}, {"ASIN": "B02"}]'
    assert parse_tool_calls(text, known_names=["get_rating"]) == [
        ToolCall("get_rating", {"ASIN": "B01"}), ToolCall("get_rating", {"ASIN": "B02"})
    ]


def test_a_name_then_positional_values_named_from_the_schema() -> None:
    known = {"integrate": schema("function", "start_x", "end_x", "method", required=("function", "start_x", "end_x"))}
    assert parse_tool_calls("['integrate', 'x^3', -2, 3, 'simpson']", known_names=known) == [
        ToolCall("integrate", {"function": "x^3", "start_x": -2, "end_x": 3, "method": "simpson"})
    ]


def test_a_quoted_name_before_its_arguments() -> None:
    assert parse_tool_calls("['get_personality_traits'](type='ENFJ')") == [
        ToolCall("get_personality_traits", {"type": "ENFJ"})
    ]


def test_the_name_as_key_with_its_arguments_in_a_list() -> None:
    assert parse_tool_calls("{'solve': [{'a': 1, 'b': 2}]}") == [ToolCall("solve", {"a": 1, "b": 2})]
    assert parse_tool_calls("{'solve': [{'a': 1}, {'a': 2}]}") == [ToolCall("solve", {"a": 1}), ToolCall("solve", {"a": 2})]
    assert parse_tool_calls("[{'name': 'solve', 'params': [{'a': 1}, {'a': 2}]}]") == [
        ToolCall("solve", {"a": 1}), ToolCall("solve", {"a": 2})
    ]


def test_return_and_print_wrappers_with_positional_arguments_named_from_the_schema() -> None:
    known = {"math.hypot": schema("x", "y", "z", required=("x", "y"))}
    hypot = [ToolCall("math.hypot", {"x": 4, "y": 5})]
    assert parse_tool_calls("return math.hypot(4, 5)", known_names=known) == hypot
    assert parse_tool_calls("print(math.hypot(4, 5))", known_names=known) == hypot
    assert parse_tool_calls("[math.hypot(4, 5)]", known_names=known) == hypot


def test_positional_arguments_without_one_reading_drop_the_call() -> None:
    assert parse_tool_calls("[math.hypot(4, 5)]") == []  # no schema: no names
    assert parse_tool_calls("[math.hypot(4, 5)]", known_names=["math.hypot"]) == []
    too_many = {"f": schema("a", required=("a",))}
    assert parse_tool_calls("[f(1, 2)]", known_names=too_many) == []
    required_later = {"f": schema("a", "b", required=("b",))}
    assert parse_tool_calls("[f(1)]", known_names=required_later) == []  # would fill `a`, leave `b` empty
    twice = {"f": schema("a", "b")}
    assert parse_tool_calls("[f(1, a=2)]", known_names=twice) == []


def test_a_driver_names_positional_arguments_from_its_own_tool_schema() -> None:
    driver = RecordingDriver([{"name": "maxPoints", "input_schema": {
        "type": "object", "properties": {"points": {"type": "array"}}, "required": ["points"]}}])
    driver.process_llm_response("maxPoints([[1, 1], [2, 3]])")
    assert driver.calls == [("maxPoints", {"points": [[1, 1], [2, 3]]})]


def test_known_names_are_cached_and_refresh_tools_renews_the_schemas_positional_calls_are_named_from() -> None:
    def point_tool(*names: str) -> dict[str, Any]:
        return {"name": "move", "input_schema": schema(*names, required=names)}

    driver = RecordingDriver([point_tool("x", "y")])
    known = driver._known_names()
    assert driver._known_names() is known, "computed once, then cached"
    driver.process_llm_response("move(1, 2)")
    driver._specs = [point_tool("dx", "dy", "dz")]
    driver.process_llm_response("move(1, 2)")  # cached schema: still named x, y
    driver.refresh_tools()
    assert driver._known_names() is not known
    driver.process_llm_response("move(1, 2, 3)")
    assert driver.process_llm_response("move(1, 2)") == "move(1, 2)"  # dz is required now: no reading
    assert driver.calls == [("move", {"x": 1, "y": 2}), ("move", {"x": 1, "y": 2}),
                            ("move", {"dx": 1, "dy": 2, "dz": 3})]
