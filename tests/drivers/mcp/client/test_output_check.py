"""The compiled pass in front of the SDK's output-schema check: same verdicts, same refusals."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema.validators import validator_for
from mcs_mcp.client.output_check import agreeing, speed_up_output_check
from mcs_mcp.client_driver import MCPDriver
from referencing import Registry

from mcs.errors import ExecutionError

LIAR = Path(__file__).resolve().parent / "servers" / "liar_server.py"

SCHEMAS: list[dict[str, Any]] = [
    {"type": "object", "properties": {"result": {"type": "string"}}, "required": ["result"]},
    {"type": "object", "properties": {"n": {"type": "integer", "minimum": 0, "exclusiveMaximum": 10}},
     "additionalProperties": False},
    {"type": "array", "items": {"enum": [1, "a", None]}, "uniqueItems": True, "maxItems": 3},
    {"anyOf": [{"type": "string", "minLength": 2, "maxLength": 3}, {"const": True}]},
    {"$defs": {"pos": {"type": "number", "minimum": 0}}, "type": "object",
     "properties": {"x": {"$ref": "#/$defs/pos"}, "tags": {"type": "array", "prefixItems": [{"type": "string"}]}}},
    {"oneOf": [{"type": "integer"}, {"type": "number", "maximum": 1}], "not": {"const": 0}},
    {"type": "object", "dependentRequired": {"a": ["b"]}, "minProperties": 1,
     "if": {"required": ["a"]}, "then": {"properties": {"a": {"type": "boolean"}}}},
]
VALUES: list[Any] = [
    None, True, False, 0, 1, 1.0, 0.5, -1, 10, 10**30, "", "é", "ab", "😀😀", "abcd", [], [1, True], [1, 1.0],
    [1, "a"], ["x", 2], {}, {"result": "ok"}, {"result": 3}, {"n": 9}, {"n": 10}, {"n": 1.0}, {"n": True},
    {"n": 1, "m": 2}, {"x": 0}, {"x": -0.5}, {"x": 1, "tags": ["t", 3]}, {"tags": [3]}, {"a": True, "b": 1},
    {"a": 1, "b": 1}, {"a": True},
]


class _Session:
    """What the SDK keeps per session: compiled output validators by tool name."""

    def __init__(self, schema: dict[str, Any]) -> None:
        sdk = validator_for(schema)
        self._tool_output_validators: dict[str, Any] = {"t": sdk(schema, registry=Registry())}


@pytest.mark.parametrize("schema", SCHEMAS)
def test_the_compiled_pass_gives_every_value_the_sdks_verdict(schema: dict[str, Any]) -> None:
    assert agreeing(schema)
    session = _Session(schema)
    sdk = session._tool_output_validators["t"]
    speed_up_output_check(session, "t")
    checked = session._tool_output_validators["t"]
    assert checked is not sdk and checked.exact is sdk
    for value in VALUES:
        assert [e.message for e in checked.iter_errors(value)] == [e.message for e in sdk.iter_errors(value)], value


@pytest.mark.parametrize("schema", [
    {"type": "string", "pattern": "^[a-z]+$"},
    {"type": "object", "properties": {"when": {"type": "string", "format": "date-time"}}},
    {"type": "number", "multipleOf": 0.01},
    {"$ref": "https://example.com/schema.json"},
    {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"},
    {"type": "object", "patternProperties": {"^x": {"type": "string"}}},
    {"$id": "https://example.com/a", "type": "object"},
    {"type": "object", "unevaluatedProperties": False},
    {"type": "array", "items": {"type": "string", "pattern": "a"}},
])
def test_schemas_the_libraries_may_read_differently_keep_the_sdks_validator_alone(schema: dict[str, Any]) -> None:
    assert not agreeing(schema)
    session = _Session(schema)
    sdk = session._tool_output_validators["t"]
    speed_up_output_check(session, "t")
    assert session._tool_output_validators["t"].exact is sdk
    assert session._tool_output_validators["t"]._fast is None


def test_nothing_is_put_in_front_before_the_sdk_compiled_its_validator() -> None:
    class Fresh:
        def __init__(self) -> None:
            self._tool_output_validators: dict[str, Any] = {}

    fresh = Fresh()
    speed_up_output_check(fresh, "t")
    speed_up_output_check(object(), "t")  # an SDK without the cache: left alone
    assert fresh._tool_output_validators == {}


@pytest.fixture
def liar(quiet: Any) -> Any:
    with MCPDriver(command=sys.executable, args=[str(LIAR)], stderr=quiet) as driver:
        yield driver


def test_a_result_breaking_its_output_schema_is_still_refused_once_the_compiled_pass_runs(
    liar: MCPDriver, caplog: pytest.LogCaptureFixture
) -> None:
    assert liar.call_tool("count", {"word": "ok"}) == {"count": 3}  # the SDK compiles its validator
    assert liar.call_tool("count", {"word": "ok"}) == {"count": 3}  # the compiled pass runs first
    session = liar.connections["mcp"].run(_session)
    assert session._tool_output_validators["count"]._fast is not None
    with caplog.at_level(logging.ERROR), pytest.raises(ExecutionError, match="RuntimeError"):
        liar.call_tool("count", {"word": "seven"})
    assert "Invalid structured content returned by tool count: 'seven' is not of type 'integer'" in caplog.text
    assert liar.call_tool("count", {"word": "ok"}) == {"count": 3}


def test_a_pattern_in_the_output_schema_is_checked_by_the_sdk_as_before(
    liar: MCPDriver, caplog: pytest.LogCaptureFixture
) -> None:
    assert liar.call_tool("code", {"word": "ABC"}) == {"code": "ABC"}
    assert liar.call_tool("code", {"word": "XYZ"}) == {"code": "XYZ"}
    with caplog.at_level(logging.ERROR), pytest.raises(ExecutionError, match="RuntimeError"):
        liar.call_tool("code", {"word": "abcd"})
    assert "Invalid structured content returned by tool code: 'abcd' does not match" in caplog.text


async def _session(client: Any) -> Any:
    return client.session


async def test_async_calls_get_the_same_pass_and_the_same_refusals(quiet: Any, caplog: pytest.LogCaptureFixture) -> None:
    driver = MCPDriver(command=sys.executable, args=[str(LIAR)], stderr=quiet)
    try:
        assert await driver.acall_tool("count", {"word": "ok"}) == {"count": 3}
        assert await driver.acall_tool("count", {"word": "ok"}) == {"count": 3}
        session = await driver.connections["mcp"].arun(_session)
        assert session._tool_output_validators["count"]._fast is not None
        with caplog.at_level(logging.ERROR), pytest.raises(ExecutionError, match="RuntimeError"):
            await driver.acall_tool("count", {"word": "seven"})
        assert "Invalid structured content returned by tool count" in caplog.text
    finally:
        await driver.aclose()
