"""Sustained load against ``POST /mcp/execute`` on loopback, against a bare Starlette route
doing the same work the same way.

The server (uvicorn, one process) runs in a subprocess and serves both:

* ``/mcp/execute``: the RFC-0001 server (an allow-all policy and an end hook registered);
* ``/floor``: a bare Starlette route doing what any server must for this tool: decode the
  JSON body, validate the arguments into the input model, run the synchronous tool on a
  worker thread under its ``timeout_ms`` deadline, dump the result model as JSON.

The load comes from a light client (``bench/_loadgen.py``: raw asyncio streams, keep-alive,
pre-encoded requests), whose CPU is reported beside the server's so the reader can see
that the server, not the client, is the limit. Goals (item 8): throughput at least 0.8x
the floor's, p99 latency at most 1.5x, in alternating rounds of the same run. Also
printed: errors, the server's RSS before and after the sustained run (a per-request
leak would show), and the in-process cost of ``McpServer.execute`` against validate +
call + dump done directly.

    python -m bench rfc0001            (or: python -m bench.rfc0001 [REQUESTS])
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from bench._loadgen import LoadResult, post_request, run_load
from bench._support import HOST, ROOT, check, free_port, median_us, server_process
from mcs.server import AgentContext, tool

REQUESTS = 20_000
CONNECTIONS = 32
COMPARE_ROUNDS = 5
COMPARE_REQUESTS = 3_000
TIMEOUT_MS = 1000
THROUGHPUT_GOAL = 0.8
P99_GOAL = 1.5


class Order(BaseModel):
    order_id: str
    quantity: int


class Receipt(BaseModel):
    order_id: str
    total: float
    agent_id: str


@tool(name="price_order", timeout_ms=TIMEOUT_MS)
def price_order(req: Order, ctx: AgentContext) -> Receipt:
    return Receipt(order_id=req.order_id, total=req.quantity * 9.5, agent_id=ctx.agent_id)


def _server_app() -> Any:
    import asyncio
    import concurrent.futures

    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    from mcs.server import McpServer, PolicyDecision

    server = McpServer(name="bench", version="1.0.0")
    server.add_tool(price_order)
    server.add_policy(lambda ctx, name, args: PolicyDecision.allow())
    ended: list[int] = [0]
    server.on_execute_end(lambda event: ended.__setitem__(0, ended[0] + 1))
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=32)

    async def floor(request: Request) -> Response:
        body = json.loads(await request.body())
        order = Order.model_validate(body["arguments"])
        context = AgentContext(agent_id=request.headers.get("x-agent-id", "anonymous"))
        loop = asyncio.get_running_loop()
        receipt = await asyncio.wait_for(loop.run_in_executor(pool, price_order.func, order, context),
                                         TIMEOUT_MS / 1000)
        payload = {"tool": body["tool"], "request_id": context.request_id, "result": receipt.model_dump(mode="json")}
        return Response(json.dumps(payload, separators=(",", ":")), media_type="application/json")

    app = server.asgi_app()
    return Starlette(routes=[*app.routes, Route("/floor", floor, methods=["POST"])],
                     exception_handlers=app.exception_handlers)


def _serve(port: int) -> None:
    import uvicorn

    uvicorn.run(_server_app(), host=HOST, port=port, log_level="warning",
                access_log=False, ws="none", timeout_keep_alive=60)


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


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
    piped = median_us(lambda: server.execute("price_order", arguments, context), calls, warmup=200)
    server.close()
    print(f"in-process, {calls} calls: McpServer.execute median {piped:.1f} µs vs validate + call + dump "
          f"directly {direct:.1f} µs (the difference, {piped - direct:.1f} µs, is the schema check, policy, "
          "hooks and the hand-off to a worker thread that enforces timeout_ms)")


def _line(label: str, result: LoadResult) -> str:
    return (f"{label:<14} {result.requests:>6} req, {result.errors} errors, {result.rps:>7.0f} req/s, "
            f"p50 {result.p50_ms:.2f} ms, p99 {result.percentile_ms(0.99):.2f} ms; "
            f"CPU server {result.server_cpu_s:.1f} s, client {result.client_cpu_s:.1f} s")


def main(count: int = REQUESTS) -> None:
    _in_process()
    port = free_port()
    serve = [sys.executable, "-c", f"from bench.rfc0001 import _serve; _serve({port})"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    body = json.dumps({"tool": "price_order", "arguments": {"order_id": "o-1", "quantity": 3}}).encode()
    headers = {"X-Agent-Id": "bench"}
    requests = {path: post_request(HOST, port, path, body, headers) for path in ("/mcp/execute", "/floor")}
    expect = b'"total":28.5'

    def load(path: str, n: int, pid: int) -> LoadResult:
        return run_load(HOST, port, requests[path], count=n, connections=CONNECTIONS, server_pid=pid,
                        expect=expect)

    with server_process(serve, port, env=env, cwd=ROOT, quiet=False) as proc:
        load("/mcp/execute", 1000, proc.pid)  # warm-up
        load("/floor", 1000, proc.pid)
        rss_before = _rss_mib(proc.pid)
        sustained = load("/mcp/execute", count, proc.pid)
        rss_after = _rss_mib(proc.pid)
        # Alternating short rounds: load from other processes on a shared machine falls on both alike.
        rounds: dict[str, list[LoadResult]] = {"/mcp/execute": [], "/floor": []}
        for _ in range(COMPARE_ROUNDS):
            for path in rounds:
                rounds[path].append(load(path, COMPARE_REQUESTS, proc.pid))
    print(f"light client (raw asyncio streams), {CONNECTIONS} keep-alive connections, loopback, "
          f"server and client sharing {os.cpu_count()} cores")
    print(_line("sustained", sustained) + f"; server RSS {rss_before:.1f} -> {rss_after:.1f} MiB")
    if sustained.first_error:
        print(f"  first error: {sustained.first_error}")
    for path, runs in rounds.items():
        for number, run in enumerate(runs, 1):
            print(_line(f"{path} #{number}", run))
    ours, floor = rounds["/mcp/execute"], rounds["/floor"]
    throughput = statistics.median(a.rps / b.rps for a, b in zip(ours, floor, strict=True))
    p99 = statistics.median(a.percentile_ms(0.99) / b.percentile_ms(0.99) for a, b in zip(ours, floor, strict=True))
    p50 = statistics.median(a.p50_ms / b.p50_ms for a, b in zip(ours, floor, strict=True))
    cpu = statistics.median((a.server_cpu_s / a.requests) / (b.server_cpu_s / b.requests)
                            for a, b in zip(ours, floor, strict=True))
    errors = sum(r.errors for runs in rounds.values() for r in runs) + sustained.errors
    print(f"RFC-0001 server vs the bare Starlette floor (median of paired rounds): "
          f"throughput x{throughput:.2f} {check('RFC-0001 throughput vs the floor route', throughput, THROUGHPUT_GOAL, kind='at least', item='8')}, "
          f"p99 x{p99:.2f} {check('RFC-0001 p99 latency vs the floor route', p99, P99_GOAL, item='8')}, "
          f"p50 x{p50:.2f}, server CPU per request x{cpu:.2f}; errors {errors}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else REQUESTS)
