"""REST driver benchmarks, side by side with FastMCP's ``FastMCP.from_openapi`` in the same run.

1. Load: from a spec file to tools listed and ready to call, for Stripe, GitHub and
   Kubernetes (JSON). Each measurement runs in its own subprocess (seconds from before
   the library import to ready, and the child's peak RSS). Bars: <= 1.5 s, <= 250 MB.
2. Tokens (o200k): the discovery-mode description of every corpus spec (bar <= 3,000),
   and inline mode on small specs against FastMCP's tool list for the same operations
   (bar <= 0.8), checking that no enum, required flag or type is lost.
3. Call overhead: ``process_llm_response`` for a GET against a loopback server versus a
   bare ``httpx.Client.get`` of the same URL (ratio of medians, bar <= 1.15).

Run: ``python -m bench rest`` (``make bench``). FastMCP is optional (``pip install fastmcp``);
without it only our figures are printed. ``REST_BENCH_FASTMCP_TIMEOUT`` caps FastMCP per spec.
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench._support import O200K_FILE, ROOT, SHARED, o200k

OPENAPI = SHARED / "corpus" / "openapi"
LOAD_SPECS = ["stripe_spec3_2022-04-12.json", "github_api.github.com_2020-08.json", "kubernetes_swagger.json"]
SMALL_SPECS = [
    "oai-examples/examples/v3.0/petstore.yaml",
    "oai-examples/examples/v3.0/petstore-expanded.yaml",
    "oai-examples/examples/v3.0/uspto.yaml",
    "oai-examples/examples/v3.0/link-example.yaml",
    "oai-examples/examples/v3.0/api-with-examples.yaml",
    "oai-examples/examples/v3.0/callback-example.yaml",
]
FASTMCP_TIMEOUT = float(os.environ.get("REST_BENCH_FASTMCP_TIMEOUT", "120"))


# ---------------------------------------------------------------------- children


def _child_ours(path: str) -> dict[str, Any]:
    started = time.perf_counter()
    from mcs_rest import RestDriver

    from mcs.tools import ToolCall

    driver = RestDriver(path, base_url="http://127.0.0.1:9", retries=0)
    tools = driver.list_tools()
    driver.get_function_description()
    first = next(t for t in tools if "method" in t.meta)
    with contextlib.suppress(Exception):  # ready to call: the first tool's validator compiled
        driver.prepare(ToolCall(first.name, {}))
    ready = time.perf_counter() - started
    # The first real call also loads httpx (imported lazily) and opens the pool; port 9 refuses.
    call = next(t for t in tools if "method" in t.meta and not t.input_schema.get("required"))
    with contextlib.suppress(Exception):
        driver.call_tool(call.name, {})
    return {"seconds": ready, "first_call": time.perf_counter() - started - ready, "tools": len(tools)}


def _child_fastmcp(path: str) -> dict[str, Any]:
    started = time.perf_counter()
    import asyncio

    import httpx
    from fastmcp import FastMCP

    with open(path, "rb") as handle:
        spec = json.load(handle) if path.endswith(".json") else __import__("yaml").safe_load(handle)
    server = FastMCP.from_openapi(spec, client=_fastmcp_client(httpx))
    tools = asyncio.run(server.list_tools())
    return {"seconds": time.perf_counter() - started, "tools": len(tools)}


def _fastmcp_client(httpx: Any) -> Any:
    """The client FastMCP wants (httpx2 in FastMCP 4, httpx before), without warnings."""
    try:
        import httpx2  # type: ignore[import-not-found]
    except ImportError:
        return httpx.AsyncClient(base_url="http://127.0.0.1:9")
    return httpx2.AsyncClient(base_url="http://127.0.0.1:9")


def _child_fastmcp_tools(path: str) -> dict[str, Any]:
    import asyncio

    import httpx
    import yaml
    from fastmcp import FastMCP

    with open(path, "rb") as handle:
        spec = yaml.safe_load(handle)
    server = FastMCP.from_openapi(spec, client=_fastmcp_client(httpx))
    tools = asyncio.run(server.list_tools())
    listed = []
    for tool in tools:
        mcp_tool = tool.to_mcp_tool() if hasattr(tool, "to_mcp_tool") else tool
        listed.append(mcp_tool.model_dump(mode="json", exclude_none=True, by_alias=True))
    return {"tools": listed}


def _child(argv: list[str]) -> None:
    import resource

    kind, path = argv[0], argv[1]
    runner = {"ours": _child_ours, "fastmcp": _child_fastmcp, "fastmcp-tools": _child_fastmcp_tools}[kind]
    result = runner(path)
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sys.stdout.write("\n@@RESULT@@" + json.dumps(result))


def _run_child(kind: str, path: Path, timeout: float) -> dict[str, Any] | None:
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "bench.rest", kind, str(path)], cwd=ROOT, capture_output=True,
            text=True, timeout=timeout, check=False,
        )
    except subprocess.TimeoutExpired:
        return None
    marker = done.stdout.rfind("@@RESULT@@")
    if done.returncode != 0 or marker < 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["?"]
        return {"error": tail[0][:200]}
    result: dict[str, Any] = json.loads(done.stdout[marker + len("@@RESULT@@"):])
    result["wall"] = time.perf_counter() - started
    return result


def _has_fastmcp() -> bool:
    try:
        import fastmcp  # noqa: F401
    except ImportError:
        return False
    return True


# ---------------------------------------------------------------------- 1. load


def bench_load() -> None:
    print("\n-- 1. spec file to tools listed and ready to call (subprocess each; bars 1.5 s, 250 MB)")
    print(f"{'spec':42} {'impl':8} {'tools':>6} {'seconds':>9} {'peak RSS':>10}  (first call after ready)")
    fast = _has_fastmcp()
    for name in LOAD_SPECS:
        path = OPENAPI / name
        rows = [("mcs-rest", _run_child("ours", path, 120))]
        if fast:
            rows.append(("fastmcp", _run_child("fastmcp", path, FASTMCP_TIMEOUT)))
        for impl, result in rows:
            if result is None:
                print(f"{name:42} {impl:8} {'-':>6} {'>' + format(FASTMCP_TIMEOUT, 'g') + ' s':>9} {'-':>10}")
            elif "error" in result:
                reason = "Swagger 2.0 is not supported" if "Invalid OpenAPI schema" in result["error"] else result["error"]
                print(f"{name:42} {impl:8} failed: {reason}")
            else:
                ok = "" if impl != "mcs-rest" else (
                    "  ok" if result["seconds"] <= 1.5 and result["peak_rss_mb"] <= 250 else "  OVER BAR")
                first = f"  (+{result['first_call']:.2f} s)" if "first_call" in result else ""
                print(f"{name:42} {impl:8} {result['tools']:>6} {result['seconds']:>8.2f}s "
                      f"{result['peak_rss_mb']:>7.0f} MB{ok}{first}")
    if not fast:
        print("(FastMCP not installed: pip install fastmcp to measure it side by side)")


# ---------------------------------------------------------------------- 2. tokens


def _corpus_specs() -> list[Path]:
    import re

    top = re.compile(rb'(^|\n)[ \t]*(openapi|swagger)\s*:|"(openapi|swagger)"\s*:\s*"[23]')
    return sorted(p for p in OPENAPI.rglob("*") if p.suffix in (".json", ".yaml", ".yml")
                  and top.search(p.read_bytes()))


def _norm(name: str) -> str:
    return "".join(c for c in name.lower() if c.isalnum())


def _compact(tools: list[dict[str, Any]]) -> str:
    return json.dumps(tools, ensure_ascii=False, separators=(",", ":"))


def _resolve(schema: Any, defs: dict[str, Any]) -> Any:
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
        schema = defs.get(schema["$ref"].split("/")[-1], {})
    return schema


def _types(schema: Any) -> set[str]:
    if not isinstance(schema, dict):
        return set()
    kind = schema.get("type")
    out = {kind} if isinstance(kind, str) else set(kind or ())
    for key in ("anyOf", "oneOf"):
        for sub in schema.get(key, ()) or ():
            out |= _types(sub)
    return out


def _losses(theirs: dict[str, Any], ours: dict[str, Any]) -> list[str]:
    """Enums, required flags and types FastMCP's schema has and ours does not."""
    lost: list[str] = []
    defs = theirs.get("$defs", {})
    our_props = ours.get("properties", {})
    for name, sub in (theirs.get("properties") or {}).items():
        sub = _resolve(sub, defs)
        mine = our_props.get(name) or next((v for k, v in our_props.items() if k.startswith(name + "_")), None)
        if mine is None:
            lost.append(f"{name}: missing")
            continue
        mine = _resolve(mine, ours.get("$defs", {}))
        if isinstance(sub, dict) and "enum" in sub and set(map(str, sub["enum"])) - set(map(str, mine.get("enum", []))):
            lost.append(f"{name}: enum")
        if _types(sub) - _types(mine) - {"null"}:
            lost.append(f"{name}: type {sorted(_types(sub))} vs {sorted(_types(mine))}")
    for name in theirs.get("required", []) or []:
        if name not in (ours.get("required") or []) and not any(r.startswith(name + "_") for r in ours.get("required") or []):
            lost.append(f"{name}: required")
    return lost


