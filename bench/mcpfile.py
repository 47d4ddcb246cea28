"""gen-mcp files as drivers: load time and memory, and the cost of safe CLI and routed HTTP calls.

Each figure is set beside a named alternative measured in the same run:

1. Load (checklist item 15): the largest file of the shared gen-mcp corpus that loads, from
   before the import to tools listed, the description rendered and a call validated, in a
   child process of its own, its peak RSS read from outside it
   (``bench._support.run_measured``); against a child that only imports PyYAML and runs
   ``yaml.safe_load`` on the same file. Medians of several children each, alternating.
   Then every corpus file loaded in this process, ``MCPFileDriver(path)`` (parse, validate,
   compile) vs ``yaml.safe_load`` alone.
2. CLI: a call through the driver (validation, quoting analysis done at load, values in
   argv) vs gen-mcp's way, ``bash -c`` on a string with the value pasted in.
3. HTTP (checklist item 15): a GET tool through ``call_tool`` (routing, templating, capped
   streaming read, JSON decoded) vs the same request, header for header as the server
   received it from the driver, sent through a bare ``httpx.Client`` (body read, JSON
   decoded), against a loopback server in its own process; a bare ``httpx.Client.get`` of
   the same URL is shown beside it. Interleaved calls; the ratio of medians.

No document sets a goal for these figures: each prints "(no goal)" and is recorded in the
summary. Without the corpus, part 1 says so and is skipped.

Run: ``python -m bench mcpfile`` (``make bench``).
"""

from __future__ import annotations

import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from bench._support import (
    HOST,
    ROOT,
    SHARED,
    free_port,
    median_us,
    no_goal,
    read_result,
    report_result,
    run_measured,
    server_process,
)

# PyYAML, httpx and the driver are imported where used: the load children time their own imports.
CORPUS = SHARED / "corpus" / "genmcp" / "testdata"
LOAD_CHILDREN = 5


def median_ms(fn: Callable[[], Any], runs: int) -> float:
    return median_us(fn, runs, warmup=1) / 1000


def report(label: str, ours: float, other: float, other_label: str) -> None:
    ratio = ours / other
    print(f"{label:<34} {ours:8.3f} ms   {other_label:<28} {other:8.3f} ms   ratio {ratio:5.2f}x "
          f"{no_goal(f'gen-mcp {label}, ratio of medians to {other_label}', ratio)}")


# ---------------------------------------------------------------------- 1. load


def _child_ours(path: str) -> dict[str, Any]:
    started = time.perf_counter()
    from mcs_mcp.mcpfile.driver import MCPFileDriver

    from mcs.tools import ToolCall

    driver = MCPFileDriver(path, apply_env_overrides=False)
    tools = driver.list_tools()
    driver.get_function_description()
    if tools:
        with contextlib.suppress(Exception):  # ready to call: the first tool's validator compiled
            driver.prepare(ToolCall(tools[0].name, {}))
    seconds = time.perf_counter() - started
    driver.close()
    return {"seconds": seconds, "tools": len(tools)}


def _child_yaml(path: str) -> dict[str, Any]:
    started = time.perf_counter()
    import yaml

    with open(path, encoding="utf-8") as handle:
        yaml.safe_load(handle)
    return {"seconds": time.perf_counter() - started, "tools": 0}


def _child(kind: str, path: str) -> None:
    runner = {"ours": _child_ours, "yaml": _child_yaml}[kind]
    report_result(runner(path))


def _run_child(kind: str, path: Path) -> dict[str, Any]:
    """One child's result, with its peak RSS and CPU seconds measured from outside it."""
    code, out, err, measured = run_measured([sys.executable, "-m", "bench.mcpfile", kind, str(path)],
                                            cwd=ROOT, timeout=120)
    result = read_result(out)
    if code != 0 or result is None:
        tail = (err or out).strip().splitlines()[-1:] or ["?"]
        raise RuntimeError(f"the {kind} load child failed: {tail[0][:200]}")
    result.update(measured)
    return result


