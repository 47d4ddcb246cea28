"""A stdio transport for MCP servers that bounds what one message may hold.

The SDK's ``stdio_client`` keeps whatever a server writes until a newline comes, and joins
each new chunk to everything before it: a hostile or broken server that writes one
endless line grows the client without bound, in time quadratic in the line's length
(20 MB took seconds and hundreds of megabytes). :func:`bounded_stdio_client` reads the
server's stdout as bytes, looks for the newline only in what arrived since the last look,
and ends the session when one message passes ``max_message_bytes``: ``on_refused`` is
told why (the bridge turns that into the error every waiting call gets) and the server
process is stopped. Messages under the bound are parsed by the SDK's own JSON-RPC model,
as the SDK's transport does. The same bound holds over HTTP (:mod:`mcs_mcp.client.http_bounds`).

The server runs in a session of its own (its process group): when it does not exit within
:data:`STOP_GRACE_SECONDS` of its stdin closing, the group gets ``SIGTERM``, then
``SIGKILL``. That is the SDK's order (MCP "Lifecycle", shutdown over stdio). On Windows,
where process groups work differently, the SDK's transport is used unchanged.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TextIO

import anyio
from anyio.abc import Process

logger = logging.getLogger(__name__)

#: The largest message a stdio server may send by default (16 MiB of JSON).
MAX_MESSAGE_BYTES = 16 * 1024 * 1024
#: How long a server has to exit once its stdin is closed, and again after ``SIGTERM``.
STOP_GRACE_SECONDS = 2.0
_CHUNK = 65_536


def too_long(server: str, max_message_bytes: int, size: str) -> str:
    """The one-line reason a session ends for a message past the bound, on any transport:
    ``server`` names it, ``size`` says how much came ("1234 so far")."""
    return (f"the MCP server {server} sent a message of more than {max_message_bytes} bytes "
            f"({size}; max_message_bytes); the connection was closed")


@asynccontextmanager
async def bounded_stdio_client(
    params: Any, errlog: TextIO, *, max_message_bytes: int = MAX_MESSAGE_BYTES,
    on_refused: Callable[[str], None] | None = None,
) -> AsyncIterator[tuple[Any, Any]]:
    """Start the server ``params`` (an SDK ``StdioServerParameters``) and yield the SDK's
    ``(read_stream, write_stream)`` pair over its stdin and stdout.

    A message longer than ``max_message_bytes`` is never held whole: the read side closes
    (the session sees the connection end) after ``on_refused`` gets a one-line reason. On
    exit the server is stopped as the module docstring says.
    """
    if sys.platform == "win32":  # pragma: no cover - process groups are POSIX
        from mcp.client.stdio import stdio_client

        async with stdio_client(params, errlog=errlog) as streams:
            yield streams
        return

    from mcp import types
    from mcp.client.stdio import get_default_environment
    from mcp.shared.message import SessionMessage

    process = await anyio.open_process(
        [params.command, *params.args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errlog,
        env=get_default_environment() | (params.env or {}), cwd=params.cwd, start_new_session=True,
    )
    read_writer, read_stream = anyio.create_memory_object_stream[Any](0)
    write_stream, write_reader = anyio.create_memory_object_stream[Any](0)

    def parsed(line: bytes) -> Any:
        try:
            return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
        except ValueError as exc:
            return exc  # the session reports it, as the SDK's transport does

    def refuse(size: int) -> None:
        reason = too_long(repr(params.command), max_message_bytes, f"{size} so far")
        logger.warning("%s", reason)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGTERM)  # a server past the bound is not waited on
        if on_refused is not None:
            on_refused(reason)

    async def read_stdout() -> None:
        assert process.stdout is not None
        buffer = bytearray()
        scanned = 0  # bytes of buffer already searched for a newline
        async with read_writer:
            while True:
                try:
                    buffer += await process.stdout.receive(_CHUNK)
                except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return
                start = 0
                while (end := buffer.find(b"\n", scanned)) >= 0:
                    if end - start > max_message_bytes:
                        refuse(end - start)
                        return
                    line = bytes(buffer[start:end])
                    start = scanned = end + 1
                    if line.strip():
                        try:
                            await read_writer.send(parsed(line))
                        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                            return
                del buffer[:start]
                scanned = len(buffer)
                if len(buffer) > max_message_bytes:
                    refuse(len(buffer))
                    return

    async def write_stdin() -> None:
        assert process.stdin is not None
        async with write_reader:
            try:
                async for message in write_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await process.stdin.send(data.encode("utf-8"))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                await read_writer.aclose()  # the session then sees the connection end

    async with anyio.create_task_group() as group:
        group.start_soon(read_stdout)
        group.start_soon(write_stdin)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await _stop(process)
                for stream in (read_stream, write_stream, read_writer, write_reader):
                    await stream.aclose()
            group.cancel_scope.cancel()


async def _stop(process: Process) -> None:
    """Close the server's stdin; past the grace, ``SIGTERM`` then ``SIGKILL`` its group."""
    if process.stdin is not None:
        with contextlib.suppress(Exception):
            await process.stdin.aclose()
    for signum in (None, signal.SIGTERM, signal.SIGKILL):
        if signum is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signum)
        with anyio.move_on_after(STOP_GRACE_SECONDS):
            await process.wait()
            break
    with contextlib.suppress(Exception):
        await process.aclose()  # its pipes, before the loop that owns them closes
