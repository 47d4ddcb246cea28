"""The negative corpus: answers that hold no call the model issued (tests/parsing/negatives).

Each answer gives no call, with or without its tools known, and a driver that offers the
tools executes nothing and hands the answer back unchanged (the MCS chaining rule).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.recording import RecordingDriver

from mcs import parse_tool_calls

HERE = Path(__file__).parent / "negatives"
BFCL = [json.loads(line) for line in (HERE / "bfcl_relevance.jsonl").read_text(encoding="utf-8").splitlines()]
HANDWRITTEN: list[dict[str, str]] = yaml.safe_load((HERE / "handwritten.yaml").read_text(encoding="utf-8"))
TOOLS: list[dict[str, Any]] = yaml.safe_load((HERE / "tools.yaml").read_text(encoding="utf-8"))


def _known(tools: list[dict[str, Any]]) -> dict[str, Any]:
    return {tool["name"]: tool["input_schema"] for tool in tools}


def test_the_corpus_holds_at_least_300_answers_of_every_kind_the_rule_names() -> None:
    assert len(BFCL) + len(HANDWRITTEN) >= 300
    kinds = {case["kind"] for case in HANDWRITTEN}
    assert {"sentence", "negated", "example", "inline code", "blockquote", "html comment", "code sample",
            "json in docs", "math", "prose", "wrong name"} <= kinds


@pytest.mark.parametrize("record", BFCL, ids=[f"{r['model']}-{r['id']}" for r in BFCL])
def test_a_real_answer_without_a_call_gives_none(record: dict[str, Any]) -> None:
    assert parse_tool_calls(record["text"]) == []
    assert parse_tool_calls(record["text"], known_names=_known(record["tools"])) == []


@pytest.mark.parametrize("case", HANDWRITTEN, ids=[f"{c['kind']}-{n}" for n, c in enumerate(HANDWRITTEN)])
def test_a_mentioned_call_is_not_a_call(case: dict[str, str]) -> None:
    assert parse_tool_calls(case["text"]) == []
    assert parse_tool_calls(case["text"], known_names=_known(TOOLS)) == []


def test_a_driver_with_the_tools_executes_none_of_the_real_answers() -> None:
    executed = []
    for record in BFCL:
        driver = RecordingDriver(record["tools"])
        assert driver.process_llm_response(record["text"]) is record["text"]
        executed.extend(driver.calls)
    assert executed == []


def test_a_driver_with_the_tools_executes_none_of_the_handwritten_answers() -> None:
    driver = RecordingDriver(TOOLS)
    for case in HANDWRITTEN:
        assert driver.process_llm_response(case["text"]) is case["text"]
    assert driver.calls == []
