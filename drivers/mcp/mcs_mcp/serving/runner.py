"""Run a served driver: stdio or streamable HTTP, until the client or a signal stops it."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any

from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

from mcs_mcp.serving.http import serve_http
from mcs_mcp.serving.options import ServeOptions
from mcs_mcp.serving.server import Extension, build_server


async def serve_stdio(server: Server[Any]) -> None:
    """Speak MCP on this process's stdin/stdout until stdin closes."""
    forwarder = getattr(server, "mcs_log_forwarder", None)
    with contextlib.ExitStack() as stack:
        if forwarder is not None:
            stack.enter_context(forwarder.installed())
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())


async def serve(driver: Any, options: ServeOptions, *, extensions: Sequence[Extension] = ()) -> None:
    """Serve ``driver`` as ``options`` say (the programmatic twin of ``mcs serve``)."""
    server = build_server(driver, options, extensions=extensions)
    if options.transport == "stdio":
        await serve_stdio(server)
    else:
        await serve_http(server, options)
