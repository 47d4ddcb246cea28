"""`mcs serve` as a user runs it: a real process, a real SDK client over stdio or HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from serving_support import HERE, MCS, mcp_client
from support.servers import free_port, server_process


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.update(extra)
    return env


def _stdio(*args: str) -> StdioServerParameters:
    return StdioServerParameters(command=str(MCS), args=["serve", *args], env=_env())


async def test_stdio_serves_a_driver_to_the_sdk_client() -> None:
    params = _stdio("serving_helpers:SampleDriver")
    async with stdio_client(params) as (read, write), ClientSession(
        read, write, client_info=types.Implementation(name="claude-desktop", version="1")
    ) as session:
        await session.initialize()
        names = [tool.name for tool in (await session.list_tools()).tools]
        assert "echo" in names and "admin_reset" in names  # no OAuth over stdio: nothing hidden
        assert (await session.call_tool("add", {"a": 1, "b": 2})).structured_content == {"sum": 3}
        failed = await session.call_tool("fail", {})
        assert failed.is_error and "refused" in failed.content[0].text
        whoami = await session.call_tool("whoami", {})
        assert whoami.structured_content["agent_id"] == "claude-desktop"
        with pytest.raises(MCPError):
            await session.call_tool("missing", {})
        prompt = await session.get_prompt("test_simple_prompt")
        assert prompt.messages[0].content.text == "This is a simple prompt for testing."


async def test_stdio_serves_a_registered_driver_by_name() -> None:
    async with stdio_client(_stdio("functions")) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("get_weather", {"city": "Paris"})
    assert result.structured_content["sky"] == "light rain"


@pytest.fixture
def http_process(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    port = free_port()
    log_file = tmp_path / "serve.log"
    serve = [MCS, "serve", "serving_helpers:SampleDriver", "--transport", "http", "--port", str(port),
             "-s", "log_encoding=json", "-s", f"log_output={log_file}", "-s", "log_level=info"]
    with server_process(serve, port, env=_env(), stderr=subprocess.PIPE):
        yield f"http://127.0.0.1:{port}/mcp", log_file


async def test_http_serving_from_the_command_line_logs_json_lines(http_process: tuple[str, Path]) -> None:
    url, log_file = http_process
    async with mcp_client(url) as session:
        assert (await session.call_tool("echo", {"text": "over http"})).content[0].text == "over http"
    records = [json.loads(line) for line in log_file.read_text().splitlines() if line.strip()]
    assert any(r["logger"] == "mcs_mcp.serving" and "tools/call echo" in r["msg"] for r in records)
    assert all({"ts", "level", "logger", "msg"} <= set(r) for r in records)


@pytest.mark.parametrize(
    ("args", "code", "text"),
    [
        (["no_such_driver_xyz"], 2, "no MCS driver named"),
        (["functions", "--transport", "websocket"], 2, "not websocket"),
        (["functions", "-s", "bogus=1"], 2, "unknown serving option"),
        (["functions", "-s", "tls_cert=/x.pem"], 2, "both"),
        ([], 2, "name a driver"),
    ],
)
def test_bad_invocations_exit_with_a_clear_message(args: list[str], code: int, text: str) -> None:
    done = subprocess.run([str(MCS), "serve", *args], env=_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == code
    assert text in done.stderr


def test_a_yaml_that_is_not_an_mcp_file_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "drivers.yaml"
    other.write_text("drivers:\n  - functions\n")
    done = subprocess.run([str(MCS), "serve", str(other)], env=_env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "not an MCP file" in done.stderr


def test_python_runs_the_same_backend() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mcs.cli", "serve", "functions", "--transport", "websocket"],
        env=_env(), capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 2


async def test_a_toolbox_config_serves_several_drivers_as_one_server(tmp_path: Path) -> None:
    config = tmp_path / "toolbox.yaml"
    config.write_text("drivers:\n  north: {driver: functions}\n  south: {driver: functions}\n")
    params = StdioServerParameters(command=str(MCS), args=["serve", "-c", str(config)], env=_env())
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        names = {tool.name for tool in (await session.list_tools()).tools}
        assert {"north_get_weather", "south_get_weather", "north_add", "south_add"} <= names
        result = await session.call_tool("south_add", {"a": 1.5, "b": 2})
    assert result.content[0].text == "3.5"


async def _served_identity(tmp_path: Path, *args: str) -> tuple[types.Implementation, str]:
    """What ``mcs serve ARGS`` over stdio tells a client it is, and what it printed on stderr."""
    stderr = tmp_path / "stderr.txt"
    with stderr.open("w") as errlog:
        async with stdio_client(_stdio(*args), errlog=errlog) as (read, write), ClientSession(read, write) as session:
            initialized = await session.initialize()
    return initialized.server_info, stderr.read_text()


async def test_a_served_driver_goes_by_its_own_name_and_says_what_it_serves(tmp_path: Path) -> None:
    info, stderr = await _served_identity(tmp_path, "functions")
    assert (info.name, info.version) == ("functions", "0.1.0")
    assert stderr.splitlines() == ["mcs: serving 'functions' (2 tools) as an MCP server over stdio"]
    renamed, _ = await _served_identity(tmp_path, "functions", "-o", "name=weather")
    assert renamed.name == "weather"


async def test_a_served_toolbox_or_mcp_file_goes_by_the_files_name(tmp_path: Path) -> None:
    config = tmp_path / "household.yaml"
    config.write_text("drivers:\n  math: {driver: functions}\n")
    info, _ = await _served_identity(tmp_path, "-c", str(config))
    assert info.name == "household"
    mcp_file = tmp_path / "tools.yaml"
    mcp_file.write_text(
        "mcpFileVersion: 0.1.0\nname: greeter-tools\nversion: 2.0.0\nruntime: {transportProtocol: stdio}\n"
        "tools:\n  - name: hello\n    description: Say hello.\n"
        "    inputSchema: {type: object, properties: {}}\n    invocation: {cli: {command: echo hello}}\n"
    )
    info, stderr = await _served_identity(tmp_path, str(mcp_file))
    assert (info.name, info.version) == ("greeter-tools", "2.0.0")
    assert "mcs: serving 'greeter-tools' (1 tool) as an MCP server over stdio" in stderr


async def test_stdio_serves_a_module_of_tool_functions_with_an_extension() -> None:
    params = _stdio("conformance_server", "--extension", "serving_extension:install")
    received: list[str] = []

    async def on_elicit(context: object, params: types.ElicitRequestParams) -> types.ElicitResult:
        received.append(params.message)
        return types.ElicitResult(action="accept", content={"username": "ada", "email": "a@example.test"})

    async with stdio_client(params) as (read, write), ClientSession(
        read, write, elicitation_callback=on_elicit
    ) as session:
        started = await session.initialize()
        assert started.instructions == "extended: conformance_server"
        assert started.capabilities.tools is not None and started.capabilities.tools.list_changed is True
        assert started.capabilities.completions is not None
        names = {tool.name for tool in (await session.list_tools()).tools}
        assert {"test_simple_text", "test_elicitation", "json_schema_2020_12_tool"} <= names
        elicited = await session.call_tool("test_elicitation", {"message": "Who?"})  # stdio has a session
    assert received == ["Who?"] and elicited.is_error is False


def test_a_bad_extension_or_resumable_without_sessions_is_a_usage_error() -> None:
    bad = subprocess.run([str(MCS), "serve", "conformance_server", "--extension", "nocolon"],
                         capture_output=True, text=True, env=_env(), timeout=60)
    assert bad.returncode == 2 and "module:function" in bad.stderr
    stateless = subprocess.run([str(MCS), "serve", "conformance_server", "--transport", "http", "-s", "resumable=true"],
                               capture_output=True, text=True, env=_env(), timeout=60)
    assert stateless.returncode == 2 and "stateful=true" in stateless.stderr
