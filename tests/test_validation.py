"""Argument repair and validation: unambiguous repairs, readable refusals, nothing else raised."""

from __future__ import annotations

import copy
import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcs.errors import ConfigurationError, ErrorCode, InvalidInputError
from mcs.validation import compile_validator

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "flag": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "ids": {"type": "array", "items": {"type": "integer"}},
        "filter": {"type": "object", "properties": {"min": {"type": "number"}}},
        "name": {"type": "string", "maxLength": 5},
        "maybe": {"type": ["integer", "null"]},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
    },
    "required": ["count"],
}


@pytest.fixture(scope="module")
def validator() -> Any:
    return compile_validator(SCHEMA, tool="search")


def test_valid_arguments_come_back_as_the_same_object(validator: Any) -> None:
    arguments = {"count": 3, "name": "abc"}
    assert validator.validate(arguments) is arguments


@pytest.mark.parametrize(
    ("given_args", "repaired"),
    [
        ({"count": "10"}, {"count": 10}),
        ({"count": " 7 "}, {"count": 7}),
        ({"count": "3.0"}, {"count": 3}),
        ({"count": 4.0, "ratio": "0.5"}, {"count": 4.0, "ratio": 0.5}),
        ({"count": 1, "ratio": "2"}, {"count": 1, "ratio": 2}),
        ({"count": 1, "flag": "true"}, {"count": 1, "flag": True}),
        ({"count": 1, "flag": "False"}, {"count": 1, "flag": False}),
        ({"count": 1, "tags": "red"}, {"count": 1, "tags": ["red"]}),
        ({"count": 1, "tags": '["a", "b"]'}, {"count": 1, "tags": ["a", "b"]}),
        ({"count": 1, "ids": ["1", "2"]}, {"count": 1, "ids": [1, 2]}),
        ({"count": 1, "ids": 5}, {"count": 1, "ids": [5]}),
        ({"count": 1, "filter": '{"min": "2.5"}'}, {"count": 1, "filter": {"min": 2.5}}),
        ({"count": 1, "maybe": "null"}, {"count": 1, "maybe": None}),
        ({"count": 1, "maybe": "8"}, {"count": 1, "maybe": 8}),
    ],
)
def test_unambiguous_damage_is_repaired(
    validator: Any, given_args: dict[str, Any], repaired: dict[str, Any]
) -> None:
    original = copy.deepcopy(given_args)
    assert validator.validate(given_args) == repaired
    assert given_args == original, "the input must not be modified"


def _refusal(validator: Any, arguments: Any) -> InvalidInputError:
    with pytest.raises(InvalidInputError) as info:
        validator.validate(arguments)
    assert info.value.code is ErrorCode.INVALID_INPUT
    assert info.value.tool == "search"
    return info.value


def test_a_wrong_type_names_the_field_what_was_expected_and_what_was_got(validator: Any) -> None:
    error = _refusal(validator, {"count": "ten"})
    assert "'count'" in error.message
    assert "integer" in error.message
    assert '"ten"' in error.message
    assert error.details["fields"] == ["count"]


def test_a_nested_error_names_the_path(validator: Any) -> None:
    error = _refusal(validator, {"count": 1, "filter": {"min": "low"}})
    assert "filter.min" in error.message
    assert "number" in error.message
    assert error.details["fields"] == ["filter.min"]


def test_a_list_item_error_names_its_index(validator: Any) -> None:
    error = _refusal(validator, {"count": 1, "ids": [1, "two"]})
    assert "ids[1]" in error.message


def test_a_missing_required_argument_is_named_with_its_type(validator: Any) -> None:
    error = _refusal(validator, {"name": "x"})
    assert "missing required argument 'count' (integer)" in error.message
    assert error.details["fields"] == ["count"]


