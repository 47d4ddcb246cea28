"""list_interfaces on the wire: install() on a real low-level server, and the MCP driver reading it."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp.types as mt
import pytest
from mcp import Client
from mcp.server.lowlevel import Server
from mcs_mcp.client_driver import MCPDriver
from mcs_mcp.interfaces import InterfaceRegistry, default_registry
from mcs_mcp.interfaces.wire import EXTENSION_ID, METHOD, install, request_listing
from support.servers import free_port, server_process

from mcs import Interface

SERVERS = Path(__file__).resolve().parents[1] / "client" / "servers"
IFACE_SCRIPT = SERVERS / "iface_server.py"


def _load_script() -> Any:
    spec = importlib.util.spec_from_file_location("mcs_test_iface_server", IFACE_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


iface_server = _load_script()


async def _session_listing(server: Server[Any], supported: list[str] | None = None) -> dict[str, Any]:
    async with Client(server, mode="legacy", cache=None) as client:
        listing = await request_listing(client.session, supported or ())
    assert listing is not None
    return listing


def _sections(listing: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    return {s["interface"]: s["methods"] for s in listing["interfaces"]}


async def test_list_interfaces_answers_with_full_method_specs_and_unclassified_tools() -> None:
    listing = await _session_listing(iface_server.build())
    sections = _sections(listing)
    assert list(sections) == ["media.player.v1", "unclassified"]
    canonical = default_registry().get("media.player.v1")
    play, _pause, volume = sections["media.player.v1"]
    assert (play["name"], play["tool"], play["description"]) == ("play", "player_play", canonical.methods[0].description)
    assert volume["parameters"] == canonical.methods[2].parameters and volume["returns"] == canonical.methods[2].returns
    assert [m["tool"] for m in sections["unclassified"]] == ["add"]
    assert sections["unclassified"][0]["parameters"]["required"] == ["a", "b"]
    assert "nonconforming" not in listing


async def test_the_listing_is_also_a_tool_and_the_capability_is_advertised() -> None:
    server = iface_server.build()
    async with Client(server, mode="legacy", cache=None) as client:
        assert EXTENSION_ID in (client.server_capabilities.experimental or {})
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert METHOD in tools
        assert tools["player_play"].description == "Begin playback of the current media item."  # canonical
        result = await client.call_tool(METHOD, {})
        direct = await request_listing(client.session)
    assert result.structured_content == direct
    assert json.loads(result.content[0].text) == direct  # type: ignore[union-attr]


async def test_other_tool_calls_still_reach_the_server() -> None:
    async with Client(iface_server.build(), mode="legacy", cache=None) as client:
        result = await client.call_tool("add", {"a": 2, "b": 5})
    assert result.content[0].text == "7"  # type: ignore[union-attr]


async def test_a_declaration_that_does_not_conform_is_not_listed_and_says_why() -> None:
    listing = await _session_listing(iface_server.build(wrong=True))
    sections = _sections(listing)
    assert list(sections) == ["unclassified"]
    assert {m["tool"] for m in sections["unclassified"]} == {"player_play", "player_pause", "player_volume", "add"}
    [failing] = listing["nonconforming"]
    assert failing["interface"] == "media.player.v1"
    assert any("volume accepts string" in e for e in failing["errors"])


def _two_version_server() -> tuple[Server[Any], InterfaceRegistry]:
    registry = default_registry()
    v1 = registry.get("media.player.v1")
    v2 = Interface.model_validate({
        **v1.to_dict(),
        "interface": "media.player.v2",
        "methods": [*v1.to_dict()["methods"], {"name": "stop", "description": "Stop playback.", "parameters": {}}],
    })
    registry.add(v2)
    schemas = {m.name: m for m in v2.methods}
    tools = [
        mt.Tool(name=name, description=name, input_schema=schemas[name].input_schema,
                output_schema=schemas[name].returns or None)
        for name in ("play", "pause", "set_volume", "stop")
    ]

    async def on_list_tools(ctx: Any, params: Any) -> mt.ListToolsResult:
        return mt.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: Any, params: Any) -> mt.CallToolResult:
        return mt.CallToolResult(content=[mt.TextContent(type="text", text=params.name)])

    server: Server[Any] = Server("two", on_list_tools=on_list_tools, on_call_tool=on_call_tool)
    install(server, object(), implements=["media.player.v1", "media.player.v2"], registry=registry)
    return server, registry


async def test_the_server_answers_with_the_highest_version_the_client_supports() -> None:
    server, _ = _two_version_server()
    assert list(_sections(await _session_listing(server))) == ["media.player.v1", "media.player.v2", "unclassified"]
    only_v1 = _sections(await _session_listing(server, ["media.player.v1"]))
    assert list(only_v1) == ["media.player.v1", "unclassified"]
    assert [m["tool"] for m in only_v1["unclassified"]] == ["stop"]
    both = _sections(await _session_listing(server, ["media.player.v1", "media.player.v2"]))
    assert list(both) == ["media.player.v2", "unclassified"] and both["unclassified"] == []


def test_install_needs_a_server_with_tool_handlers() -> None:
    with pytest.raises(ValueError, match="tools/list"):
        install(Server("empty"), object())


# ---------------------------------------------------------------------------- the MCP driver side


def _iface_driver(*flags: str, **options: Any) -> MCPDriver:
    return MCPDriver(command=sys.executable, args=[str(IFACE_SCRIPT), *flags], **options)


def test_the_driver_reads_list_interfaces_when_the_server_offers_it() -> None:
    with _iface_driver() as driver:
        tools = {t.name: t for t in driver.list_tools()}
        assert set(tools) == {"player_play", "player_pause", "player_volume", "add"}
        assert tools["player_volume"].description == "Set the playback volume."
        meta = dict(tools["player_volume"].meta)
        assert (meta["interface"], meta["method"], meta["original_name"]) == ("media.player.v1", "set_volume", "player_volume")
        assert tools["player_volume"].input_schema["properties"]["volume"]["maximum"] == 1.0
        assert driver.get_status()["servers"]["mcp"]["listing"] == "list_interfaces"
        assert driver.process_llm_response({"tool": "player_play", "arguments": {}}) == {"status": "playing"}
        assert [s["interface"] for s in driver.interfaces()] == ["media.player.v1", "unclassified"]


def test_the_driver_uses_the_list_interfaces_tool_when_only_that_is_offered() -> None:
    with _iface_driver("--tool-only") as driver:
        driver.list_tools()
        assert driver.get_status()["servers"]["mcp"]["listing"] == "list_interfaces"
        tool = driver.get_tool("player_pause")
        assert tool is not None and tool.meta["method"] == "pause"
        assert driver.get_tool(METHOD) is None


def test_the_driver_falls_back_to_tools_list(quiet: Any) -> None:
    with MCPDriver(command=sys.executable, args=[str(SERVERS / "player_server.py")], stderr=quiet) as driver:
        assert driver.get_tool("play") is not None
        assert driver.get_status()["servers"]["mcp"]["listing"] == "tools/list"
        assert driver.interfaces() == []


def test_the_driver_describes_only_the_interfaces_a_task_needs_and_switches() -> None:
    with _iface_driver(interfaces=["media.player"]) as driver:
        assert {t.name for t in driver.list_tools()} == {"player_play", "player_pause", "player_volume"}
        assert "Add two integers" not in driver.get_function_description()
        driver.use_interfaces("unclassified")
        assert {t.name for t in driver.list_tools()} == {"add"}
        driver.use_interfaces()
        assert len(driver.list_tools()) == 4


@pytest.fixture
def iface_http() -> Iterator[str]:
    port = free_port()
    with server_process([sys.executable, IFACE_SCRIPT, "--http", str(port)], port):
        yield f"http://127.0.0.1:{port}/mcp"


def test_the_driver_reads_list_interfaces_over_streamable_http(iface_http: str) -> None:
    with MCPDriver(url=iface_http, supported_interfaces=["media.player.v1"]) as driver:
        driver.list_tools()
        assert driver.get_status()["servers"]["mcp"]["listing"] == "list_interfaces"
        assert driver.call_tool("player_volume", {"volume": 0.5}) == {"success": True, "volume": 0.5}


def test_a_subprocess_check_is_not_needed_for_the_script_to_import() -> None:
    completed = subprocess.run([sys.executable, str(IFACE_SCRIPT), "--help"], capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0 and "--tool-only" in completed.stdout


def test_list_interfaces_also_works_when_the_client_negotiates_the_newest_protocol() -> None:
    with _iface_driver(mode="auto") as driver:
        assert driver.get_tool("player_volume") is not None
        assert driver.get_status()["servers"]["mcp"]["listing"] == "list_interfaces"
        assert driver.call_tool("player_pause") == {"status": "paused"}


def test_interface_methods_carry_their_tools_annotations_so_clients_know_what_only_reads() -> None:
    from mcs_mcp.interfaces import implementations
    from mcs_mcp.interfaces.wire import build_listing

    served = [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in iface_server.tools(False)]
    served[0]["annotations"] = {"destructiveHint": False}
    served[0]["title"] = "Play"
    impls = implementations(served, iface_server.Declaration.implements, registry=default_registry())
    methods = _sections(build_listing(served, impls))["media.player.v1"]
    assert (methods[0]["annotations"], methods[0]["title"]) == ({"destructiveHint": False}, "Play")
    assert "annotations" not in methods[1]
