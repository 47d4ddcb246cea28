"""The CAN driver's faces: `mcs describe|prompt|call can`, a toolbox, and `mcs serve` over stdio to
the official MCP SDK client, with the ECU and the bus in the serving process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from can_support import CRUISE, DEMO_DBC, drain
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from mcs.cli import main
from mcs.toolbox import Toolbox

HERE = Path(__file__).resolve().parent
MCS = Path(sys.executable).with_name("mcs")


def _options(channel: str, *extra: str) -> list[str]:
    return ["-o", f"dbc={DEMO_DBC}", "-o", f"channel={channel}", *extra]


def test_describe_lists_the_send_tool_of_an_allowed_message(capsys, channel) -> None:
    assert main(["describe", "can", *_options(channel, "-o", 'allow_send=["CruiseCommand"]')]) == 0
    out = capsys.readouterr().out
    assert "send_CruiseCommand" in out and "TargetSpeed" in out and "send_SteeringTorque" not in out


def test_describe_in_mcp_format_carries_the_annotations(capsys, channel) -> None:
    assert main(["describe", "can", "--format", "mcp", *_options(channel, "-o", 'allow_send=["CruiseCommand"]')]) == 0
    tools = {t["name"]: t for t in json.loads(capsys.readouterr().out)}
    assert tools["send_CruiseCommand"]["annotations"]["destructiveHint"] is True
    assert tools["read"]["annotations"]["readOnlyHint"] is True


def test_prompt_names_the_tools(capsys, channel) -> None:
    assert main(["prompt", "can", "--model", "claude-3-5-sonnet", *_options(channel)]) == 0
    assert "monitor" in capsys.readouterr().out


def test_call_a_send_from_the_command_line_is_refused_as_not_armed(capsys, channel, sniffer) -> None:
    response = json.dumps({"tool": "send_CruiseCommand", "arguments": CRUISE})
    assert main(["call", "can", *_options(channel, "-o", 'allow_send=["CruiseCommand"]'), "-r", response]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["error"] == "POLICY_DENIED" and "not armed" in out["message"]
    assert drain(sniffer) == []


def test_call_a_dry_run_prints_the_frame(capsys, channel) -> None:
    response = json.dumps({"tool": "send_CruiseCommand", "arguments": {**CRUISE, "dry_run": True}})
    assert main(["call", "can", *_options(channel, "-o", 'allow_send=["CruiseCommand"]'), "-r", response]) == 0
    assert json.loads(capsys.readouterr().out)["frame"]["data_hex"] == "5002f401"


@pytest.mark.parametrize(("options", "text"), [
    (["-o", "dbc=no/such.dbc"], "does not exist"),
    (["-o", f"dbc={DEMO_DBC}", "-o", "allow_send=[\"Nope\"]"], "Nope"),
    (["-o", f"dbc={DEMO_DBC}", "-o", "colour=red"], "no option 'colour'"),
    ([], "dbc"),
])
def test_bad_options_exit_2_with_one_clear_line(capsys, options, text) -> None:
    assert main(["describe", "can", *options]) == 2
    err = capsys.readouterr().err
    assert text in err and len(err.strip().splitlines()) == 1


def test_the_installed_command_prints_no_traceback_for_a_bad_database() -> None:
    done = subprocess.run([str(MCS), "describe", "can", "-o", "dbc=no/such.dbc"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2
    assert "does not exist" in done.stderr and "Traceback" not in done.stderr


def test_a_toolbox_file_holds_the_can_driver_beside_another(tmp_path, channel, sniffer) -> None:
    config = tmp_path / "toolbox.yaml"
    config.write_text(
        "drivers:\n"
        f"  car: {{driver: can, dbc: '{DEMO_DBC}', channel: {channel}, allow_send: [CruiseCommand]}}\n"
        "  helpers: {driver: functions}\n"
    )
    box = Toolbox.from_config(config)
    try:
        names = {tool.name for tool in box.list_tools()}
        assert {"send_CruiseCommand", "read", "get_weather"} <= names
        result = box.process_llm_response(json.dumps(
            {"tool": "send_CruiseCommand", "arguments": {**CRUISE, "dry_run": True}}))
        assert result["dry_run"] is True
        assert drain(sniffer) == []
    finally:
        box.close()


async def test_mcs_serve_over_stdio_reads_the_ecu_and_refuses_sends_until_armed(channel) -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    params = StdioServerParameters(
        command=str(MCS), env=env,
        args=["serve", "can_ecu_driver:EcuDriver", "-o", f"channel={channel}", "-o", 'allow_send=["CruiseCommand"]'],
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert {"send_CruiseCommand", "read", "monitor", "bus_status", "stop_periodic"} <= set(tools)
        assert tools["send_CruiseCommand"].annotations.destructive_hint is True
        reading = await session.call_tool("read", {"message": "WheelSpeeds", "wait_s": 2})
        assert not reading.is_error
        [frame] = reading.structured_content["frames"]
        assert frame["signals"]["WheelSpeedFL"] >= 87.5
        refused = await session.call_tool("send_CruiseCommand", CRUISE)
        assert refused.is_error and "not armed" in refused.content[0].text
        status = await session.call_tool("bus_status", {})
        assert status.structured_content["armed"] is False
