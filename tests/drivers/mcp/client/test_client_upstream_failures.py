"""A bridge over several real MCP servers (the official SDK's, over streamable HTTP on loopback
and stdio) keeps listing the ones that answer when one is down, refuses its listing or
answers it too late: the failing one is named in the description and in the error of a call
of its tools, and is tried again by a later listing, or at once by a call of its tools."""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest
from mcp_bridge_servers import MOODY, start_moody, stop
from mcs_mcp.client_driver import MCPDriver

from mcs.errors import ExecutionError


def _stdio(prefix: str, listing: str = "") -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(MOODY)],
            "env": {"MCS_TEST_PREFIX": prefix, "MCS_TEST_LISTING": listing, "PATH": os.environ.get("PATH", "")}}


def _names(driver: MCPDriver) -> set[str]:
    return {tool.name for tool in driver.list_tools()}


def test_a_killed_server_is_named_and_the_other_still_listed_then_it_comes_back(moody_pair: dict[str, Any]) -> None:
    with MCPDriver(config=moody_pair["config"], connect_timeout=5, listing_timeout=5) as driver:
        assert {"a_ping", "b_ping"} <= _names(driver)
        stop(moody_pair["processes"]["b"])
        driver.reload()

        assert "a_ping" in _names(driver) and "b_ping" not in _names(driver)
        description = driver.get_function_description()
        assert "a_ping" in description and "b_ping" not in description
        assert "MCP server 'b' cannot be reached" in description
        assert driver.call_tool("a_ping", {}) == "pong from a_"
        with pytest.raises(ExecutionError) as caught:
            driver.call_tool("b_ping", {})
        assert "MCP server 'b' cannot be reached" in caught.value.message
        with pytest.raises(ExecutionError, match="MCP server 'b' cannot be reached"):  # as a model's reply too
            driver.process_llm_response('{"tool": "b_ping", "arguments": {}}')
        assert driver.get_status()["servers"]["b"]["listing_error"]

        moody_pair["processes"]["b"] = start_moody(moody_pair["ports"]["b"], "b_")
        assert driver.call_tool("b_ping", {}) == "pong from b_"  # the call tried it again at once
        assert {"a_ping", "b_ping"} <= _names(driver)
        assert "Unavailable" not in driver.get_function_description()


def test_a_server_down_from_the_start_leaves_the_others_listed(moody_pair: dict[str, Any]) -> None:
    stop(moody_pair["processes"]["b"])
    with MCPDriver(config=moody_pair["config"], connect_timeout=5, listing_timeout=5) as driver:
        assert {"a_ping", "a_listings", "a_flood"} == _names(driver)
        assert "MCP server 'b' cannot be reached" in driver.get_driver_system_message()


def test_a_server_that_answers_its_listing_with_an_error_is_named_without_its_text(quiet: Any) -> None:
    config = {"mcpServers": {"a": _stdio("a_"), "b": _stdio("b_", listing="error")}}
    with MCPDriver(config=config, stderr=quiet) as driver:
        assert "a_ping" in _names(driver)
        description = driver.get_function_description()
        assert "MCP server 'b' answered its listing with an error" in description
        assert "locked" not in description  # the server's own words stay out of the prompt
        assert "locked" in driver.get_status()["servers"]["b"]["listing_error"]


def test_a_server_slower_than_its_listing_deadline_is_left_out(quiet: Any) -> None:
    config = {"mcpServers": {"a": _stdio("a_"), "b": _stdio("b_", listing="slow")}}
    with MCPDriver(config=config, stderr=quiet, listing_timeout=1) as driver:
        assert "a_ping" in _names(driver)
        assert "MCP server 'b' did not list its tools in time" in driver.get_function_description()
        assert driver.call_tool("a_ping", {}) == "pong from a_"


async def test_the_async_listing_leaves_a_killed_server_out_too(moody_pair: dict[str, Any]) -> None:
    async with MCPDriver(config=moody_pair["config"], connect_timeout=5, listing_timeout=5) as driver:
        assert {"a_ping", "b_ping"} <= {t.name for t in await driver.alist_tools()}
        stop(moody_pair["processes"]["b"])
        driver.reload()
        assert "b_ping" not in {t.name for t in await driver.alist_tools()}
        assert await driver.acall_tool("a_ping", {}) == "pong from a_"
        with pytest.raises(ExecutionError, match="MCP server 'b' cannot be reached"):
            await driver.acall_tool("b_ping", {})
        moody_pair["processes"]["b"] = start_moody(moody_pair["ports"]["b"], "b_")
        assert await driver.acall_tool("b_ping", {}) == "pong from b_"  # the call tried it again at once
        assert "b_ping" in {t.name for t in await driver.alist_tools()}


def test_when_every_server_fails_the_listing_raises_naming_one(moody_pair: dict[str, Any]) -> None:
    for process in moody_pair["processes"].values():
        stop(process)
    with MCPDriver(config=moody_pair["config"], connect_timeout=5, listing_timeout=5) as driver, \
            pytest.raises(ExecutionError, match="MCP server 'a'"):
        driver.list_tools()
