"""`mcs serve ... --transport http` in a real child process, reached with the official `mcp` client."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from support.servers import free_port, server_process

MCS = Path(sys.executable).with_name("mcs")


@asynccontextmanager
async def mcp_http_session(url: str) -> AsyncIterator[ClientSession]:
    """An initialized ``mcp.ClientSession`` over streamable HTTP to ``url`` (closed after the block)."""
    async with (
        httpx2.AsyncClient(timeout=httpx2.Timeout(20.0)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write, client_info=types.Implementation(name="test", version="1")) as session,
    ):
        await session.initialize()
        yield session


@asynccontextmanager
async def served_over_http(
    args: Sequence[str | Path], *, env: Mapping[str, str] | None = None
) -> AsyncIterator[ClientSession]:
    """Run ``mcs serve <args> --transport http --port N`` on a free port; yield a client session to it.

    The server process is stopped after the block; a server that never listens fails here.
    """
    port = free_port()
    argv = [MCS, "serve", *args, "--transport", "http", "--port", str(port)]
    with server_process(argv, port, env=dict(env if env is not None else os.environ)):
        async with mcp_http_session(f"http://127.0.0.1:{port}/mcp") as session:
            yield session
