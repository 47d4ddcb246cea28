"""A driver in discovery mode, served over MCP: its meta-tools are listed, its index is the
server's instructions, and a found tool is called through ``call_tool`` as that tool."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from serving_helpers import TOOLS, SampleDriver
from serving_support import mcp_client, serve_driver

META = ["search_tools", "describe_tool", "call_tool"]


def discovering() -> SampleDriver:
    driver = SampleDriver()
    driver.description_mode = "discovery"
    driver.refresh_tools()
    return driver


@pytest.fixture
def served() -> Iterator[tuple[str, SampleDriver]]:
    driver = discovering()
    with serve_driver(driver) as url:
        yield url, driver


def _json(result: Any) -> Any:
    return json.loads(result.content[0].text)


async def test_only_the_meta_tools_are_listed_and_the_index_is_the_instructions(
    served: tuple[str, SampleDriver],
) -> None:
    url, _ = served
    async with mcp_client(url) as session:
        listed = [tool.name for tool in (await session.list_tools()).tools]
        assert listed == META
        instructions = session.instructions or ""
        assert f"{len(TOOLS)} tools are available" in instructions
        assert "call_tool" in instructions and "Meta-tools:" not in instructions


async def test_a_tool_found_by_search_is_called_through_call_tool_as_itself(
    served: tuple[str, SampleDriver],
) -> None:
    url, driver = served
    async with mcp_client(url) as session:
        found = _json(await session.call_tool("search_tools", {"query": "add two numbers"}))
        assert found["tools"][0]["name"] == "add"
        schema = _json(await session.call_tool("describe_tool", {"name": "add"}))
        assert schema["input_schema"]["required"] == ["a", "b"]
        result = await session.call_tool("call_tool", {"name": "add", "arguments": {"a": 2, "b": 3}})
        assert result.is_error is False and _json(result) == {"sum": 5}
        invalid = await session.call_tool("call_tool", {"name": "add", "arguments": {"a": "two"}})
        assert invalid.is_error is True and "number" in invalid.content[0].text
        unknown = await session.call_tool("call_tool", {"name": "no_such_tool", "arguments": {}})
        assert unknown.is_error is True and "no_such_tool" in unknown.content[0].text
        direct = await session.call_tool("echo", {"text": "still callable by name"})
        assert direct.content[0].text == "still callable by name"
    assert [name for name, _, _ in driver.calls] == ["add", "echo"]  # the driver saw the tools themselves


async def test_all_tools_lists_every_tool_without_an_index() -> None:
    with serve_driver(discovering(), all_tools=True) as url:
        async with mcp_client(url) as session:
            listed = [tool.name for tool in (await session.list_tools()).tools]
            assert listed == [tool.name for tool in TOOLS]
            assert session.instructions is None


async def test_instructions_given_in_the_options_win() -> None:
    with serve_driver(discovering(), instructions="Ask before resetting.") as url:
        async with mcp_client(url) as session:
            assert session.instructions == "Ask before resetting."
            assert [tool.name for tool in (await session.list_tools()).tools] == META


async def test_a_driver_under_its_budget_is_listed_whole() -> None:
    with serve_driver(SampleDriver()) as url:
        async with mcp_client(url) as session:
            listed = [tool.name for tool in (await session.list_tools()).tools]
            assert listed == [tool.name for tool in TOOLS]
            assert session.instructions is None
