"""GraphQL driver benchmarks, each against the bare library doing the same work in the same run.

1. Load: GitHub's public schema (1.1 MB SDL), file to a ready driver with its description,
   against graphql-core's own ``build_schema`` on the same text (medians of alternating runs
   in this process; bar <= 1.5x). Peak memory of a child process that loads it, read from
   outside by a launcher (``bench._support.run_measured``).
2. Tokens (o200k): the discovery-mode description of every corpus schema (bar <= 3,000).
3. Call overhead: a query through ``process_llm_response`` against a loopback server versus
   the same query through a bare gql ``Client`` session (ratio of medians, bar <= 1.15).

Run: ``python -m bench graphql`` (``make bench``).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

from bench._support import ROOT, SHARED, check, o200k, run_measured

GRAPHQL = SHARED / "corpus" / "graphql"
GITHUB = GRAPHQL / "github_schema_2024-04-16.graphql"
DUPLICATES = "github_schema_2025-02-27_HEAD_duplicate_fields.graphql"


# ---------------------------------------------------------------------- 1. load


def _load_driver(path: Path) -> int:
    from mcs_graphql import GraphQLDriver

    driver = GraphQLDriver(schema=path)
    return len(driver.get_function_description())


def bench_load(runs: int = 5) -> None:
    from graphql import build_schema

    print("\n-- 1. GitHub schema (1.1 MB SDL): file to ready driver + description vs graphql-core build_schema (bar <= 1.5x)")
    _load_driver(GITHUB)  # imports and first-use caches out of the measurement
    build_schema(GITHUB.read_text(encoding="utf-8"))
    ours, bare = [], []
    for _ in range(runs):
        started = time.perf_counter()
        _load_driver(GITHUB)
        ours.append(time.perf_counter() - started)
        started = time.perf_counter()
        build_schema(GITHUB.read_text(encoding="utf-8"))
        bare.append(time.perf_counter() - started)
    a, b = statistics.median(ours), statistics.median(bare)
    print(f"   median GraphQLDriver(schema=file) + description {a:6.2f} s")
    print(f"   median graphql.build_schema(file text)          {b:6.2f} s")
    print(f"   ratio {a / b:.2f} {check('GitHub schema file to ready driver vs build_schema', a / b, 1.5)} "
          f"({runs} runs each, alternating)")
    code, _, _, measured = run_measured([sys.executable, "-m", "bench.graphql", "load", str(GITHUB)], cwd=ROOT)
    print(f"   peak RSS of a child process loading it: {measured['peak_rss_mb']:.0f} MB (exit {code})")


# ---------------------------------------------------------------------- 2. tokens


def bench_tokens() -> None:
    from mcs_graphql import GraphQLDriver

    print("\n-- 2. discovery-mode description, o200k tokens (bar <= 3,000)")
    encoding = o200k()
    for path in sorted(GRAPHQL.glob("*.graphql")):
        lenient = path.name == DUPLICATES
        for options in ({"description_mode": "discovery"}, {"mutations": "all"}):
            driver = GraphQLDriver(schema=path, lenient=lenient, **options)
            text = driver.get_function_description()
            tokens = len(encoding.encode(text))
            mode = driver._resolved_mode(driver._tool_map())
            label = ", ".join(f"{k}={v}" for k, v in options.items())
            print(f"   {path.name[:48]:48} {label:28} {len(driver.list_tools()):>4} tools {mode:9} "
                  f"{tokens:>6} tokens{_discovery_verdict(path.name, tokens) if mode == 'discovery' else ''}")


def _discovery_verdict(schema: str, tokens: int) -> str:
    return " " + check(f"{schema}: discovery-mode description, o200k tokens", tokens, 3000, unit="tokens")


# ---------------------------------------------------------------------- 3. call overhead


def bench_call(iterations: int = 1500) -> None:
    from gql import Client, GraphQLRequest
    from gql.transport.httpx import HTTPXTransport
    from mcs_graphql import GraphQLDriver
    from mcs_graphql.demo import serve_library

    print("\n-- 3. a query on a loopback server: process_llm_response vs a bare gql Client session (bar <= 1.15)")
    response = '{"tool": "book", "arguments": {"id": "3"}}'
    with serve_library() as url, GraphQLDriver(url) as driver, Client(transport=HTTPXTransport(url)) as session:
        request = GraphQLRequest(driver.operations["book"].text, variable_values={"id": "3"})
        assert driver.process_llm_response(response) == session.execute(request)
        for _ in range(200):
            driver.process_llm_response(response)
            session.execute(request)
        ours, bare = [], []
        for _ in range(iterations):
            started = time.perf_counter()
            driver.process_llm_response(response)
            ours.append(time.perf_counter() - started)
            started = time.perf_counter()
            session.execute(request)
            bare.append(time.perf_counter() - started)
    a, b = statistics.median(ours), statistics.median(bare)
    print(f"   median process_llm_response  {a * 1e6:8.0f} us")
    print(f"   median gql session.execute   {b * 1e6:8.0f} us")
    print(f"   ratio {a / b:.3f} {check('query via process_llm_response vs a bare gql session', a / b, 1.15)} "
          f"({iterations} calls each, interleaved)")


def main() -> None:
    if not GRAPHQL.is_dir():
        print("bench/graphql.py: ../shared/corpus/graphql is not here; only the call benchmark runs")
        bench_call()
        return
    bench_load()
    bench_tokens()
    bench_call()


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "load":
        print(json.dumps({"description_chars": _load_driver(Path(sys.argv[2]))}))
    else:
        main()
