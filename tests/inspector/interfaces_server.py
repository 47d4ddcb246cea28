"""An MCP server built with the official SDK that declares every shipped interface.

It implements ``media.player.v1``, ``filesystem.navigator.v1`` and ``code.editor.v1``
(over a small in-memory file tree; ``open_file`` serves both), ``chat.assistant.v1``,
``thermostat.control.v1`` (an interface no registry knows, so the inspector falls back to
forms) and an unclassified ``add``. ``--wrong-player`` serves a ``set_volume`` taking a
string, so the player does not conform. ``--record FILE`` appends every call it receives
as a JSON line, for the tests to assert what reached the server. Nothing is executed:
``run_code`` reports what it would run.

    python interfaces_server.py [--record FILE] [--wrong-player]        (stdio)
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, ClassVar

import anyio
import mcp.types as mt
from mcp.server.lowlevel import Server
from mcs_mcp.interfaces.wire import install

from mcs import Interface

THERMOSTAT = Interface.model_validate({
    "interface": "thermostat.control.v1",
    "description": "Read and set a room's target temperature.",
    "methods": [{
        "name": "set_temperature",
        "description": "Set the target temperature.",
        "parameters": {"type": "object", "properties": {"celsius": {"type": "number", "minimum": 5, "maximum": 30}},
                       "required": ["celsius"]},
        "returns": {"type": "object", "properties": {"celsius": {"type": "number"}}, "required": ["celsius"]},
    }],
})

FILES = {
    "/docs/readme.md": "# Demo\nA file to read.\n",
    "/src/main.py": "print('hello')\nprint('world')\n",
    "/src/old.py": "obsolete = True\n",
}


def _object(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required or list(properties)}


SUCCESS = _object({"success": {"type": "boolean"}})
CONTENT = _object({"path": {"type": "string"}, "content": {"type": "string"}})
PATH = _object({"path": {"type": "string"}})
QUIET = mt.ToolAnnotations(destructive_hint=False)
READS = mt.ToolAnnotations(read_only_hint=True)


def tools(wrong_player: bool) -> list[mt.Tool]:
    volume = {"type": "string"} if wrong_player else {"type": "number"}
    return [
        mt.Tool(name="play", description="Starts the music.", input_schema=_object({}),
                output_schema=_object({"status": {"type": "string", "enum": ["playing"]}}), annotations=QUIET),
        mt.Tool(name="pause", description="Pauses the music.", input_schema=_object({}),
                output_schema=_object({"status": {"type": "string", "enum": ["paused"]}}), annotations=QUIET),
        mt.Tool(name="set_volume", description="Volume knob.", input_schema=_object({"volume": volume}),
                output_schema=SUCCESS, annotations=QUIET),
        mt.Tool(name="list_dir", description="Lists a folder.", input_schema=PATH, annotations=READS,
                output_schema=_object({"entries": {"type": "array", "items": _object(
                    {"name": {"type": "string"}, "type": {"type": "string", "enum": ["file", "directory"]}})}})),
        mt.Tool(name="open_file", description="Reads a file.", input_schema=PATH, output_schema=CONTENT, annotations=READS),
        mt.Tool(name="delete_file", description="Deletes a file.", input_schema=PATH, output_schema=SUCCESS,
                annotations=mt.ToolAnnotations(destructive_hint=True)),
        mt.Tool(name="edit_line", description="Replaces a line.", output_schema=SUCCESS, input_schema=_object(
            {"path": {"type": "string"}, "line": {"type": "integer", "minimum": 1}, "text": {"type": "string"}})),
        mt.Tool(name="run_code", description="Runs a file.", input_schema=PATH, annotations=QUIET,
                output_schema=_object({"stdout": {"type": "string"}, "stderr": {"type": "string"},
                                       "exit_code": {"type": "integer"}}, ["stdout", "exit_code"])),
        mt.Tool(name="summarize", description="Summarizes.", annotations=READS,
                input_schema=_object({"text": {"type": "string"}, "max_words": {"type": "integer", "minimum": 1}}, ["text"]),
                output_schema=_object({"summary": {"type": "string"}})),
        mt.Tool(name="reply", description="Replies.", annotations=READS,
                input_schema=_object({"message": {"type": "string"}, "conversation_id": {"type": "string"}}, ["message"]),
                output_schema=_object({"reply": {"type": "string"}})),
        mt.Tool(name="search_docs", description="Searches.", annotations=READS,
                input_schema=_object({"query": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}}, ["query"]),
                output_schema=_object({"results": {"type": "array", "items": _object(
                    {"title": {"type": "string"}, "snippet": {"type": "string"}})}})),
        mt.Tool(name="set_temperature", description="Thermostat.", annotations=QUIET,
                input_schema=_object({"celsius": {"type": "number"}}),
                output_schema=_object({"celsius": {"type": "number"}})),
        mt.Tool(name="add", description="Add two integers.", annotations=READS,
                input_schema=_object({"a": {"type": "integer"}, "b": {"type": "integer"}})),
    ]


class Declaration:
    """What install() reads of a driver: ``implements`` and ``meta.name``."""

    implements: ClassVar[list[Any]] = [
        "media.player.v1", "filesystem.navigator.v1", "code.editor.v1", "chat.assistant.v1", THERMOSTAT,
    ]

    class meta:
        name = "inspected-server"


def _entries(folder: str, files: dict[str, str]) -> list[dict[str, str]]:
    prefix = folder.rstrip("/") + "/"
    found: dict[str, str] = {}
    for path in files:
        if path.startswith(prefix):
            head, _, rest = path[len(prefix):].partition("/")
            found[head] = "directory" if rest else "file"
    return [{"name": name, "type": kind} for name, kind in sorted(found.items())]


def answer(name: str, args: dict[str, Any], files: dict[str, str]) -> dict[str, Any]:
    """What each tool returns (the server's state is ``files``)."""
    path = str(args.get("path", ""))
    if name in ("play", "pause"):
        return {"status": "playing" if name == "play" else "paused"}
    if name == "set_volume":
        return {"success": True}
    if name == "list_dir":
        return {"entries": _entries(path, files)}
    if name == "open_file":
        if path not in files:
            raise KeyError(f"no file {path}")
        return {"path": path, "content": files[path]}
    if name == "delete_file":
        return {"success": files.pop(path, None) is not None}
    if name == "edit_line":
        lines = files[path].split("\n")
        lines[int(args["line"]) - 1] = str(args["text"])
        files[path] = "\n".join(lines)
        return {"success": True}
    if name == "run_code":
        return {"stdout": f"would run {path} ({files.get(path, '').count(chr(10))} lines)", "exit_code": 0}
    if name == "summarize":
        return {"summary": str(args["text"])[:20]}
    if name == "reply":
        return {"reply": f"You said: {args['message']}"}
    if name == "search_docs":
        return {"results": [{"title": p, "snippet": c[:20]} for p, c in files.items() if str(args["query"]) in c]}
    if name == "set_temperature":
        return {"celsius": args["celsius"]}
    return {"sum": int(args["a"]) + int(args["b"])}


def build(record: Path | None = None, wrong_player: bool = False) -> Server[Any]:
    offered = tools(wrong_player)
    files = dict(FILES)

    async def on_list_tools(ctx: Any, params: Any) -> mt.ListToolsResult:
        return mt.ListToolsResult(tools=offered)

    async def on_call_tool(ctx: Any, params: mt.CallToolRequestParams) -> mt.CallToolResult:
        args = dict(params.arguments or {})
        if record is not None:
            with record.open("a", encoding="utf-8") as out:
                out.write(json.dumps({"tool": params.name, "arguments": args}) + "\n")
        try:
            data = answer(params.name, args, files)
        except KeyError as exc:
            return mt.CallToolResult(content=[mt.TextContent(type="text", text=str(exc))], is_error=True)
        return mt.CallToolResult(content=[mt.TextContent(type="text", text=json.dumps(data))], structured_content=data)

    server: Server[Any] = Server("inspected-server", version="1.0.0", on_list_tools=on_list_tools, on_call_tool=on_call_tool)
    install(server, Declaration())
    return server


async def _serve(server: Server[Any]) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--record", type=Path, default=None)
    parser.add_argument("--wrong-player", action="store_true")
    args = parser.parse_args()
    anyio.run(_serve, build(args.record, args.wrong_player))


if __name__ == "__main__":
    main()
