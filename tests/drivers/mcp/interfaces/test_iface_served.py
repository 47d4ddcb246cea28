"""Interfaces end to end with ``mcs serve``: a driver declaring media.player.v1 is served
(the serving layer installs ``list_interfaces``) and the MCP driver reads it back, over
stdio and streamable HTTP. Skips when MCP serving is not part of this build."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcs_mcp.client_driver import MCPDriver
from support.servers import free_port, server_process

from mcs.cli import main

HERE = Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def _serving() -> None:
    pytest.importorskip("mcs_mcp.serving", reason="MCP serving (mcs serve --protocol mcp) is not in this build")


def serve_args(target: str, *extra: str) -> list[str]:
    return ["-m", "mcs.cli", "serve", target, "--protocol", "mcp", *extra]


def test_a_served_driver_offers_its_interface_to_the_mcp_driver_over_stdio() -> None:
    args = serve_args("served_player:PlayerDriver", "--transport", "stdio")
    with MCPDriver(command=sys.executable, args=args, cwd=str(HERE), connect_timeout=60) as driver:
        tools = {t.name: t for t in driver.list_tools()}
        assert driver.get_status()["servers"]["mcp"]["listing"] == "list_interfaces"
        assert set(tools) == {"start", "hold", "loudness", "multiply"}
        assert tools["loudness"].description == "Set the playback volume."
        assert (tools["loudness"].meta["interface"], tools["loudness"].meta["method"]) == ("media.player.v1", "set_volume")
        assert tools["multiply"].description == "Multiply two integers."
        assert driver.process_llm_response({"tool": "loudness", "arguments": {"volume": 0.4}}) == {"success": True}
        driver.use_interfaces("media.player.v1")
        assert {t.name for t in driver.list_tools()} == {"start", "hold", "loudness"}


def test_a_served_driver_that_gets_it_wrong_lists_its_tools_as_unclassified() -> None:
    args = serve_args("served_player:WrongPlayerDriver", "--transport", "stdio")
    with MCPDriver(command=sys.executable, args=args, cwd=str(HERE), connect_timeout=60) as driver:
        tools = {t.name: t for t in driver.list_tools()}
        assert "interface" not in tools["loudness_text"].meta
        assert tools["loudness_text"].description == "Knob, as text."
        [unclassified] = driver.interfaces()
        assert unclassified["interface"] == "unclassified"


def test_mcs_interfaces_check_reports_on_a_served_driver(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(HERE)
    good = shlex.join([sys.executable, *serve_args("served_player:PlayerDriver", "--transport", "stdio")])
    assert main(["interfaces", "check", good]) == 0
    assert "media.player.v1 on mcp" in capsys.readouterr().out
    wrong = shlex.join([sys.executable, *serve_args("served_player:WrongPlayerDriver", "--transport", "stdio")])
    assert main(["interfaces", "check", wrong]) == 1
    assert "FAIL set_volume (tool loudness_text)" in capsys.readouterr().out


@pytest.fixture
def served_http() -> Iterator[str]:
    port = free_port()
    serve = [sys.executable, *serve_args("served_player:PlayerDriver", "--transport", "http",
                                         "--host", "127.0.0.1", "--port", str(port))]
    with server_process(serve, port, timeout=60, cwd=HERE):
        yield f"http://127.0.0.1:{port}/mcp"


def test_a_served_driver_offers_its_interface_over_streamable_http(served_http: str) -> None:
    with MCPDriver(url=served_http, supported_interfaces=["media.player.v1"]) as driver:
        tool = driver.get_tool("start")
        assert tool is not None and tool.meta.get("method") == "play"
        assert driver.get_status()["servers"]["mcp"]["listing"] == "list_interfaces"
        assert driver.call_tool("start") == {"status": "playing"}