def test_a_missing_nested_property_is_named_with_its_parent() -> None:
    nested = compile_validator(
        {
            "type": "object",
            "properties": {
                "checks": {
                    "type": "object",
                    "properties": {"strict": {"type": "boolean"}, "contexts": {"type": "array"}},
                    "required": ["strict", "contexts"],
                },
            },
            "required": ["checks"],
        },
        tool="search",
    )
    error = _refusal(nested, {"checks": {"strict": True}})
    assert "argument 'checks': missing required property 'contexts'" in error.message
    assert "'strict'" not in error.message
    assert error.details["fields"] == ["checks.contexts"]


def test_every_missing_top_level_argument_is_named_once(validator: Any) -> None:
    error = _refusal(validator, {})
    assert error.message.count("missing required argument") == len(SCHEMA["required"])


def test_extra_top_level_arguments_are_refused_and_the_allowed_ones_listed(validator: Any) -> None:
    error = _refusal(validator, {"count": 1, "exec": "rm -rf /", "config": "/evil"})
    assert "unexpected argument(s) 'config', 'exec'" in error.message
    assert "allowed: count, filter, flag" in error.message
    assert sorted(error.details["fields"]) == ["config", "exec"]


def test_extra_arguments_are_allowed_when_the_schema_says_so() -> None:
    open_schema = {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": True}
    assert compile_validator(open_schema, tool="t").validate({"a": "x", "b": 2}) == {"a": "x", "b": 2}


def test_nested_extra_arguments_follow_the_schema_not_the_strict_rule() -> None:
    validator = compile_validator(
        {"type": "object", "properties": {"o": {"type": "object", "properties": {"k": {}}}}}, tool="t"
    )
    assert validator.validate({"o": {"k": 1, "other": 2}}) == {"o": {"k": 1, "other": 2}}


def test_constraints_are_enforced_not_repaired(validator: Any) -> None:
    assert "longer than 5" in _refusal(validator, {"count": 1, "name": "toolong"}).message
    assert "'unit'" in _refusal(validator, {"count": 1, "unit": "kelvin"}).message


@pytest.mark.parametrize("arguments", [[1, 2], "count=1", None, 5, True])
def test_arguments_that_are_not_an_object_are_refused(validator: Any, arguments: Any) -> None:
    error = _refusal(validator, arguments)
    assert "must be a JSON object" in error.message


def test_an_ambiguous_string_is_not_guessed(validator: Any) -> None:
    _refusal(validator, {"count": 1, "flag": "yes"})
    _refusal(validator, {"count": "1,5"})


def test_at_most_five_problems_are_reported() -> None:
    schema = {"type": "object", "properties": {f"p{i}": {"type": "integer"} for i in range(10)}}
    validator = compile_validator(schema, tool="t")
    error = _refusal_any(validator, {f"p{i}": "x" for i in range(10)})
    assert error.message.count("is not of type") == 5


def _refusal_any(validator: Any, arguments: Any) -> InvalidInputError:
    with pytest.raises(InvalidInputError) as info:
        validator.validate(arguments)
    return info.value


def test_a_schema_that_is_not_json_schema_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="tool 'broken'"):
        compile_validator({"type": "object", "properties": {"a": {"type": 12}}}, tool="broken")


def test_a_pattern_the_regex_engine_refuses_is_dropped_not_fatal() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "pattern": "(?<=x"}}}
    assert compile_validator(schema, tool="t").validate({"a": "anything"}) == {"a": "anything"}


def test_the_strict_schema_is_what_is_enforced() -> None:
    validator = compile_validator({"properties": {"a": {}}}, tool="t")
    assert validator.schema["type"] == "object"
    assert validator.schema["additionalProperties"] is False


