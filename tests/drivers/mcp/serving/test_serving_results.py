"""Driver values as MCP results, tools, prompts and resources."""

from __future__ import annotations

import base64

import mcp_types as types
from mcs_mcp.serving import results
from pydantic import BaseModel

from mcs.content import Binary
from mcs.errors import InvalidInputError
from mcs.tools import Tool


class Point(BaseModel):
    x: int
    y: int


def test_text_json_and_structured_results() -> None:
    assert results.to_call_result("hi").content[0].text == "hi"
    as_dict = results.to_call_result({"a": 1, "when": {"b": [1, 2]}})
    assert as_dict.structured_content == {"a": 1, "when": {"b": [1, 2]}}
    assert as_dict.content[0].text == '{"a": 1, "when": {"b": [1, 2]}}'
    as_list = results.to_call_result([1, "x"])
    assert as_list.content[0].text == '[1, "x"]' and as_list.structured_content is None
    assert results.to_call_result(None).content[0].text == "null"
    assert results.to_call_result(Point(x=1, y=2)).structured_content == {"x": 1, "y": 2}


def test_bytes_follow_the_tools_mime_type() -> None:
    image_tool = Tool(name="snap", meta={"mime_type": "image/jpeg"})
    image = results.to_call_result(b"\xff\xd8", image_tool).content[0]
    assert image.type == "image" and image.mime_type == "image/jpeg"
    assert base64.b64decode(image.data) == b"\xff\xd8"
    unknown = results.to_call_result(b"\x00\x01").content[0]
    assert unknown.type == "resource" and unknown.resource.mime_type == "application/octet-stream"


def test_mcp_values_pass_through_unchanged() -> None:
    block = types.TextContent(type="text", text="as is")
    assert results.to_call_result(block).content == [block]
    ready = types.CallToolResult(content=[block], is_error=True)
    assert results.to_call_result(ready) is ready


def test_tool_errors_keep_the_message_and_code() -> None:
    result = results.tool_error_result(InvalidInputError("field 'a': expected a number, got 'x'"))
    assert result.is_error is True
    assert result.content[0].text == "field 'a': expected a number, got 'x'"
    assert result.meta == {"mcs/error": "INVALID_INPUT"}


def test_tools_keep_annotations_and_only_object_output_schemas() -> None:
    tool = Tool(name="get", description="Get it.", annotations={"readOnlyHint": True, "title": "Get"},
                output_schema={"type": "object", "properties": {}}, meta={"required_scopes": ["r"]})
    listed = results.tool_to_mcp(tool)
    assert listed.annotations is not None and listed.annotations.read_only_hint is True
    assert listed.output_schema == {"type": "object", "properties": {}}
    assert results.tool_to_mcp(Tool(name="n", output_schema={"type": "number"})).output_schema is None
    assert results.required_scopes(tool) == ("r",)
    assert results.required_scopes({"meta": {"requiredScopes": "a b"}}) == ("a", "b")


def test_prompts_and_resources_from_plain_mappings() -> None:
    prompt = results.prompt_to_mcp({"name": "p", "description": "d",
                                     "input_schema": {"properties": {"q": {"description": "query"}}, "required": ["q"]}})
    assert prompt.arguments is not None and prompt.arguments[0].required is True
    rendered = results.to_prompt_result({"description": "x", "messages": ["hello", {"role": "assistant", "content": "hi"}]})
    assert [m.role for m in rendered.messages] == ["user", "assistant"]
    read = results.to_read_result(b"\x89PNG", "file://a.png", "image/png")
    assert read.contents[0].mime_type == "image/png" and read.contents[0].blob == base64.b64encode(b"\x89PNG").decode()
    assert results.to_read_result({"k": 1}, "x://k").contents[0].text == '{"k": 1}'


def test_binary_forms_become_the_block_their_content_type_calls_for() -> None:
    png, pdf = Binary.of(b"\x89PNG", "image/png"), Binary.of(b"%PDF", "application/pdf", truncated=True)
    image = results.to_call_result(png).content[0]
    assert (image.type, image.mime_type, image.data) == ("image", "image/png", base64.b64encode(b"\x89PNG").decode())
    blob = results.to_call_result(pdf).content[0]
    assert blob.type == "resource" and blob.resource.mime_type == "application/pdf"
    assert base64.b64decode(blob.resource.blob) == b"%PDF"
