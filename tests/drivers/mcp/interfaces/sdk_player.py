"""An MCP server built with the official SDK's ``MCPServer`` that implements media.player.v1
under its own tool names, declared through ``mcs_mcp.interfaces.install`` (no driver).

Run over stdio: ``python sdk_player.py``. Every request method it receives is appended, one
per line, to the file named by ``MCS_TEST_REQUESTS`` (a public ``MCPServer`` middleware).
``MCS_TEST_VARIANT=text_pause`` makes ``player_pause`` answer plain text, which breaks the
interface's ``returns`` at run time while its declaration still conforms (no output schema).
"""

from __future__ import annotations

import os
from typing import Any, Literal

from mcp.server.mcpserver import MCPServer
from mcs_mcp.interfaces import install
from pydantic import BaseModel

VARIANT = os.environ.get("MCS_TEST_VARIANT", "")
MAPPING = {"play": "player_play", "pause": "player_pause", "set_volume": "player_volume"}


class Playing(BaseModel):
    status: Literal["playing"]


class Paused(BaseModel):
    status: Literal["paused"]


class Done(BaseModel):
    success: bool


async def record(ctx: Any, call_next: Any) -> Any:
    path = os.environ.get("MCS_TEST_REQUESTS")
    if path:
        with open(path, "a", encoding="utf-8") as log:
            log.write(f"{ctx.method}\n")
    return await call_next(ctx)


server = MCPServer("sdk-player", version="1.0.0", middleware=[record])


@server.tool(description="Starts the music.")
def player_play() -> Playing:
    return Playing(status="playing")


if VARIANT == "text_pause":

    @server.tool(description="Holds the music.", structured_output=False)
    def player_pause() -> str:
        return "stopped"

else:

    @server.tool(description="Holds the music.")
    def player_pause() -> Paused:
        return Paused(status="paused")


@server.tool(description="Loudness from 0 to 1.")
def player_volume(volume: float) -> Done:
    return Done(success=True)


@server.tool(description="Echo the text back.")
def echo(text: str) -> str:
    return text


install(server, implements={"media.player.v1": MAPPING})

if __name__ == "__main__":
    server.run("stdio")
