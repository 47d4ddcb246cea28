"""``known_names``: guessed forms need it, weak forms are filtered by it, names map back."""

from __future__ import annotations

import json

import pytest

from mcs import FunctionDriver, parse_tool_calls
from mcs.tools import ToolCall

GLM_BARE = 'calc_binomial_probability\n{"k": 5, "n": 20, "p": 0.6}'
GLM_AFTER_PROSE = (
    "Let's use the provided API to make the call.mathematics_calculate_area_under_curve\n"
    '{"limits": [-1, 2], "polynomial": [3, 2, -4]}'
)


def test_glm_bare_name_is_never_returned_without_known_names() -> None:
    assert parse_tool_calls(GLM_BARE) == []


def test_glm_bare_name_is_returned_when_known() -> None:
    assert parse_tool_calls(GLM_BARE, known_names=["calc_binomial_probability"]) == [
        ToolCall("calc_binomial_probability", {"k": 5, "n": 20, "p": 0.6})
    ]


def test_glm_bare_name_that_is_not_known_is_dropped() -> None:
    assert parse_tool_calls(GLM_BARE, known_names=["something_else"]) == []


def test_glm_name_glued_to_prose_maps_to_the_dotted_known_name() -> None:
    assert parse_tool_calls(GLM_AFTER_PROSE, known_names=["mathematics.calculate_area_under_curve"]) == [
        ToolCall("mathematics.calculate_area_under_curve", {"limits": [-1, 2], "polynomial": [3, 2, -4]})
    ]


REACT_PROSE = 'Action: I will use the get_weather tool\nAction Input: {"location": "Paris"}'


def test_react_action_written_as_prose_needs_known_names() -> None:
    assert parse_tool_calls(REACT_PROSE) == []
    assert parse_tool_calls(REACT_PROSE, known_names={"get_weather"}) == [
        ToolCall("get_weather", {"location": "Paris"})
    ]


def test_react_free_text_input_gives_no_call() -> None:
    assert parse_tool_calls("Action: search\nAction Input: weather in Paris today", known_names={"search"}) == []


@pytest.mark.parametrize(
    ("emitted", "known", "expected"),
    [
        ("spotify_play", "spotify.play", "spotify.play"),
        ("spotify.play", "spotify_play", "spotify_play"),
        ("calc\\_area", "calc_area", "calc_area"),
        ("tools.solve_quadratic_equation", "solve_quadratic_equation", "solve_quadratic_equation"),
        ("functions.get_weather", "get_weather", "get_weather"),
    ],
)
def test_sanitised_or_prefixed_names_map_back_to_the_known_name(emitted: str, known: str, expected: str) -> None:
    text = json.dumps({"name": emitted, "arguments": {"a": 1}})
    assert parse_tool_calls(text, known_names=[known]) == [ToolCall(expected, {"a": 1})]


def test_explicit_call_to_an_unknown_tool_is_still_returned() -> None:
    """So the caller can tell the model that the tool does not exist."""
    text = '<tool_call>\n{"name": "launch_rocket", "arguments": {}}\n</tool_call>'
    assert parse_tool_calls(text, known_names={"get_weather"}) == [ToolCall("launch_rocket", {})]


def test_name_as_key_with_unknown_name_is_dropped_when_names_are_known() -> None:
    dump = [{"location": {"city": "Paris"}}]
    assert parse_tool_calls(dump) == [ToolCall("location", {"city": "Paris"})]
    assert parse_tool_calls(dump, known_names={"get_weather"}) == []


def test_flat_arguments_next_to_name_are_a_guess() -> None:
    text = '[{"name": "math.gcd", "num1": 12, "num2": 18}]'
    assert parse_tool_calls(text) == []
    assert parse_tool_calls(text, known_names={"math.gcd"}) == [ToolCall("math.gcd", {"num1": 12, "num2": 18})]


def test_name_and_arguments_pair_is_a_guess() -> None:
    text = "['math.hcf', {'number1': 36, 'number2': 24}]"
    assert parse_tool_calls(text) == []
    assert parse_tool_calls(text, known_names={"math.hcf"}) == [ToolCall("math.hcf", {"number1": 36, "number2": 24})]


