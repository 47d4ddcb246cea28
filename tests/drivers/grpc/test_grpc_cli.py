"""The gRPC driver on the command line and served over MCP, and `make demo-grpc`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from grpc_servers import LAB_PROTO, Running
from mcs_grpc import demo
from support.mcp_http import served_over_http

from mcs.cli import main


def test_describe_prints_the_tools_from_a_proto(capsys) -> None:
    assert main(["describe", "grpc", "-o", f"proto={LAB_PROTO}", "-o", "description_mode=inline"]) == 0
    out = capsys.readouterr().out
    assert "Lab_Echo" in out and "Lab_Ticks" in out


def test_call_runs_the_llm_response_against_the_server(capsys, lab: Running) -> None:
    code = main(["call", "grpc", "-o", f"target={lab.target}", "-o", "include_defaults=false",
                 "--response", '{"tool": "Lab_Echo", "arguments": {"text": "cli", "big": 3}}'])
    assert code == 0
    assert json.loads(capsys.readouterr().out) == {"text": "cli", "big": "3"}


def test_call_prints_a_grpc_error_as_execution_error(capsys, lab: Running) -> None:
    code = main(["call", "grpc", "-o", f"target={lab.target}",
                 "--response", '{"tool": "Lab_Fail", "arguments": {"code": "NOT_FOUND"}}'])
    assert code == 1
    assert json.loads(capsys.readouterr().out)["error"] == "EXECUTION_ERROR"


def test_prompt_holds_the_tools_in_the_chosen_model_familys_format(capsys) -> None:
    assert main(["prompt", "grpc", "-o", f"proto={LAB_PROTO}", "-o", 'methods=["Echo", "Ticks"]',
                 "--model", "gpt-4o"]) == 0
    out = capsys.readouterr().out
    assert "namespace functions {" in out and '{"tool": "tool_name", "arguments"' in out
    assert "type Lab_Echo = (_: {" in out and "type Lab_Ticks = (_: {" in out and "Lab_Fail" not in out


@pytest.mark.parametrize("options", [["-o", "proto=missing.proto"], ["-o", "colour=red"], []])
def test_bad_options_give_one_line_and_exit_2(capsys, options: list[str]) -> None:
    assert main(["describe", "grpc", *options]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err


def test_a_toolbox_file_holds_the_grpc_driver_beside_another(tmp_path: Path, capsys, lab: Running) -> None:
    config = tmp_path / "toolbox.yaml"
    config.write_text(
        f"drivers:\n  lab:\n    driver: grpc\n    options:\n      target: '{lab.target}'\n"
        f"      methods: [Echo]\n      include_defaults: false\n  local:\n    driver: functions\n"
    )
    code = main(["call", "--config", str(config), "--response", '{"tool": "Lab_Echo", "arguments": {"text": "box"}}'])
    assert code == 0, capsys.readouterr().err
    assert json.loads(capsys.readouterr().out) == {"text": "box"}


async def test_mcs_serve_exposes_the_driver_to_the_official_mcp_client(lab: Running) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    mcs = Path(sys.executable).with_name("mcs")
    params = StdioServerParameters(command=str(mcs), args=[
        "serve", "grpc", "-o", f"target={lab.target}", "-o", "methods=[\"Echo\", \"Fail\"]",
        "-o", "include_defaults=false"])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = {tool.name for tool in (await session.list_tools()).tools}
        assert listed == {"Lab_Echo", "Lab_Fail"}
        result = await session.call_tool("Lab_Echo", {"text": "over mcp"})
        assert result.structured_content == {"text": "over mcp"}
        failed = await session.call_tool("Lab_Fail", {"code": "PERMISSION_DENIED", "details": "no"})
        assert failed.is_error and "PERMISSION_DENIED" in failed.content[0].text


async def test_mcs_serve_over_streamable_http_calls_the_server(lab: Running) -> None:
    args = ["grpc", "-o", f"target={lab.target}", "-o", 'methods=["Echo"]', "-o", "include_defaults=false",
            "-o", 'metadata={"x-caller": "http-face"}']
    async with served_over_http(args) as session:
        assert [tool.name for tool in (await session.list_tools()).tools] == ["Lab_Echo"]
        result = await session.call_tool("Lab_Echo", {"text": "over http", "big": 7})
        assert not result.is_error and result.structured_content == {"text": "over http", "big": "7"}
    assert lab.state.calls["Echo"] == 1
    assert lab.state.metadata[-1]["x-caller"] == "http-face"


def test_the_demo_makes_real_calls_and_prints_their_results(capsys) -> None:
    demo.main()
    out = capsys.readouterr().out
    assert "== System prompt for gpt-4o ==" in out and "Weather_GetForecast" in out
    results = out.split("== Result of the real gRPC call ==\n")[1:]
    assert len(results) == 2
    forecast = json.loads(results[0].split("\n\n")[0])
    assert forecast["city"] == "Paris" and [d["offset"] for d in forecast["days"]] == [1, 2]
    streamed = json.loads(results[1].split("\n\n")[0])
    assert [d["offset"] for d in streamed["messages"]] == [1, 2, 3]


def test_a_toolbox_file_reads_proto_include_paths_from_its_own_folder(tmp_path: Path) -> None:
    import mcs

    (tmp_path / "protos" / "lib").mkdir(parents=True)
    (tmp_path / "protos" / "lib" / "common.proto").write_text(
        'syntax = "proto3";\npackage lib;\nmessage Name { string value = 1; }\n')
    (tmp_path / "protos" / "greeter.proto").write_text(
        'syntax = "proto3";\npackage demo;\nimport "lib/common.proto";\n'
        "service Greeter { rpc Hello (lib.Name) returns (lib.Name); }\n")
    config = tmp_path / "toolbox.yaml"
    config.write_text("drivers:\n  greet:\n    driver: grpc\n    proto: protos/greeter.proto\n"
                      "    include_paths: [protos]\n    target: '127.0.0.1:1'\n")
    with mcs.Toolbox.from_config(config) as box:
        assert [tool.name for tool in box.list_tools()] == ["Greeter_Hello"]
