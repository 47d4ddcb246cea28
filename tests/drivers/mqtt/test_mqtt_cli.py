"""The MQTT driver through `mcs describe|call|serve` and in a toolbox file, as a user runs them."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mqtt_broker import Mosquitto, Observer
from mqtt_specs import LIGHTS
from support.mcp_http import mcp_http_session
from support.servers import free_port, server_process

import mcs
from mcs.cli import main

MCS = Path(sys.executable).with_name("mcs")


def options(broker: Mosquitto) -> list[str]:
    return ["-o", f"spec={LIGHTS}", "-o", "host=127.0.0.1", "-o", f"port={broker.port}"]


def test_describe_prints_the_tools_without_touching_the_broker(capsys) -> None:
    assert main(["describe", "mqtt", "-o", f"spec={LIGHTS}", "-o", "host=127.0.0.1", "-o", "port=1"]) == 0
    out = capsys.readouterr().out
    assert "sendCommand" in out and "readMeasurement" in out


def test_prompt_prints_a_system_message_holding_the_tools(capsys) -> None:
    assert main(["prompt", "mqtt", "-o", f"spec={LIGHTS}", "--model", "gpt-4o"]) == 0
    out = capsys.readouterr().out
    assert "sendCommand" in out and "lights/{lightId}/command" in out


def test_call_publishes_what_the_llm_response_asks(capsys, broker: Mosquitto) -> None:
    seen = Observer(broker.port, "lights/cli/command")
    try:
        response = '{"tool": "sendCommand", "arguments": {"lightId": "cli", "payload": {"command": "off"}}}'
        assert main(["call", "mqtt", *options(broker), "--response", response]) == 0
        assert json.loads(capsys.readouterr().out)["published"] is True
        assert seen.wait_for(1)[0].payload == b'{"command":"off"}'
    finally:
        seen.close()


def test_a_refused_call_prints_the_error_as_json(capsys, broker: Mosquitto) -> None:
    response = '{"tool": "sendCommand", "arguments": {"lightId": "#", "payload": {"command": "off"}}}'
    assert main(["call", "mqtt", *options(broker), "--response", response]) == 1
    assert json.loads(capsys.readouterr().out)["error"] == "INVALID_INPUT"


def test_bad_options_give_one_line_and_exit_2(tmp_path: Path, capsys) -> None:
    for extra, needle in ((["-o", f"spec={LIGHTS}", "-o", "colour=red"], "no option 'colour'"),
                          (["-o", f"spec={tmp_path / 'missing.yaml'}"], "missing.yaml: cannot be read"),
                          (["-o", f"spec={LIGHTS}", "-o", "default_qos=7"], "default_qos must be 0, 1 or 2")):
        assert main(["describe", "mqtt", *extra]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and needle in err and "Traceback" not in err


def test_a_toolbox_file_holds_mqtt_beside_another_driver(tmp_path: Path, broker: Mosquitto) -> None:
    config = tmp_path / "box.yaml"
    config.write_text(
        f"drivers:\n  lights: {{driver: mqtt, spec: {LIGHTS}, host: 127.0.0.1, port: {broker.port}}}\n"
        "  demo: {driver: functions}\n")
    box = mcs.Toolbox.from_config(config)
    try:
        names = {t.name for t in box.list_tools()}
        assert {"sendCommand", "get_weather"} <= names
        result = box.process_llm_response(
            '{"tool": "sendCommand", "arguments": {"lightId": "box", "payload": {"command": "on"}, "dry_run": true}}')
        assert result["dry_run"] is True and result["topic"] == "lights/box/command"
    finally:
        box.close()


def _env() -> dict[str, str]:
    return dict(os.environ)


async def test_mcs_serve_over_stdio_publishes_for_the_official_mcp_client(broker: Mosquitto) -> None:
    seen = Observer(broker.port, "lights/stdio/command")
    params = StdioServerParameters(command=str(MCS), args=["serve", "mqtt", *options(broker)], env=_env())
    try:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            assert tools["sendCommand"].annotations.destructive_hint is True
            assert tools["readMeasurement"].annotations.read_only_hint is True
            done = await session.call_tool("sendCommand", {"lightId": "stdio", "payload": {"command": "on"}})
            assert not done.is_error and done.structured_content["published"] is True
            refused = await session.call_tool("sendCommand", {"lightId": "+", "payload": {"command": "on"}})
            assert refused.is_error and "lightId" in refused.content[0].text
        assert [m.payload for m in seen.wait_for(1)] == [b'{"command":"on"}']
    finally:
        seen.close()




async def test_mcs_serve_over_streamable_http_reads_a_retained_value(broker: Mosquitto) -> None:
    from mqtt_broker import publish_raw

    publish_raw(broker.port, "lights/http/label", b"garden", retain=True)
    port = free_port()
    argv = [MCS, "serve", "mqtt", *options(broker), "--transport", "http", "--port", str(port)]
    with server_process(argv, port, env=_env()):
        async with mcp_http_session(f"http://127.0.0.1:{port}/mcp") as session:
            result = await session.call_tool("readLabel", {"lightId": "http", "wait_s": 5})
    assert result.structured_content["messages"][0]["payload"] == "garden"
