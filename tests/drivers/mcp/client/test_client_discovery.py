"""A large MCP server is described in discovery mode by itself (default ``token_budget``): the
Docker Engine API from the corpus, served with every tool listed by ``mcs serve rest -s
all_tools=true`` over streamable HTTP, searched, described and called through the client's
meta-tools; the call reaches a recording HTTP server on loopback."""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar
from urllib.parse import parse_qsl, urlsplit

import pytest
from mcs_mcp.client_driver import MCPDriver
from support.servers import JSONHandler, free_port, server_process, serving_http

CORPUS = Path(__file__).resolve().parents[4] / ".." / "shared" / "corpus"
DOCKER = CORPUS / "openapi" / "docker_engine_api.yaml"
MCS = Path(sys.executable).with_name("mcs")


class Recorder(JSONHandler):
    """Answers every GET with an empty JSON list and keeps its path and query."""

    seen: ClassVar[list[tuple[str, list[tuple[str, str]]]]] = []
    lock = threading.Lock()

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        with self.lock:
            self.seen.append((parts.path, parse_qsl(parts.query)))
        self.send_json([])


@pytest.fixture(scope="module")
def engine() -> Iterator[str]:
    """The recording HTTP server's base URL (what the served Docker API calls)."""
    with serving_http(Recorder) as url:
        yield url


@pytest.fixture(scope="module")
def docker(engine: str) -> Iterator[MCPDriver]:
    """An MCPDriver connected to `mcs serve rest` serving the Docker Engine API with every tool listed."""
    if not DOCKER.is_file():
        pytest.skip(f"the shared corpus is not beside the repository ({DOCKER.name} is missing)")
    port = free_port()
    argv = [MCS, "serve", "rest", "-o", f"spec={DOCKER}", "-o", f"base_url={engine}/v1.53",
            "-s", "all_tools=true", "--transport", "http", "--port", str(port)]
    with server_process(argv, port, env=dict(os.environ)), MCPDriver(url=f"http://127.0.0.1:{port}/mcp") as driver:
        yield driver


def test_a_server_with_many_tools_is_described_in_discovery_mode_by_default(docker: MCPDriver) -> None:
    assert docker.token_budget == 8000
    names = {tool.name for tool in docker.list_tools()} - {"search_tools", "describe_tool", "call_tool"}
    assert "ContainerList" in names and len(names) > 100
    description = docker.get_function_description()
    assert "search_tools" in description and "describe_tool" in description
    assert len(description) < 12_000


def test_search_describe_and_call_a_tool_through_the_meta_tools(docker: MCPDriver) -> None:
    Recorder.seen.clear()
    found = docker.process_llm_response(json.dumps(
        {"tool": "search_tools", "arguments": {"query": "list the containers"}}))
    assert "ContainerList" in [tool["name"] for tool in found["tools"][:3]]
    described = docker.process_llm_response(json.dumps(
        {"tool": "describe_tool", "arguments": {"name": "ContainerList"}}))
    assert {"all", "limit"} <= set(described["input_schema"]["properties"])
    result = docker.process_llm_response(json.dumps({"tool": "call_tool", "arguments": {
        "name": "ContainerList", "arguments": {"all": True, "limit": 2}}}))
    assert json.loads(result) == []  # a JSON list comes back as the text of the tool result
    assert Recorder.seen == [("/v1.53/containers/json", [("all", "true"), ("limit", "2")])]
