"""REST driver benchmarks, side by side with FastMCP's ``FastMCP.from_openapi`` in the same run.

1. Load: from a spec file to tools listed and ready to call, for Stripe, GitHub and
   Kubernetes (JSON). Each measurement runs in its own subprocess (seconds from before
   the library import to ready). Bars: <= 1.5 s, <= 250 MB.
   Peak RSS and CPU seconds of each child are read by a minimal launcher that waits for it
   (``bench._support.run_measured``): read from inside the child, or with ``wait4`` from the
   benchmark process, they would include the benchmark's own high-water mark.
2. Tokens (o200k): the discovery-mode description of every corpus spec (bar <= 3,000),
   and (item 11) the inline description of the six OAI examples, GitHub and Stripe against
   the same fields of FastMCP's tools for the same operations (name, title, description,
   inputSchema; goal <= 0.85), checking that no enum, required flag or type is lost; and
   the size of Kubernetes in forced inline mode.
3. Call overhead (item 9): ``process_llm_response`` for a GET against a loopback server
   versus the same request (header for header, as recorded from one call of the driver)
   sent through the raw httpx transport (``HTTPTransport.handle_request``, body read, JSON
   decoded): goal at most 60 µs over it; the ratio of the two medians is shown beside it
   (no goal). A GET with the Host header only and a bare ``httpx.Client.get`` are shown
   beside it too.
4. Spec validation: the load of (1) with ``validate_spec=True`` (prance with
   openapi-spec-validator) against the default load, each in its own process, peak RSS
   read from outside the child. Off by default; the figures are its price.
5. Response validation: a GET on GitHub and Stripe operations answered on loopback, with
   ``validate_responses=True`` (openapi-core) against the default path, interleaved.

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
from collections import Counter
from pathlib import Path
from typing import Any

from bench._support import (
    HOST,
    O200K_FILE,
    ROOT,
    SHARED,
    check,
    free_port,
    no_goal,
    o200k,
    read_result,
    report_result,
    run_measured,
    server_process,
)

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
# Item 11 measures the inline ratio on the six OAI examples and these two.
INLINE_LARGE = ["github_api.github.com_2020-08.json", "stripe_spec3_2022-04-12.json"]
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
        spec = json.load(handle) if path.endswith(".json") else yaml.safe_load(handle)
    server = FastMCP.from_openapi(spec, client=_fastmcp_client(httpx))
    tools = asyncio.run(server.list_tools())
    listed = []
    for tool in tools:
        mcp_tool = tool.to_mcp_tool() if hasattr(tool, "to_mcp_tool") else tool
        listed.append(mcp_tool.model_dump(mode="json", exclude_none=True, by_alias=True))
    return {"tools": listed}


def _child_checked(path: str) -> dict[str, Any]:
    """Like ``_child_ours``, with the spec validated by prance at load (``validate_spec=True``)."""
    import warnings

    started = time.perf_counter()
    from mcs_rest import RestDriver

    from mcs.tools import ToolCall

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a spec's problems are reported as a warning
        driver = RestDriver(path, base_url="http://127.0.0.1:9", retries=0, validate_spec=True)
    tools = driver.list_tools()
    driver.get_function_description()
    first = next(t for t in tools if "method" in t.meta)
    with contextlib.suppress(Exception):
        driver.prepare(ToolCall(first.name, {}))
    problems = len(driver.spec_report.problems) if driver.spec_report is not None else -1
    return {"seconds": time.perf_counter() - started, "tools": len(tools), "problems": problems}


def _child(argv: list[str]) -> None:
    kind, path = argv[0], argv[1]
    runner = {"ours": _child_ours, "ours-checked": _child_checked, "fastmcp": _child_fastmcp,
              "fastmcp-tools": _child_fastmcp_tools}[kind]
    report_result(runner(path))


def _run_child(kind: str, path: Path, timeout: float) -> dict[str, Any] | None:
    """One child's result, with its peak RSS and CPU seconds measured from outside it."""
    try:
        code, out, err, measured = run_measured([sys.executable, "-m", "bench.rest", kind, str(path)],
                                                cwd=ROOT, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    result = read_result(out)
    if code != 0 or result is None:
        tail = (err or out).strip().splitlines()[-1:] or ["?"]
        return {"error": tail[0][:200]}
    result.update(measured)
    return result


def _has_fastmcp() -> bool:
    try:
        import fastmcp  # noqa: F401
    except ImportError:
        return False
    return True


# ---------------------------------------------------------------------- 1. load


def bench_load() -> None:
    print("\n-- 1. spec file to tools listed and ready to call (a child each; peak RSS and CPU read "
          "by a launcher that waits for it; bars 1.5 s, 250 MB)")
    print(f"{'spec':42} {'impl':8} {'tools':>6} {'seconds':>9} {'CPU s':>7} {'peak RSS':>10}  (first call after ready)")
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
                verdict = ""
                if impl == "mcs-rest":
                    short = name.split("_")[0]
                    verdict = "  " + check(f"{short} load, seconds to ready", result["seconds"], 1.5, unit="s")
                    verdict += " " + check(f"{short} load, peak RSS", result["peak_rss_mb"], 250, unit="MB")
                first = f"  (+{result['first_call']:.2f} s)" if "first_call" in result else ""
                print(f"{name:42} {impl:8} {result['tools']:>6} {result['seconds']:>8.2f}s {result['cpu_s']:>7.2f} "
                      f"{result['peak_rss_mb']:>7.0f} MB{verdict}{first}")
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
    # A body that is not a plain object (an `anyOf` of required sets, say) stays one `body`
    # argument with us, where FastMCP spreads its fields: look for them there too.
    body = _resolve(our_props.get("body"), ours.get("$defs", {}))
    body_props = body.get("properties", {}) if isinstance(body, dict) else {}
    for name, sub in (theirs.get("properties") or {}).items():
        sub = _resolve(sub, defs)
        mine = (our_props.get(name) or next((v for k, v in our_props.items() if k.startswith(name + "_")), None)
                or body_props.get(name))
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
    from mcs_rest import RestDriver  # imported here: the load children time their own imports

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
          f" {check('largest discovery-mode description of the corpus, o200k tokens', worst[0], 3000, unit='tokens')}")

    bench_inline(encoding)


