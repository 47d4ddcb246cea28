"""tools/call latency through the MCP bridge vs the official SDK client, in the same run.

An SDK-built server (``echo`` tool) per transport is called through ``MCPDriver`` -
synchronously (``call_tool``: parsing-free call with validation, policies, deadline, the
private loop run in the calling thread) and from an event loop (``acall_tool``) - and
directly with the SDK's ``mcp.Client`` of the very same session (timed inside its event
loop), so both paths reach the same server process over the same connection. Blocks of
calls alternate (order rotated each round); the overhead is the median over rounds of
each round's p50 ratio (paired, so machine load cancels). Goals (item 10): at most 1.05x
the SDK for ``call_tool`` and ``acall_tool``, 1.08x for ``process_llm_response`` (the
canonical MCS call parsed first). Reported beside them, no goal: the SDK driven the way
synchronous code must drive it, one ``run_until_complete`` per call on that same loop, and
``call_tool``'s ratio to that (the sync goals compare with a whole block in one loop run,
so they also charge the bridge for entering and leaving the loop on every call). The SDK
rows run the SDK's own output-schema check: the bridge puts a compiled pass in front of the
validator the shared session keeps, and each SDK block takes it out again first.

Sharing the session also shares the transport, and the bridge reads servers through its own
bounded transports (``max_message_bytes``) where the SDK, used alone, reads through its own.
So a further row, reported without a goal, is the SDK's ``Client`` on the SDK's own transport
(a server process of its own over stdio; the same server over HTTP), in the same rounds, with
each bridge row's ratio to it: what a user comparing the two products whole would see.

Last, the load (checklist item 15): ``mcs serve rest`` over GitHub's 623 operations of the
shared corpus, over streamable HTTP, is listed whole by the bridge (``MCPDriver(url=...)``
then ``list_tools()``) and by the SDK's ``Client`` (``list_tools``, every page), each in a
child of its own, its peak RSS and CPU read from outside it (``bench._support.run_measured``),
alternating. Reported without a goal: the ratio of medians of the time from construction to
every tool listed, of the time from before the import (the bridge imports the SDK at its
first connection), and of peak RSS. Without the corpus this part says so and is skipped.

Run alone: ``python -m bench mcp_bridge`` (server mode: ``python -m bench.mcp_bridge --serve``, from the
repository's root: run as a script, the folder's own ``inspect.py`` would shadow the standard library's).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import threading
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SERVE = ["-m", "bench.mcp_bridge", "--serve"]
# Item 10: the bridge's p50 over the SDK's on the same session (call_tool, and with parsing).
GOALS = {"sync": 1.05, "parse": 1.08, "async": 1.05}
ROUNDS = 40
BLOCK = 50
# The listing figures: a large upstream (GitHub's 623 operations served by `mcs serve rest`).
LIST_SPEC = "github_api.github.com_2020-08.json"
LIST_CHILDREN = 3


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


class _OwnSdkSession:
    """The SDK's ``Client`` on the SDK's own transport to ``target``, held open on ``loop``."""

    def __init__(self, loop: _LoopThread, target: Any) -> None:
        import concurrent.futures

        self._loop = loop
        self._ready: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._held = asyncio.run_coroutine_threadsafe(self._hold(target), loop.loop)
        self.client = self._ready.result(timeout=60)

    async def _hold(self, target: Any) -> None:
        from mcp import Client

        self._closing = asyncio.Event()
        async with Client(target, mode="legacy", cache=None) as client:  # the bridge's mode
            self._ready.set_result(client)
            await self._closing.wait()

    def close(self) -> None:
        self._loop.loop.call_soon_threadsafe(self._closing.set)
        self._held.result(timeout=60)


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def sdk_as_shipped(client: Any) -> None:
    """Give the SDK rows the SDK's own output-schema check: the bridge puts a compiled
    pre-check in front of the validator the session keeps (``mcs_mcp.client.output_check``),
    and the SDK rows share that session, so they would otherwise be measured with it."""
    validators = client.session._tool_output_validators
    for name, validator in list(validators.items()):
        exact = getattr(validator, "exact", None)
        if exact is not None:
            validators[name] = exact


def bench_transport(label: str, bridge_options: dict[str, Any], own_target: Any) -> None:
    from mcs_mcp.client.loop import sync_loop as sync_loop_of_the_bridge
    from mcs_mcp.client_driver import MCPDriver

    from bench._support import check

    user_loop = _LoopThread()
    driver = MCPDriver(**bridge_options)
    driver.list_tools()
    endpoint = next(iter(driver.connections.values()))

    async def sdk_block(client: Any, n: int) -> list[float]:
        # The SDK client of the bridge's own session, timed inside its event loop.
        sdk_as_shipped(client)
        out = []
        for i in range(n):
            started = time.perf_counter()
            result = await client.call_tool("echo", {"text": f"m{i}"})
            out.append(time.perf_counter() - started)
            assert not result.is_error
        return out

    def bridge_sync_block(n: int) -> list[float]:
        out = []
        for i in range(n):
            started = time.perf_counter()
            driver.call_tool("echo", {"text": f"m{i}"})
            out.append(time.perf_counter() - started)
        return out

    def bridge_parse_block(n: int) -> list[float]:
        out = []
        for i in range(n):
            text = f'{{"tool": "echo", "arguments": {{"text": "m{i}"}}}}'
            started = time.perf_counter()
            driver.process_llm_response(text)
            out.append(time.perf_counter() - started)
        return out

    async def bridge_async_block(n: int) -> list[float]:
        out = []
        for i in range(n):
            started = time.perf_counter()
            await driver.acall_tool("echo", {"text": f"m{i}"})
            out.append(time.perf_counter() - started)
        return out

    async def sdk_on_user_loop(n: int) -> list[float]:
        return await endpoint.arun(lambda client: sdk_block(client, n))

    async def the_client(client: Any) -> Any:
        return client

    sdk_client = endpoint.run(the_client)
    sync_loop = sync_loop_of_the_bridge().loop

    def sdk_per_call_block(n: int) -> list[float]:
        # What synchronous code using the SDK pays per call: one run of the loop for each
        # (the sync rows above run a whole block in one run); reported, no goal.
        sdk_as_shipped(sdk_client)
        out = []
        for i in range(n):
            started = time.perf_counter()
            result = sync_loop.run_until_complete(sdk_client.call_tool("echo", {"text": f"m{i}"}))
            out.append(time.perf_counter() - started)
            assert not result.is_error
        return out

    own = _OwnSdkSession(user_loop, own_target)

    async def sdk_own_block(n: int) -> list[float]:
        out = []
        for i in range(n):
            started = time.perf_counter()
            result = await own.client.call_tool("echo", {"text": f"m{i}"})
            out.append(time.perf_counter() - started)
            assert not result.is_error
        return out

    runners: dict[str, Callable[[], list[float]]] = {
        "sdk-sync": lambda: endpoint.run(lambda client: sdk_block(client, BLOCK)),
        "sync": lambda: bridge_sync_block(BLOCK),
        "parse": lambda: bridge_parse_block(BLOCK),
        "sdk-async": lambda: user_loop.run(sdk_on_user_loop(BLOCK)),
        "async": lambda: user_loop.run(bridge_async_block(BLOCK)),
        "sdk-per-call": lambda: sdk_per_call_block(BLOCK),
        "sdk-own": lambda: user_loop.run(sdk_own_block(BLOCK)),
    }
    baseline = {"sdk-sync": "sdk-sync", "sync": "sdk-sync", "parse": "sdk-sync", "sdk-async": "sdk-async",
                "async": "sdk-async", "sdk-per-call": "sdk-sync", "sdk-own": "sdk-async"}
    over_own: dict[str, list[float]] = {key: [] for key in ("sync", "parse", "async")}
    user_loop.run(driver.alist_tools())
    for run in runners.values():
        run()  # warm up every path
    samples: dict[str, list[float]] = {key: [] for key in runners}
    ratios: dict[str, list[float]] = {key: [] for key in runners}
    order = list(runners)
    per_call_ratios: list[float] = []
    for round_index in range(ROUNDS):
        shift = round_index % len(order)  # rotate the order so no path always runs first
        block = {key: runners[key]() for key in order[shift:] + order[:shift]}
        for key, values in block.items():
            samples[key] += values
            ratios[key].append(statistics.median(values) / statistics.median(block[baseline[key]]))
        per_call_ratios.append(statistics.median(block["sync"]) / statistics.median(block["sdk-per-call"]))
        for key, values in over_own.items():
            values.append(statistics.median(block[key]) / statistics.median(block["sdk-own"]))
    own.close()
    driver.close()
    user_loop.run(driver.aclose())
    user_loop.stop()

    names = {
        "sdk-sync": "SDK call_tool, same session (sync loop)",
        "sync": "MCPDriver.call_tool (sync)",
        "parse": "MCPDriver.process_llm_response (sync)",
        "sdk-async": "SDK call_tool, same session (user loop)",
        "async": "MCPDriver.acall_tool (async)",
        "sdk-per-call": "SDK call_tool, one loop run per call (sync)",
        "sdk-own": "SDK call_tool, the SDK's own transport",
    }
    print(f"{label}: {ROUNDS * BLOCK} calls per path")
    for key, name in names.items():
        p50 = statistics.median(samples[key]) * 1000
        p99 = _pct(samples[key], 0.99) * 1000
        ratio = statistics.median(ratios[key])
        verdict = ""
        if key in GOALS:
            verdict = "  " + check(f"MCP bridge over {label}, {name} p50 vs the SDK's call_tool", ratio, GOALS[key],
                                   item="10")
        print(f"  {name:<44} p50 {p50:7.3f} ms   p99 {p99:7.3f} ms   x{ratio:.3f} of the SDK{verdict}")
    print(f"  MCPDriver.call_tool (sync) over the SDK run once per call: x{statistics.median(per_call_ratios):.3f} (reported)")
    print("  over the SDK on its own transport (reported): " + ", ".join(
        f"{names[key].removeprefix('MCPDriver.')} x{statistics.median(values):.3f}" for key, values in over_own.items()))
    print("  (x of the SDK: median over rounds of each round's p50 ratio to the SDK on the same session;")
    print("   the SDK's own transport row is x of the SDK in the user loop)")


# ---------------------------------------------------------------------- listing a large upstream


def _list_child(kind: str, url: str) -> dict[str, Any]:
    """Import, then construction to every tool listed, of the bridge or the SDK's ``Client``."""
    started = time.perf_counter()
    if kind == "bridge":
        from mcs_mcp.client_driver import MCPDriver

        imported = time.perf_counter()
        driver = MCPDriver(url=url)
        count = len(driver.list_tools())
        listed = time.perf_counter()
        driver.close()
    else:
        from mcp import Client

        imported = time.perf_counter()

        async def listing() -> int:
            tools = 0
            async with Client(url, mode="legacy", cache=None) as client:  # the bridge's mode
                cursor: str | None = None
                while True:  # every page, as the bridge reads them
                    page = await client.list_tools(cursor=cursor)
                    tools += len(page.tools)
                    cursor = page.next_cursor
                    if not cursor:
                        return tools

        count = asyncio.run(listing())
        listed = time.perf_counter()
    return {"import_s": imported - started, "list_s": listed - imported, "tools": count}


