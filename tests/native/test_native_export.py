"""Tool definitions in the native shapes of OpenAI, Anthropic, Gemini and MCP."""

from __future__ import annotations

import copy
import json
import re
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

import mcs
from mcs.native import FORMATS, export_tools, gemini_schema, inline_refs, openai_strict_schema
from mcs.tools import TOOL_NAME_PATTERN, Tool

WEATHER = Tool(
    name="get_weather",
    title="Weather",
    description="Current weather for a city.",
    input_schema={
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
        },
        "required": ["city"],
    },
    output_schema={"type": "object", "properties": {"temp": {"type": "number"}}},
    annotations={"readOnlyHint": True, "openWorldHint": True},
)
CLOSED = Tool(
    name="add",
    description="Add two integers.",
    input_schema={
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
    output_schema={"type": "integer"},
)
NO_PARAMS = Tool(name="ping", description="Check the service is up.")


class TreeNode(BaseModel):
    """A node of a tree."""

    label: str
    children: list[TreeNode] = []


class Point(BaseModel):
    x: float
    y: float


class Drawing(BaseModel):
    root: TreeNode
    origin: Point | None = None
    style: Literal["solid"] = "solid"
    layer: Literal[1, 2, 3] = 1
    email: str = Field(default="", json_schema_extra={"format": "email"})
    labels: dict[str, int] = {}
    scale: float = Field(default=1.0, gt=0, multiple_of=0.5)


@mcs.tool
def draw(drawing: Drawing) -> str:
    """Draw a tree."""
    return "ok"


DRAW = mcs.FunctionDriver([draw]).list_tools()[0]


def _keys(node: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            found.add(key)
            found |= _keys(value)
    elif isinstance(node, list):
        for value in node:
            found |= _keys(value)
    return found


def _nesting(node: Any) -> int:
    """How many object levels deep a Gemini schema goes."""
    if not isinstance(node, dict):
        return 0
    children = list(node.get("properties", {}).values())
    if "items" in node:
        children.append(node["items"])
    return (node.get("type") == "OBJECT") + max((_nesting(c) for c in children), default=0)


# ------------------------------------------------------------------------ OpenAI


def test_openai_chat_tools_have_the_function_wrapper() -> None:
    [tool] = export_tools([WEATHER], "openai")
    assert tool == {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "parameters": dict(WEATHER.input_schema),
        },
    }


def test_openai_responses_tools_are_flat() -> None:
    [tool] = export_tools([WEATHER], "openai_responses", strict=True)
    assert tool["type"] == "function"
    assert tool["name"] == "get_weather"
    assert set(tool) == {"type", "name", "description", "parameters", "strict"}
    assert tool["strict"] is False  # 'unit' is optional


def test_strict_mode_closes_every_object_when_every_property_is_required() -> None:
    nested = Tool(
        name="move",
        input_schema={
            "type": "object",
            "properties": {"to": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"], "title": "To"}},
            "required": ["to"],
        },
    )
    [tool] = export_tools([nested], "openai", strict=True)
    function = tool["function"]
    assert function["strict"] is True
    assert function["parameters"]["additionalProperties"] is False
    assert function["parameters"]["properties"]["to"]["additionalProperties"] is False
    assert "title" not in function["parameters"]["properties"]["to"]


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"type": "string"}}},  # optional property
        {"type": "object", "properties": {"a": {"type": "string", "minLength": 2}}, "required": ["a"]},
        {"type": "object", "properties": {"a": {"allOf": [{"type": "string"}]}}, "required": ["a"]},
        {"type": "object", "additionalProperties": {"type": "string"}},
    ],
)
def test_strict_mode_is_refused_rather_than_changing_what_a_call_means(schema: dict[str, Any]) -> None:
    assert openai_strict_schema(schema) is None
    [tool] = export_tools([Tool(name="t", input_schema=schema)], "openai", strict=True)
    assert tool["function"]["strict"] is False
    assert tool["function"]["parameters"] == {"type": "object", **schema}


def test_without_strict_no_strict_key_is_sent() -> None:
    [tool] = export_tools([CLOSED], "openai")
    assert "strict" not in tool["function"]


# ------------------------------------------------------------------------ Anthropic


def test_anthropic_tools_carry_input_schema() -> None:
    tools = export_tools([WEATHER, NO_PARAMS], "anthropic")
    assert tools[0] == {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "input_schema": dict(WEATHER.input_schema),
    }
    assert tools[1]["input_schema"] == {"type": "object", "properties": {}}