_LLM_FIELDS = ("name", "title", "description", "inputSchema")


def _llm_facing(tool: dict[str, Any]) -> dict[str, Any]:
    """What a model reads of an MCP tool: its name, title, description and input schema
    (not ``outputSchema``, ``annotations`` or ``_meta``, which stay with the client)."""
    return {key: tool[key] for key in _LLM_FIELDS if key in tool}


def bench_inline(encoding: Any) -> None:
    """Item 11: our inline description against the LLM-facing fields of FastMCP's tools for
    the same operations, like for like; and the size of Kubernetes forced inline."""
    from mcs_rest import RestDriver

    from mcs import prompts

    print("\n-- 2b. inline description vs FastMCP's tools, the LLM-facing fields of both "
          "(name, title, description, inputSchema), o200k tokens (goal <= 0.85)")
    if not _has_fastmcp():
        print("   (FastMCP not installed)")
        return
    print(f"   {'spec':34} {'ops':>4} {'mcs-rest':>9} {'fastmcp':>8} {'ratio':>6}  lost")
    ratios: list[float] = []
    ours_total: list[int] = []
    theirs_total: list[int] = []
    for name in [*SMALL_SPECS, *INLINE_LARGE]:
        path = OPENAPI / name
        theirs = _run_child("fastmcp-tools", path, FASTMCP_TIMEOUT)
        if not theirs or "error" in theirs:
            print(f"   {name:34} fastmcp failed: {theirs and theirs.get('error')}")
            continue
        with RestDriver(path, description_mode="inline") as driver:
            ours_tools = {_norm(t.name): t for t in driver.list_tools()}
            # Two names that both tools cut short can read alike (FastMCP's
            # `..._for_app` and `..._for_app_`): such tools cannot be paired, so neither side counts them.
            seen = Counter(_norm(t["name"]) for t in theirs["tools"])
            unpaired = sum(count for count in seen.values() if count > 1)
            their_tools = [_llm_facing(t) for t in theirs["tools"]
                           if _norm(t["name"]) in ours_tools and seen[_norm(t["name"])] == 1]
            same = {t["name"] for t in their_tools}
            kept = [t for t in driver.list_tools() if any(_norm(t.name) == _norm(n) for n in same)]
            description = prompts.render_function_description(kept, style="json")
        a, b = len(encoding.encode(description)), len(encoding.encode(_compact(their_tools)))
        lost = [f"{t['name']}.{x}" for t in their_tools
                for x in _losses(t.get("inputSchema", {}), ours_tools[_norm(t["name"])].input_schema)]
        ratio = a / b if b else 0.0
        ratios.append(ratio)
        ours_total.append(a)
        theirs_total.append(b)
        print(f"   {Path(name).name[:34]:34} {len(their_tools):>4} {a:>9} {b:>8} {ratio:>6.2f}  "
              f"{', '.join(lost[:4]) or 'none'}{' ...' if len(lost) > 4 else ''}"
              f"{f' ({unpaired} with names cut alike left out)' if unpaired else ''}")
    if ratios:
        total = sum(ours_total) / sum(theirs_total)
        print(f"   all {len(ratios)} specs together: {sum(ours_total)} vs {sum(theirs_total)} tokens, ratio {total:.2f} "
              f"{check('inline tokens vs FastMCP, like for like (the specs together)', total, 0.85, item='11')}; "
              f"worst single spec {max(ratios):.2f}")
    kubernetes = OPENAPI / "kubernetes_swagger.json"
    if kubernetes.is_file():
        with RestDriver(kubernetes, description_mode="inline") as driver:
            text = driver.get_function_description()
        tokens = len(encoding.encode(text))
        print(f"   Kubernetes forced inline: {len(driver.operations)} tools, {len(text) / 1e6:.1f} MB, "
              f"{tokens / 1e6:.2f} M tokens (was 16.7 MB, 3.8 M tokens)")


