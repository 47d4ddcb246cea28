"""MCP results -> the values (or errors) an MCS caller gets."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcs.errors import ExecutionError
from mcs.truncation import cap_text

#: An error message from a server is for the model to read; longer ones are cut.
MAX_ERROR_BYTES = 4096


def _block(block: Any) -> Any:
    dump = getattr(block, "model_dump", None)
    return dump(by_alias=True, exclude_none=True, mode="json") if callable(dump) else block


def error_text(result: Any) -> str:
    """The text of an ``isError`` result (its text blocks, joined)."""
    texts = [getattr(b, "text", "") for b in (result.content or []) if getattr(b, "type", "") == "text"]
    return "\n".join(t for t in texts if t).strip()


def wraps_result(output_schema: Mapping[str, Any] | None) -> bool:
    """True for the output schema the MCP SDKs give a tool returning a non-object
    (``str``, a list, a number): an object whose only, required property is ``result``."""
    if not isinstance(output_schema, Mapping):
        return False
    properties = output_schema.get("properties")
    return (
        isinstance(properties, Mapping)
        and list(properties) == ["result"]
        and list(output_schema.get("required") or ()) == ["result"]
    )


def tool_result(
    result: Any, tool: str, output_schema: Mapping[str, Any] | None = None, *, wrapped: bool | None = None
) -> Any:
    """A ``CallToolResult`` as a value: the structured content when the server sent one,
    else the text (one string, or a list for several text blocks), else the blocks as dicts.

    Structured content under the SDKs' ``{"result": value}`` wrapper (``output_schema``
    is that wrapper, see :func:`wraps_result`; ``wrapped`` is its answer worked out once
    per tool, when the caller has it) is unwrapped: a tool returning a ``str``
    gives the ``str``, one returning a ``dict`` the ``dict``. Text is never decoded: a
    server without structured output that returns a dict as JSON text gives that text.

    Raises:
        ExecutionError: the server reported ``isError``; the message is the server's text
            (cut at :data:`MAX_ERROR_BYTES` with a marker).
    """
    if result.is_error:
        text = cap_text(error_text(result), MAX_ERROR_BYTES, what="error message") or (
            "the MCP server reported an error without a message")
        raise ExecutionError(text, tool=tool, details={"source": "mcp_server"})
    structured = result.structured_content
    if structured is not None:
        if wrapped is None:
            wrapped = wraps_result(output_schema)
        if wrapped and isinstance(structured, Mapping) and list(structured) == ["result"]:
            return structured["result"]
        return structured
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
