"""A low-level MCP server that lists whatever it is told to, for the bridge's red-team
tests: names that collide with the bridge's own, schemas with external ``$ref``s, text
hidden in prompt names and resource templates.

``MCS_TEST_TOOLS`` holds the tools' JSON (``[{"name", "description", "inputSchema"}]``), or
``@`` and a file's path to read it from at every listing;
``MCS_TEST_PROMPTS`` and ``MCS_TEST_TEMPLATES`` (optional) the prompts' and resource
templates' JSON as ``prompts/list`` and ``resources/templates/list`` send them;
every call is appended as one JSON line (``{"tool", "arguments"}``) to the file named by
``MCS_TEST_CALLS``, and answered with the text ``"<name> ran"``. Run as
``python hostile_server.py`` (stdio).
"""

from __future__ import annotations

import json
import os
from typing import Any

import anyio
import mcp.types as mt
from mcp.server.lowlevel import Server


def _tools() -> list[mt.Tool]:
    listed = os.environ["MCS_TEST_TOOLS"]
    if listed.startswith("@"):  # a file, read at every listing: a test changes the tools meanwhile
        with open(listed[1:], encoding="utf-8") as tools:
            listed = tools.read()
    return [mt.Tool.model_validate(tool) for tool in json.loads(listed)]


async def on_list_tools(ctx: Any, params: Any) -> mt.ListToolsResult:
    return mt.ListToolsResult(tools=_tools())


async def on_list_prompts(ctx: Any, params: Any) -> mt.ListPromptsResult:
    return mt.ListPromptsResult(prompts=json.loads(os.environ.get("MCS_TEST_PROMPTS", "[]")))


async def on_list_resources(ctx: Any, params: Any) -> mt.ListResourcesResult:
    return mt.ListResourcesResult(resources=[])


async def on_list_resource_templates(ctx: Any, params: Any) -> mt.ListResourceTemplatesResult:
    return mt.ListResourceTemplatesResult(resource_templates=json.loads(os.environ.get("MCS_TEST_TEMPLATES", "[]")))


async def on_call_tool(ctx: Any, params: mt.CallToolRequestParams) -> mt.CallToolResult:
    with open(os.environ["MCS_TEST_CALLS"], "a", encoding="utf-8") as calls:
        calls.write(json.dumps({"tool": params.name, "arguments": params.arguments or {}}) + "\n")
    return mt.CallToolResult(content=[mt.TextContent(type="text", text=f"{params.name} ran")])


async def _serve() -> None:
    from mcp.server.stdio import stdio_server

    server: Server[Any] = Server(
        "hostile", version="1.0.0", on_list_tools=on_list_tools, on_call_tool=on_call_tool,
        on_list_prompts=on_list_prompts, on_list_resources=on_list_resources,
        on_list_resource_templates=on_list_resource_templates,
    )
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(_serve)