# ---------------------------------------------------------------------- 3. call overhead


def bench_call(iterations: int = 1500) -> None:
    import httpx
    from mcs_rest import RestDriver
    from mcs_rest.demo import SPEC

    print("\n-- 3. GET on a loopback server: process_llm_response vs the raw httpx transport sending the same "
          "request (goal <= 60 µs over it)")
    response = '{"tool": "getPet", "arguments": {"petId": 1}}'
    port = free_port()
    # The baseline sends the request the driver sends, header for header (Host, Accept,
    # Accept-Encoding, User-Agent), read here from one call through a recording transport:
    # the server's and h11's work on those headers is the wire's, not the driver's.
    sent: list[httpx.Headers] = []

    def record(request: httpx.Request) -> httpx.Response:
        sent.append(request.headers)
        return httpx.Response(200, json={"id": 1})

    with RestDriver(SPEC, base_url=f"http://{HOST}:{port}/v1", transport=httpx.MockTransport(record)) as recorder:
        recorder.process_llm_response(response)
    same_headers = sent[0].multi_items()
    # The server runs in its own process: in this one, its thread would compete with the
    # client for the GIL and charge each client-side microsecond several times over.
    serve = [sys.executable, "-m", "bench.rest", "serve-shop", str(port)]
    with server_process(serve, port, cwd=ROOT), RestDriver(SPEC, base_url=f"http://{HOST}:{port}/v1") as driver, \
            httpx.Client() as client, httpx.HTTPTransport() as transport:
        url = f"http://{HOST}:{port}/v1/pets/1"

        def raw(headers: list[tuple[str, str]] | None = None) -> Any:
            answer = transport.handle_request(httpx.Request("GET", url, headers=headers))
            try:
                return json.loads(answer.read())
            finally:
                answer.close()

        assert driver.process_llm_response(response) == client.get(url).json() == raw(same_headers)
        runs = {"process_llm_response": lambda: driver.process_llm_response(response),
                "raw transport": lambda: raw(same_headers), "raw, Host header only": raw,
                "httpx.Client.get": lambda: client.get(url)}
        samples: dict[str, list[float]] = {label: [] for label in runs}
        cpu = dict.fromkeys(runs, 0.0)
        for _ in range(200):
            for run in runs.values():
                run()
        for _ in range(iterations):  # interleaved, so load from elsewhere falls on all alike
            for label, run in runs.items():
                started, used = time.perf_counter(), time.process_time()
                run()
                cpu[label] += time.process_time() - used
                samples[label].append(time.perf_counter() - started)
    medians = {label: statistics.median(values) * 1e6 for label, values in samples.items()}
    for label, median in medians.items():
        print(f"   median {label:<22} {median:8.1f} µs   (client CPU {cpu[label] / iterations * 1e6:6.1f} µs per call)")
    over = medians["process_llm_response"] - medians["raw transport"]
    cpu_over = (cpu["process_llm_response"] - cpu["raw transport"]) / iterations * 1e6
    bare = medians["process_llm_response"] - medians["raw, Host header only"]
    ratio = medians["process_llm_response"] / medians["raw transport"]
    print(f"   over the raw transport {over:.1f} µs (client CPU {cpu_over:+.1f} µs) "
          f"{check('REST GET, µs over the raw httpx transport', over, 60, unit='µs', item='9')}; "
          f"ratio of medians to the raw transport {ratio:.3f}x "
          f"{no_goal('REST GET, ratio of medians to the raw httpx transport', ratio)}; "
          f"over a GET with the Host header only {bare:.1f} µs (no goal: its request carries three headers fewer); "
          f"ratio to httpx.Client.get {medians['process_llm_response'] / medians['httpx.Client.get']:.3f} "
          f"({iterations} calls each, interleaved)")


