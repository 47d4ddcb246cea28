"""Inline descriptions cut deep schemas with a pointer to describe_tool (issue 21 item 11)."""

from __future__ import annotations

import json
from typing import Any

from mcs import prompts
from mcs.driver import ToolDriver
from mcs.pipeline import Invocation
from mcs.tools import Tool

DEEP: dict[str, Any] = {
    "type": "object",
    "properties": {
        "order": {
            "type": "object",
            "description": "the order",
            "properties": {
                "kind": {"type": "string", "enum": ["a", "b"]},
                "address": {
                    "type": "object",
                    "properties": {
                        "geo": {"type": "object", "properties": {"lat": {"type": "number"}}, "required": ["lat"]},
                        "street": {"type": "string"},
                    },
                    "required": ["street"],
                },
            },
            "required": ["kind"],
        },
        "owner": {"$ref": "#/$defs/Owner"},
        "count": {"type": "integer", "minimum": 1},
    },
    "required": ["order", "count"],
    "$defs": {
        "Owner": {"type": "object", "properties": {"pet": {"$ref": "#/$defs/Pet"}, "status": {"$ref": "#/$defs/Status"}}},
        "Pet": {"type": "object", "properties": {"tag": {"$ref": "#/$defs/Tag"}}},
        "Tag": {"type": "object", "properties": {"label": {"type": "string"}}},
        "Status": {"type": "string", "enum": ["on", "off"]},
    },
}
SHALLOW: dict[str, Any] = {
    "type": "object",
    "properties": {"q": {"type": "string"}, "page": {"type": "object", "properties": {"n": {"type": "integer"}}}},
    "required": ["q"],
}


def _params(text: str) -> dict[str, Any]:
    return json.loads(text.splitlines()[-1])["parameters"]


def test_deep_schema_is_cut_at_the_depth_with_the_marker() -> None:
    tool = Tool(name="order", description="Place an order.", input_schema=DEEP)
    params = _params(prompts.render_function_description([tool], style="json"))
    address = params["properties"]["order"]["properties"]["address"]
    assert address["properties"]["geo"] == {"type": "object", "description": prompts.DEPTH_MARKER}
    assert "describe_tool" in prompts.DEPTH_MARKER
    # through references too: Owner (level 1) > Pet (level 2) > Tag (level 3) is cut
    assert params["$defs"]["Pet"]["properties"]["tag"] == {"type": "object", "description": prompts.DEPTH_MARKER}
    assert "Tag" not in params["$defs"]


def test_top_levels_keep_names_types_enums_and_required() -> None:
    tool = Tool(name="order", description="Place an order.", input_schema=DEEP)
    params = _params(prompts.render_function_description([tool], style="json"))
    assert params["required"] == ["order", "count"]
    assert params["properties"]["count"] == {"type": "integer", "minimum": 1}
    order = params["properties"]["order"]
    assert order["required"] == ["kind"] and order["properties"]["kind"]["enum"] == ["a", "b"]
    assert order["properties"]["address"]["required"] == ["street"]
    assert order["properties"]["address"]["properties"]["street"] == {"type": "string"}
    assert params["$defs"]["Status"]["enum"] == ["on", "off"]  # a field-less definition stays at any depth


def test_shallow_schema_is_unchanged() -> None:
    tool = Tool(name="find", description="Find.", input_schema=SHALLOW)
    assert prompts.limit_depth([tool]) == ([tool], False)
    assert prompts.render_function_description([tool], style="json") == prompts.render_function_description(
        [tool], style="json", max_depth=None)


def test_limit_leaves_the_tool_schema_whole() -> None:
    tool = Tool(name="order", description="Place an order.", input_schema=DEEP)
    cut, changed = prompts.limit_depth([tool])
    assert changed and tool.input_schema == DEEP and cut[0].input_schema != DEEP
    full = prompts.render_function_description([tool], style="json", max_depth=None)
    assert _params(full)["$defs"]["Tag"]["properties"]["label"] == {"type": "string"}


def test_typescript_shows_the_marker() -> None:
    tool = Tool(name="order", description="Place an order.", input_schema=DEEP)
    text = prompts.render_function_description([tool], style="typescript")
    assert f"// {prompts.DEPTH_MARKER}" in text and "geo?: object" in text


class _Deep(ToolDriver):
    def _list_tools(self) -> list[Tool]:
        return [Tool(name="order", description="Place an order.", input_schema=DEEP)]

    def _call_tool(self, invocation: Invocation) -> Any:
        return invocation.arguments


class _Shallow(_Deep):
    def _list_tools(self) -> list[Tool]:
        return [Tool(name="find", description="Find.", input_schema=SHALLOW)]


def test_inline_driver_offers_describe_tool_with_the_whole_schema() -> None:
    driver = _Deep(description_mode="inline")
    text = driver.get_function_description()
    assert prompts.DEPTH_MARKER in text and '"name":"describe_tool"' in text
    answer = driver.process_llm_response('{"tool": "describe_tool", "arguments": {"name": "order"}}')
    assert answer["input_schema"] == DEEP
    assert [t.name for t in driver.list_tools()] == ["order"]  # listed tools carry whole schemas


def test_shallow_inline_driver_has_no_describe_tool() -> None:
    driver = _Shallow(description_mode="inline")
    assert [t.name for t in driver._tool_map().values()] == ["find"]
    assert "describe_tool" not in driver.get_function_description()


def test_tools_defining_a_name_differently_are_cut_each_on_its_own() -> None:
    other = {**DEEP, "$defs": {**DEEP["$defs"], "Tag": {"type": "string"}}}
    first = Tool(name="a", description="A.", input_schema=DEEP)
    second = Tool(name="b", description="B.", input_schema=other)
    (cut_a, cut_b), changed = prompts.limit_depth([first, second])
    assert changed
    assert "Tag" not in cut_a.input_schema["$defs"]
    assert cut_b.input_schema["$defs"]["Pet"]["properties"]["tag"] == {"$ref": "#/$defs/Tag"}
    assert cut_b.input_schema["$defs"]["Tag"] == {"type": "string"}