def bench_tokens() -> None:
    from mcs_rest import RestDriver

    if not O200K_FILE.is_file():
        print("\n-- 2. tokens: skipped (no ../shared/tokenizers)")
        return
    encoding = o200k()
    print("\n-- 2a. discovery-mode description, o200k tokens (bar <= 3000 for every spec)")
    worst = (0, "")
    rows = []
    for path in _corpus_specs():
        try:
            with RestDriver(path, description_mode="discovery") as driver:
                count = len(encoding.encode(driver.get_function_description()))
                ops = len(driver.operations)
        except Exception:
            continue  # broken on purpose (prance's failure fixtures)
        rows.append((path.name, ops, count))
        worst = max(worst, (count, path.name))
    for name, ops, count in sorted(rows, key=lambda r: -r[1])[:6]:
        print(f"   {name:42} {ops:>5} ops {count:>6} tokens")
    print(f"   {len(rows)} specs; largest description: {worst[0]} tokens ({worst[1]})"
          f"{'  ok' if worst[0] <= 3000 else '  OVER BAR'}")

    print("\n-- 2b. inline mode on small specs vs FastMCP's tool list, o200k tokens (bar <= 0.8)")
    if not _has_fastmcp():
        print("   (FastMCP not installed)")
        return
    print(f"   {'spec':34} {'ops':>4} {'mcs-rest':>9} {'fastmcp':>8} {'ratio':>6}  lost")
    ratios = []
    for name in SMALL_SPECS:
        path = OPENAPI / name
        theirs = _run_child("fastmcp-tools", path, FASTMCP_TIMEOUT)
        if not theirs or "error" in theirs:
            print(f"   {name:34} fastmcp failed: {theirs and theirs.get('error')}")
            continue
        with RestDriver(path, description_mode="inline") as driver:
            ours_tools = {_norm(t.name): t for t in driver.list_tools()}
        their_tools = [t for t in theirs["tools"] if _norm(t["name"]) in ours_tools]
        mine = []
        for t in their_tools:
            tool = ours_tools[_norm(t["name"])]
            entry: dict[str, Any] = {"name": tool.name}
            if tool.title:
                entry["title"] = tool.title
            entry["description"] = tool.description
            entry["inputSchema"] = tool.input_schema
            mine.append(entry)
        a, b = len(encoding.encode(_compact(mine))), len(encoding.encode(_compact(their_tools)))
        lost = [f"{t['name']}.{x}" for t in their_tools
                for x in _losses(t.get("inputSchema", {}), ours_tools[_norm(t["name"])].input_schema)]
        ratio = a / b if b else 0.0
        ratios.append(ratio)
        print(f"   {Path(name).name:34} {len(their_tools):>4} {a:>9} {b:>8} {ratio:>6.2f}  {', '.join(lost) or 'none'}")
    if ratios:
        print(f"   worst ratio {max(ratios):.2f}{'  ok' if max(ratios) <= 0.8 else '  OVER BAR'}")