LONE_SURROGATE = json.loads('"\\ud800abc"')


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"count": 1, "name": LONE_SURROGATE}, "name"),
        ({"count": 1, "tags": ["ok", LONE_SURROGATE]}, "tags[1]"),
        ({"count": 1, "filter": {LONE_SURROGATE: 1}}, "filter.\\ud800abc"),
        ({"count": 1, "filter": {"café": [1, {"deep": ["ok", LONE_SURROGATE]}]}}, "filter.café[1].deep[1]"),
    ],
)
def test_text_that_is_not_unicode_is_refused_with_a_printable_message(
    validator: Any, arguments: dict[str, Any], field: str
) -> None:
    error = _refusal(validator, arguments)
    assert f"argument '{field}' is not valid Unicode text" in error.message
    error.message.encode("utf-8")  # the message itself can always be sent back


def test_arguments_vouched_as_valid_text_get_every_other_check(validator: Any) -> None:
    arguments = {"count": 3, "name": "abc"}
    assert validator.validate_valid_text(arguments) is arguments
    with pytest.raises(InvalidInputError, match="count"):
        validator.validate_valid_text({"count": "many"})
    # arguments that do not fit get every check, the Unicode one included
    with pytest.raises(InvalidInputError, match="not valid Unicode text"):
        validator.validate_valid_text({"count": "many", "name": LONE_SURROGATE})


TEXT = st.text(alphabet=st.characters(categories=["Cs", "Ll", "Lo", "Nd"]), max_size=6)
TEXT_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(TEXT, children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(TEXT_VALUES)
def test_bad_text_is_found_exactly_when_the_value_is_not_utf8_json(value: Any) -> None:
    from mcs.validation import _bad_text_at

    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
        encodable = True
    except UnicodeEncodeError:
        encodable = False
    assert (_bad_text_at(value) is None) == encodable


def test_non_ascii_text_is_fine(validator: Any) -> None:
    assert validator.validate({"count": 1, "name": "café"}) == {"count": 1, "name": "café"}


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text() | st.text(alphabet=st.characters(categories=["Cs", "Ll", "Nd"])),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)
ARGUMENTS = st.one_of(
    JSON_VALUES,
    st.fixed_dictionaries({}, optional={key: JSON_VALUES for key in SCHEMA["properties"]}),
)


@settings(max_examples=300, deadline=None)
@given(ARGUMENTS)
def test_arbitrary_json_values_raise_nothing_but_invalid_input(arguments: Any) -> None:
    validator = compile_validator(SCHEMA, tool="search")
    try:
        result = validator.validate(arguments)
    except InvalidInputError as error:
        assert error.message.startswith(("Invalid arguments for search", "The arguments of search"))
        error.message.encode("utf-8")
        return
    assert isinstance(result, dict)
    assert validator.validate(result) == result, "a repaired result must validate as-is"


@pytest.mark.parametrize("text", ["nan", "inf", "-Infinity", "1e400", "9" * 5000])
def test_strings_that_are_no_finite_number_are_not_repaired(text: str) -> None:
    validator = compile_validator({"type": "object", "properties": {"x": {"type": "number"}}}, tool="t")
    error = _refusal_any(validator, {"x": text})
    assert "argument 'x'" in error.message and 'is not of type "number"' in error.message
    assert "null" not in error.message


@pytest.mark.parametrize("schema_type", ["number", "integer"])
@pytest.mark.parametrize("text", ["5_0", "1_000", "\u0665", "\uff11\uff12", "\u0661.5"])
def test_strings_python_reads_as_numbers_but_a_model_does_not_write_are_not_repaired(
    text: str, schema_type: str
) -> None:
    validator = compile_validator({"type": "object", "properties": {"x": {"type": schema_type}}}, tool="t")
    error = _refusal_any(validator, {"x": text})
    assert "argument 'x'" in error.message and f'is not of type "{schema_type}"' in error.message


@pytest.mark.parametrize(("arguments", "where", "shown"), [
    ({"x": math.nan}, "argument 'x'", "nan"),
    ({"x": math.inf}, "argument 'x'", "inf"),
    ({"y": [1.0, -math.inf]}, "argument 'y[1]'", "-inf"),
])
def test_a_non_finite_float_from_a_caller_is_named_as_such_not_as_null(arguments: dict, where: str,
                                                                         shown: str) -> None:
    schema = {"type": "object", "properties": {"x": {"type": "number"}, "y": {"type": "array", "items": {"type": "number"}}}}
    error = _refusal_any(compile_validator(schema, tool="t"), arguments)
    assert f"{where}: {shown} is not a number JSON can carry" in error.message and "null" not in error.message