def test_a_schema_without_a_type_gets_type_object() -> None:
    tool = Tool(name="t", input_schema={"properties": {"a": {"type": "string"}}})
    assert export_tools([tool], "anthropic")[0]["input_schema"]["type"] == "object"


# ------------------------------------------------------------------------ MCP


def test_mcp_tools_have_title_schemas_and_annotations() -> None:
    tools = export_tools([WEATHER, CLOSED], "mcp")
    assert tools[0] == {
        "name": "get_weather",
        "title": "Weather",
        "description": "Current weather for a city.",
        "inputSchema": dict(WEATHER.input_schema),
        "outputSchema": {"type": "object", "properties": {"temp": {"type": "number"}}},
        "annotations": {"readOnlyHint": True, "openWorldHint": True},
    }
    # MCP output schemas must be objects; an integer result stays undeclared
    assert set(tools[1]) == {"name", "description", "inputSchema"}


# ------------------------------------------------------------------------ Gemini


def test_gemini_declarations_use_upper_case_types_and_no_unsupported_keywords() -> None:
    [declaration] = export_tools([DRAW], "gemini")
    parameters = declaration["parameters"]
    forbidden = {"$ref", "$defs", "definitions", "additionalProperties", "const", "oneOf", "allOf",
                 "title", "exclusiveMinimum", "multipleOf", "examples", "$schema"}
    assert _keys(parameters) & forbidden == set()
    types = {node["type"] for node in _schema_nodes(parameters) if "type" in node}
    assert types <= {"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT"}
    assert json.loads(json.dumps(declaration)) == declaration


def _schema_nodes(node: dict[str, Any]) -> list[dict[str, Any]]:
    nodes = [node]
    for child in node.get("properties", {}).values():
        nodes.extend(_schema_nodes(child))
    if isinstance(node.get("items"), dict):
        nodes.extend(_schema_nodes(node["items"]))
    for option in node.get("anyOf", []):
        nodes.extend(_schema_nodes(option))
    return nodes


def test_gemini_inlines_recursive_references_to_a_bounded_depth() -> None:
    shallow = export_tools([DRAW], "gemini", max_depth=2)[0]["parameters"]
    deep = export_tools([DRAW], "gemini", max_depth=5)[0]["parameters"]
    assert _nesting(shallow["properties"]["root"]) == 2
    assert _nesting(deep["properties"]["root"]) == 5
    # where the expansion stops, the model is told what was cut
    node = shallow["properties"]["root"]["properties"]["children"]["items"]
    cut = node["properties"]["children"]["items"]
    assert cut["type"] == "STRING"
    assert "nested TreeNode" in cut["description"]


def test_gemini_turns_what_it_cannot_express_into_types_it_accepts_and_notes() -> None:
    props = export_tools([DRAW], "gemini")[0]["parameters"]["properties"]
    assert props["origin"]["nullable"] is True  # Point | None
    assert props["origin"]["type"] == "OBJECT"
    assert props["style"]["enum"] == ["solid"]  # const -> enum
    assert props["layer"]["type"] == "STRING" and props["layer"]["enum"] == ["1", "2", "3"]
    assert "written as a string" in props["layer"]["description"]
    assert "format: email" in props["email"]["description"]
    assert props["labels"]["type"] == "STRING"  # a free-form map travels as JSON text
    assert "values are integers" in props["labels"]["description"]
    assert "greater than 0" in props["scale"]["description"]
    assert "a multiple of 0.5" in props["scale"]["description"]
    assert props["root"]["description"] == "A node of a tree."


