"""A stdio MCP server cannot grow the bridge without bound: a message longer than
``max_message_bytes`` ends the session with a reason every waiting call hears, and the
server process is stopped (``mcs_mcp.client.stdio``)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from mcs_mcp.client_driver import MCPDriver

from mcs.errors import ConfigurationError, ToolCallError

# A JSON-RPC server over stdio, written raw so it can misbehave: it answers initialize and
# tools/list, and answers tools/call with MODE: "endless" writes one line that never ends,
# "long" one complete line of LONG bytes, "fine" a normal result.
SERVER = r'''
import json, os, sys
mode, size, pidfile = sys.argv[1], int(sys.argv[2]), sys.argv[3]
open(pidfile, "w").write(str(os.getpid()))
out = sys.stdout.buffer
def send(message):
    out.write(json.dumps(message).encode() + b"\n"); out.flush()
for line in sys.stdin:
    request = json.loads(line)
    method, ident = request.get("method"), request.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": ident, "result": {
            "protocolVersion": request["params"]["protocolVersion"], "capabilities": {"tools": {}},
            "serverInfo": {"name": "raw", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": ident, "result": {"tools": [
            {"name": "dump", "description": "Dump.", "inputSchema": {"type": "object"}}]}})
    elif method == "tools/call":
        if mode == "endless":
            chunk = b"x" * 65536
            out.write(b'{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"' % ident)
            while True:
                out.write(chunk); out.flush()
        text = "x" * (size if mode == "long" else 10)
        send({"jsonrpc": "2.0", "id": ident, "result": {"content": [{"type": "text", "text": text}]}})
    elif ident is not None:
        send({"jsonrpc": "2.0", "id": ident, "result": {}})
'''


def _driver(tmp_path: Path, mode: str, size: int = 0, **options: object) -> tuple[MCPDriver, Path]:
    script = tmp_path / "raw_server.py"
    script.write_text(SERVER)
    pidfile = tmp_path / "server.pid"
    driver = MCPDriver(command=sys.executable, args=[str(script), mode, str(size), str(pidfile)], timeout=30,
                       max_result_bytes=10_000_000, **options)  # type: ignore[arg-type]
    return driver, pidfile


def _exited(pid: int, within: float = 10.0) -> bool:
    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        # A zombie still answers kill(0); its state in /proc says it is dead.
        stat = Path(f"/proc/{pid}/stat")
        if stat.exists() and stat.read_text().split(")")[-1].split()[0] == "Z":
            return True
        time.sleep(0.05)
    return False


def test_a_line_that_never_ends_is_refused_at_the_bound_and_the_server_is_stopped(tmp_path: Path) -> None:
    driver, pidfile = _driver(tmp_path, "endless", max_message_bytes=1024 * 1024)
    with driver:
        started = time.monotonic()
        with pytest.raises(ToolCallError) as refused:
            driver.call_tool("dump", {})
        assert time.monotonic() - started < 20  # not the deadline: the bound ended it
        assert "more than 1048576 bytes" in refused.value.message
        assert "max_message_bytes" in refused.value.message
        assert _exited(int(pidfile.read_text())), "the server kept running after the session ended"


@pytest.mark.parametrize(("size", "refused"), [(900_000, False), (1_100_000, True)])
def test_a_complete_message_is_read_up_to_the_bound_and_refused_past_it(
        tmp_path: Path, size: int, refused: bool) -> None:
    driver, _ = _driver(tmp_path, "long", size, max_message_bytes=1024 * 1024)
    with driver:
        if refused:
            with pytest.raises(ToolCallError, match="max_message_bytes"):
                driver.call_tool("dump", {})
        else:
            assert driver.call_tool("dump", {}) == "x" * size


def test_a_server_that_behaves_is_read_as_before(tmp_path: Path) -> None:
    driver, _ = _driver(tmp_path, "fine")
    with driver:
        assert [t.name for t in driver.list_tools()] == ["dump"]
        assert driver.call_tool("dump", {}) == "x" * 10


def test_a_bound_too_small_for_any_message_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="max_message_bytes must be at least 1024"):
        MCPDriver(command=sys.executable, max_message_bytes=10)
