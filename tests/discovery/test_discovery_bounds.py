"""What a model's discovery call costs is bounded by the driver, not by the model: a page far
past the last tool, a huge query, a very long word in a query or a tool's name."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import tracemalloc

import pytest

import mcs
from mcs import discovery
from mcs.errors import InvalidInputError, ToolNotFoundError
from mcs.tools import Tool
from mcs.toolsearch import ToolIndex


def _tools(count: int = 40) -> list[Tool]:
    return [Tool(name=f"pets_{i}", description=f"Feed pet number {i}.", input_schema={"type": "object"})
            for i in range(count)]


def _peak_bytes(run: object) -> int:
    tracemalloc.start()
    try:
        run()  # type: ignore[operator]
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_search_page_far_past_the_last_tool_is_empty_and_the_process_lives() -> None:
    call = {"tool": "search_tools", "arguments": {"query": "weather", "offset": 10**12}}
    done = subprocess.run(
        [sys.executable, "-m", "mcs.cli", "call", "functions", "-o", "token_budget=1", "-r", json.dumps(call)],
        capture_output=True, text=True, timeout=60, env=os.environ.copy(), check=False,
    )
    assert done.returncode == 0, done.stderr[-400:]
    page = json.loads(done.stdout)
    assert page["tools"] == [] and page["total"] >= 1


def test_the_index_asks_tantivy_for_no_more_hits_than_it_has_tools() -> None:
    index = ToolIndex(_tools(3))
    found, total = index.search("feed pet", 50, offset=2**62)
    assert found == [] and total == 3


def test_one_very_long_word_in_a_query_costs_memory_in_proportion_to_it() -> None:
    index = ToolIndex(_tools())
    word = "feed" + "x" * 20_000
    peak = _peak_bytes(lambda: index.search(word, 10))
    assert peak < 5_000_000  # every start of the word kept at once: 200 MB


def test_a_tool_whose_name_is_one_very_long_word_is_ranked_in_time_proportional_to_it() -> None:
    named = Tool(name="feed", description="Feed a pet.", input_schema={"type": "object"},
                 meta={"original_name": "feed" + "y" * 200_000})  # as an upstream server may name it
    index = ToolIndex([named, *_tools(3)])
    started = time.monotonic()
    found, _ = index.search("pet", 10)
    assert named in found
    assert time.monotonic() - started < 1.5  # every start of the name, one by one: about 6 s


def _discovering() -> mcs.FunctionDriver:
    @mcs.tool
    def feed_pet(name: str) -> str:
        """Feed one pet by name."""
        return name

    @mcs.tool
    def walk_pet(name: str) -> str:
        """Walk one pet by name."""
        return name

    return mcs.FunctionDriver([feed_pet, walk_pet], token_budget=1)


def test_search_tools_refuses_a_query_longer_than_its_bound() -> None:
    driver = _discovering()
    assert driver.call_tool("search_tools", {"query": "w " * (discovery.MAX_QUERY_CHARS // 2)})["total"] == 0
    with pytest.raises(InvalidInputError, match="query"):
        driver.call_tool("search_tools", {"query": "w " * discovery.MAX_QUERY_CHARS})


def test_call_tool_naming_search_tools_is_held_to_the_same_bound() -> None:
    driver = _discovering()
    with pytest.raises(InvalidInputError, match="query"):
        driver.call_tool("call_tool", {"name": "search_tools", "arguments": {"query": "w " * discovery.MAX_QUERY_CHARS}})


def test_describe_tool_of_a_very_long_unknown_name_answers_not_found_in_bounded_memory() -> None:
    driver = _discovering()
    driver.call_tool("search_tools", {"query": "feed"})  # the index is built before measuring

    def describe() -> None:
        with pytest.raises(ToolNotFoundError, match="no tool named"):
            driver.call_tool("describe_tool", {"name": "feed_" + "x" * 20_000})

    assert _peak_bytes(describe) < 5_000_000  # its close matches searched with the whole name: 200 MB