def _loadable(files: list[Path]) -> list[Path]:
    """The corpus files that load (the corpus also holds files refused on purpose)."""
    from mcs_mcp.mcpfile.driver import MCPFileDriver

    good = []
    for path in files:
        try:
            MCPFileDriver(path, apply_env_overrides=False).close()
        except Exception:
            continue
        good.append(path)
    return good


def bench_largest(files: list[Path]) -> None:
    largest = max(files, key=lambda p: p.stat().st_size)
    print(f"\n-- 1. load of the largest corpus file ({largest.name}, {largest.stat().st_size} bytes): "
          f"import to ready, a child each ({LOAD_CHILDREN} of each, alternating; peak RSS and CPU read from outside)")
    rows: dict[str, list[dict[str, Any]]] = {"ours": [], "yaml": []}
    for _ in range(LOAD_CHILDREN):
        for kind in rows:
            rows[kind].append(_run_child(kind, largest))
    median = {kind: {key: statistics.median(r[key] for r in results) for key in ("seconds", "cpu_s", "peak_rss_mb")}
              for kind, results in rows.items()}
    labels = {"ours": f"MCPFileDriver ({rows['ours'][0]['tools']} tools)", "yaml": "yaml.safe_load only"}
    for kind, label in labels.items():
        figures = median[kind]
        print(f"   {label:<28} {figures['seconds']:7.3f} s  CPU {figures['cpu_s']:6.3f} s  "
              f"peak RSS {figures['peak_rss_mb']:6.1f} MB")
    ours, bare = median["ours"], median["yaml"]
    print(f"   MCPFileDriver: {ours['seconds']:.3f} s "
          f"{no_goal('largest gen-mcp corpus file to ready driver, s', ours['seconds'], unit='s')}, "
          f"peak RSS {ours['peak_rss_mb']:.1f} MB "
          f"{no_goal('peak RSS loading the largest gen-mcp corpus file, MB', ours['peak_rss_mb'], unit='MB')}; "
          f"to yaml.safe_load alone {ours['seconds'] / bare['seconds']:.2f}x the time, "
          f"+{ours['peak_rss_mb'] - bare['peak_rss_mb']:.1f} MB")


def bench_loading() -> None:
    if not CORPUS.is_dir():
        print("\n-- 1. load: skipped (the shared gen-mcp corpus, ../shared/corpus/genmcp, is not present)")
        return
    files = _loadable(sorted(CORPUS.glob("*.yaml")))
    if not files:
        print("\n-- 1. load: skipped (no file of the shared gen-mcp corpus loads)")
        return
    bench_largest(files)
    from mcs_mcp.mcpfile.driver import MCPFileDriver

    def load_all() -> None:
        for path in files:
            MCPFileDriver(path, apply_env_overrides=False).close()

    import yaml

    def parse_all() -> None:
        for path in files:
            yaml.safe_load(path.read_text())

    report(f"load {len(files)} corpus files", median_ms(load_all, 30), median_ms(parse_all, 30), "yaml.safe_load only")


# ---------------------------------------------------------------------- 2 and 3. calls