def _run_list_child(kind: str, url: str) -> dict[str, Any]:
    """One listing child's result, with its peak RSS and CPU seconds measured from outside it."""

    from bench._support import read_result, run_measured

    code, out, err, measured = run_measured([sys.executable, "-m", "bench.mcp_bridge", "--list-child", kind, url],
                                            cwd=ROOT, timeout=300)
    result = read_result(out)
    if code != 0 or result is None:
        tail = (err or out).strip().splitlines()[-1:] or ["?"]
        raise RuntimeError(f"the {kind} listing child failed: {tail[0][:200]}")
    result.update(measured)
    return result


def bench_listing() -> None:
    """Checklist item 15: the bridge's time from construction to the tools of a large
    upstream listed, and its peak RSS, against the SDK's ``Client`` listing the same tools;
    a child each, measured from outside, against one ``mcs serve`` over streamable HTTP."""
    from bench._support import SHARED, free_port, no_goal, server_process

    spec = SHARED / "corpus" / "openapi" / LIST_SPEC
    print(f"\n-- listing a large upstream: construction to every tool listed, a child each "
          f"({LIST_CHILDREN} of each, alternating; peak RSS and CPU read from outside)")
    if not spec.is_file():
        print(f"   skipped (the shared OpenAPI corpus, ../shared/corpus/openapi/{LIST_SPEC}, is not present)")
        return
    port = free_port()
    mcs = Path(sys.executable).with_name("mcs")
    serve: list[str | Path] = [mcs, "serve", "rest", "-o", f"spec={spec}", "-s", "all_tools=true", "--transport", "http",
             "--port", str(port)]
    url = f"http://127.0.0.1:{port}/mcp"
    rows: dict[str, list[dict[str, Any]]] = {"bridge": [], "sdk": []}
    with server_process(serve, port, cwd=ROOT):
        _run_list_child("sdk", url)  # the server's first listing builds what it caches: not timed
        for _ in range(LIST_CHILDREN):
            for kind, results in rows.items():
                results.append(_run_list_child(kind, url))
    keys = ("import_s", "list_s", "cpu_s", "peak_rss_mb")
    median = {kind: {key: statistics.median(r[key] for r in results) for key in keys} for kind, results in rows.items()}
    names = {"bridge": "MCPDriver(url).list_tools()", "sdk": "SDK Client, list_tools pages"}
    print(f"   upstream: mcs serve rest over {LIST_SPEC}, streamable HTTP, every tool listed "
          f"(the bridge adds its three discovery tools: search_tools, describe_tool, call_tool)")
    for kind, name in names.items():
        row = median[kind]
        print(f"   {name:<30} {rows[kind][0]['tools']:>5} tools  import {row['import_s']:6.3f} s  "
              f"listed {row['list_s']:6.3f} s  CPU {row['cpu_s']:6.3f} s  peak RSS {row['peak_rss_mb']:6.1f} MB")
    ours, sdk = median["bridge"], median["sdk"]
    time_ratio, rss_ratio = ours["list_s"] / sdk["list_s"], ours["peak_rss_mb"] / sdk["peak_rss_mb"]
    whole = (ours["import_s"] + ours["list_s"]) / (sdk["import_s"] + sdk["list_s"])
    print(f"   MCP bridge, construction to listed: {ours['list_s']:.3f} s, ratio of medians to the SDK "
          f"{time_ratio:.2f}x {no_goal('MCP bridge, construction to a large upstream listed, ratio to the SDK', time_ratio)}")
    print(f"   MCP bridge, import to listed (the bridge imports the SDK at its first connection, so its "
          f"construction pays that import): ratio to the SDK {whole:.2f}x "
          f"{no_goal('MCP bridge, import to a large upstream listed, ratio to the SDK', whole)}")
    print(f"   MCP bridge, peak RSS: {ours['peak_rss_mb']:.1f} MB, ratio of medians to the SDK {rss_ratio:.2f}x "
          f"{no_goal('MCP bridge, peak RSS listing a large upstream, ratio to the SDK', rss_ratio)}")


def main() -> None:
    # Imported here: server mode runs this file as a script, without the bench package.
    from mcp.client.stdio import StdioServerParameters

    from bench._support import free_port, server_process

    bench_transport("stdio", {"command": sys.executable, "args": SERVE, "cwd": str(ROOT)},
                    StdioServerParameters(command=sys.executable, args=SERVE, cwd=str(ROOT)))
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    with server_process([sys.executable, *SERVE, "--http", str(port)], port, cwd=ROOT):
        bench_transport("streamable HTTP", {"url": url}, url)
    bench_listing()


if __name__ == "__main__":
    if "--list-child" in sys.argv:
        from bench._support import report_result

        at = sys.argv.index("--list-child")
        report_result(_list_child(sys.argv[at + 1], sys.argv[at + 2]))
    elif "--serve" in sys.argv:
        port = sys.argv[sys.argv.index("--http") + 1] if "--http" in sys.argv else None
        serve(int(port) if port else None)
    else:
        main()