# ---------------------------------------------------------------------- 3. call overhead


def bench_call(iterations: int = 1500) -> None:
    import httpx
    from mcs_rest import RestDriver
    from mcs_rest.demo import SPEC, serve_shop

    print("\n-- 3. GET on a loopback server: process_llm_response vs bare httpx.Client.get (bar <= 1.15)")
    response = '{"tool": "getPet", "arguments": {"petId": 1}}'
    with serve_shop() as base, RestDriver(SPEC, base_url=base) as driver, httpx.Client() as client:
        url = base + "/pets/1"
        assert driver.process_llm_response(response) == client.get(url).json()
        for _ in range(200):
            driver.process_llm_response(response)
            client.get(url)
        ours, bare = [], []
        for _ in range(iterations):
            started = time.perf_counter()
            driver.process_llm_response(response)
            ours.append(time.perf_counter() - started)
            started = time.perf_counter()
            client.get(url)
            bare.append(time.perf_counter() - started)
    a, b = statistics.median(ours), statistics.median(bare)
    print(f"   median process_llm_response {a * 1e6:8.0f} us")
    print(f"   median httpx.Client.get     {b * 1e6:8.0f} us")
    print(f"   ratio {a / b:.3f}{'  ok' if a / b <= 1.15 else '  OVER BAR'} ({iterations} calls each, interleaved)")


def main() -> None:
    if not OPENAPI.is_dir():
        print("bench/rest.py: ../shared/corpus/openapi is not here; only the call benchmark runs")
        bench_call()
        return
    bench_load()
    bench_tokens()
    bench_call()


if __name__ == "__main__":
    if len(sys.argv) >= 3:
        _child(sys.argv[1:])
    else:
        main()
