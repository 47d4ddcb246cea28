"""Helpers for the inspector's tests: `mcs inspect` as a real process, keyboard-only moves,
and an MCP server config for the SDK-built interfaces server."""

from __future__ import annotations

import json
import os
import re
import selectors
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from support.servers import stop

HERE = Path(__file__).resolve().parent
INTERFACES_SERVER = HERE / "interfaces_server.py"
_URL = re.compile(r"http://127\.0\.0\.1:\d+/[A-Za-z0-9_-]+/")


@contextmanager
def inspect_process(args: Sequence[str], *, cwd: Path | None = None, timeout: float = 60) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """Run ``mcs inspect ARGS``; yield the process and the URL it printed; stop it after."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen([sys.executable, "-m", "mcs.cli", "inspect", *args], cwd=cwd, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        yield process, _read_url(process, timeout)
    finally:
        stop(process)


def _read_url(process: subprocess.Popen[str], timeout: float) -> str:
    assert process.stdout is not None
    deadline = time.monotonic() + timeout
    seen = ""
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if selector.select(timeout=max(0.0, deadline - time.monotonic())):
                line = process.stdout.readline()
                if not line:
                    break
                seen += line
                found = _URL.search(line)
                if found:
                    return found.group(0)
    stderr = process.stderr.read() if process.poll() is not None and process.stderr else ""
    raise AssertionError(f"mcs inspect printed no URL: {seen!r} {stderr!r}")


def mcp_servers_file(folder: Path, record: Path, *extra: str) -> Path:
    """An mcpServers JSON file that starts the interfaces server over stdio, recording calls."""
    config = {"mcpServers": {"studio": {
        "command": sys.executable, "args": [str(INTERFACES_SERVER), "--record", str(record), *extra],
    }}}
    path = folder / "servers.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def recorded(record: Path, count: int, timeout: float = 15) -> list[dict[str, Any]]:
    """The calls the server recorded, once there are at least ``count`` (polled, no sleep-and-hope)."""
    deadline = time.monotonic() + timeout
    calls: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        if record.exists():
            calls = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines() if line]
            if len(calls) >= count:
                return calls
        time.sleep(0.02)
    raise AssertionError(f"the server recorded {len(calls)} calls, expected {count}: {calls}")


def tab_to(page: Any, selector: str, *, limit: int = 120, backwards: bool = False) -> None:
    """Press Tab (Shift+Tab) until the focused element matches ``selector``: reachable by keyboard."""
    key = "Shift+Tab" if backwards else "Tab"
    for _ in range(limit):
        if page.evaluate("s => document.activeElement && document.activeElement.matches(s)", selector):
            return
        page.keyboard.press(key)
    raise AssertionError(f"{selector} is not reachable with {key} within {limit} presses")
