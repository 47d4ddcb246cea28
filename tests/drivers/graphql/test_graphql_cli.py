"""The GraphQL driver on the command line, served over MCP, and in a toolbox file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from graphql_server import Running
from mcs_graphql import GraphQLDriver
from support.mcp_http import served_over_http
from support.servers import JSONHandler, serving_http

from mcs.cli import main
from mcs.errors import ConfigurationError
from mcs.toolbox import Toolbox

MCS = Path(sys.executable).with_name("mcs")


def test_describe_prints_the_tools(capsys: pytest.CaptureFixture[str], server: Running) -> None:
    assert main(["describe", "graphql", "-o", f"url={server.graphql}"]) == 0
    out = capsys.readouterr().out
    assert "books" in out and "hello" in out


def test_call_runs_the_llm_response_against_the_server(capsys: pytest.CaptureFixture[str], server: Running) -> None:
    code = main(["call", "graphql", "-o", f"url={server.graphql}",
                 "--response", '{"tool": "hello", "arguments": {"name": "CLI"}}'])
    assert code == 0
    assert json.loads(capsys.readouterr().out) == {"hello": "Hello, CLI!"}


def test_prompt_holds_the_tools_in_the_chosen_model_familys_format(
    capsys: pytest.CaptureFixture[str], server: Running
) -> None:
    assert main(["prompt", "graphql", "-o", f"url={server.graphql}", "--model", "claude-3-5-sonnet"]) == 0
    out = capsys.readouterr().out
    assert "<tools>" in out and '{"tool": "tool_name", "arguments"' in out
    assert '"name":"hello"' in out and '"name":"books"' in out and '"name":"addBook"' not in out


def test_a_bad_option_is_one_line_and_exit_2(server: Running) -> None:
    done = subprocess.run([str(MCS), "describe", "graphql", "-o", f"url={server.graphql}", "-o", "mutations=some"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "mutations must be" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_toolbox_file_holds_it_beside_another_driver(tmp_path: Path, server: Running) -> None:
    config = tmp_path / "toolbox.yaml"
    config.write_text(f"drivers:\n  library: {{driver: graphql, url: '{server.graphql}'}}\n  math: {{driver: functions}}\n")
    with Toolbox.from_config(config) as box:
        assert box.process_llm_response('{"tool": "hello", "arguments": {"name": "box"}}') == {"hello": "Hello, box!"}
        assert box.process_llm_response('{"tool": "add", "arguments": {"a": 1, "b": 2}}') == 3


async def test_mcs_serve_offers_the_tools_to_the_official_mcp_client(server: Running) -> None:
    mcp = pytest.importorskip("mcp", reason="the MCP SDK (mcs-framework-mcp) is not installed")
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=str(MCS), args=["serve", "graphql", "-o", f"url={server.graphql}"],
                                   env=dict(os.environ))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        names = {tool.name for tool in (await session.list_tools()).tools}
        assert {"hello", "books", "book"} <= names
        result = await session.call_tool("hello", {"name": "MCP"})
        assert not result.is_error and "Hello, MCP!" in result.content[0].text
    assert mcp is not None


@pytest.mark.parametrize(("option", "value", "message"), [
    ("retries", "-1", "retries must be a non-negative integer"),
    ("backoff", "-0.5", "backoff must be a non-negative number of seconds"),
])
def test_a_negative_retry_option_is_one_line_and_exit_2(server: Running, option: str, value: str, message: str) -> None:
    done = subprocess.run([str(MCS), "describe", "graphql", "-o", f"url={server.graphql}", "-o", f"{option}={value}"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(("option", "value"), [("retries", -1), ("backoff", -0.5), ("retries", 1.5),
                                               ("backoff", float("inf"))])
def test_the_constructor_refuses_a_negative_or_non_numeric_retry_option(server: Running, option: str,
                                                                        value: object) -> None:
    with pytest.raises(ConfigurationError, match=f"^{option} must be a non-negative"):
        GraphQLDriver(server.graphql, **{option: value})
async def test_mcs_serve_over_streamable_http_runs_a_mutation_the_server_keeps(server: Running) -> None:
    args = ["graphql", "-o", f"url={server.graphql}", "-o", "mutations=all"]
    async with served_over_http(args) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert {"hello", "books", "addBook"} <= set(tools)
        assert tools["addBook"].annotations.destructive_hint is True
        added = await session.call_tool("addBook", {"input": {"title": "Over HTTP", "author": {"name": "Ann"}}})
        assert not added.is_error and added.structured_content["addBook"]["title"] == "Over HTTP"
    assert server.state.books[-1]["title"] == "Over HTTP"
    assert server.state.authors[server.state.books[-1]["author"]]["name"] == "Ann"


async def test_mcs_serve_answers_data_nested_900_deep_with_a_tool_error_not_a_protocol_error(tmp_path: Path) -> None:
    # gql's parser reads about 990 levels; the server's own encoding of that `data` ran out
    # of stack: the client got a JSON-RPC error "maximum recursion depth exceeded ...".
    class Deep(JSONHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            body = b'{"data": {"blob": ' + b"[" * 900 + b"]" * 900 + b"}}"
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    schema = tmp_path / "schema.graphql"
    schema.write_text("scalar JSON\ntype Query { blob: JSON }\n")
    with serving_http(Deep) as url:
        async with served_over_http(["graphql", "-o", f"url={url}/graphql", "-o", f"schema={schema}"]) as session:
            answer = await session.call_tool("blob", {})
    assert answer.is_error
    assert "nested more than 128 levels deep" in answer.content[0].text
