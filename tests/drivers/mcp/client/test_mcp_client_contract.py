"""The core's contract suite (mcs.testing) over the MCP driver, against the SDK-built player server.

The server runs over stdio and over streamable HTTP on loopback; its prompts and
resources are offered as tools too, and one configuration adds a tool-name prefix.
``valid_call`` is parametrized so a tool, a prompt and a resource read are each really
called. One driver (and server) per configuration serves the whole module: starting a
server costs about a second, and the checks change no state.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import pytest
from mcp_bridge_servers import PLAYER, player_stdio_options, start_http, stop
from mcs_mcp.client_driver import MCPDriver

from mcs.registry import load_driver
from mcs.testing import DriverContractTests

CALLS: dict[str, tuple[dict[str, Any], Any]] = {
    "tool": ({"tool": "add", "arguments": {"a": 40, "b": "2"}}, 42),
    "prompt": (
        {"tool": "prompt_greeting", "arguments": {"name": "Ann"}},
        [{"role": "user", "content": "Say hello to Ann."}],
    ),
    "resource": ({"tool": "read_resource", "arguments": {"uri": "memo://readme"}}, "This is the readme."),
}


@pytest.fixture(scope="module")
def player_url() -> Iterator[str]:
    """The player server over streamable HTTP, once for the module."""
    process, url = start_http(PLAYER)
    try:
        yield url
    finally:
        stop(process)


@pytest.fixture(scope="module", params=["stdio", "http", "http-prefixed"])
def player_driver(request: pytest.FixtureRequest) -> Iterator[MCPDriver]:
    """An MCP driver over the player server, with its prompts and resources, once per configuration."""
    with open(os.devnull, "w", encoding="utf-8") as quiet:
        options: dict[str, Any]
        if request.param.startswith("stdio"):
            options = {**player_stdio_options(), "stderr": quiet}
        else:
            options = {"url": request.getfixturevalue("player_url")}
        if request.param.endswith("prefixed"):
            options["prefix"] = "player"
        driver = load_driver("mcp", include_prompts=True, include_resources=True, **options)
        assert isinstance(driver, MCPDriver)
        try:
            yield driver
        finally:
            driver.close()


class TestMCPDriverContract(DriverContractTests):
    @pytest.fixture
    def driver(self, player_driver: MCPDriver) -> MCPDriver:
        return player_driver

    @pytest.fixture(params=sorted(CALLS))
    def call(self, request: pytest.FixtureRequest, driver: MCPDriver) -> tuple[str, Any]:
        """A call of one kind (named as this driver exposes it) and the answer the server gives."""
        call, expected = CALLS[request.param]
        return json.dumps({**call, "tool": self.exposed_name(driver, call["tool"])}), expected

    @pytest.fixture
    def valid_call(self, call: tuple[str, Any]) -> str:
        return call[0]

    def test_valid_call_gives_the_servers_answer(self, driver: MCPDriver, call: tuple[str, Any]) -> None:
        response, expected = call
        assert driver.process_llm_response(response) == expected