class _Handler(BaseHTTPRequestHandler):
    """``/users/...`` answers a small JSON object; ``/echo/...`` answers the path and headers
    it received (after ``/echo``), so the baseline can send what the driver sends."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body in separate writes: no 40 ms delayed-ACK stall

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        if self.path.startswith("/echo/"):
            body = json.dumps({"path": self.path.removeprefix("/echo"), "headers": list(self.headers.items())}).encode()
        else:
            body = b'{"id": "7", "name": "Ann"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _serve(port: int) -> None:
    """The loopback server of part 3 on ``port`` until the process is stopped."""
    ThreadingHTTPServer((HOST, port), _Handler).serve_forever()


def _spec(base: str) -> dict[str, Any]:
    user_schema = {"type": "object", "properties": {"id": {"type": "string"}, "v": {"type": "integer"}}}
    return {
        "mcpFileVersion": "0.1.0", "name": "bench", "version": "1.0.0",
        "tools": [
            {"name": "echo", "description": "echo", "invocation": {"cli": {"command": "echo {msg}"}},
             "inputSchema": {"type": "object", "properties": {"msg": {"type": "string"}}}},
            {"name": "user", "description": "user", "invocation": {"http": {"method": "GET", "url": base + "/users/{id}"}},
             "inputSchema": user_schema},
            {"name": "sent", "description": "what user sends",
             "invocation": {"http": {"method": "GET", "url": base + "/echo/users/{id}"}}, "inputSchema": user_schema},
        ],
    }


def _interleaved(runs: dict[str, Callable[[], object]], iterations: int, warmup: int) -> dict[str, float]:
    """The median wall time of each of ``runs`` in ms, their calls interleaved so load from
    elsewhere falls on all alike."""
    for _ in range(warmup):
        for run in runs.values():
            run()
    samples: dict[str, list[float]] = {label: [] for label in runs}
    for _ in range(iterations):
        for label, run in runs.items():
            started = time.perf_counter()
            run()
            samples[label].append(time.perf_counter() - started)
    return {label: statistics.median(values) * 1e3 for label, values in samples.items()}


def _payload(result: Any) -> Any:
    """The JSON a tool call answered, whether the driver returns it decoded or as text."""
    return json.loads(result) if isinstance(result, str | bytes) else result


def bench_calls(cli_calls: int = 100, http_calls: int = 1000) -> None:
    import httpx
    import yaml
    from mcs_mcp.mcpfile.driver import MCPFileDriver

    port = free_port()
    base = f"http://{HOST}:{port}"
    arguments = {"id": "7", "v": 2}
    # The server runs in its own process: in this one, its thread would compete with the
    # client for the GIL and charge each client-side microsecond several times over.
    with tempfile.TemporaryDirectory() as tmp, \
            server_process([sys.executable, "-m", "bench.mcpfile", "serve", str(port)], port, cwd=ROOT):
        path = Path(tmp) / "bench.yaml"
        path.write_text(yaml.safe_dump(_spec(base)))
        with MCPFileDriver(path, apply_env_overrides=False) as driver, httpx.Client() as client:
            print(f"\n-- 2. CLI call ({cli_calls} interleaved calls each)")
            medians = _interleaved({
                "ours": lambda: driver.call_tool("echo", {"msg": "hello world"}),
                "pasted": lambda: subprocess.run(["bash", "-c", "echo hello world"], capture_output=True, check=True),
            }, cli_calls, warmup=3)
            report("CLI call (echo)", medians["ours"], medians["pasted"], "bash -c pasted (gen-mcp)")

            sent = _payload(driver.call_tool("sent", arguments))
            url, headers = base + sent["path"], sent["headers"]

            def bare_same() -> Any:
                return client.send(httpx.Request("GET", url, headers=headers)).json()

            assert _payload(driver.call_tool("user", arguments)) == bare_same() == client.get(url).json()
            print(f"\n-- 3. HTTP GET tool vs the same request through a bare httpx.Client "
                  f"({http_calls} interleaved calls each; server in its own process)")
            medians = _interleaved({
                "call_tool": lambda: driver.call_tool("user", arguments),
                "same request": bare_same,
                "httpx.Client.get": lambda: client.get(base + "/users/7", params={"v": 2}).json(),
            }, http_calls, warmup=100)
    for label, median in medians.items():
        print(f"   median {label:<18} {median * 1e3:8.1f} µs")
    ratio = medians["call_tool"] / medians["same request"]
    print(f"   call_tool over the same request {(medians['call_tool'] - medians['same request']) * 1e3:.1f} µs, "
          f"ratio of medians {ratio:.3f}x "
          f"{no_goal('gen-mcp HTTP GET tool, ratio of medians to the same request through httpx.Client', ratio)}; "
          f"to httpx.Client.get {medians['call_tool'] / medians['httpx.Client.get']:.3f}x")


def main() -> None:
    bench_loading()
    bench_calls()


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "serve":
        _serve(int(sys.argv[2]))
    elif len(sys.argv) == 3:
        _child(sys.argv[1], sys.argv[2])
    else:
        main()