def test_gemini_leaves_parameters_out_for_a_tool_without_any() -> None:
    assert export_tools([NO_PARAMS], "gemini") == [
        {"name": "ping", "description": "Check the service is up."}
    ]


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": ["string", "null"]}, {"type": "STRING", "nullable": True}),
        ({"type": ["string", "integer"]}, {"anyOf": [{"type": "STRING"}, {"type": "INTEGER"}]}),
        ({"oneOf": [{"type": "string"}, {"type": "boolean"}]}, {"anyOf": [{"type": "STRING"}, {"type": "BOOLEAN"}]}),
        ({"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}], "description": "n"},
         {"type": "INTEGER", "minimum": 0, "description": "n", "nullable": True}),
        ({"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                    {"properties": {"b": {"type": "number"}}}]},
         {"type": "OBJECT", "properties": {"a": {"type": "STRING"}, "b": {"type": "NUMBER"}}, "required": ["a"]}),
        ({"type": "string", "format": "date-time", "examples": ["2024-01-01T00:00:00Z"]},
         {"type": "STRING", "format": "date-time", "example": "2024-01-01T00:00:00Z"}),
        ({"enum": ["a", None]}, {"type": "STRING", "enum": ["a"], "nullable": True}),
        ({"enum": [None]}, {"type": "STRING", "nullable": True, "description": "always null"}),
        ({"type": "integer", "enum": [None]}, {"type": "INTEGER", "nullable": True}),
        ({"type": "array", "items": {"type": "string"}, "minItems": 1, "uniqueItems": True},
         {"type": "ARRAY", "items": {"type": "STRING"}, "minItems": 1, "description": "(items must be unique)"}),
    ],
)
def test_gemini_schema_conversions(schema: dict[str, Any], expected: dict[str, Any]) -> None:
    wrapped = gemini_schema({"type": "object", "properties": {"v": schema}})
    assert wrapped is not None
    assert wrapped["properties"]["v"] == expected


# ------------------------------------------------------------------------ inline_refs


def test_inline_refs_replaces_references_and_drops_definitions() -> None:
    schema = {
        "type": "object",
        "properties": {"home": {"$ref": "#/$defs/Addr", "description": "Where you live"},
                       "work": {"$ref": "#/definitions/a~1b"}},
        "$defs": {"Addr": {"type": "object", "description": "An address", "properties": {"city": {"type": "string"}}}},
        "definitions": {"a/b": {"type": "integer"}},
    }
    out = inline_refs(schema)
    assert out == {
        "type": "object",
        "properties": {
            "home": {"type": "object", "description": "Where you live", "properties": {"city": {"type": "string"}}},
            "work": {"type": "integer"},
        },
    }
    assert "$defs" in schema  # the input is not modified


def test_inline_refs_stubs_unresolvable_and_too_deep_references() -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": "#/$defs/Missing"}, "b": {"$ref": "other.json#/X"}}}
    out = inline_refs(schema)
    assert "unresolved reference #/$defs/Missing" in out["properties"]["a"]["description"]
    assert "unresolved reference other.json#/X" in out["properties"]["b"]["description"]
    recursive = TreeNode.model_json_schema()
    flat = inline_refs(recursive, max_depth=0)
    assert "$ref" not in json.dumps(flat)
    assert "not expanded beyond 0 levels" in json.dumps(flat)
    with pytest.raises(ValueError, match="max_depth"):
        inline_refs(recursive, max_depth=-1)


def test_a_property_named_like_a_keyword_is_kept() -> None:
    schema = {"type": "object", "properties": {"$ref": {"type": "string"}, "title": {"type": "string"}}}
    assert set(inline_refs(schema)["properties"]) == {"$ref", "title"}
    gemini = gemini_schema(schema)
    assert gemini is not None and set(gemini["properties"]) == {"$ref", "title"}


# ------------------------------------------------------------------------ all formats


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_exports_every_tool_with_a_valid_name_and_leaves_tools_untouched(fmt: Any) -> None:
    tools = [WEATHER, CLOSED, NO_PARAMS, DRAW]
    before = [copy.deepcopy(dict(t.input_schema)) for t in tools]
    exported = export_tools(tools, fmt, strict=True)
    assert len(exported) == len(tools)
    for entry, tool in zip(exported, tools, strict=True):
        name = entry["function"]["name"] if fmt == "openai" else entry["name"]
        assert name == tool.name and TOOL_NAME_PATTERN.match(name)
        json.dumps(entry)
    assert [dict(t.input_schema) for t in tools] == before


def test_an_unknown_format_is_refused_with_the_choices() -> None:
    with pytest.raises(ValueError, match=r"unknown tool format 'cohere'.*openai, openai_responses"):
        export_tools([WEATHER], "cohere")  # type: ignore[arg-type]


def test_mcs_describe_prints_the_native_format(capsys: pytest.CaptureFixture[str]) -> None:
    from mcs.cli import main

    assert main(["describe", "functions", "--format", "gemini"]) == 0
    out = capsys.readouterr().out
    declarations = json.loads(out[out.index("["):])
    assert declarations and all("name" in d for d in declarations)
    assert not re.search(r'"\$ref"|"additionalProperties"', out)
