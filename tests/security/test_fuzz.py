"""Fuzzing with hypothesis: the parser and pipeline, the gen-mcp loader and its command
checker, the OpenAPI loader, the MCP server's HTTP endpoint and the RFC-0001 wire protocol.

Each fuzzer states a security property, not just "does not crash". The number of examples
is bounded for CI (``MCS_FUZZ_EXAMPLES``, default 40 each) so the module stays within
seconds; run with a larger number to fuzz longer. No failure is tolerated.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.security_cases import HOSTILE_SHELL_VALUES

from mcs.errors import ConfigurationError, InvalidInputError, ToolCallError
from mcs.functions import FunctionDriver
from mcs.server.frames import read_frame
from mcs.server.wire import context_from_headers, decode_json, parse_execute
from mcs.validation import compile_validator

EXAMPLES = int(os.environ.get("MCS_FUZZ_EXAMPLES", "40"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
#: Over a real socket each example is a request: half as many, the same strategies.
FUZZ_HTTP = settings(FUZZ, max_examples=max(10, EXAMPLES // 2))

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


# ----------------------------------------------------------------------------- the parser and pipeline

CALL_FRAGMENTS = [
    '{"tool": "add", "arguments": {"a": 1, "b": 2}}', '{"tool": "greet", "arguments": {"name": "x"}}',
    '{"name": "add", "parameters": {"a": "1", "b": "x"}}', "add(a=1, b=2)", "greet(name='x')", "<tool_call>",
    "</tool_call>", "```json\n", "```", "[", "]", "{", "}", ",", '"a": ', "1e309", '"b": -1', "[TOOL_CALLS]",
    '{"tool": "add", "arguments": {"a": 1, "b": 2, "exec": "rm -rf /"}}', "\n", " ", "I won't call ",
    '{"tool": "rm", "arguments": {}}', '"arguments": "{\\"a\\": 1}"',
]
model_output = st.lists(st.one_of(st.sampled_from(CALL_FRAGMENTS), st.text(max_size=6)), max_size=30).map("".join)


@FUZZ
@given(output=model_output)
def test_fuzz_any_model_output_runs_only_validated_calls_to_known_tools(output: str) -> None:
    ran: list[tuple[str, dict[str, Any]]] = []

    def add(a: int, b: int) -> int:
        """Add."""
        ran.append(("add", {"a": a, "b": b}))
        return a + b

    def greet(name: str) -> str:
        """Greet."""
        ran.append(("greet", {"name": name}))
        return name

    driver = FunctionDriver([add, greet], name="fuzz")
    outcomes = driver.run_llm_response(output)  # never raises
    assert len(ran) <= driver.max_calls_per_response
    for tool, arguments in ran:
        if tool == "add":
            assert set(arguments) == {"a", "b"} and all(type(v) is int for v in arguments.values())
        else:
            assert set(arguments) == {"name"} and isinstance(arguments["name"], str)
    assert len([o for o in outcomes if o.ok]) == len(ran)


# ----------------------------------------------------------------------------- gen-mcp loader + checker

SHELL_FRAGMENTS = [
    "{x}", '"{x}"', "'{x}'", "echo ", "printf '%s' ", "cat ", "tr a b", " | ", "; ", " && ", " || ", "\n",
    "read -r v <<< ", "<<EOF\n", "\nEOF\n", "if true; then ", "; fi", "for i in 1 2; do ", "; done", "$(", ")",
    "`", "[[ ", " ]]", "(( ", " ))", "v=", "$v", '"$v"', "${v}", "exec ", "eval ", "bash -c ", "sh -c ",
    "! ", "time ", "declare -i w=", "let ", "a[", "]=1", "case ", " in ", ") ;; esac", "# ", " > out", " 2>&1",
    "wc -c", "env ", "xargs ", "$((", "))", "local ", "test -v ", "-- ",
]
commands = st.lists(st.sampled_from(SHELL_FRAGMENTS), min_size=1, max_size=14).map("".join)


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz-cli")


@FUZZ
@given(command=commands, value=st.sampled_from(HOSTILE_SHELL_VALUES))
def test_fuzz_the_command_checker_refuses_at_load_or_keeps_every_value_data(
        fuzz_dir: Path, command: str, value: str) -> None:
    from mcs_mcp.mcpfile.driver import MCPFileDriver

    work = fuzz_dir / "work"
    work.mkdir(exist_ok=True)
    data = {"mcpFileVersion": "0.1.0", "name": "fuzz", "version": "1", "tools": [{
        "name": "t", "description": "t", "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}},
        "invocation": {"cli": {"command": command}}}]}
    path = fuzz_dir / "fuzz.yaml"
    path.write_text(yaml.safe_dump(data))
    try:
        driver = MCPFileDriver(path, cli_cwd=work, timeout=2, max_output_bytes=4096)
    except ConfigurationError as error:
        assert "fuzz.yaml" in str(error)  # refused, naming the file
        return
    with driver, contextlib.suppress(ToolCallError):  # the script may fail: what matters is what it did not do
        driver.call_tool("t", {"x": value})
    assert not (work / "MARKER").exists(), f"the value ran as code in {command!r}"


# ----------------------------------------------------------------------------- OpenAPI loader

spec_keys = st.sampled_from(["openapi", "swagger", "info", "paths", "components", "schemas", "parameters",
                             "$ref", "get", "post", "operationId", "requestBody", "content", "schema",
                             "type", "properties", "items", "in", "name", "required", "allOf", "oneOf",
                             "responses", "servers", "url", "definitions", "/x/{id}", "#/components/schemas/A"])
spec_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2) | st.sampled_from(["3.0.3", "2.0", "object", "string", "path",
                                                                      "query", "#/components/schemas/A",
                                                                      "#/definitions/A", "../../etc/passwd", "id"]),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(spec_keys, children, max_size=5),
    max_leaves=30,
)


@FUZZ
@given(spec=st.dictionaries(spec_keys, spec_values, max_size=6))
def test_fuzz_the_openapi_loader_loads_or_refuses_clearly_and_what_loads_compiles(spec: dict[str, Any]) -> None:
    from mcs_rest import RestDriver

    try:
        driver = RestDriver(spec, base_url="http://127.0.0.1:9")
    except ConfigurationError:
        return
    with driver:
        for tool in driver.list_tools():
            compile_validator(tool.input_schema, tool=tool.name)  # every advertised schema is usable


# ----------------------------------------------------------------------------- MCP HTTP endpoint

jsonrpc_messages = st.fixed_dictionaries(
    {"jsonrpc": st.sampled_from(["2.0", "1.0", 2]), "id": st.one_of(st.integers(), st.text(max_size=4), st.none()),
     "method": st.sampled_from(["tools/call", "tools/list", "initialize", "resources/read", "prompts/get",
                                "ping", "x/unknown", ""]),
     "params": json_values},
)
bodies = st.one_of(
    jsonrpc_messages.map(lambda m: json.dumps(m).encode()),
    st.lists(jsonrpc_messages, max_size=3).map(lambda m: json.dumps(m).encode()),
    st.binary(max_size=64),
    json_values.map(lambda v: json.dumps(v).encode()),
)
versions = st.sampled_from(["2025-06-18", "2025-03-26", "1999-01-01", "", "x" * 300, "2025-06-18, 2025-03-26"])


@FUZZ_HTTP
@given(body=bodies, version=versions, content_type=st.sampled_from(["application/json", "text/plain", ""]))
def test_fuzz_the_mcp_endpoint_answers_anything_without_a_server_error(
        mcp_sample_url: str, body: bytes, version: str, content_type: str) -> None:
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": version}
    if content_type:
        headers["Content-Type"] = content_type
    response = httpx.post(mcp_sample_url, content=body, headers=headers, timeout=10)
    assert response.status_code < 500, (response.status_code, response.text[:200])


def test_fuzz_the_mcp_endpoint_still_serves_after_the_fuzzing(mcp_sample_url: str) -> None:
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "ok"}}}
    response = httpx.post(mcp_sample_url, json=call, headers={"Accept": "application/json, text/event-stream",
                                                              "MCP-Protocol-Version": "2025-06-18"}, timeout=10)
    assert response.status_code == 200 and "ok" in response.text


# ----------------------------------------------------------------------------- RFC-0001 wire protocol

header_names = st.sampled_from(["X-Agent-Id", "X-Request-Id", "X-Model", "X-Agent-Metadata", "Content-Type"])


@FUZZ
@given(body=st.one_of(st.binary(max_size=80), json_values.map(lambda v: json.dumps(v).encode())),
       headers=st.dictionaries(header_names, st.text(max_size=20), max_size=4))
def test_fuzz_the_rfc0001_wire_refuses_malformed_input_as_invalid_input_only(body: bytes,
                                                                           headers: dict[str, str]) -> None:
    with contextlib.suppress(InvalidInputError):  # anything else escaping is a failure
        parse_execute(decode_json(body))
    with contextlib.suppress(InvalidInputError):
        context_from_headers(headers)
    frame = read_frame(body, 4096)
    if isinstance(frame, str):  # an error frame: JSON with the RFC's error shape
        assert json.loads(frame)["body"]["error"] == "INVALID_INPUT"


@pytest.fixture(scope="module")
def rfc0001_url() -> Iterator[str]:
    import uvicorn
    from pydantic import BaseModel
    from support.servers import uvicorn_on_loopback

    from mcs.server import McpServer

    class In(BaseModel):
        text: str

    class Out(BaseModel):
        text: str

    server = McpServer(name="fuzz", version="1")

    @server.tool(name="echo")
    def echo(req: In) -> Out:
        return Out(text=req.text)

    config = uvicorn.Config(server.asgi_app(), log_level="critical", lifespan="off")
    with uvicorn_on_loopback(config) as url:
        yield url
    server.close()


@FUZZ_HTTP
@given(body=st.one_of(st.binary(max_size=80), json_values.map(lambda v: json.dumps(v).encode()),
                      st.fixed_dictionaries({"tool": st.sampled_from(["echo", "nope", ""]),
                                             "arguments": json_values}).map(lambda v: json.dumps(v).encode())),
       headers=st.dictionaries(header_names, st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126),
                                                     max_size=20).filter(lambda v: v == v.strip()), max_size=4))
def test_fuzz_the_rfc0001_server_answers_json_errors_never_a_5xx(rfc0001_url: str, body: bytes,
                                                                headers: dict[str, str]) -> None:
    response = httpx.post(rfc0001_url + "/mcp/execute", content=body,
                          headers={"Content-Type": "application/json", **headers}, timeout=10)
    assert response.status_code < 500
    answer = response.json()
    assert ("result" in answer) if response.status_code == 200 else answer["error"] in (
        "INVALID_INPUT", "TOOL_NOT_FOUND", "POLICY_DENIED")
