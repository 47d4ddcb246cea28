"""The Interfaces page's data: views built from interface definitions, for an SDK-built MCP
server and for a driver that declares ``implements``, with conformance problems beside them."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from inspect_support import INTERFACES_SERVER, recorded
from mcs_mcp.client_driver import MCPDriver
from mcs_mcp.interfaces import default_registry

import mcs
from mcs.inspector import Inspection


@pytest.fixture
def studio(tmp_path: Path) -> Iterator[tuple[Inspection, Path]]:
    record = tmp_path / "calls.jsonl"
    with MCPDriver(command=sys.executable, args=[str(INTERFACES_SERVER), "--record", str(record)]) as driver:
        yield Inspection(driver), record


def _views(inspection: Inspection) -> dict[str, dict[str, Any]]:
    return {view["interface"]: view for view in inspection.interfaces()["interfaces"]}


def test_each_declared_interface_gets_its_view_from_the_definition(studio: tuple[Inspection, Path]) -> None:
    inspection, _ = studio
    views = _views(inspection)
    assert {name: view["ui"] for name, view in views.items()} == {
        "media.player.v1": "media.player",
        "filesystem.navigator.v1": "filesystem.navigator",
        "code.editor.v1": "code.editor",
        "chat.assistant.v1": "chat.assistant",
        "thermostat.control.v1": "forms",
    }
    player = views["media.player.v1"]
    canonical = default_registry().get("media.player.v1")
    assert [m["parameters"] for m in player["methods"]] == [m.parameters for m in canonical.methods]
    assert player["conforms"] and player["problems"] == []
    assert {m["name"]: m["writes"] for m in player["methods"]} == {"play": False, "pause": False, "set_volume": False}
    navigator = {m["name"]: m for m in views["filesystem.navigator.v1"]["methods"]}
    assert navigator["delete_file"]["writes"] and not navigator["list_dir"]["writes"]
    assert views["thermostat.control.v1"]["methods"][0]["parameters"]["properties"]["celsius"]["maximum"] == 30


def test_interface_calls_run_through_the_pipeline_and_reach_the_server(studio: tuple[Inspection, Path]) -> None:
    inspection, record = studio
    assert inspection.call("set_volume", {"volume": 0.25})["result"] == {"success": True}
    listing = inspection.call("list_dir", {"path": "/src"})["result"]
    assert listing == {"entries": [{"name": "main.py", "type": "file"}, {"name": "old.py", "type": "file"}]}
    assert [c["tool"] for c in recorded(record, 2)] == ["set_volume", "list_dir"]


def test_a_server_that_gets_an_interface_wrong_shows_the_problems_beside_it(tmp_path: Path) -> None:
    args = [str(INTERFACES_SERVER), "--wrong-player"]
    with MCPDriver(command=sys.executable, args=args) as driver:
        player = _views(Inspection(driver))["media.player.v1"]
    assert not player["conforms"]
    assert any("set_volume" in problem and "string" in problem for problem in player["problems"])


class Player(mcs.FunctionDriver):
    implements: ClassVar[dict[str, dict[str, str]]] = {"media.player.v1": {"play": "start", "pause": "hold", "set_volume": "knob"}}


@mcs.tool(annotations={"destructiveHint": False})
def start() -> dict[str, str]:
    """Start."""
    return {"status": "playing"}


@mcs.tool
def knob(volume: float) -> dict[str, bool]:
    """Volume."""
    return {"success": True}


def test_a_driver_declaring_implements_gets_views_with_its_missing_methods_reported() -> None:
    view = _views(Inspection(Player([start, knob], name="player")))["media.player.v1"]
    assert {m["name"]: m["tool"] for m in view["methods"]} == {"play": "start", "pause": None, "set_volume": "knob"}
    assert "pause: no tool implements this method" in view["problems"]
    assert view["source"] == "implements declaration of driver player"


class Unknown(mcs.FunctionDriver):
    implements: ClassVar[list[str]] = ["no.such.thing.v1"]


def test_a_declaration_the_registry_cannot_read_is_reported_on_the_page_not_raised() -> None:
    found = Inspection(Unknown([start], name="odd")).interfaces()
    assert found["interfaces"] == []
    assert any("no.such.thing.v1" in problem for problem in found["problems"])


def test_a_toolbox_shows_its_members_interfaces_under_the_toolbox_names() -> None:
    box = mcs.Toolbox({"a": Player([start, knob], name="a"), "b": Player([start, knob], name="b")})
    views = Inspection(box).interfaces()["interfaces"]
    assert [[m["tool"] for m in v["methods"]] for v in views] == [["a_start", None, "a_knob"], ["b_start", None, "b_knob"]]
