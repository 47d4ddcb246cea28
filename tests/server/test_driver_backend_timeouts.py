"""A driver served over RFC-0001 keeps the ``timeout_ms`` it advertises, on every transport,
even when the driver itself runs a sync function inline (a ``FunctionDriver``)."""

from __future__ import annotations

import concurrent.futures
import json
import select
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from rfc0001_helpers import running_app

import mcs
from mcs.server import DriverBackend
from mcs.server.app import create_app

RELEASE = threading.Event()
CALLS: list[str] = []


@mcs.tool
def hang() -> str:
    """Wait until the test releases it."""
    CALLS.append("hang")
    RELEASE.wait(15)
    return "late"


@mcs.tool
def ping() -> str:
    """Answer at once."""
    CALLS.append("ping")
    return "pong"


@pytest.fixture
def url() -> Iterator[str]:
    RELEASE.clear()
    CALLS.clear()
    backend = DriverBackend(mcs.FunctionDriver([hang, ping], name="slow", timeout=0.5))
    try:
        with running_app(create_app(backend)) as base:
            yield base
    finally:
        RELEASE.set()
        backend.close()


def _execute(url: str, tool: str) -> tuple[float, int, dict[str, str]]:
    started = time.monotonic()
    response = httpx.post(f"{url}/mcp/execute", json={"tool": tool, "arguments": {}}, timeout=10)
    return time.monotonic() - started, response.status_code, response.json()


def test_a_sync_function_over_its_timeout_is_a_timeout_over_http(url: str) -> None:
    capabilities = httpx.get(f"{url}/mcp/capabilities").json()
    assert {t["name"]: t["timeout_ms"] for t in capabilities["tools"]}["hang"] == 500

    elapsed, status, body = _execute(url, "hang")

    assert CALLS == ["hang"]  # it ran, and overran
    assert status == 504 and body["error"] == "TIMEOUT", body
    assert "within its timeout of 500 ms" in body["message"] and "check its effect" in body["message"]
    assert elapsed < 3


def test_calls_that_never_return_do_not_hold_up_other_tools(url: str) -> None:
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        stuck = [pool.submit(_execute, url, "hang") for _ in range(12)]
        time.sleep(0.2)
        elapsed, status, body = _execute(url, "ping")
        answers = [future.result() for future in stuck]

    assert status == 200 and body["result"] == "pong"
    assert elapsed < 3
    assert {(status, body["error"]) for _, status, body in answers} == {(504, "TIMEOUT")}
    assert max(seconds for seconds, _, _ in answers) < 4


def test_a_sync_function_over_its_timeout_is_a_timeout_over_stdio(tmp_path: Path) -> None:
    (tmp_path / "sleepy_tools.py").write_text(
        "import time\n\nimport mcs\n\n\n@mcs.tool\ndef nap() -> str:\n"
        "    \"\"\"Sleep a long time.\"\"\"\n    time.sleep(20)\n    return 'late'\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcs.cli", "serve", "sleepy_tools", "-o", "timeout=0.5",
         "--protocol", "rfc0001", "--transport", "stdio"],
        cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps({"id": 1, "method": "execute", "tool": "nap"}).encode() + b"\n")
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], 8)
        assert ready, "no reply within 8 s to a tool whose timeout is 500 ms"
        reply = json.loads(proc.stdout.readline())
    finally:
        proc.kill()
        proc.wait(10)
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                stream.close()
    assert reply["status"] == 504 and reply["body"]["error"] == "TIMEOUT"


def test_the_advertised_timeout_ms_is_the_timeout_rounded_to_the_millisecond() -> None:
    backend = DriverBackend(mcs.FunctionDriver([ping], timeout=1.001))
    try:
        assert [tool["timeout_ms"] for tool in backend.capabilities()["tools"]] == [1001]  # int() read 1000
    finally:
        backend.close()
