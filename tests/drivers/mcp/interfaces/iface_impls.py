"""SDK-built MCP servers implementing each shipped interface, correctly and wrongly.

``good(name)`` conforms to interface ``name``; ``wrong(name)`` gets it wrong in one
realistic way (a missing method, a narrower type, an extra required parameter, a result
field left out), listed in ``WRONG_BECAUSE``.
"""

from __future__ import annotations

from typing import Any, Literal

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel


class Status(BaseModel):
    status: Literal["playing"]


class Paused(BaseModel):
    status: Literal["paused"]


class Success(BaseModel):
    success: bool


class FileContent(BaseModel):
    path: str
    content: str


class RunResult(BaseModel):
    stdout: str
    stderr: str = ""
    exit_code: int


class RunResultNoCode(BaseModel):
    stdout: str


class Entry(BaseModel):
    name: str
    type: Literal["file", "directory"]


class Listing(BaseModel):
    entries: list[Entry]


class Summary(BaseModel):
    summary: str


class Reply(BaseModel):
    reply: str


class Hit(BaseModel):
    title: str
    snippet: str


class Hits(BaseModel):
    results: list[Hit]


def _media(wrong: bool) -> MCPServer:
    server = MCPServer("media")

    @server.tool(description="Starts playing.")
    def play() -> Status:
        return Status(status="playing")

    @server.tool(description="Pauses.")
    def pause() -> Paused:
        return Paused(status="paused")

    if wrong:
        @server.tool(name="set_volume", description="Volume in percent.")
        def set_volume_percent(volume: int) -> Success:
            return Success(success=True)
    else:
        @server.tool(description="Volume from 0 to 1.")
        def set_volume(volume: float) -> Success:
            return Success(success=True)

    return server


def _editor(wrong: bool) -> MCPServer:
    server = MCPServer("editor")

    @server.tool(description="Open.")
    def open_file(path: str) -> FileContent:
        return FileContent(path=path, content="")

    @server.tool(description="Edit.")
    def edit_line(path: str, line: int, text: str) -> Success:
        return Success(success=True)

    if wrong:
        @server.tool(name="run_code", description="Run.")
        def run_code_bad(path: str) -> RunResultNoCode:
            return RunResultNoCode(stdout="")
    else:
        @server.tool(description="Run.")
        def run_code(path: str) -> RunResult:
            return RunResult(stdout="", exit_code=0)

    return server


def _navigator(wrong: bool) -> MCPServer:
    server = MCPServer("navigator")

    @server.tool(description="List.")
    def list_dir(path: str) -> Listing:
        return Listing(entries=[])

    @server.tool(description="Read.")
    def open_file(path: str) -> FileContent:
        return FileContent(path=path, content="")

    if not wrong:
        @server.tool(description="Delete.")
        def delete_file(path: str) -> Success:
            return Success(success=True)

    return server


def _assistant(wrong: bool) -> MCPServer:
    server = MCPServer("assistant")

    if wrong:
        @server.tool(name="summarize", description="Summarize.")
        def summarize_styled(text: str, style: str, max_words: int | None = None) -> Summary:
            return Summary(summary=text[:10])
    else:
        @server.tool(description="Summarize.")
        def summarize(text: str, max_words: int | None = None) -> Summary:
            return Summary(summary=text[:10])

    @server.tool(description="Reply.")
    def reply(message: str, conversation_id: str | None = None) -> Reply:
        return Reply(reply="ok")

    @server.tool(description="Search.")
    def search_docs(query: str, limit: int = 5) -> Hits:
        return Hits(results=[])

    return server


_BUILDERS = {
    "media.player.v1": _media,
    "code.editor.v1": _editor,
    "filesystem.navigator.v1": _navigator,
    "chat.assistant.v1": _assistant,
}

#: For each interface, (method, words the wrong server's report must contain).
WRONG_BECAUSE: dict[str, tuple[str, str]] = {
    "media.player.v1": ("set_volume", "accepts integer, the interface allows number"),
    "code.editor.v1": ("run_code", "required result field the tool does not return"),
    "filesystem.navigator.v1": ("delete_file", "no tool implements this method"),
    "chat.assistant.v1": ("summarize", "required by the tool but not by the interface"),
}


def good(name: str) -> MCPServer:
    return _BUILDERS[name](False)


def wrong(name: str) -> MCPServer:
    return _BUILDERS[name](True)


async def listed_tools(server: Any) -> list[dict[str, Any]]:
    """The server's tools/list over a real MCP session (in-memory transport)."""
    from mcp import Client

    async with Client(server, mode="legacy", cache=None) as client:
        result = await client.list_tools()
    return [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in result.tools]
