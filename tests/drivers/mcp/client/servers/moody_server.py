"""A real MCP server (official SDK) whose listing can fail, and that can flood its client
with ``notifications/tools/list_changed``, for the bridge's robustness tests.

Run as ``python moody_server.py`` (stdio) or ``python moody_server.py --http PORT``
(streamable HTTP on 127.0.0.1). ``MCS_TEST_PREFIX`` starts its tools' names (so two of
them can sit behind one bridge); ``MCS_TEST_LISTING`` makes ``tools/list`` fail: ``error``
answers it with a JSON-RPC error, ``slow`` answers it after 30 s, ``after:SECONDS`` after
that many seconds. ``MCS_TEST_PING``
replaces the description of ``<prefix>ping`` (a server that changed its tools).

Tools: ``<prefix>ping`` answers ``pong``; ``<prefix>listings`` says how many ``tools/list``
requests this server answered; ``<prefix>flood`` sends ``count`` list_changed notifications.
"""

from __future__ import annotations

import asyncio
import os

from _transport import serve_as_asked
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import Tool

PREFIX = os.environ.get("MCS_TEST_PREFIX", "")
LISTING = os.environ.get("MCS_TEST_LISTING", "")


class MoodyServer(MCPServer):
    """An SDK server that counts (and, on request, fails) its ``tools/list`` requests."""

    listings = 0

    async def list_tools(self) -> list[Tool]:
        MoodyServer.listings += 1
        if LISTING == "error":
            raise RuntimeError("the tool registry is locked")
        if LISTING == "slow":
            await asyncio.sleep(30)
        if LISTING.startswith("after:"):
            await asyncio.sleep(float(LISTING.removeprefix("after:")))
        return await super().list_tools()


server = MoodyServer("moody", version="1.0.0")


@server.tool(name=f"{PREFIX}ping", description=os.environ.get("MCS_TEST_PING") or "Answer pong.")
def ping() -> str:
    return f"pong from {PREFIX or 'moody'}"


@server.tool(name=f"{PREFIX}listings", description="How many tools/list requests this server answered.")
def listings() -> int:
    return MoodyServer.listings


@server.tool(name=f"{PREFIX}flood", description="Send list_changed notifications, count of them.")
async def flood(count: int, ctx: Context) -> str:
    for _ in range(count):
        await ctx.session.send_tool_list_changed()
    return f"sent {count}"


def main() -> None:
    serve_as_asked(server)


if __name__ == "__main__":
    main()
