"""The server every transport test talks to (also run as a STDIO subprocess).

    python rfc0001_sample.py AUDIT_FILE     serve over STDIO, hooks append to AUDIT_FILE

Hooks append one JSON line per event to the audit file, so tests read the same
record whether the server runs in-process or in a subprocess.
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from mcs.server import AgentContext, ExecutionEvent, McpServer, PolicyDecision, tool

RELEASE = threading.Event()  # never set: the stuck tool waits on it until its own bound
# Generous limits on the other tools: a loaded test machine must not turn them into TIMEOUTs.


class EchoRequest(BaseModel):
    text: str
    times: int = 1


class EchoResponse(BaseModel):
    text: str
    agent_id: str
    model: str | None
    request_id: str
    tenant: str | None


class Empty(BaseModel):
    pass


class Count(BaseModel):
    count: int


@tool(name="echo", description="Repeat text; reports who called.", timeout_ms=10_000)
def echo(req: EchoRequest, ctx: AgentContext) -> EchoResponse:
    return EchoResponse(text=req.text * req.times, agent_id=ctx.agent_id, model=ctx.model,
                        request_id=ctx.request_id, tenant=ctx.metadata.get("tenant"))


@tool(name="stuck", timeout_ms=100, idempotent=False)
def stuck(req: Empty) -> Count:
    RELEASE.wait(0.6)
    return Count(count=1)


@tool(name="boom", timeout_ms=10_000)
def boom(req: Empty) -> Count:
    raise RuntimeError("the backend is down")


@tool(name="wrong_type", timeout_ms=10_000)
def wrong_type(req: Empty) -> Count:
    return EchoResponse(text="x", agent_id="a", model=None, request_id="r", tenant=None)  # type: ignore[return-value]


@tool(name="wrong_value", timeout_ms=10_000)
def wrong_value(req: Empty) -> Count:
    return Count.model_construct(count="not a number")  # type: ignore[arg-type]


@tool(name="forbidden", timeout_ms=10_000)
def forbidden(req: Empty) -> Count:
    return Count(count=1)


def build_server(audit: Path) -> McpServer:
    server = McpServer(name="sample", version="1.2.3", description="test server",
                       max_body_bytes=4096)
    for fn in (echo, stuck, boom, wrong_type, wrong_value, forbidden):
        server.add_tool(fn)
    lock = threading.Lock()

    def record(kind: str, event: ExecutionEvent) -> None:
        line: dict[str, Any] = {"hook": kind, "tool": event.tool,
                                "request_id": event.context.request_id}
        if event.error is not None:
            line["error"] = event.error.code.value
        with lock, audit.open("a") as out:
            out.write(json.dumps(line) + "\n")

    @server.add_policy
    def first(ctx: AgentContext, tool_name: str, args: Any) -> PolicyDecision:
        record("policy1", _event(tool_name, ctx))
        if tool_name == "forbidden":
            return PolicyDecision.deny("forbidden is never allowed")
        return PolicyDecision.allow()

    @server.add_policy
    def second(ctx: AgentContext, tool_name: str, args: Any) -> PolicyDecision:
        record("policy2", _event(tool_name, ctx))
        if ctx.metadata.get("env") == "prod":
            return PolicyDecision.deny("Blocked in prod")
        return PolicyDecision.allow()

    @server.on_execute_start
    def broken(event: ExecutionEvent) -> None:
        raise RuntimeError("a broken hook must not break the call")

    server.on_execute_start(lambda e: record("start", e))
    server.on_execute_end(lambda e: record("end", e))
    server.on_execute_error(lambda e: record("error", e))

    @server.on_execute_end
    def vandal(event: ExecutionEvent) -> None:
        if isinstance(event.result, dict):
            event.result["text"] = "changed by a hook"

    return server


def _event(tool_name: str, ctx: AgentContext) -> ExecutionEvent:
    return ExecutionEvent(tool=tool_name, arguments={}, context=ctx, started_at=0.0)


if __name__ == "__main__":
    import logging

    logging.disable(logging.CRITICAL)  # the broken hook logs to stderr on every call
    build_server(Path(sys.argv[1])).run(transport="stdio")
