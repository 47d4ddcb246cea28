"""False executions: answers that hold no call, given to a driver that offers the tools.

Input: the negative corpus in ``tests/parsing/negatives`` (220 real answers from BFCL's
``relevance`` category, each read by hand, and 195 written for the rule: mentions in a
sentence, negations, examples for the reader, quotations, comments, code, JSON in docs,
maths, permission questions, options, tables, other languages, echoed results). Each
answer goes through ``process_llm_response`` of a driver whose tools carry realistic
schemas (the question's function for BFCL), which validates arguments before it runs anything; an execution is a call that reached the tool. Goal: zero.

Measured in the same run on the same answers and tools: the greedy ``\\{.*\\}`` +
``json.loads`` extraction of the MCS reference SDK, and ``json.loads`` of the whole answer,
each call they find run through the same driver (so validation applies to them too).
"""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from bench._support import ROOT, check
from bench.parser import naive_parse
from mcs.driver import DriverMeta, ToolDriver
from mcs.errors import ToolCallError
from mcs.pipeline import Invocation
from mcs.tools import Tool, sanitize_tool_name

NEGATIVES = ROOT / "tests" / "parsing" / "negatives"
GOAL = 0


class Recorder(ToolDriver):
    """Offers ``tools`` as data; a call that passes validation is recorded, never run."""

    def __init__(self, tools: Sequence[Mapping[str, Any]]) -> None:
        super().__init__()
        self.meta = DriverMeta(id="00000000-0000-4000-8000-0000000000be", name="bench", version="1",
                               protocol="bench", transport="none", spec_format="none")
        self._specs = list(tools)
        self.executed: list[str] = []

    def _list_tools(self) -> Iterable[Tool]:
        for spec in self._specs:
            yield Tool(name=sanitize_tool_name(spec["name"]), description=spec.get("description", ""),
                       input_schema=dict(spec.get("input_schema") or {"type": "object"}),
                       meta={"original_name": spec["name"]})

    def _call_tool(self, invocation: Invocation) -> Any:
        self.executed.append(invocation.tool.name)
        return None


def load_corpus(folder: Path = NEGATIVES) -> list[tuple[str, str, list[dict[str, Any]]]]:
    """(kind, answer, tools) for every negative."""
    tools = yaml.safe_load((folder / "tools.yaml").read_text(encoding="utf-8"))
    corpus = [("bfcl relevance", record["text"], record["tools"])
              for record in map(json.loads, (folder / "bfcl_relevance.jsonl").read_text(encoding="utf-8").splitlines())]
    corpus += [(case["kind"], case["text"], tools)
               for case in yaml.safe_load((folder / "handwritten.yaml").read_text(encoding="utf-8"))]
    return corpus


def _through_mcs(answer: str, driver: Recorder) -> int:
    with contextlib.suppress(ToolCallError):  # refused (validation, unknown tool): nothing ran
        driver.process_llm_response(answer)
    return len(driver.executed)


def _through(extract: Callable[[str], list[Any]]) -> Callable[[str, Recorder], int]:
    def run(answer: str, driver: Recorder) -> int:
        for call in extract(answer):
            with contextlib.suppress(ToolCallError):
                driver.call_tool(call.name, call.arguments)
        return len(driver.executed)

    return run


def main() -> None:
    if not NEGATIVES.is_dir():
        print(f"bench/precision.py: negative corpus not found at {NEGATIVES}; skipped")
        return
    corpus = load_corpus()
    ways = {
        "mcs process_llm_response": _through_mcs,
        "greedy {.*} + json.loads": _through(lambda answer: naive_parse(answer, greedy=True)),
        "json.loads of the answer": _through(naive_parse),
    }
    print(f"{len(corpus)} answers without a call ({Counter(kind == 'bfcl relevance' for kind, _, _ in corpus)[True]} "
          f"real BFCL relevance answers, the rest written for the rule), each given to a driver offering its tools")
    for name, way in ways.items():
        by_kind: Counter[str] = Counter()
        for kind, answer, tools in corpus:
            by_kind[kind] += way(answer, Recorder(tools))
        total = sum(by_kind.values())
        goal = (" " + check("false executions of answers without a call", total, GOAL, unit="calls", item="13.1")
                if name.startswith("mcs") else "")
        detail = ", ".join(f"{kind} {count}" for kind, count in sorted(by_kind.items()) if count)
        print(f"  {name:28} false executions: {total}{goal}{'; ' + detail if detail else ''}")


if __name__ == "__main__":
    main()