# ---------------------------------------------------------------------- 4. spec validation


def bench_validate_spec() -> None:
    print("\n-- 4. load with validate_spec=True (prance + openapi-spec-validator) vs the default load"
          " (a child each, peak RSS and CPU read from outside; off by default: its memory is held to"
          " the load bar of 250 MB, its time is the price, no goal)")
    print(f"{'spec':42} {'default':>9} {'validated':>10} {'ratio':>6} {'CPU s':>13} {'peak RSS':>17} problems")
    for name in LOAD_SPECS:
        plain = _run_child("ours", OPENAPI / name, 300)
        checked = _run_child("ours-checked", OPENAPI / name, 600)
        if not plain or not checked or "error" in plain or "error" in checked:
            print(f"{name:42} failed: {plain and plain.get('error')} / {checked and checked.get('error')}")
            continue
        short = name.split("_")[0]
        verdict = check(f"{short} load with validate_spec, peak RSS", checked["peak_rss_mb"], 250, unit="MB")
        print(f"{name:42} {plain['seconds']:>8.2f}s {checked['seconds']:>9.2f}s {checked['seconds'] / plain['seconds']:>5.1f}x"
              f" {plain['cpu_s']:>5.2f} -> {checked['cpu_s']:>5.2f}"
              f" {plain['peak_rss_mb']:>5.0f} -> {checked['peak_rss_mb']:>4.0f} MB {checked['problems']:>8}  {verdict}")


# ---------------------------------------------------------------------- 5. response validation


def _instance(schema: Any, root: dict[str, Any], depth: int = 0) -> Any:
    """A small value that fits ``schema``: required fields only, first enum value, first option."""
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str):
        node: Any = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            node = node[part]
        schema = node
    if not isinstance(schema, dict):
        return None
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return _instance(schema[key][0], root, depth + 1)
    if schema.get("allOf"):
        merged: dict[str, Any] = {}
        for part in schema["allOf"]:
            value = _instance(part, root, depth + 1)
            if isinstance(value, dict):
                merged.update(value)
        return merged
    kind = schema.get("type", "object")
    if kind == "object":
        properties = schema.get("properties") or {}
        return {name: _instance(properties.get(name, {}), root, depth + 1) for name in schema.get("required") or ()}
    return {"string": "x", "integer": 1, "number": 1.5, "boolean": False, "array": []}.get(kind)


