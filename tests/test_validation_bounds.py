"""The numeric bounds of top-level arguments compared in Python (mcs.validation._bounds_plan):
every call gets the answer and the error the full JSON Schema validator gives."""

from __future__ import annotations

import math
from typing import Any

import jsonschema_rs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcs.errors import InvalidInputError
from mcs.validation import ArgumentValidator, compile_validator

BOUNDS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(min_value=-(2**53), max_value=2**53),
    st.sampled_from([-0.01024, 0.01023, -102.4, 102.3, 0, 20, 60000, -1.0, 1e-300, 2**53]),
)


def _schemas(low: Any, high: Any, kind: str) -> list[dict[str, Any]]:
    number = {"type": kind, "minimum": low, "maximum": high, "description": "[mrad]"}
    either = {"anyOf": [{"type": "string", "enum": ["Fault"]}, number], "description": "[1/m]"}
    return [
        {"type": "object", "properties": {"x": either, "y": {"type": "string"}}, "required": ["x"],
         "additionalProperties": False},
        {"type": "object", "properties": {"x": number, "flag": {"type": "boolean"}}},
    ]


def _near(bound: Any) -> list[Any]:
    if type(bound) is int:
        return [bound - 1, bound, bound + 1, float(bound), math.nextafter(float(bound), math.inf)]
    return [bound, math.nextafter(bound, -math.inf), math.nextafter(bound, math.inf)]


VALUES = st.one_of(
    st.floats(),  # NaN and the infinities too
    st.integers(),
    st.integers(min_value=2**53 - 2, max_value=2**70),
    st.integers(min_value=-(2**70), max_value=-(2**53) + 2),
    st.booleans(),
    st.none(),
    st.sampled_from(["Fault", "fault", "1.5", ""]),
    st.lists(st.integers(), max_size=2),
)


def _without_plan(schema: dict[str, Any]) -> ArgumentValidator:
    """The same schema with a ``$comment`` (no meaning), which keeps every bound in jsonschema_rs."""
    return compile_validator({**schema, "$comment": "all bounds checked by the validator"}, tool="steer")


def _outcome(validator: ArgumentValidator, arguments: dict[str, Any]) -> Any:
    try:
        return ("ok", validator.validate(arguments))
    except InvalidInputError as error:
        return ("refused", error.message, error.details)


@settings(max_examples=400, deadline=None)
@given(low=BOUNDS, high=BOUNDS, kind=st.sampled_from(["number", "integer"]), value=VALUES, pick=st.integers(0, 5))
def test_a_planned_bound_accepts_and_refuses_exactly_what_the_full_validator_does(
    low: Any, high: Any, kind: str, value: Any, pick: int
) -> None:
    low, high = min(low, high), max(low, high)
    near = [*_near(low), *_near(high)]
    for chosen in (value, near[pick % len(near)]):
        for schema in _schemas(low, high, kind):
            planned = compile_validator(schema, tool="steer")
            arguments = {"x": chosen}
            expected = jsonschema_rs.validator_for(planned.schema).is_valid(arguments)
            try:
                planned.validate_as_sent(arguments)
                accepted = True
            except InvalidInputError:
                accepted = False
            assert accepted == expected, (schema, chosen)
            assert _outcome(planned, arguments) == _outcome(_without_plan(schema), arguments)


def test_the_can_style_schema_is_planned_and_refuses_out_of_range_values_with_the_full_error() -> None:
    schema = _schemas(-0.01024, 0.01023, "number")[0]
    planned = compile_validator(schema, tool="steer")
    assert planned._bounds == (("x", -0.01024, 0.01023),)  # the fast path is the one under test
    for value in (0.02, -0.0103, math.inf, -math.inf, math.nan, 10**400, True, "Faulty"):
        outcome = _outcome(planned, {"x": value})
        assert outcome[0] == "refused"
        assert outcome == _outcome(_without_plan(schema), {"x": value})
    assert _outcome(planned, {"x": 0.01023}) == ("ok", {"x": 0.01023})
    plain = compile_validator(_schemas(-0.01024, 0.01023, "number")[1], tool="steer")
    assert _outcome(plain, {"x": "0.001"}) == ("ok", {"x": 0.001})  # the repair, then the bounds
    assert _outcome(plain, {"x": "0.5"})[0] == "refused"


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"x": {"$ref": "#/$defs/n"}}, "$defs": {"n": {"type": "number", "maximum": 1}}},
    {"type": "object", "properties": {"x": {"type": "number", "maximum": 1, "multipleOf": 0.5}}},
    {"type": "object", "properties": {"x": {"type": "number", "exclusiveMaximum": 1}}},
    {"type": "object", "properties": {"x": {"type": ["number", "null"], "maximum": 1}}},
    {"type": "object", "properties": {"x": {"anyOf": [{"type": "integer"}, {"type": "number", "maximum": 1}]}}},
    {"type": "object", "properties": {"x": {"type": "number", "maximum": 2**60}}},
    {"type": "object", "properties": {"x": {"type": "number", "maximum": 1}}, "patternProperties": {"x": {}}},
    {"type": "object", "properties": {"x": {"type": "number", "maximum": 1}}, "additionalProperties": {}},
])
def test_schemas_where_stripping_a_bound_could_change_the_meaning_keep_the_full_validator(
    schema: dict[str, Any]
) -> None:
    validator = compile_validator(schema, tool="steer")
    assert validator._bounds is None
    for value in (3, 0.5, 2.0**61):
        assert _outcome(validator, {"x": value}) == _outcome(_without_plan(schema), {"x": value})