def test_a_huge_value_is_quoted_short_in_the_message(validator: Any) -> None:
    for value in ("z" * 100_000, {"deep": "v" * 100_000}, ["é" * 50_000]):
        error = _refusal(validator, {"count": 1, "unit": value})
        assert len(error.message) < 500
        assert "argument 'unit'" in error.message


NESTED: dict[str, Any] = {
    "type": "object",
    "$defs": {
        "Inner": {"type": "object", "properties": {"n": {"type": "integer"},
                                                   "tags": {"type": "array", "items": {"type": "string"}}},
                  "required": ["n"]},
        "Node": {"type": "object", "properties": {"value": {"type": "integer"},
                                                  "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}},
        "Loop": {"$ref": "#/$defs/Loop"},
    },
    "properties": {
        "inner": {"$ref": "#/$defs/Inner"},
        "maybe": {"anyOf": [{"$ref": "#/$defs/Inner"}, {"type": "null"}]},
        "described": {"allOf": [{"$ref": "#/$defs/Inner"}], "description": "pydantic v1 style"},
        "tree": {"$ref": "#/$defs/Node"},
        "loop": {"$ref": "#/$defs/Loop"},
    },
}


@pytest.mark.parametrize(
    ("given_args", "repaired"),
    [
        ({"inner": {"n": "5"}}, {"inner": {"n": 5}}),
        ({"inner": '{"n": "5", "tags": "a"}'}, {"inner": {"n": 5, "tags": ["a"]}}),
        ({"maybe": {"n": "2"}}, {"maybe": {"n": 2}}),
        ({"maybe": "null"}, {"maybe": None}),
        ({"described": {"n": "3"}}, {"described": {"n": 3}}),
        ({"tree": {"value": "1", "children": [{"value": "2", "children": [{"value": "3"}]}]}},
         {"tree": {"value": 1, "children": [{"value": 2, "children": [{"value": 3}]}]}}),
    ],
)
def test_repairs_follow_references_and_options(given_args: dict[str, Any], repaired: dict[str, Any]) -> None:
    assert compile_validator(NESTED, tool="t").validate(given_args) == repaired


def test_a_reference_cycle_neither_hangs_nor_repairs() -> None:
    validator = compile_validator(NESTED, tool="t")
    assert validator.validate({"loop": {"anything": "1"}}) == {"loop": {"anything": "1"}}
    error = _refusal_any(validator, {"inner": {"n": "many"}})
    assert "inner.n" in error.message


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    inner = value
    for _ in range(depth):
        inner["a"] = {}
        inner = inner["a"]
    return value


@pytest.mark.parametrize("method", ["validate", "validate_as_sent"])
def test_arguments_nested_deeper_than_the_stack_allows_are_an_invalid_input_naming_the_tool(method: str) -> None:
    checker = compile_validator({"type": "object", "properties": {"x": {"type": "object"}}}, tool="deep")
    with pytest.raises(InvalidInputError, match="deep are nested too deeply") as caught:
        getattr(checker, method)({"x": _nested(5000)})
    assert caught.value.code == ErrorCode.INVALID_INPUT


def test_a_driver_answers_arguments_nested_too_deeply_with_a_tool_error_not_a_crash() -> None:
    from mcs import FunctionDriver

    def keep(x: dict[str, Any]) -> str:
        """Keep x."""
        return "kept"

    driver = FunctionDriver([keep])
    with pytest.raises(InvalidInputError, match="nested too deeply"):
        driver.call_tool("keep", {"x": _nested(5000)})
    assert driver.call_tool("keep", {"x": _nested(10)}) == "kept"
