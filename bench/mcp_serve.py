"""tools/call through `mcs serve` over streamable HTTP, next to a plain httpx call.

The backend is a small JSON HTTP service on loopback. The tool is an HTTP-invocation
tool: a gen-mcp file with an ``http`` invocation when the mcpfile driver is installed,
else the equivalent ToolDriver below (one ``GET`` per call through httpx). `mcs serve`
runs in its own process; the SDK client calls the tool sequentially and we report the
per-call latency (p50, p99) and calls per second, and the same for a plain httpx GET of
the same backend URL (the floor: what the tool itself costs).

    python -m bench mcp_serve      (MCS_BENCH_CALLS=300 by default)
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import httpx

from bench._support import ROOT, free_port, server_process, wait_for_port
from mcs.driver import DriverMeta, ToolDriver
from mcs.errors import ExecutionError
from mcs.pipeline import Invocation
from mcs.tools import Tool

CALLS = int(os.environ.get("MCS_BENCH_CALLS", "300"))
WARMUP = 10
ROUNDS = 3


class HttpToolDriver(ToolDriver):
    """One tool, ``get_weather(city)``, that GETs ``{base_url}/weather/{city}``."""

    enforces_deadline = True

    def __init__(self, base_url: str, **options: Any) -> None:
        super().__init__(description_mode="inline", **options)
        self.base_url = base_url.rstrip("/")
        self.meta = DriverMeta(
            id=str(uuid.uuid5(uuid.NAMESPACE_URL, "mcs-bench-http-tool")), name="bench",
            version="1.0.0", protocol="REST", transport="HTTP", spec_format="none",
        )
        self._client: httpx.AsyncClient | None = None

    def _list_tools(self) -> Iterable[Tool]:
        return [Tool(
            name="get_weather", description="Weather for a city.",
            input_schema={"type": "object", "properties": {"city": {"type": "string"}},
                          "required": ["city"], "additionalProperties": False},
        )]

    def _call_tool(self, invocation: Invocation) -> Any:
        with httpx.Client(timeout=10) as client:
            return client.get(f"{self.base_url}/weather/{invocation.arguments['city']}").json()

    async def _acall_tool(self, invocation: Invocation) -> Any:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=10)
        response = await self._client.get(f"{self.base_url}/weather/{invocation.arguments['city']}")
        if response.status_code != 200:
            raise ExecutionError(f"the weather service answered {response.status_code}")
        return response.json()


@contextlib.contextmanager
def backend() -> Iterator[str]:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def weather(request: Request) -> JSONResponse:
        return JSONResponse({"city": request.path_params["city"], "temperature": 18.5, "sky": "light rain"})

    port = free_port()
    config = uvicorn.Config(Starlette(routes=[Route("/weather/{city}", weather)]), host="127.0.0.1",
                            port=port, log_config=None, access_log=False, ws="none")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_for_port(port)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def _mcp_file(base_url: str, folder: Path) -> Path:
    path = folder / "weather.yaml"
    path.write_text(
        "mcpFileVersion: 0.1.0\nname: weather\nversion: 1.0.0\n"
        "runtime:\n  transportProtocol: streamablehttp\n  streamableHttpConfig:\n    port: 3000\n"
        "tools:\n  - name: get_weather\n    title: Weather\n    description: Weather for a city.\n"
        "    inputSchema:\n      type: object\n      properties:\n        city:\n          type: string\n"
        "      required: [city]\n"
        f"    invocation:\n      http:\n        method: GET\n        url: {base_url}/weather/{{city}}\n"
    )
    return path


def _mcpfile_available() -> bool:
    try:
        import mcs_mcp.mcpfile.driver  # noqa: F401
    except ImportError:
        return False
    return True


@contextlib.contextmanager
def mcs_serve(target: list[str], extra: list[str]) -> Iterator[str]:
    port = free_port()
    serve = [sys.executable, "-m", "mcs.cli", "serve", *target, "--transport", "http", "--port", str(port),
             "-s", "log_level=warning", *extra]
    with server_process(serve, port, env=dict(os.environ, PYTHONPATH=str(ROOT)), cwd=ROOT):
        yield f"http://127.0.0.1:{port}/mcp"


def _summary(name: str, samples: list[float], total: float) -> str:
    ordered = sorted(samples)
    p50 = statistics.median(ordered) * 1000
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000
    return f"{name:<44} p50 {p50:7.2f} ms   p99 {p99:7.2f} ms   {len(samples) / total:8.0f} calls/s"


async def _mcp_round(url: str, calls: int) -> tuple[list[float], float]:
    import httpx2
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with (
        httpx2.AsyncClient(timeout=httpx2.Timeout(30.0)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for _ in range(WARMUP):
            await session.call_tool("get_weather", {"city": "paris"})
        samples: list[float] = []
        started = time.perf_counter()
        for _ in range(calls):
            t0 = time.perf_counter()
            result = await session.call_tool("get_weather", {"city": "paris"})
            samples.append(time.perf_counter() - t0)
            if result.is_error:
                raise RuntimeError(f"the tool failed: {result.content}")
        return samples, time.perf_counter() - started


async def _httpx_round(base_url: str, calls: int) -> tuple[list[float], float]:
    async with httpx.AsyncClient(timeout=30) as client:
        for _ in range(WARMUP):
            await client.get(f"{base_url}/weather/paris")
        samples: list[float] = []
        started = time.perf_counter()
        for _ in range(calls):
            t0 = time.perf_counter()
            response = await client.get(f"{base_url}/weather/paris")
            samples.append(time.perf_counter() - t0)
            response.raise_for_status()
        return samples, time.perf_counter() - started


def main() -> None:
    with backend() as base_url, tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        if _mcpfile_available():
            target = [str(_mcp_file(base_url, Path(tmp)))]
            kind = "gen-mcp file, http invocation"
        else:
            target = ["bench.mcp_serve:HttpToolDriver", "-o", f"base_url={base_url}"]
            kind = "HTTP tool driver (mcpfile driver not installed)"
        configs = [
            ("mcs serve, stateless, MCP logs on (default)", []),
            ("mcs serve, stateless, MCP logs off", ["-s", "mcp_logs=false"]),
            ("mcs serve, stateless, JSON responses", ["-s", "json_response=true"]),
            ("mcs serve, stateful sessions", ["-s", "stateful=true"]),
        ]
        urls = {label: stack.enter_context(mcs_serve(target, extra)) for label, extra in configs}
        per_round = max(1, CALLS // ROUNDS)
        print(f"{per_round * ROUNDS} sequential calls per row in {ROUNDS} interleaved rounds "
              f"(each after {WARMUP} warm-up calls); tool: {kind}")
        samples: dict[str, list[float]] = {"plain httpx GET of the backend": []}
        totals: dict[str, float] = {"plain httpx GET of the backend": 0.0}
        for label, _ in configs:
            samples[label], totals[label] = [], 0.0
        for _ in range(ROUNDS):
            got, spent = asyncio.run(_httpx_round(base_url, per_round))
            samples["plain httpx GET of the backend"] += got
            totals["plain httpx GET of the backend"] += spent
            for label, _extra in configs:
                got, spent = asyncio.run(_mcp_round(urls[label], per_round))
                samples[label] += got
                totals[label] += spent
        floor = statistics.median(samples["plain httpx GET of the backend"])
        for label, values in samples.items():
            ratio = "" if label.startswith("plain") else f"   ({statistics.median(values) / floor:.1f}x httpx p50)"
            print(_summary(label, values, totals[label]) + ratio)


if __name__ == "__main__":
    main()
