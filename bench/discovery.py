"""Discovery mode: does ``search_tools`` list the tool a task needs, and how fast; and what
leaves the driver when a client calls tools itself.

1. Recall: the tasks of ``tests/discovery/queries.yaml`` (written as people say them, over
   GitHub, Stripe, Kubernetes, Twilio and Docker from the shared OpenAPI corpus), each
   searched as the meta-tool does; a task counts when one of its operations is among the
   first 3 (recall@3, goal >= 95%) or 10 (recall@10, goal >= 99%) results. Per API, overall,
   and for the tasks written after the ranking was last changed (``held_out: 2``).
   Measured in the same run: the word-overlap scorer discovery used before (3 points a
   name word, 2 a group or title word, 1 a description word, plural ``s`` stripped).
2. Time: the median and p99 of one search on GitHub's 623 operations (goal: median
   under 2 ms), and the one-off index build per API.
3. Export: ``mcs.native.export_tools(driver.list_tools(), "openai")`` for Stripe, in
   tools and bytes, against ``all_tools=True``.
"""

from __future__ import annotations

import json
import re
import statistics
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import yaml

from bench._support import ROOT, SHARED, check
from mcs import discovery, load_driver
from mcs.native import export_tools
from mcs.tools import Tool

OPENAPI = SHARED / "corpus" / "openapi"
QUERIES = ROOT / "tests" / "discovery" / "queries.yaml"
GOAL_AT3, GOAL_AT10, GOAL_MEDIAN_MS = 95.0, 99.0, 2.0


# -- the scorer discovery used before this ranking, kept to measure against

_WORD = re.compile(r"[a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_STOP = frozenset(["a", "an", "the", "of", "for", "to", "in", "on", "and", "or", "by", "with", "from", "is",
                   "it", "me", "my"])


def _words(text: str) -> list[str]:
    return _WORD.findall(_CAMEL.sub(" ", text).lower())


def _stem(word: str) -> str:
    for suffix in ("ies", "es", "s"):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def word_overlap(tools: Sequence[Tool]) -> Callable[[str, int], list[Tool]]:
    entries = []
    for tool in tools:
        extra = " ".join(str(tool.meta.get(k, "")) for k in ("path", "method", "original_name"))
        entries.append((tool, set(_words(discovery.group_of(tool))),
                        frozenset(_words(tool.name) + _words(tool.original_name)),
                        frozenset(_words(tool.title or "")), frozenset(_words(f"{tool.description[:400]} {extra}"))))

    def search(query: str, limit: int) -> list[Tool]:
        asked = [w for w in _words(query) if w not in _STOP]
        scored = []
        for tool, group, name, title, text in entries:
            score = 0.0
            for word in asked:
                stem = _stem(word)
                if word in name or stem in name or any(w.startswith(stem) for w in name):
                    score += 3
                score += 2 * (word in group or stem in group) + 2 * (word in title or stem in title)
                score += word in text or stem in text
            if score > 0:
                scored.append((score, tool))
        scored.sort(key=lambda item: (-item[0], item[1].name))
        return [tool for _, tool in scored[:limit]]

    return search


# -- measuring


def _recall(tasks: list[dict[str, Any]], search: Callable[[str, int], list[Tool]]) -> tuple[int, int]:
    at3 = at10 = 0
    for task in tasks:
        found = [tool.original_name for tool in search(task["query"], 10)]
        expected = set(task["expect"])
        at3 += bool(expected & set(found[:3]))
        at10 += bool(expected & set(found))
    return at3, at10


