"""A low-level MCP server whose tools may return structured content that breaks their own
output schema (an SDK-built server would refuse to send it), for the bridge's result checks.

``count`` declares ``{"count": integer}`` and returns ``{"count": <word>}`` unless the word
is ``ok``; ``code`` declares a ``pattern`` (``^[A-Z]{3}$``) and returns the word as given.
Run as ``python liar_server.py`` (stdio).
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp.types as mt
from mcp.server.lowlevel import Server

TOOLS = [
    mt.Tool(
        name="count", description="Count a word.",
        input_schema={"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]},
        output_schema={"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]},
    ),
    mt.Tool(
        name="code", description="Spell a code.",
        input_schema={"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]},
        output_schema={"type": "object", "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}},
                       "required": ["code"]},
    ),
]


async def on_list_tools(ctx: Any, params: Any) -> mt.ListToolsResult:
    return mt.ListToolsResult(tools=TOOLS)


async def on_call_tool(ctx: Any, params: mt.CallToolRequestParams) -> mt.CallToolResult:
    word = str((params.arguments or {}).get("word", ""))
    if params.name == "count":
        structured: dict[str, Any] = {"count": 3 if word == "ok" else word}
    else:
        structured = {"code": word}
    return mt.CallToolResult(content=[mt.TextContent(type="text", text=word)], structured_content=structured)


async def _serve() -> None:
    from mcp.server.stdio import stdio_server

    server: Server[Any] = Server("liar", version="1.0.0", on_list_tools=on_list_tools, on_call_tool=on_call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(_serve)
