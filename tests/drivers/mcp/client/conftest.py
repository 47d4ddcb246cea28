"""Real MCP servers for the bridge's tests: SDK-built, over stdio and streamable HTTP on loopback."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from mcp_bridge_servers import PLAYER, start_http, stop


@pytest.fixture
def player_http() -> Iterator[str]:
    """The SDK-built player server over streamable HTTP; yields its URL."""
    process, url = start_http(PLAYER)
    try:
        yield url
    finally:
        stop(process)


@pytest.fixture
def quiet() -> Iterator[object]:
    """A sink for stdio servers' stderr (their tracebacks for refused calls)."""
    with open(os.devnull, "w", encoding="utf-8") as sink:
        yield sink
