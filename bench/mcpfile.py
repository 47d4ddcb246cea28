"""gen-mcp files as drivers: load time, and the cost of safe CLI and routed HTTP calls.

Each figure is a median over repeated runs, next to a named alternative measured in the
same run:

* loading: ``MCPFileDriver(path)`` (parse, validate, compile) vs ``yaml.safe_load`` alone;
* CLI: a call through the driver (validation, quoting analysis done at load, values in
  argv) vs gen-mcp's way, ``bash -c`` on a string with the value pasted in;
* HTTP: a call through the driver (routing, templating, capped streaming read) vs a bare
  ``httpx.Client.get`` of the same URL, both against a loopback server.
"""

from __future__ import annotations

import subprocess
import tempfile
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import yaml

from bench._support import median_us

CORPUS = Path(__file__).resolve().parents[1] / ".." / "shared" / "corpus" / "genmcp" / "testdata"


def median_ms(fn: Callable[[], Any], runs: int) -> float:
    return median_us(fn, runs, warmup=1) / 1000


def report(label: str, ours: float, other: float, other_label: str) -> None:
    print(f"{label:<34} {ours:8.3f} ms   {other_label:<28} {other:8.3f} ms   ratio {ours / other:5.2f}x")


def bench_loading() -> None:
    from mcs_mcp.mcpfile.driver import MCPFileDriver

    if not CORPUS.is_dir():
        print("loading: skipped (the shared gen-mcp corpus is not present)")
        return
    files = [p for p in sorted(CORPUS.glob("*.yaml")) if "invalid" not in p.name]

    def load_all() -> None:
        for path in files:
            MCPFileDriver(path, apply_env_overrides=False).close()

    def parse_all() -> None:
        for path in files:
            yaml.safe_load(path.read_text())

    report(f"load {len(files)} corpus files", median_ms(load_all, 30), median_ms(parse_all, 30), "yaml.safe_load only")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        body = b'{"id": "7", "name": "Ann"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def bench_calls() -> None:
    from mcs_mcp.mcpfile.driver import MCPFileDriver

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    spec = {
        "mcpFileVersion": "0.1.0", "name": "bench", "version": "1.0.0",
        "tools": [
            {"name": "echo", "description": "echo", "invocation": {"cli": {"command": "echo {msg}"}},
             "inputSchema": {"type": "object", "properties": {"msg": {"type": "string"}}}},
            {"name": "user", "description": "user", "invocation": {"http": {"method": "GET", "url": base + "/users/{id}"}},
             "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}, "v": {"type": "integer"}}}},
        ],
    }
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.yaml"
        path.write_text(yaml.safe_dump(spec))
        driver = MCPFileDriver(path, apply_env_overrides=False)
        try:
            ours = median_ms(lambda: driver.call_tool("echo", {"msg": "hello world"}), 100)
            pasted = median_ms(lambda: subprocess.run(["bash", "-c", "echo hello world"], capture_output=True,
                                                      check=True), 100)
            report("CLI call (echo)", ours, pasted, "bash -c pasted (gen-mcp)")
            with httpx.Client() as client:
                ours = median_ms(lambda: driver.call_tool("user", {"id": "7", "v": 2}), 200)
                bare = median_ms(lambda: client.get(base + "/users/7", params={"v": 2}).json(), 200)
            report("HTTP call (GET, JSON)", ours, bare, "bare httpx.Client.get")
        finally:
            driver.close()
            server.shutdown()
            server.server_close()


def main() -> None:
    bench_loading()
    bench_calls()


if __name__ == "__main__":
    main()
