"""SECURITY.md A1-A6, and the review's finding 1, through the whole chain: a gen-mcp file
served by ``mcs serve`` over stdio, called by the MCP bridge driver, run by real bash.

Each value is hostile; each case asserts the error (or the literal argv) and that no
marker file appeared in the server's working folder. The in-process driver's own tests
(tests/drivers/mcp/mcpfile) hold the position rules one by one; this module checks that
serving changes none of it.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from mcs_mcp.client_driver import MCPDriver
from mcs_mcp.mcpfile.driver import MCPFileDriver
from support.processes import assert_process_gone
from support.security_cases import (
    A1_VALUES,
    A2_VALUES,
    A3_VALUES,
    FINDING1_SAFE_COMMANDS,
    HOSTILE_SHELL_VALUES,
)

from mcs.errors import ConfigurationError, ToolCallError

MCS = Path(sys.executable).with_name("mcs")
STRING = {"type": "string"}


def _tool(name: str, command: str, properties: dict[str, Any], required: list[str] | None = None,
          variables: dict[str, Any] | None = None) -> dict[str, Any]:
    cli: dict[str, Any] = {"command": command}
    if variables:
        cli["templateVariables"] = variables
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return {"name": name, "description": name, "inputSchema": schema, "invocation": {"cli": cli}}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[MCPDriver, Path]]:
    """The bridge driver connected to ``mcs serve`` over stdio, and the server's working folder."""
    folder = tmp_path_factory.mktemp("served")
    work = folder / "work"
    work.mkdir()
    argv = folder / "argv.py"
    argv.write_text("import json, sys\nprint(json.dumps(sys.argv[1:]))\n")
    record = f"'{sys.executable}' '{argv}'"
    git_props = {"repoUrl": STRING, "depth": {"type": "integer", "minimum": 1, "maximum": 1000}}
    tools = [
        _tool("git", f"touch spawned; {record} clone {{repoUrl}} {{depth}}", git_props, ["repoUrl"],
              {"depth": {"format": "--depth {depth}"}}),
        _tool("runaway", "sleep 600 & echo $! > child.pid; wait", {}),
        _tool("flood", "head -c 1073741824 /dev/zero | tr '\\0' y", {}),
    ]
    for index, (command, _) in enumerate(FINDING1_SAFE_COMMANDS):
        tools.append(_tool(f"safe{index}", command, {"x": STRING}, ["x"]))
    data = {"mcpFileVersion": "0.1.0", "name": "cli-security", "version": "1", "tools": tools,
            "runtime": {"transportProtocol": "stdio"}}
    path = folder / "mcpfile.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    env = {k: v for k, v in os.environ.items() if not k.startswith("GENMCP_")}
    with open(os.devnull, "w") as quiet:
        # The argv recorder is python, off the allow-list: the operator trusts it, as `mcs serve -o` lets them.
        # `runaway` takes no value, but its file's other tools do, so its `sleep` is held to the list too.
        driver = MCPDriver(command=str(MCS), args=["serve", str(path), "-o", "timeout=1",
                                                   "-o", "max_output_bytes=65536",
                                                   "-o", f"cli_trusted_programs={sys.executable},sleep"],
                           env=env, cwd=str(work), timeout=20, stderr=quiet)
        try:
            yield driver, work
        finally:
            driver.close()


@pytest.fixture
def work(served: tuple[MCPDriver, Path]) -> Path:
    folder = served[1]
    for item in folder.iterdir():
        item.unlink()
    return folder


def _markers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name not in ("child.pid",))


# ----------------------------------------------------------------------------- A1


@pytest.mark.parametrize("value", A1_VALUES)
def test_a1_shell_metacharacters_reach_argv_literally(served: tuple[MCPDriver, Path], work: Path, value: str) -> None:
    driver, _ = served
    argv = json.loads(driver.call_tool("git", {"repoUrl": value, "depth": 1}))
    assert argv == ["clone", value, "--depth", "1"]
    assert _markers(work) == ["spawned"]  # only the command's own file: no MARKER, no redirection


# ----------------------------------------------------------------------------- A2


@pytest.mark.parametrize("arguments", A2_VALUES)
def test_a2_option_injection_is_refused_before_anything_runs(served: tuple[MCPDriver, Path], work: Path,
                                                             arguments: dict[str, Any]) -> None:
    driver, _ = served
    with pytest.raises(ToolCallError) as info:
        driver.call_tool("git", arguments)
    field = "depth" if "depth" in arguments and str(arguments["depth"]).startswith("-") else "repoUrl"
    assert f"'{field}'" in info.value.message
    assert _markers(work) == []  # not even the command's own first line ran


# ----------------------------------------------------------------------------- A3


@pytest.mark.parametrize(("arguments", "field"), A3_VALUES)
def test_a3_type_range_and_control_characters_are_refused_naming_the_field(
        served: tuple[MCPDriver, Path], work: Path, arguments: dict[str, Any], field: str) -> None:
    driver, _ = served
    with pytest.raises(ToolCallError) as info:
        driver.call_tool("git", arguments)
    assert field in info.value.message
    assert _markers(work) == []


# ----------------------------------------------------------------------------- A4


def test_a4_unknown_arguments_never_become_flags_or_variables(served: tuple[MCPDriver, Path], work: Path) -> None:
    driver, _ = served
    with pytest.raises(ToolCallError, match="unexpected argument"):
        driver.call_tool("git", {"repoUrl": "r", "config": "/evil", "exec": "rm -rf /"})
    assert _markers(work) == []


