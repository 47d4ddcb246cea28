"""MCP results -> the values (or errors) an MCS caller gets."""

from __future__ import annotations

from typing import Any

from mcs.errors import ExecutionError


def _block(block: Any) -> Any:
    dump = getattr(block, "model_dump", None)
    return dump(by_alias=True, exclude_none=True, mode="json") if callable(dump) else block


def error_text(result: Any) -> str:
    """The text of an ``isError`` result (its text blocks, joined)."""
    texts = [getattr(b, "text", "") for b in (result.content or []) if getattr(b, "type", "") == "text"]
    return "\n".join(t for t in texts if t).strip()


def tool_result(result: Any, tool: str) -> Any:
    """A ``CallToolResult`` as a value: structured content when present, else the text, else the blocks.

    Raises:
        ExecutionError: the server reported ``isError``; the message is the server's text.
    """
    if result.is_error:
        text = error_text(result) or "the MCP server reported an error without a message"
        raise ExecutionError(text, tool=tool, details={"source": "mcp_server"})
    if result.structured_content is not None:
        return result.structured_content
    blocks = list(result.content or [])
    if blocks and all(getattr(b, "type", "") == "text" for b in blocks):
        texts = [b.text for b in blocks]
        return texts[0] if len(texts) == 1 else texts
    if not blocks:
        return None
    return [_block(b) for b in blocks]


def prompt_result(result: Any) -> list[dict[str, Any]]:
    """A ``GetPromptResult`` as ``[{"role", "content"}]`` (text content as a string)."""
    out: list[dict[str, Any]] = []
    for message in result.messages:
        content = message.content
        text = getattr(content, "text", None)
        out.append({"role": message.role, "content": text if text is not None else _block(content)})
    return out


def resource_result(result: Any) -> Any:
    """A ``ReadResourceResult``: the text of one text resource, else the content list."""
    contents = list(result.contents)
    if len(contents) == 1 and getattr(contents[0], "text", None) is not None:
        return contents[0].text
    return [_block(c) for c in contents]
