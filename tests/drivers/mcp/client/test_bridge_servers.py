"""The bridge against MCP servers built by the rest of MCS: ``mcs serve`` of a REST driver
(over stdio) and of a gen-mcp file (over streamable HTTP), both in front of a real HTTP
backend on loopback. LLM output -> MCP driver -> MCP server -> backend, and back.

These need other MCS parts (``mcs_rest``, ``mcs_mcp.serving``, ``mcs_mcp.mcpfile``) and skip,
naming what is missing, when they are not installed.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from mcs_mcp.client_driver import MCPDriver
from support.servers import JSONHandler, free_port, server_process, serving_http

PETS = {"7": {"id": "7", "name": "Rex", "kind": "dog"}}


class _Backend(JSONHandler):
    def do_GET(self) -> None:
        pet = PETS.get(self.path.rsplit("/", 1)[-1].split("?")[0])
        self.send_json(pet if pet else {"error": "not found"}, 200 if pet else 404)


@pytest.fixture
def backend() -> Iterator[str]:
    with serving_http(_Backend) as url:
        yield url


OPENAPI = {
    "openapi": "3.0.3",
    "info": {"title": "pets", "version": "1.0.0"},
    "paths": {
        "/pets/{id}": {
            "get": {
                "operationId": "getPet",
                "summary": "Get a pet by id.",
                "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
                "responses": {"200": {"description": "The pet.", "content": {"application/json": {"schema": {
                    "type": "object", "properties": {"id": {"type": "string"}, "name": {"type": "string"}}}}}}},
            }
        }
    },
}


def _find(driver: MCPDriver, words: str) -> str:
    wanted = words.replace("_", "").lower()
    for tool in driver.list_tools():
        if tool.name.replace("_", "").lower().endswith(wanted):
            return tool.name
    raise AssertionError(f"no tool like {words!r} in {[t.name for t in driver.list_tools()]}")


def test_a_rest_driver_served_by_mcs_serve_over_stdio(backend: str, tmp_path: Path) -> None:
    pytest.importorskip("mcs_rest", reason="the REST driver (mcs-framework-rest) is not installed")
    pytest.importorskip("mcs_mcp.serving", reason="MCP serving (mcs serve --protocol mcp) is not in this build")
    spec = tmp_path / "pets.json"
    spec.write_text(json.dumps(OPENAPI))
    args = ["-m", "mcs.cli", "serve", "rest", "-o", f"spec={spec}", "-o", f"base_url={backend}",
            "--protocol", "mcp", "--transport", "stdio"]
    with MCPDriver(command=sys.executable, args=args, connect_timeout=60) as driver:
        name = _find(driver, "getPet")
        result = driver.process_llm_response({"tool": name, "arguments": {"id": "7"}})
        assert "Rex" in json.dumps(result)


def test_a_gen_mcp_file_served_by_mcs_serve_over_streamable_http(backend: str, tmp_path: Path) -> None:
    pytest.importorskip("mcs_mcp.mcpfile", reason="the gen-mcp file driver (mcs_mcp.mcpfile) is not in this build")
    pytest.importorskip("mcs_mcp.serving", reason="MCP serving (mcs serve --protocol mcp) is not in this build")
    path = tmp_path / "pets.yaml"
    path.write_text(yaml.safe_dump({
        "mcpFileVersion": "0.1.0",
        "name": "pets",
        "version": "1.0.0",
        "tools": [{
            "name": "get_pet",
            "description": "Get a pet by id.",
            "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
            "invocation": {"http": {"method": "GET", "url": backend + "/pets/{id}"}},
        }],
    }))
    port = free_port()
    serve = [sys.executable, "-m", "mcs.cli", "serve", str(path), "--protocol", "mcp", "--transport", "http",
             "--host", "127.0.0.1", "--port", str(port)]
    with server_process(serve, port, timeout=60), MCPDriver(url=f"http://127.0.0.1:{port}/mcp") as driver:
        name = _find(driver, "get_pet")
        result = driver.process_llm_response(json.dumps({"tool": name, "arguments": {"id": "7"}}))
        assert "Rex" in json.dumps(result)