def test_fenced_code_is_an_example_unless_the_name_is_known() -> None:
    text = "```python\nmigrations.CreateModel(name='User')\n```"
    assert parse_tool_calls(text) == [ToolCall("migrations.CreateModel", {"name": "User"})]
    assert parse_tool_calls(text, known_names={"get_weather"}) == []


def test_known_names_may_be_any_collection() -> None:
    text = "get_weather(location='Paris')"
    expected = [ToolCall("get_weather", {"location": "Paris"})]
    assert parse_tool_calls(text, known_names=["get_weather"]) == expected
    assert parse_tool_calls(text, known_names=("get_weather",)) == expected
    assert parse_tool_calls(text, known_names={"get_weather": object()}) == expected


def test_glm_name_right_after_json_punctuation() -> None:
    text = 'conditions: {"department": "Science"}.db_fetch_records\n{"table_name": "students"}'
    assert parse_tool_calls(text, known_names={"db_fetch_records"}) == [
        ToolCall("db_fetch_records", {"table_name": "students"})
    ]


@pytest.mark.parametrize("emitted", [
    "delete_repo\u200b", "\u200bdelete_repo", "\ufeffdelete_repo", "delete_rep\u00f3",
    "delete\u2010repo", "delete\u3000repo", "d\u0435lete_repo",
])
def test_a_name_with_invisible_or_non_ascii_characters_is_not_mapped_onto_a_known_tool(emitted: str) -> None:
    # Only the ASCII separators models put in a name (`.`, ` `, `\_`...) are read as the
    # known name's; a zero-width space, an accent or a look-alike makes another name, which
    # the driver does not run (the LLM loop answers it with TOOL_NOT_FOUND).
    ran: list[str] = []

    def delete_repo(name: str) -> str:
        """Delete a repository."""
        ran.append(name)
        return "deleted"

    text = json.dumps({"name": emitted, "arguments": {"name": "prod"}}, ensure_ascii=False)
    assert [call.name for call in parse_tool_calls(text, known_names=["delete_repo"])] == [emitted]
    driver = FunctionDriver([delete_repo], name="repos")
    assert driver.run_llm_response(text) == []  # no call of its tools: the loop says TOOL_NOT_FOUND
    assert ran == []


@pytest.mark.parametrize("emitted", [
    "\uff44\uff45\uff4c\uff45\uff54\uff45_\uff52\uff45\uff50\uff4f",  # fullwidth
    "\U0001d41d\U0001d41e\U0001d425\U0001d41e\U0001d42d\U0001d41e_\U0001d42b\U0001d41e\U0001d429\U0001d428",  # bold
    "delete_rep\u2092",  # subscript o
    "delete_repo\u0301",  # a combining accent after the name
])
@pytest.mark.parametrize("shape", ["{}(name='prod')", "[{}(name='prod')]", "Deleting it now:\n\n{}(name='prod')"])
def test_a_look_alike_name_written_as_python_is_not_read_as_the_name_it_normalises_to(emitted: str, shape: str) -> None:
    # Python reads identifiers in NFKC form (a fullwidth letter is its ASCII one): the parser must give the
    # name the model wrote, or a look-alike would run the tool it resembles.
    ran: list[str] = []

    def delete_repo(name: str) -> str:
        """Delete a repository."""
        ran.append(name)
        return "deleted"

    text = shape.format(emitted)
    assert "delete_repo" not in [call.name for call in parse_tool_calls(text, known_names=["delete_repo"])]
    assert "delete_repo" not in [call.name for call in parse_tool_calls(text)]
    driver = FunctionDriver([delete_repo], name="repos")
    driver.run_llm_response(text)
    assert ran == []


def test_a_look_alike_keyword_keeps_the_spelling_the_model_wrote() -> None:
    assert parse_tool_calls("[delete_repo(\uff4e\uff41\uff4d\uff45='prod')]") == [
        ToolCall("delete_repo", {"\uff4e\uff41\uff4d\uff45": "prod"})
    ]
