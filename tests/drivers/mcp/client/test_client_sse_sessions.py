"""The legacy HTTP+SSE transport after a server restart: a call the new server never
received (its session was unknown there) is sent once more on a new session, as over
streamable HTTP; a call the old server received is not. A real SDK server (the shifty
server, ``--sse``) on a loopback port, stopped and started again on the same port; every
call it runs is recorded in a file."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_bridge_servers import SHIFTY, free_port, stop
from mcs_mcp.client_driver import MCPDriver
from support.servers import start_server

from mcs.errors import ExecutionError


class SseServer:
    def __init__(self, folder: Path, **env: str) -> None:
        self.port = free_port()
        self.calls = folder / "calls.txt"
        self.env = {**os.environ, "MCS_TEST_CALLS": str(self.calls), **env}
        self.process: Any = None
        self.url = f"http://127.0.0.1:{self.port}/sse"
        self.start()

    def start(self) -> None:
        self.process = start_server([sys.executable, SHIFTY, "--sse", str(self.port)], self.port, env=self.env)

    def restart(self) -> None:
        stop(self.process)
        self.start()

    def ran(self) -> list[str]:
        return self.calls.read_text(encoding="utf-8").split() if self.calls.exists() else []


@pytest.fixture
def sse_server(tmp_path: Path) -> Iterator[SseServer]:
    server = SseServer(tmp_path, MCS_TEST_CALL_DELAY="3")
    try:
        yield server
    finally:
        stop(server.process)


def test_a_call_after_the_sse_server_restarted_between_calls_is_sent_on_a_new_session(sse_server: SseServer) -> None:
    with MCPDriver(url=sse_server.url, sse=True, connect_timeout=10) as driver:
        assert driver.call_tool("ping", {}) == "pong"
        sse_server.restart()
        assert driver.call_tool("ping", {}) == "pong"
        assert driver.process_llm_response('{"tool": "ping", "arguments": {}}') == "pong"
    assert sse_server.ran() == ["ping", "ping", "ping"]


async def test_an_async_call_after_the_sse_server_restarted_is_sent_on_a_new_session(sse_server: SseServer) -> None:
    async with MCPDriver(url=sse_server.url, sse=True, connect_timeout=10) as driver:
        assert await driver.acall_tool("ping", {}) == "pong"
        sse_server.restart()
        assert await driver.acall_tool("ping", {}) == "pong"
    assert sse_server.ran() == ["ping", "ping"]


def test_a_call_the_sse_server_received_before_it_restarted_is_not_sent_again(sse_server: SseServer) -> None:
    with MCPDriver(url=sse_server.url, sse=True, connect_timeout=10, timeout=20) as driver:
        assert driver.call_tool("ping", {}) == "pong"
        failed: list[BaseException] = []

        def call() -> None:
            try:
                driver.call_tool("slow", {})
            except BaseException as exc:
                failed.append(exc)

        caller = threading.Thread(target=call)
        caller.start()
        deadline = time.monotonic() + 15
        while "slow" not in sse_server.ran() and time.monotonic() < deadline:
            time.sleep(0.05)
        sse_server.restart()  # the old server dies with the call running
        caller.join(30)
        assert len(failed) == 1 and isinstance(failed[0], ExecutionError)
        time.sleep(0.5)
        assert sse_server.ran() == ["ping", "slow"]  # the new server never got it
        assert driver.call_tool("ping", {}) == "pong"
