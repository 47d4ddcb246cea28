"""Sustained load against ``POST /mcp/execute`` on loopback.

The server (uvicorn, one process) runs in a subprocess; an ``httpx.AsyncClient`` keeps
32 connections busy for a bounded number of requests. Reported: errors, requests per
second, p50/p99 latency, and the server's RSS over the first and the last quarter of
the run (flat memory means no per-request leak). The named alternative, measured in
the same run against the same process, is a bare Starlette route that parses the same
JSON and returns the same answer without the RFC-0001 pipeline (no validation,
policies, hooks, deadline): the difference is what the SDK costs per call.

    python -m bench rfc0001            (or: python -m bench.rfc0001 [REQUESTS])
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from bench._support import ROOT, free_port, median_us, server_process
from mcs.server import AgentContext, tool

REQUESTS = 20_000
CONCURRENCY = 32
TIME_LIMIT_S = 240.0
COMPARE_ROUNDS = 3
COMPARE_REQUESTS = 2_000


class Order(BaseModel):
    order_id: str
    quantity: int


class Receipt(BaseModel):
    order_id: str
    total: float
    agent_id: str


@tool(name="price_order", timeout_ms=2000)
def price_order(req: Order, ctx: AgentContext) -> Receipt:
    return Receipt(order_id=req.order_id, total=req.quantity * 9.5, agent_id=ctx.agent_id)


def _server_app() -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from mcs.server import McpServer, PolicyDecision

    server = McpServer(name="bench", version="1.0.0")
    server.add_tool(price_order)
    server.add_policy(lambda ctx, name, args: PolicyDecision.allow())
    ended: list[int] = [0]
    server.on_execute_end(lambda event: ended.__setitem__(0, ended[0] + 1))

    async def plain(request: Request) -> JSONResponse:
        body = json.loads(await request.body())
        args = body["arguments"]
        return JSONResponse({"tool": body["tool"], "request_id": "x", "result": {
            "order_id": args["order_id"], "total": args["quantity"] * 9.5, "agent_id": "bench"}})

    app = server.asgi_app()
    return Starlette(routes=[*app.routes, Route("/plain", plain, methods=["POST"])],
                     exception_handlers=app.exception_handlers)


def _serve(port: int) -> None:
    import uvicorn

    uvicorn.run(_server_app(), host="127.0.0.1", port=port, log_level="warning",
                access_log=False, ws="none", timeout_keep_alive=60)


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def _load(url: str, path: str, count: int, pid: int) -> dict[str, Any]:
    import httpx

    latencies: list[float] = []
    errors = 0
    kinds: dict[str, int] = {}
    issued = 0
    rss_by_quarter: list[list[int]] = [[], [], [], []]
    payload = {"tool": "price_order", "arguments": {"order_id": "o-1", "quantity": 3}}
    headers = {"X-Agent-Id": "bench"}
    limits = httpx.Limits(max_connections=CONCURRENCY, max_keepalive_connections=CONCURRENCY)
    deadline = time.monotonic() + TIME_LIMIT_S
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=10) as client:
        async def worker() -> None:
            nonlocal issued, errors
            while issued < count and time.monotonic() < deadline:
                issued += 1
                started = time.perf_counter()
                kind = ""
                try:
                    response = await client.post(path, json=payload, headers=headers)
                    if response.status_code != 200 or response.json()["result"]["total"] != 28.5:
                        kind = f"HTTP {response.status_code} {response.text[:120]}"
                except Exception as exc:
                    kind = type(exc).__name__
                latencies.append(time.perf_counter() - started)
                if kind:
                    errors += 1
                    kinds[kind] = kinds.get(kind, 0) + 1

        async def sampler() -> None:
            while len(latencies) < count and time.monotonic() < deadline:
                quarter = min(3, len(latencies) * 4 // count)
                rss_by_quarter[quarter].append(_rss_kib(pid))
                await asyncio.sleep(0.1)

        began = time.perf_counter()
        sampling = asyncio.create_task(sampler())
        await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
        elapsed = time.perf_counter() - began
        await sampling
    ordered = sorted(latencies)
    return {
        "requests": len(latencies),
        "errors": errors,
        "error_kinds": kinds,
        "rps": len(latencies) / elapsed,
        "p50_ms": statistics.median(ordered) * 1000,
        "p99_ms": ordered[int(len(ordered) * 0.99) - 1] * 1000,
        "rss_first_kib": statistics.median(rss_by_quarter[0]) if rss_by_quarter[0] else 0,
        "rss_last_kib": statistics.median(rss_by_quarter[3]) if rss_by_quarter[3] else 0,
    }


def _in_process(calls: int = 5_000) -> None:
    """Per-call cost of the pipeline without HTTP: McpServer.execute vs the bare function."""
    from mcs.server import McpServer, PolicyDecision

    server = McpServer(name="bench", version="1.0.0")
    server.add_tool(price_order)
    server.add_policy(lambda ctx, name, args: PolicyDecision.allow())
    server.on_execute_end(lambda event: None)
    context = AgentContext(agent_id="bench")
    arguments = {"order_id": "o-1", "quantity": 3}

    direct = median_us(lambda: price_order(Order.model_validate(arguments), context).model_dump(mode="json"), calls)
    piped = median_us(lambda: server.execute("price_order", arguments, context), calls)
    server.close()
    print(f"in-process, {calls} calls: McpServer.execute median {piped:.1f} us vs validate + call + "
          f"dump directly {direct:.1f} us (x{piped / direct:.1f}; the pipeline adds "
          f"{piped - direct:.1f} us: schema check, policy, hooks, worker-thread hand-off)")


def main(count: int = REQUESTS) -> None:
    _in_process()
    port = free_port()
    serve = [sys.executable, "-c", f"from bench.rfc0001 import _serve; _serve({port})"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with server_process(serve, port, env=env, cwd=ROOT, quiet=False) as proc:
        url = f"http://127.0.0.1:{port}"
        asyncio.run(_load(url, "/mcp/execute", 500, proc.pid))  # warm-up
        asyncio.run(_load(url, "/plain", 500, proc.pid))
        sustained = asyncio.run(_load(url, "/mcp/execute", count, proc.pid))
        # The comparison alternates short rounds so that load from other processes on
        # a shared machine falls on both endpoints alike.
        rounds: dict[str, list[dict[str, Any]]] = {"/mcp/execute": [], "/plain": []}
        for _ in range(COMPARE_ROUNDS):
            for path in rounds:
                rounds[path].append(asyncio.run(_load(url, path, COMPARE_REQUESTS, proc.pid)))
    r = sustained
    growth = (r["rss_last_kib"] - r["rss_first_kib"]) / max(r["rss_first_kib"], 1) * 100
    print(f"sustained: {r['requests']} x POST /mcp/execute, {CONCURRENCY} concurrent connections, "
          f"loopback, server and client sharing {os.cpu_count()} cores")
    print(f"  errors {r['errors']}, {r['rps']:.0f} req/s, p50 {r['p50_ms']:.2f} ms, "
          f"p99 {r['p99_ms']:.2f} ms")
    print(f"  server RSS median: first quarter {r['rss_first_kib'] / 1024:.1f} MiB, last quarter "
          f"{r['rss_last_kib'] / 1024:.1f} MiB ({growth:+.1f}%)")
    for kind, n in r["error_kinds"].items():
        print(f"  error: {n} x {kind}")
    summary = {}
    for path, runs in rounds.items():
        summary[path] = (statistics.median(x["rps"] for x in runs),
                         statistics.median(x["p50_ms"] for x in runs),
                         sum(x["errors"] for x in runs))
        print(f"compare {path:<13} {COMPARE_ROUNDS} alternating rounds of {COMPARE_REQUESTS}: "
              f"median {summary[path][0]:.0f} req/s, median p50 {summary[path][1]:.2f} ms, "
              f"errors {summary[path][2]}")
    sdk, bare = summary["/mcp/execute"], summary["/plain"]
    print(f"RFC-0001 pipeline vs bare Starlette route: throughput x{sdk[0] / bare[0]:.2f}, "
          f"p50 x{sdk[1] / bare[1]:.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else REQUESTS)