def main() -> None:
    if not OPENAPI.exists():
        print(f"skipped: no OpenAPI corpus at {OPENAPI}")
        return
    apis: dict[str, Any] = yaml.safe_load(QUERIES.read_text(encoding="utf-8"))
    rows: list[tuple[str, int, tuple[int, int], tuple[int, int], float]] = []
    held: list[dict[str, Any]] = []
    held_hits = [0, 0]
    github_times: list[float] = []
    for api, entry in apis.items():
        tools = [t for t in load_driver("rest", spec=str(OPENAPI / entry["spec"])).list_tools()
                 if not discovery.is_meta_tool(t)]
        started = time.perf_counter()
        catalog = discovery._Catalog(tools)
        catalog.index  # noqa: B018  (built on first search; built here to time it)
        build_ms = (time.perf_counter() - started) * 1000
        names = {tool.name: tool for tool in tools}

        def ranked(query: str, limit: int, catalog: Any = catalog, names: Any = names) -> list[Tool]:
            listed = discovery.search((), query, limit, entries=catalog)["tools"]
            return [names[item["name"]] for item in listed]

        tasks = entry["tasks"]
        rows.append((api, len(tasks), _recall(tasks, ranked), _recall(tasks, word_overlap(tools)), build_ms))
        two = [task for task in tasks if task.get("held_out") == 2]
        held.extend(two)
        hits = _recall(two, ranked)
        held_hits[0] += hits[0]
        held_hits[1] += hits[1]
        if api == "github":
            for _ in range(5):
                for task in tasks:
                    begun = time.perf_counter()
                    discovery.search((), task["query"], 10, entries=catalog)
                    github_times.append(time.perf_counter() - begun)

    print("-- 1. recall over the task set (one of the expected operations in the first 3 / 10)")
    print(f"{'api':<12}{'tasks':>6}{'@3 BM25':>10}{'@10 BM25':>10}{'@3 before':>11}{'@10 before':>12}{'index ms':>10}")
    total = sum(row[1] for row in rows)
    sums = [0, 0, 0, 0]
    for api, count, (at3, at10), (old3, old10), build_ms in rows:
        sums = [sums[0] + at3, sums[1] + at10, sums[2] + old3, sums[3] + old10]
        print(f"{api:<12}{count:>6}{100 * at3 / count:>9.1f}%{100 * at10 / count:>9.1f}%"
              f"{100 * old3 / count:>10.1f}%{100 * old10 / count:>11.1f}%{build_ms:>10.0f}")
    r3, r10 = 100 * sums[0] / total, 100 * sums[1] / total
    print(f"{'all':<12}{total:>6}{r3:>9.1f}%{r10:>9.1f}%{100 * sums[2] / total:>10.1f}%{100 * sums[3] / total:>11.1f}%")
    print(f"recall@3 {r3:.1f}% {check('discovery recall@3', r3, GOAL_AT3, unit='%', kind='at least', item='13.3')}")
    print(f"recall@10 {r10:.1f}% {check('discovery recall@10', r10, GOAL_AT10, unit='%', kind='at least', item='13.3')}")
    if held:
        print(f"tasks written after the last ranking change ({len(held)}): recall@3 "
              f"{100 * held_hits[0] / len(held):.1f}%, recall@10 {100 * held_hits[1] / len(held):.1f}%")

    median_ms = statistics.median(github_times) * 1000
    p99_ms = sorted(github_times)[int(len(github_times) * 0.99) - 1] * 1000
    print("\n-- 2. one search on GitHub (623 operations), limit 10")
    print(f"median {median_ms:.2f} ms {check('search median on GitHub, ms', median_ms, GOAL_MEDIAN_MS, unit='ms', item='13.3')}, "
          f"p99 {p99_ms:.2f} ms, over {len(github_times)} searches")

    print("\n-- 3. what leaves the driver: export_tools(stripe.list_tools(), 'openai')")
    stripe = load_driver("rest", spec=str(OPENAPI / apis["stripe"]["spec"]))
    meta = export_tools(stripe.list_tools(), "openai")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the point: all of them exceed OpenAI's 128
        every = export_tools(stripe.list_tools(), "openai", all_tools=True)
    print(f"discovery (default): {len(meta)} tools, {len(json.dumps(meta)):,} bytes; "
          f"all_tools=True: {len(every)} tools, {len(json.dumps(every)):,} bytes (warns: over 128)")


if __name__ == "__main__":
    main()
