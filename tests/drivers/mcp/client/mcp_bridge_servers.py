"""Helpers that start the real MCP test servers (stdio and streamable HTTP on loopback)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support.servers import free_port, start_server, stop, wait_for_port

__all__ = ["IFACE", "MOODY", "PLAYER", "SERVERS", "SHIFTY", "free_port", "player_stdio_options", "start_http", "start_moody",
           "stop", "wait_for_port"]

SERVERS = Path(__file__).resolve().parent / "servers"
PLAYER = SERVERS / "player_server.py"
IFACE = SERVERS / "iface_server.py"
MOODY = SERVERS / "moody_server.py"
SHIFTY = SERVERS / "shifty_server.py"


def start_http(script: Path, *extra: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen[bytes], str]:
    """Run a test server script over streamable HTTP on a free port; the caller ``stop``s it."""
    port = free_port()
    process = start_server([sys.executable, script, "--http", str(port), *extra], port,
                           env={**os.environ, **(env or {})})
    return process, f"http://127.0.0.1:{port}/mcp"


def player_stdio_options(**env: str) -> dict[str, object]:
    options: dict[str, object] = {"command": sys.executable, "args": [str(PLAYER)]}
    if env:
        options["env"] = env
    return options


def start_moody(port: int, prefix: str, listing: str = "", ping: str = "") -> subprocess.Popen[bytes]:
    """The moody server (tools named ``<prefix>...``, its listing failing as ``listing`` says,
    ``ping`` describing its ping tool when given) over streamable HTTP on ``port``; the
    caller ``stop``s it."""
    env = {**os.environ, "MCS_TEST_PREFIX": prefix, "MCS_TEST_LISTING": listing, "MCS_TEST_PING": ping}
    return start_server([sys.executable, MOODY, "--http", str(port)], port, env=env)