# ----------------------------------------------------------------------------- A5


@pytest.mark.parametrize("template", ["{headers.Authorization}", "{headers.Cookie}", "{headers.proxy-authorization}"])
def test_a5_a_template_reading_inbound_credentials_is_refused_at_load(tmp_path: Path, template: str) -> None:
    data = {"mcpFileVersion": "0.1.0", "name": "leak", "version": "1",
            "tools": [_tool("leak", f"curl -H 'X: {template}' http://127.0.0.1:9/", {})]}
    path = tmp_path / "leak.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigurationError, match="credentials") as info:
        MCPFileDriver(path, cli_trusted_programs=["curl"])  # curl is off the allow-list; trusted, still refused
    assert "leak.yaml" in str(info.value)


# ----------------------------------------------------------------------------- A6


def test_a6_a_runaway_command_is_killed_with_its_process_group_at_the_deadline(
        served: tuple[MCPDriver, Path], work: Path) -> None:
    driver, _ = served
    started = time.monotonic()
    with pytest.raises(ToolCallError, match=r"(within|timed out after) 1 s"):
        driver.call_tool("runaway", {})
    assert time.monotonic() - started < 5
    assert_process_gone(int((work / "child.pid").read_text()))  # the background sleep went with its group


def test_a6_endless_output_is_capped_with_a_marker(served: tuple[MCPDriver, Path], work: Path) -> None:
    driver, _ = served
    text = driver.call_tool("flood", {})
    assert text.startswith("y" * 1000) and "[truncated: the output exceeded 65536 bytes" in text
    assert len(text) < 65536 + 300


async def test_a6_capped_output_ends_the_call_even_without_a_deadline(tmp_path: Path) -> None:
    """The cap alone stops a flood: with output left unread in a full buffer, asyncio's
    ``wait()`` never returned (a call in five hung until its deadline, or for ever)."""
    import asyncio

    data = {"mcpFileVersion": "0.1.0", "name": "flood", "version": "1",
            "tools": [_tool("flood", "head -c 1073741824 /dev/zero | tr '\\0' y", {})]}
    path = tmp_path / "flood.yaml"
    path.write_text(yaml.safe_dump(data))
    driver = MCPFileDriver(path, timeout=None, max_output_bytes=65536)
    try:
        for _ in range(20):
            text = await asyncio.wait_for(driver.acall_tool("flood", {}), 10)
            assert text.startswith("y" * 1000) and "[truncated: the output exceeded 65536 bytes" in text
    finally:
        driver.close()


# ----------------------------------------------------------------------------- finding 1


@pytest.mark.parametrize("value", HOSTILE_SHELL_VALUES)
@pytest.mark.parametrize("index", range(len(FINDING1_SAFE_COMMANDS)))
def test_finding1_values_in_safe_positions_stay_data_through_mcs_serve(
        served: tuple[MCPDriver, Path], work: Path, index: int, value: str) -> None:
    driver, _ = served
    expected = FINDING1_SAFE_COMMANDS[index][1].replace("{v}", value)
    assert driver.call_tool(f"safe{index}", {"x": value}) == expected
    assert _markers(work) == []


# The review's own inputs for finding 1, each after a here-string line that the old lexer
# misread: (the line, what the refusal names). The driver's tests hold the full table.
FINDING1_UNSAFE_LINES = [
    ("exec {x} F", "exec"), ("VAR=x {x} arg", "program name"), ("if true; then {x}; fi", "program name"),
    ("for i in 1; do {x}; done", "program name"), ("! {x}", "program name"), ("time {x}", "time"),
    ("[[ {x} -eq 5 ]]", "[[ ... ]]"), ('let "y={x}+1"', "let"), ("declare -i v={x}", "declare"),
    ("printf -v {x} hi", "printf with -v"), ("test -v {x}", "test with -v"), ("read -r {x}", "read"),
    ("a[{x}]=1", "array subscript"), ('bash -lc "echo {x}"', "bash"), ('sh -ec "echo {x}"', "sh"),
    ("eval echo {x}", "eval"), ("env FOO=1 ls {x}", "env"), ("echo a | xargs rm {x}", "xargs"),
    ("sudo ls {x}", "sudo"), ("nohup ./server --port {x} &", "nohup"),
]


@pytest.mark.parametrize(("line", "position"), FINDING1_UNSAFE_LINES, ids=[line for line, _ in FINDING1_UNSAFE_LINES])
def test_finding1_unsafe_positions_are_refused_when_the_file_is_loaded(tmp_path: Path, line: str,
                                                                       position: str) -> None:
    data = {"mcpFileVersion": "0.1.0", "name": "unsafe", "version": "1",
            "tools": [_tool("t", "read -r g <<< Hello\n" + line, {"x": STRING})]}
    path = tmp_path / "unsafe.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigurationError) as info:
        MCPFileDriver(path)
    assert "line 2" in str(info.value) and position in str(info.value)


def test_finding1_a_negative_number_is_refused_like_any_option(tmp_path: Path) -> None:
    data = {"mcpFileVersion": "0.1.0", "name": "signals", "version": "1",
            "tools": [_tool("signal", "kill -s TERM {pid}", {"pid": {"type": "integer"}}, ["pid"])]}
    path = tmp_path / "signals.yaml"
    path.write_text(yaml.safe_dump(data))
    driver = MCPFileDriver(path)
    try:
        with pytest.raises(ToolCallError, match="must not start with '-'"):
            driver.call_tool("signal", {"pid": -1})  # kill -s TERM -1 would signal every process
    finally:
        driver.close()
