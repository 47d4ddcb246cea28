"""`mcs serve FILE`: a gen-mcp file served as its runtime says, GENMCP_ overrides applied."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcs_mcp.serving import ServeOptions
from serving_support import HERE, MCS, mcp_client, running
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from support.servers import free_port, server_process

pytest.importorskip("mcs_mcp.mcpfile.driver", reason="the gen-mcp file driver (mcpfile) is not installed")


@pytest.fixture(scope="module")
def weather_backend() -> Iterator[str]:
    async def weather(request: Request) -> JSONResponse:
        return JSONResponse({"city": request.path_params["city"], "temperature": 18.5})

    options = ServeOptions(transport="streamablehttp", port=free_port())
    with running(Starlette(routes=[Route("/weather/{city}", weather)]), options):
        yield f"http://127.0.0.1:{options.port}"


def _file(tmp_path: Path, backend: str, runtime: dict[str, Any]) -> Path:
    data = {
        "mcpFileVersion": "0.1.0", "name": "weather", "version": "1.2.3", "runtime": runtime,
        "tools": [{
            "name": "get_weather", "description": "Weather for a city.",
            "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
            "invocation": {"http": {"method": "GET", "url": backend + "/weather/{city}"}},
        }],
    }
    path = tmp_path / "mcpfile.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(HERE), **extra}


async def test_an_http_runtime_file_is_served_on_the_port_genmcp_env_gives(
    tmp_path: Path, weather_backend: str
) -> None:
    runtime = {"transportProtocol": "streamablehttp", "streamableHttpConfig": {"port": 1, "basePath": "/tools"}}
    path = _file(tmp_path, weather_backend, runtime)
    port = free_port()
    env = _env(GENMCP_STREAMABLEHTTPCONFIG_PORT=str(port))
    with server_process([MCS, "serve", path], port, env=env, stderr=subprocess.PIPE):
        async with mcp_client(f"http://127.0.0.1:{port}/tools") as session:
            assert session.initialize_result.server_info.name == "weather"
            result = await session.call_tool("get_weather", {"city": "Paris"})
    assert result.is_error is False
    assert json.loads(result.content[0].text)["city"] == "Paris"


async def test_a_stdio_runtime_file_is_served_over_stdio(tmp_path: Path, weather_backend: str) -> None:
    path = _file(tmp_path, weather_backend, {"transportProtocol": "stdio"})
    params = StdioServerParameters(command=str(MCS), args=["serve", str(path)], env=_env())
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        assert [tool.name for tool in (await session.list_tools()).tools] == ["get_weather"]
        result = await session.call_tool("get_weather", {"city": "Tokyo"})
    assert "Tokyo" in result.content[0].text


async def test_a_served_cli_tool_keeps_a_value_after_a_here_string_as_data(tmp_path: Path) -> None:
    # The security review's input: a value on a line after a here-string ran as code through mcs serve.
    work = tmp_path / "work"
    work.mkdir()
    data = {
        "mcpFileVersion": "0.1.0", "name": "greeter", "version": "1.0.0", "runtime": {"transportProtocol": "stdio"},
        "tools": [{
            "name": "greet", "description": "Greet someone.",
            "inputSchema": {"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]},
            "invocation": {"cli": {"command": 'read -r g <<< Hello\necho "$g" {who}'}},
        }],
    }
    path = tmp_path / "mcpfile.yaml"
    path.write_text(yaml.safe_dump(data))
    params = StdioServerParameters(command=str(MCS), args=["serve", str(path)], env=_env(), cwd=str(work))
    value = "bash -c touch${IFS}M;id"
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("greet", {"who": value})
    assert result.is_error is False
    assert result.content[0].text == f"Hello {value}\n"
    assert list(work.iterdir()) == []


def _exposed_file(tmp_path: Path, backend: str) -> Path:
    city = {"type": "object", "properties": {"city": {"type": "string"}, "temperature": {"type": "number"}},
            "required": ["city"]}
    no_args = {"type": "object"}
    data = {
        "mcpFileVersion": "0.1.0", "name": "exposed", "version": "1.0.0", "runtime": {"transportProtocol": "stdio"},
        "tools": [
            {"name": "weather.get", "description": "Weather for a city.", "outputSchema": city,
             "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
             "invocation": {"http": {"method": "GET", "url": backend + "/weather/{city}"}}},
            {"name": "motd", "description": "Message of the day.", "outputSchema": city, "inputSchema": no_args,
             "invocation": {"cli": {"command": "echo hello"}}},
            {"name": "bad_city", "description": "A city of the wrong type.", "outputSchema": city,
             "inputSchema": no_args, "invocation": {"cli": {"command": "printf '\\173\"city\": 5\\175'"}}},
            {"name": "json_text", "description": "JSON as command output.", "outputSchema": city,
             "inputSchema": no_args, "invocation": {"cli": {"command": "printf '\\173\"city\": \"Oslo\"\\175'"}}},
        ],
        "prompts": [{"name": "plan", "description": "Plan a trip.", "inputSchema": no_args,
                     "arguments": [{"name": "city", "title": "City to visit", "required": True}],
                     "invocation": {"cli": {"command": "echo plan"}}}],
        "resources": [{"name": "readme", "description": "The readme.", "uri": "file:///readme", "size": 42,
                       "mimeType": "text/plain", "inputSchema": no_args,
                       "invocation": {"cli": {"command": "echo readme"}}}],
    }
    path = tmp_path / "exposed.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


async def test_mcp_file_s4_serving_a_file_exposes_the_file(tmp_path: Path, weather_backend: str) -> None:
    from mcs_mcp.mcpfile import MCPFileDriver
    from serving_support import serve_driver

    driver = MCPFileDriver(_exposed_file(tmp_path, weather_backend))
    assert {t.name for t in driver.list_tools()} >= {"weather_get", "prompt_plan", "resource_readme"}  # for LLMs
    with serve_driver(driver) as url:
        async with mcp_client(url) as session:
            tools = (await session.list_tools()).tools
            assert [t.name for t in tools] == ["weather.get", "motd", "bad_city", "json_text"]
            [argument] = (await session.list_prompts()).prompts[0].arguments or []
            assert (argument.name, argument.title, argument.required) == ("city", "City to visit", True)
            [resource] = (await session.list_resources()).resources
            assert (resource.uri, resource.size) == ("file:///readme", 42)
            weather = await session.call_tool("weather.get", {"city": "Paris"})
            assert weather.structured_content == {"city": "Paris", "temperature": 18.5}
            as_text = await session.call_tool("json_text", {})
            assert as_text.structured_content == {"city": "Oslo"}
            motd = await session.call_tool("motd", {})
            assert motd.is_error and "must be a JSON object" in motd.content[0].text
            bad = await session.call_tool("bad_city", {})
            assert bad.is_error and "does not match its outputSchema: result field 'city'" in bad.content[0].text
            assert "argument" not in bad.content[0].text


def test_mcp_file_s6_1_a_file_that_forwards_credentials_is_not_served(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mcs_mcp.mcpfile import MCPFileDriver
    from mcs_mcp.serving import build_server

    from mcs.cli import main
    from mcs.errors import ConfigurationError

    data = {
        "mcpFileVersion": "0.1.0", "name": "proxy", "version": "1.0.0", "runtime": {"transportProtocol": "stdio"},
        "tools": [{"name": "proxy", "description": "Proxy.", "inputSchema": {"type": "object"},
                   "invocation": {"http": {"method": "GET", "url": "http://127.0.0.1:9/x",
                                           "headers": {"Authorization": "{headers.Authorization}"}}}}],
    }
    path = tmp_path / "proxy.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigurationError, match="forwards callers' credentials"):
        build_server(MCPFileDriver(path, allow_credential_forwarding=True))
    assert main(["serve", str(path), "-o", "allow_credential_forwarding=true"]) == 2
    error = capsys.readouterr().err
    assert "tool 'proxy': {headers.Authorization}" in error and "token passthrough" in error


def test_mcs_serve_takes_the_programs_the_operator_trusts_as_an_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import argparse

    from mcs_mcp.serving.cli import resolve_target

    from mcs.cli import main

    data = {
        "mcpFileVersion": "0.1.0", "name": "pods", "version": "1.0.0", "runtime": {"transportProtocol": "stdio"},
        "tools": [{"name": "pods", "description": "Pods.",
                   "inputSchema": {"type": "object", "properties": {"ns": {"type": "string"}}},
                   "invocation": {"cli": {"command": "kubectl get pods -n {ns}"}}}],
    }
    path = tmp_path / "pods.yaml"
    path.write_text(yaml.safe_dump(data))
    assert main(["serve", str(path)]) == 2
    error = capsys.readouterr().err
    assert "'kubectl', which is not on the list" in error and "-o cli_trusted_programs=kubectl" in error
    driver, _ = resolve_target(argparse.Namespace(target=str(path), option=["cli_trusted_programs=kubectl"]))
    assert [t.name for t in driver.list_tools()] == ["pods"]


async def test_a_reloaded_file_sends_list_changed_and_serves_its_new_tools(
    tmp_path: Path, weather_backend: str
) -> None:
    import anyio
    import mcp_types as types
    from mcs_mcp.mcpfile.driver import MCPFileDriver
    from serving_support import serve_driver

    path = _file(tmp_path, weather_backend, {"transportProtocol": "stdio"})  # served here over HTTP anyway
    driver = MCPFileDriver(path)
    changed: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.append(message.method)

    with serve_driver(driver, stateless=False) as url:
        async with mcp_client(url, message_handler=on_message) as session:
            caps = session.server_capabilities
            assert caps is not None and caps.tools is not None and caps.tools.list_changed is True
            assert [t.name for t in (await session.list_tools()).tools] == ["get_weather"]
            data = yaml.safe_load(path.read_text())
            data["tools"].append({**data["tools"][0], "name": "get_forecast", "description": "Forecast."})
            path.write_text(yaml.safe_dump(data))
            driver.reload()
            with anyio.fail_after(10):
                while not changed:
                    await anyio.sleep(0.01)
            names = [t.name for t in (await session.list_tools()).tools]
            result = await session.call_tool("get_forecast", {"city": "Oslo"})
    assert names == ["get_weather", "get_forecast"]
    assert "Oslo" in result.content[0].text
    driver.close()


def test_a_file_that_is_now_refused_leaves_the_driver_as_it_was(tmp_path: Path, weather_backend: str) -> None:
    from mcs_mcp.mcpfile.driver import MCPFileDriver

    from mcs.errors import ConfigurationError

    path = _file(tmp_path, weather_backend, {"transportProtocol": "stdio"})
    driver = MCPFileDriver(path)
    path.write_text("mcpFileVersion: 0.1.0\nname: broken\ntools: 3\n")
    with pytest.raises(ConfigurationError):
        driver.reload()
    assert [t.name for t in driver.list_tools()] == ["get_weather"]
    driver.close()
