"""A light HTTP/1.1 load generator: raw asyncio streams, keep-alive, pre-encoded requests.

A load generator must cost less than what it measures: ``httpx.AsyncClient`` spends about
three times the CPU of the server it loads, so it bounds the figure it reports. This one
writes one pre-built request per round trip and reads the answer by its Content-Length,
nothing more. It reports the requests per second, latency percentiles, its own CPU
seconds and the server's (read from ``/proc/<pid>/stat``), so a reader can see which side
was the limit.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from dataclasses import dataclass
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS


def post_request(host: str, port: int, path: str, body: bytes, headers: dict[str, str]) -> bytes:
    """The bytes of one keep-alive ``POST`` with a JSON body."""
    lines = [f"POST {path} HTTP/1.1", f"Host: {host}:{port}", "Content-Type: application/json",
             f"Content-Length: {len(body)}", *(f"{k}: {v}" for k, v in headers.items()), "", ""]
    return "\r\n".join(lines).encode("ascii") + body


@dataclass
class LoadResult:
    requests: int
    errors: int
    seconds: float
    latencies: list[float]
    client_cpu_s: float
    server_cpu_s: float
    first_error: str = ""

    @property
    def rps(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    def percentile_ms(self, q: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000 if ordered else 0.0

    @property
    def p50_ms(self) -> float:
        return statistics.median(self.latencies) * 1000 if self.latencies else 0.0


async def _connection(host: str, port: int, request: bytes, quota: list[int], result: LoadResult,
                      expect: bytes, deadline: float) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    try:
        while quota[0] > 0 and time.monotonic() < deadline:
            quota[0] -= 1
            started = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            body = await reader.readexactly(length)
            result.latencies.append(time.perf_counter() - started)
            result.requests += 1
            if not head.startswith(b"HTTP/1.1 200") or expect not in body:
                result.errors += 1
                result.first_error = result.first_error or (head[:40] + body[:120]).decode("latin-1")
    finally:
        writer.close()


def run_load(host: str, port: int, request: bytes, *, count: int, connections: int, server_pid: int,
             expect: bytes = b"", time_limit: float = 120.0) -> LoadResult:
    """Send ``count`` requests over ``connections`` keep-alive connections; measure both sides."""
    result = LoadResult(0, 0, 0.0, [], 0.0, 0.0)
    quota = [count]

    async def main() -> None:
        deadline = time.monotonic() + time_limit
        await asyncio.gather(*(_connection(host, port, request, quota, result, expect, deadline)
                               for _ in range(connections)))

    server_before = cpu_seconds(server_pid)
    client_before = time.process_time()
    started = time.perf_counter()
    asyncio.run(main())
    result.seconds = time.perf_counter() - started
    result.client_cpu_s = time.process_time() - client_before
    result.server_cpu_s = cpu_seconds(server_pid) - server_before
    return result
