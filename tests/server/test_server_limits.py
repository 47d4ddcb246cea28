"""``RateLimit(concurrent=N)`` on an McpServer bounds the tool functions really running: a
call that overran its ``timeout_ms`` keeps its slot until its thread ends."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import httpx
import pytest
from pydantic import BaseModel
from rfc0001_helpers import running_app

from mcs.limits import RateLimit
from mcs.server import McpServer, tool


class _Empty(BaseModel):
    pass


class _Done(BaseModel):
    done: bool


class _Counter:
    """How many calls of the tool run now, and the most at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running = 0
        self.most = 0
        self.release = threading.Event()

    def run(self) -> None:
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
        self.release.wait(15)
        with self.lock:
            self.running -= 1


@pytest.fixture
def limited() -> Iterator[tuple[McpServer, _Counter]]:
    counter = _Counter()

    @tool(name="transfer", timeout_ms=100, idempotent=False)
    def transfer(req: _Empty) -> _Done:
        counter.run()
        return _Done(done=True)

    server = McpServer(name="bank", version="1")
    server.add_tool(transfer)
    server.controls.rate_limit = RateLimit(concurrent=2, per_agent=False)
    try:
        yield server, counter
    finally:
        counter.release.set()
        server.close()


def test_calls_that_overran_their_timeout_still_count_against_the_limit_over_http(
        limited: tuple[McpServer, _Counter]) -> None:
    server, counter = limited
    with running_app(server.asgi_app()) as url, httpx.Client(base_url=url, timeout=10) as client:
        errors = [client.post("/mcp/execute", json={"tool": "transfer"}).json()["error"] for _ in range(6)]

    assert errors == ["TIMEOUT", "TIMEOUT"] + ["POLICY_DENIED"] * 4
    assert counter.most == 2


def test_calls_that_overran_their_timeout_still_count_against_the_limit_in_process(
        limited: tuple[McpServer, _Counter]) -> None:
    server, counter = limited

    errors = [server.execute("transfer", {}).body()["error"] for _ in range(6)]

    assert errors == ["TIMEOUT", "TIMEOUT"] + ["POLICY_DENIED"] * 4
    assert counter.most == 2


def test_the_slots_come_back_when_the_overrunning_calls_end(limited: tuple[McpServer, _Counter]) -> None:
    server, counter = limited
    assert [server.execute("transfer", {}).body()["error"] for _ in range(3)] == [
        "TIMEOUT", "TIMEOUT", "POLICY_DENIED"]
    counter.release.set()

    outcome = server.execute("transfer", {})
    for _ in range(50):  # the slots are given back as the two threads end
        if outcome.ok:
            break
        threading.Event().wait(0.1)
        outcome = server.execute("transfer", {})
    assert outcome.ok and outcome.result == {"done": True}
