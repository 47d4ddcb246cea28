"""The core's contract suite (mcs.testing) over an MCP file: HTTP and CLI tools, a prompt, a resource.

The HTTP invocations reach the recording server on loopback; the CLI ones run real
commands. ``valid_call`` is parametrized so a real call of each kind is checked, with
and without a tool-name prefix.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcpfile_support import Recorder, Reply, mcp_file, tool
from mcs_mcp.mcpfile.driver import MCPFileDriver

from mcs.errors import InvalidInputError
from mcs.testing import DriverContractTests

USER = {"id": "7", "name": "Ann"}


def contract_file(url: str) -> dict[str, Any]:
    return mcp_file(
        tool("get_user", {"http": {"method": "GET", "url": url + "/users/{userId}"}},
             {"userId": {"type": "string"}}, ["userId"]),
        tool("shout", {"cli": {"command": "echo {text} | tr a-z A-Z"}}, {"text": {"type": "string"}}, ["text"]),
        prompts=[{
            "name": "greet", "description": "A greeting",
            "inputSchema": {"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]},
            "invocation": {"cli": {"command": "echo Hello {who}"}},
        }],
        resourceTemplates=[{
            "name": "forecast", "description": "Weather", "mimeType": "application/json",
            "uriTemplate": "weather://forecast/{city}",
            "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
            "invocation": {"http": {"method": "GET", "url": url + "/forecast/{city}"}},
        }],
    )


CALLS = {
    "http": ({"tool": "get_user", "arguments": {"userId": "7"}}, USER),
    "cli": ({"tool": "shout", "arguments": {"text": "it's $(id) & done"}}, "IT'S $(ID) & DONE\n"),
    "prompt": ({"tool": "prompt_greet", "arguments": {"who": "Ann"}}, "Hello Ann\n"),
    "resource": ({"tool": "resource_template_forecast", "arguments": {"city": "Oslo"}}, '{"t": -3}'),
}


class TestMCPFileDriverContract(DriverContractTests):
    @pytest.fixture(params=[None, "files"], ids=["plain", "prefixed"])
    def driver(self, request: pytest.FixtureRequest, new_driver: Callable[..., MCPFileDriver],
               write_file: Callable[..., Path], recorder: Recorder) -> MCPFileDriver:
        recorder.replies["/users/7"] = Reply(body=json.dumps(USER).encode())
        recorder.replies["/forecast/Oslo"] = Reply(body=b'{"t": -3}')
        return new_driver(write_file(contract_file(recorder.url)), prefix=request.param)

    @pytest.fixture(params=sorted(CALLS))
    def call(self, request: pytest.FixtureRequest, driver: MCPFileDriver) -> tuple[str, Any]:
        """A call of one kind (named as this driver exposes it) and what it returns."""
        call, expected = CALLS[request.param]
        return json.dumps({**call, "tool": self.exposed_name(driver, call["tool"])}), expected

    @pytest.fixture
    def valid_call(self, call: tuple[str, Any]) -> str:
        return call[0]

    def test_valid_call_gives_what_the_file_declares(self, driver: MCPFileDriver, call: tuple[str, Any]) -> None:
        response, expected = call
        assert driver.process_llm_response(response) == expected

    def test_invalid_arguments_send_no_request(self, driver: MCPFileDriver, recorder: Recorder) -> None:
        for name, field in (("get_user", "userId"), ("resource_template_forecast", "city")):
            call = {"tool": self.exposed_name(driver, name), "arguments": {"extra": 1}}
            with pytest.raises(InvalidInputError, match=field):
                driver.process_llm_response(json.dumps(call))
        assert recorder.requests == []
