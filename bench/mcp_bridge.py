"""tools/call latency through the MCP bridge vs the official SDK client, in the same run.

Two identical SDK-built servers (``echo`` tool) are started per transport; one is called
directly with ``mcp.Client`` (timed inside its own event loop, no thread hop), the other
through ``MCPDriver`` - synchronously (``call_tool``: validation, policies, hooks, the hop
to the bridge's loop thread) and asynchronously from another event loop (``acall_tool``).
Blocks of calls alternate so drift hits every path alike. The bar: the bridge's p50 is at
most 10% above the direct client's.

Run alone: ``python -m bench mcp_bridge`` (server mode: ``python bench/mcp_bridge.py --serve``).
"""

from __future__ import annotations

import asyncio
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
ROUNDS = 10
BLOCK = 100


def serve(http_port: int | None) -> None:
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("bench")

    @server.tool(description="Echo the text back.")
    def echo(text: str) -> str:
        return text

    if http_port is None:
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=http_port)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start_http() -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    process = subprocess.Popen([sys.executable, str(HERE), "--serve", "--http", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return process, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("the benchmark server did not start")


class _LoopThread:
    """An event loop on its own thread; coroutines time themselves inside it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def bench_transport(label: str, target: Any, bridge_options: dict[str, Any]) -> None:
    from mcp import Client, StdioServerParameters

    from mcs_mcp.client_driver import MCPDriver

    direct_loop = _LoopThread()
    user_loop = _LoopThread()
    holder: dict[str, Any] = {}
    stop_direct = asyncio.Event()

    async def open_direct() -> None:
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        async def keep() -> None:
            async with Client(target if isinstance(target, str) else StdioServerParameters(**target),
                              mode="legacy", cache=None) as client:
                holder["client"] = client
                ready.set_result(None)
                await stop_event.wait()

        stop_event = asyncio.Event()
        holder["stop"] = stop_event
        holder["task"] = asyncio.get_running_loop().create_task(keep())
        await ready

    async def direct_block(n: int) -> list[float]:
        client = holder["client"]
        out = []
        for i in range(n):
            started = time.perf_counter()
            result = await client.call_tool("echo", {"text": f"m{i}"})
            out.append(time.perf_counter() - started)
            assert not result.is_error
        return out

    driver = MCPDriver(**bridge_options)
    driver.list_tools()

    def bridge_sync_block(n: int) -> list[float]:
        out = []
        for i in range(n):
            started = time.perf_counter()
            driver.call_tool("echo", {"text": f"m{i}"})
            out.append(time.perf_counter() - started)
        return out

    async def bridge_async_block(n: int) -> list[float]:
        out = []
        for i in range(n):
            started = time.perf_counter()
            await driver.acall_tool("echo", {"text": f"m{i}"})
            out.append(time.perf_counter() - started)
        return out

    direct_loop.run(open_direct())
    direct_loop.run(direct_block(50))  # warm up every path
    bridge_sync_block(50)
    user_loop.run(bridge_async_block(50))
    samples: dict[str, list[float]] = {"direct": [], "sync": [], "async": []}
    for _ in range(ROUNDS):
        samples["direct"] += direct_loop.run(direct_block(BLOCK))
        samples["sync"] += bridge_sync_block(BLOCK)
        samples["async"] += user_loop.run(bridge_async_block(BLOCK))

    async def close_direct() -> None:
        holder["stop"].set()
        await holder["task"]

    direct_loop.run(close_direct())
    driver.close()
    direct_loop.stop()
    user_loop.stop()
    del stop_direct

    base50 = statistics.median(samples["direct"])
    rows: list[tuple[str, str]] = [
        ("direct", "mcp.Client.call_tool (SDK, same loop)"),
        ("sync", "MCPDriver.call_tool (sync)"),
        ("async", "MCPDriver.acall_tool (async)"),
    ]
    print(f"{label}: {ROUNDS * BLOCK} calls per path")
    for key, name in rows:
        p50 = statistics.median(samples[key]) * 1000
        p99 = _pct(samples[key], 0.99) * 1000
        overhead = (statistics.median(samples[key]) / base50 - 1) * 100
        print(f"  {name:<40} p50 {p50:7.3f} ms   p99 {p99:7.3f} ms   p50 vs direct {overhead:+6.1f}%")


def main() -> None:
    stdio = {"command": sys.executable, "args": [str(HERE), "--serve"]}
    bench_transport("stdio", stdio, stdio)
    process, url = _start_http()
    try:
        bench_transport("streamable HTTP", url, {"url": url})
    finally:
        process.terminate()
        process.wait(timeout=10)


if __name__ == "__main__":
    if "--serve" in sys.argv:
        port = sys.argv[sys.argv.index("--http") + 1] if "--http" in sys.argv else None
        serve(int(port) if port else None)
    else:
        main()