@contextlib.contextmanager
def _canned(body: bytes) -> Any:
    """A loopback HTTP server answering every GET with ``body`` (JSON)."""
    from http.server import BaseHTTPRequestHandler

    from mcs.demo import serve_on_loopback

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body in separate writes: no 40 ms delayed-ACK stall

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    with serve_on_loopback(Handler) as url:
        yield url


def bench_validate_responses(iterations: int = 300) -> None:
    import orjson
    from mcs_rest import RestDriver

    print("\n-- 5. GET answered on loopback: validate_responses=True (openapi-core) vs the default path"
          f" (medians of {iterations} interleaved calls; on the default path only if it adds at most 10%)")
    github = orjson.loads((OPENAPI / "github_api.github.com_2020-08.json").read_bytes())
    stripe = orjson.loads((OPENAPI / "stripe_spec3_2022-04-12.json").read_bytes())
    cases = [
        ("GitHub repos/get (6 kB)", "github_api.github.com_2020-08.json", "repos_get", {"owner": "o", "repo": "r"},
         github["components"]["examples"]["full-repository"]["value"]),
        ("Stripe GetCustomersCustomer", "stripe_spec3_2022-04-12.json", "GetCustomersCustomer",
         {"customer": "cus_1"}, _instance({"$ref": "#/components/schemas/customer"}, stripe)),
    ]
    print(f"   {'operation':30} {'default':>9} {'validated':>10} {'ratio':>6} {'added':>9}  first check (import + build)")
    for label, name, tool, args, body in cases:
        with _canned(orjson.dumps(body)) as base, \
                RestDriver(OPENAPI / name, base_url=base, retries=0) as plain, \
                RestDriver(OPENAPI / name, base_url=base, retries=0, validate_responses=True) as checked:
            plain.call_tool(tool, args)
            started = time.perf_counter()
            first = checked.call_tool(tool, args)
            first_check = time.perf_counter() - started
            ours: list[float] = []
            validated: list[float] = []
            for turn in range(iterations):  # alternate which goes first, so order does not favour one
                pair = [(plain, ours), (checked, validated)]
                for driver, times in pair if turn % 2 else pair[::-1]:
                    started = time.perf_counter()
                    driver.call_tool(tool, args)
                    times.append(time.perf_counter() - started)
        a, b = statistics.median(ours), statistics.median(validated)
        verdict = "" if not (isinstance(first, dict) and "contract_note" in first) else "  (the answer broke the spec: noted)"
        short = label.split(" (")[0]
        goal = check(f"{short}: validate_responses per call, ratio to the default path (on by default only within)",
                     b / a, 1.10)
        print(f"   {label:30} {a * 1e3:>7.2f}ms {b * 1e3:>8.2f}ms {b / a:>5.1f}x {(b - a) * 1e3:>7.2f}ms  "
              f"{first_check:.2f} s{verdict}  {goal}")


def main() -> None:
    if not OPENAPI.is_dir():
        print("bench/rest.py: ../shared/corpus/openapi is not here; only the call benchmark runs")
        bench_call()
        return
    bench_load()
    bench_tokens()
    bench_call()
    bench_validate_spec()
    bench_validate_responses()


def _serve_shop(port: int) -> None:
    """The demo shop on ``port`` until the process is stopped."""
    from http.server import ThreadingHTTPServer

    from mcs_rest.demo import _Shop

    shop = type("Shop", (_Shop,), {"pets": [{"id": 1, "name": "Tom", "species": "cat", "age": 5}]})
    ThreadingHTTPServer((HOST, port), shop).serve_forever()


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "serve-shop":
        _serve_shop(int(sys.argv[2]))
    elif len(sys.argv) >= 3:
        _child(sys.argv[1:])
    else:
        main()
