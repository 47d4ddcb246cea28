"""The SOAP driver on the command line (describe, call, a bad option) and served over MCP."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from lxml import etree
from mcs_soap import SoapDriver
from soap_world import NS, World
from support.mcp_http import served_over_http

from mcs.cli import main
from mcs.errors import ConfigurationError
from mcs.toolbox import Toolbox


def test_describe_prints_the_tools(capsys, world: World):
    assert main(["describe", "soap", "-o", f"wsdl={world.wsdl}"]) == 0
    out = capsys.readouterr().out
    assert "FullCountryInfo" in out and "Calculator_CalculatorSoap12_Add" in out


def test_call_runs_the_llm_response_against_the_service(capsys, world: World):
    code = main(["call", "soap", "-o", f"wsdl={world.wsdl}",
                 "--response", '{"tool": "Echo", "arguments": {"text": "hi", "times": 2}}'])
    assert code == 0
    assert json.loads(capsys.readouterr().out) == "hi hi"


def test_a_fault_is_printed_as_execution_error(capsys, world: World):
    code = main(["call", "soap", "-o", f"wsdl={world.wsdl}", "--response",
                 '{"tool": "Calculator_CalculatorSoap_Divide", "arguments": {"dividend": 1, "divisor": 0}}'])
    assert code == 1
    assert json.loads(capsys.readouterr().out)["error"] == "EXECUTION_ERROR"


def test_prompt_holds_the_tools_in_the_chosen_model_familys_format(capsys, world: World):
    assert main(["prompt", "soap", "-o", f"wsdl={world.wsdl}", "--model", "llama-3.1-8b"]) == 0
    out = capsys.readouterr().out
    assert '{"name": function name, "parameters": dictionary of argument name and its value}' in out
    assert '"name":"FullCountryInfo"' in out and '"name":"Calculator_CalculatorSoap_Add"' in out


def test_a_toolbox_file_holds_it_beside_another_driver(tmp_path: Path, world: World):
    config = tmp_path / "toolbox.yaml"
    config.write_text(f"drivers:\n  world: {{driver: soap, wsdl: '{world.wsdl}'}}\n  local: {{driver: functions}}\n")
    with Toolbox.from_config(config) as box:
        names = {tool.name for tool in box.list_tools()}
        assert {"Calculator_CalculatorSoap_Add", "FullCountryInfo", "get_weather"} <= names
        added = box.process_llm_response('{"tool": "Calculator_CalculatorSoap_Add", "arguments": {"a": 5, "b": 6}}')
        assert added == 11
        assert box.process_llm_response('{"tool": "add", "arguments": {"a": 1, "b": 2}}') == 3
    sent = etree.fromstring(world.peer.requests[-1].body)
    assert sent.findtext(f".//{{{NS}}}a") == "5" and sent.findtext(f".//{{{NS}}}b") == "6"


def test_a_bad_option_is_one_line_and_exit_2(capsys, world: World):
    assert main(["describe", "soap", "-o", f"wsdl={world.wsdl}", "-o", "endpoint=ftp://x"]) == 2
    err = capsys.readouterr().err
    assert "endpoint" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_the_driver_served_over_mcp_stdio_calls_the_service(world: World):
    pytest.importorskip("mcs_mcp.serving", reason="MCP serving (mcs serve --protocol mcp) is not in this build")
    from mcs_mcp.client_driver import MCPDriver

    args = ["-m", "mcs.cli", "serve", "soap", "-o", f"wsdl={world.wsdl}", "--protocol", "mcp", "--transport", "stdio"]
    with MCPDriver(command=sys.executable, args=args, connect_timeout=60) as driver:
        name = next(t.name for t in driver.list_tools() if t.name.endswith("FullCountryInfo"))
        result = driver.process_llm_response({"tool": name, "arguments": {"sCountryISOCode": "JP"}})
    assert "Tokyo" in json.dumps(result)


MCS = Path(sys.executable).with_name("mcs")


@pytest.mark.parametrize(("option", "value", "message"), [
    ("retries", "-1", "retries must be a non-negative integer"),
    ("backoff", "-0.5", "backoff must be a non-negative number of seconds"),
])
def test_a_negative_retry_option_is_one_line_and_exit_2(world: World, option: str, value: str, message: str) -> None:
    done = subprocess.run([str(MCS), "describe", "soap", "-o", f"wsdl={world.wsdl}", "-o", f"{option}={value}"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(("option", "value"), [("retries", -1), ("backoff", -0.5), ("retries", True)])
def test_the_constructor_refuses_a_negative_or_non_numeric_retry_option(world: World, option: str, value: object) -> None:
    with pytest.raises(ConfigurationError, match=f"^{option} must be a non-negative"):
        SoapDriver(world.wsdl, **{option: value})
async def test_mcs_serve_over_streamable_http_calls_the_service(world: World):
    async with served_over_http(["soap", "-o", f"wsdl={world.wsdl}"]) as session:
        tools = {tool.name for tool in (await session.list_tools()).tools}
        assert {"Calculator.CalculatorSoap.Add", "FullCountryInfo", "Echo"} <= tools  # the WSDL's own names
        added = await session.call_tool("Calculator.CalculatorSoap.Add", {"a": 19, "b": 23})
        assert not added.is_error and added.content[0].text == "42"
    [request] = world.peer.requests
    sent = etree.fromstring(request.body)
    assert sent.findtext(f".//{{{NS}}}a") == "19" and sent.findtext(f".//{{{NS}}}b") == "23"
