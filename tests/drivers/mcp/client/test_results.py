"""What a bridged MCP tool's result becomes: the server's structured content, else its text."""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest
from mcs_mcp.client.results import tool_result, wraps_result

from mcs.errors import ExecutionError

# The output schema the MCP SDK gives a tool returning a str (or a list, a number).
WRAPPED_STR = {"type": "object", "properties": {"result": {"type": "string"}}, "required": ["result"],
               "title": "echoOutput"}
DICT_SCHEMA = {"type": "object", "properties": {"key": {"type": "string"}, "value": {"type": "integer"}}}


def _result(text: str, structured: dict[str, Any] | None = None) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=structured)


@pytest.mark.parametrize(("result", "schema", "expected"), [
    (_result('"hi"', {"result": "hi"}), WRAPPED_STR, "hi"),
    (_result('{"key": "k", "value": 1}', {"key": "k", "value": 1}), DICT_SCHEMA, {"key": "k", "value": 1}),
    (_result('{"result": 1}', {"result": 1}), DICT_SCHEMA, {"result": 1}),
    (_result('{"key": "k"}'), None, '{"key": "k"}'),
    (_result("plain"), None, "plain"),
], ids=["str-unwrapped", "dict-as-is", "result-field-of-a-real-object", "json-text-stays-text", "text"])
def test_structured_content_when_the_server_sent_it_else_its_text(
    result: types.CallToolResult, schema: dict[str, Any] | None, expected: Any
) -> None:
    assert tool_result(result, "t", schema) == expected


def test_the_wrapper_is_recognised_only_in_its_exact_shape() -> None:
    assert wraps_result(WRAPPED_STR)
    assert not wraps_result({**WRAPPED_STR, "required": []})
    assert not wraps_result({"type": "object", "properties": {"result": {}, "note": {}}, "required": ["result"]})
    assert not wraps_result(None)


def test_several_text_blocks_are_a_list_and_other_blocks_dicts() -> None:
    texts = types.CallToolResult(content=[types.TextContent(type="text", text=t) for t in ("a", "b")])
    assert tool_result(texts, "t") == ["a", "b"]
    image = types.CallToolResult(content=[types.ImageContent(type="image", data="AAAA", mime_type="image/png")])
    assert tool_result(image, "t") == [{"type": "image", "data": "AAAA", "mimeType": "image/png"}]


def test_an_error_result_raises_with_the_servers_text() -> None:
    failed = types.CallToolResult(content=[types.TextContent(type="text", text="disk full")], is_error=True)
    with pytest.raises(ExecutionError, match="disk full"):
        tool_result(failed, "t")
