"""An McpServer's tool answers to its own name over the wire, whatever that name is: the
names the MCS driver path gives its discovery meta-tools (``describe_tool``...) included."""

from __future__ import annotations

import httpx
import pytest
from pydantic import BaseModel
from rfc0001_helpers import running_app

from mcs.server import McpServer, tool


class _Level3(BaseModel):
    value: int = 0


class _Level2(BaseModel):
    inner: _Level3 = _Level3()


class _Level1(BaseModel):
    inner: _Level2 = _Level2()


class _Order(BaseModel):
    """Nested three levels deep: deeper than an inline description shows."""

    inner: _Level1 = _Level1()


class _Item(BaseModel):
    item: str


class _Said(BaseModel):
    said: str


@pytest.mark.parametrize("over", ["http", "execute"])
@pytest.mark.parametrize("name", ["describe_tool", "search_tools", "call_tool"])
def test_a_tool_named_like_a_meta_tool_is_the_one_that_runs(name: str, over: str) -> None:
    ran: list[str] = []

    @tool(name="place_order")
    def place_order(req: _Order) -> _Said:
        return _Said(said="placed")

    def own(req: _Item) -> _Said:
        ran.append(req.item)
        return _Said(said=f"{name} of the server ran")

    server = McpServer(name="shop", version="1")
    server.add_tool(place_order)
    server.add_tool(tool(name=name, idempotent=False)(own))
    arguments = {"item": "place_order"}
    try:
        if over == "http":
            with running_app(server.asgi_app()) as url, httpx.Client(base_url=url, timeout=10) as client:
                listed = [t["name"] for t in client.get("/mcp/capabilities").json()["tools"]]
                answer = client.post("/mcp/execute", json={"tool": name, "arguments": arguments})
                status, body = answer.status_code, answer.json()
        else:  # what STDIO runs
            listed = [t["name"] for t in server.capabilities()["tools"]]
            outcome = server.execute(name, arguments)
            status, body = outcome.status, outcome.body()
    finally:
        server.close()

    assert listed == ["place_order", name]
    assert status == 200, body
    assert body["result"] == {"said": f"{name} of the server ran"}
    assert ran == ["place_order"]
