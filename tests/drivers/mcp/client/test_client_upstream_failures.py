"""A bridge over several real MCP servers (the official SDK's, over streamable HTTP on loopback
and stdio) keeps listing the ones that answer when one is down, refuses its listing or
answers it too late: the failing one is named in the description and in the error of a call
of its tools, and is tried again at the next listing."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from mcp_bridge_servers import SERVERS, free_port, start_server, stop
from mcs_mcp.client_driver import MCPDriver

from mcs.errors import ExecutionError

MOODY = SERVERS / "moody_server.py"


def _start(port: int, prefix: str, listing: str = "") -> subprocess.Popen[bytes]:
    env = {**os.environ, "MCS_TEST_PREFIX": prefix, "MCS_TEST_LISTING": listing}
    return start_server([sys.executable, MOODY, "--http", str(port)], port, env=env)


def _stdio(prefix: str, listing: str = "") -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(MOODY)],
            "env": {"MCS_TEST_PREFIX": prefix, "MCS_TEST_LISTING": listing, "PATH": os.environ.get("PATH", "")}}


@pytest.fixture
def two_http() -> Iterator[dict[str, Any]]:
    """Servers ``a`` and ``b`` over streamable HTTP; ``b``'s process and port are in the dict."""
    ports = {"a": free_port(), "b": free_port()}
    processes = {name: _start(port, f"{name}_") for name, port in ports.items()}
    try:
        yield {"ports": ports, "processes": processes,
               "config": {"mcpServers": {name: {"url": f"http://127.0.0.1:{port}/mcp"} for name, port in ports.items()}}}
    finally:
        for process in processes.values():
            stop(process)


def _names(driver: MCPDriver) -> set[str]:
    return {tool.name for tool in driver.list_tools()}


def test_a_killed_server_is_named_and_the_other_still_listed_then_it_comes_back(two_http: dict[str, Any]) -> None:
    with MCPDriver(config=two_http["config"], connect_timeout=5, listing_timeout=5) as driver:
        assert {"a_ping", "b_ping"} <= _names(driver)
        stop(two_http["processes"]["b"])
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

        two_http["processes"]["b"] = _start(two_http["ports"]["b"], "b_")
        assert {"a_ping", "b_ping"} <= _names(driver)  # the next listing tried it again
        assert "Unavailable" not in driver.get_function_description()
        assert driver.call_tool("b_ping", {}) == "pong from b_"


def test_a_server_down_from_the_start_leaves_the_others_listed(two_http: dict[str, Any]) -> None:
    stop(two_http["processes"]["b"])
    with MCPDriver(config=two_http["config"], connect_timeout=5, listing_timeout=5) as driver:
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


async def test_the_async_listing_leaves_a_killed_server_out_too(two_http: dict[str, Any]) -> None:
    async with MCPDriver(config=two_http["config"], connect_timeout=5, listing_timeout=5) as driver:
        assert {"a_ping", "b_ping"} <= {t.name for t in await driver.alist_tools()}
        stop(two_http["processes"]["b"])
        driver.reload()
        assert "b_ping" not in {t.name for t in await driver.alist_tools()}
        assert await driver.acall_tool("a_ping", {}) == "pong from a_"
        with pytest.raises(ExecutionError, match="MCP server 'b' cannot be reached"):
            await driver.acall_tool("b_ping", {})
        two_http["processes"]["b"] = _start(two_http["ports"]["b"], "b_")
        assert "b_ping" in {t.name for t in await driver.alist_tools()}
        assert await driver.acall_tool("b_ping", {}) == "pong from b_"


def test_when_every_server_fails_the_listing_raises_naming_one(two_http: dict[str, Any]) -> None:
    for process in two_http["processes"].values():
        stop(process)
    with MCPDriver(config=two_http["config"], connect_timeout=5, listing_timeout=5) as driver, \
            pytest.raises(ExecutionError, match="MCP server 'a'"):
        driver.list_tools()
