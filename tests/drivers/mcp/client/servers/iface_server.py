"""A low-level MCP server that implements ``media.player.v1`` under its own tool names.

``install`` from ``mcs_mcp.interfaces.wire`` adds ``list_interfaces``. Run with
``--wrong`` to serve a ``set_volume`` that takes a string (so it does not conform),
``--tool-only`` to offer ``list_interfaces`` as a tool only,
``--http PORT`` for streamable HTTP instead of stdio.
"""

from __future__ import annotations

import argparse
import json
from typing import Any, ClassVar

import anyio
import mcp.types as mt
from mcp.server.lowlevel import Server
from mcs_mcp.interfaces.wire import install


def tools(wrong: bool) -> list[mt.Tool]:
    volume_type = "string" if wrong else "number"
    return [
        mt.Tool(
            name="player_play",
            description="Starts the music.",
            input_schema={"type": "object", "properties": {}},
            output_schema={"type": "object", "properties": {"status": {"const": "playing"}}, "required": ["status"]},
        ),
        mt.Tool(
            name="player_pause",
            description="Stops the music for now.",
            input_schema={"type": "object", "properties": {}},
            output_schema={"type": "object", "properties": {"status": {"const": "paused"}}, "required": ["status"]},
        ),
        mt.Tool(
            name="player_volume",
            description="Volume knob.",
            input_schema={
                "type": "object",
                "properties": {"volume": {"type": volume_type}},
                "required": ["volume"],
            },
            output_schema={"type": "object", "properties": {"success": {"type": "boolean"}}, "required": ["success"]},
        ),
        mt.Tool(
            name="add",
            description="Add two integers.",
            input_schema={
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"],
            },
        ),
    ]


class Declaration:
    """Stands for a driver: what install() reads is ``implements`` and ``meta.name``."""

    implements: ClassVar[dict[str, dict[str, str]]] = {"media.player.v1": {"play": "player_play", "pause": "player_pause", "set_volume": "player_volume"}}

    class meta:
        name = "iface-player"


def build(wrong: bool = False, tool_only: bool = False) -> Server[Any]:
    offered = tools(wrong)

    async def on_list_tools(ctx: Any, params: Any) -> mt.ListToolsResult:
        return mt.ListToolsResult(tools=offered)

    async def on_call_tool(ctx: Any, params: mt.CallToolRequestParams) -> mt.CallToolResult:
        args = params.arguments or {}
        if params.name == "player_play":
            data: dict[str, Any] = {"status": "playing"}
        elif params.name == "player_pause":
            data = {"status": "paused"}
        elif params.name == "player_volume":
            data = {"success": True, "volume": args.get("volume")}
        elif params.name == "add":
            return mt.CallToolResult(content=[mt.TextContent(type="text", text=str(args["a"] + args["b"]))])
        else:
            return mt.CallToolResult(content=[mt.TextContent(type="text", text=f"Unknown tool: {params.name}")], is_error=True)
        return mt.CallToolResult(content=[mt.TextContent(type="text", text=json.dumps(data))], structured_content=data)

    server: Server[Any] = Server("iface-player", version="1.0.0", on_list_tools=on_list_tools, on_call_tool=on_call_tool)
    install(server, Declaration(), as_method=not tool_only)
    return server


async def serve_stdio(server: Server[Any]) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--wrong", action="store_true")
    parser.add_argument("--tool-only", action="store_true", help="offer list_interfaces only as a tool")
    parser.add_argument("--http", type=int, default=None)
    args = parser.parse_args()
    server = build(args.wrong, args.tool_only)
    if args.http is None:
        anyio.run(serve_stdio, server)
    else:
        import uvicorn

        uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=args.http, log_level="warning")


if __name__ == "__main__":
    main()
