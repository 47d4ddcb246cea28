"""The Interfaces RFC on servers built with the official SDK, and what the MCP driver makes of it:
declaring through ``install`` (MCPServer and the low-level Server), canonical method names,
return guarantees, one round of listing, toolboxes, definitions and deprecation."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.server.lowlevel.server import Server
from mcs_mcp.client_driver import MCPDriver
from mcs_mcp.interfaces import Interface, default_registry, implementations, install
from mcs_mcp.interfaces.wire import EXTENSION_ID, build_listing, request_listing
from pydantic import ValidationError
from served_player import MAPPING, PlayerDriver

from mcs import FunctionDriver, Toolbox, tool
from mcs.errors import ConfigurationError, ExecutionError, InvalidInputError

HERE = Path(__file__).resolve().parent
SDK_PLAYER = HERE / "sdk_player.py"


def sdk_player(requests: Path, quiet: Any, variant: str = "") -> MCPDriver:
    env = {"MCS_TEST_REQUESTS": str(requests), "MCS_TEST_VARIANT": variant, "PYTHONPATH": str(HERE)}
    return MCPDriver(command=sys.executable, args=[str(SDK_PLAYER)], env=env, stderr=quiet, connect_timeout=60)


def test_interfaces_rfc_protocol_additions_an_mcpserver_declares_its_interfaces_with_install(
    tmp_path: Path, quiet: Any
) -> None:
    requests = tmp_path / "requests.log"
    with sdk_player(requests, quiet) as driver:
        [player, unclassified] = driver.interfaces()
        assert (player["interface"], unclassified["interface"]) == ("media.player.v1", "unclassified")
        assert {m["name"]: m["tool"] for m in player["methods"]} == {
            "play": "player_play", "pause": "player_pause", "set_volume": "player_volume"}
        assert driver.get_status()["servers"]["mcp"]["listing"] == "list_interfaces"


async def test_interfaces_rfc_protocol_additions_a_low_level_server_declares_them_too() -> None:
    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        schema = {"type": "object", "properties": {}}
        returns = {"type": "object", "properties": {"status": {"type": "string", "const": "playing"}},
                   "required": ["status"]}
        return types.ListToolsResult(tools=[
            types.Tool(name="play", description="Play.", input_schema=schema, output_schema=returns)])

    async def call_tool(ctx: Any, params: Any) -> types.CallToolResult:
        return types.CallToolResult(content=[], structured_content={"status": "playing"})

    server = Server("low", on_list_tools=list_tools, on_call_tool=call_tool)
    install(server, implements=[("media.player.v1", {})])
    async with Client(server, mode="legacy", cache=None) as client:
        settings = client.server_capabilities.experimental[EXTENSION_ID]
        assert settings["interfaces"] == ["media.player.v1"]  # the declaration, not an empty list
        listing = await request_listing(client.session)
    assert listing is not None
    assert listing["nonconforming"][0]["interface"] == "media.player.v1"  # pause and set_volume are missing


def test_interfaces_rfc_versioning_an_unknown_interface_is_refused_when_declared() -> None:
    server = Server("editor", on_list_tools=None, on_call_tool=None)
    with pytest.raises(ConfigurationError, match=r"known versions of code\.editor: code\.editor\.v1"):
        install(server, implements=["code.editor.v2"])


def test_interfaces_rfc_fine_tuning_a_canonical_method_name_reaches_the_servers_tool(
    tmp_path: Path, quiet: Any
) -> None:
    requests = tmp_path / "requests.log"
    with sdk_player(requests, quiet) as driver:
        assert driver.process_llm_response('{"tool": "play", "arguments": {}}') == {"status": "playing"}
        assert driver.process_llm_response('{"tool": "pause", "arguments": {}}') == {"status": "paused"}
        with pytest.raises(InvalidInputError, match="volume"):  # the interface's schema: 0 to 1
            driver.process_llm_response('{"tool": "set_volume", "arguments": {"volume": 3}}')
        assert driver.call_tool("echo", {"text": "hi"}) == "hi"
    # Prompt context partitioning: list_interfaces is the one listing, no second round.
    assert "tools/list" not in requests.read_text().split()
    assert requests.read_text().split().count("list_interfaces") == 1


def test_interfaces_rfc_schema_definition_an_interface_methods_result_is_checked_against_returns(
    tmp_path: Path, quiet: Any
) -> None:
    with sdk_player(tmp_path / "requests.log", quiet, variant="text_pause") as driver:
        assert driver.call_tool("play") == {"status": "playing"}
        with pytest.raises(ExecutionError) as error:
            driver.call_tool("pause")
    message = error.value.message
    assert "returns schema of pause in media.player.v1" in message and "the result" in message
    assert "argument" not in message


def test_interfaces_rfc_schema_definition_validate_output_takes_text_and_speaks_of_the_result() -> None:
    @tool
    def motto() -> str:
        """A motto."""
        return "carpe diem"

    @tool
    def count() -> int:
        """A count, wrongly."""
        return "many"  # type: ignore[return-value]

    driver = FunctionDriver([motto, count], validate_output=True)
    assert driver.call_tool("motto") == "carpe diem"
    with pytest.raises(ExecutionError) as error:
        driver.call_tool("count")
    assert "count returned a result that does not match its output schema: the result" in error.value.message
    assert "argument" not in error.value.message


@tool
def start(note: str = "") -> dict[str, str]:
    """A second start, to collide with the player's."""
    return {"note": note}


async def test_interfaces_rfc_registry_a_toolbox_keeps_its_members_declarations() -> None:
    from mcs_mcp.serving import build_server

    box = Toolbox({"player": PlayerDriver(), "other": FunctionDriver([start])})
    assert {t.name for t in box.list_tools()} >= {"player_start", "other_start", "hold", "loudness"}
    [impl] = implementations(box.list_tools(), box.implements)
    assert impl.conforms and impl.tool_for("play") == "player_start"
    server = build_server(box)
    install(server, box)
    async with Client(server, mode="legacy", cache=None) as client:
        assert client.server_capabilities.experimental[EXTENSION_ID]["interfaces"] == ["media.player.v1"]
        listing = await request_listing(client.session)
    assert listing is not None and listing["interfaces"][0]["interface"] == "media.player.v1"


def test_interfaces_rfc_schema_definition_parameters_and_returns_must_be_json_schema() -> None:
    with pytest.raises(ValidationError, match="is not a valid JSON Schema"):
        Interface.model_validate({
            "interface": "lights.switch.v1", "description": "Lights.",
            "methods": [{"name": "on", "description": "On.", "parameters": {"type": "lamp"}, "returns": {}}],
        })


def test_interfaces_rfc_versioning_a_deprecated_interface_says_so_and_stays_usable() -> None:
    player = default_registry().get("media.player.v1")
    old = player.model_copy(update={"deprecated": "use media.player.v2"})
    assert old.to_dict()["deprecated"] == "use media.player.v2"
    assert "deprecated" not in player.to_dict()
    tools = PlayerDriver().list_tools()
    [impl] = implementations(tools, [(old, MAPPING)])
    listing = build_listing(tools, [impl])
    assert listing["interfaces"][0]["deprecated"] == "use media.player.v2"
    assert impl.conforms
