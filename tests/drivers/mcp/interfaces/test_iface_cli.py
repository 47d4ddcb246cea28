"""``mcs interfaces list`` and ``mcs interfaces check``, through the real ``mcs`` entry point."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
import yaml

from mcs.cli import main

SERVERS = Path(__file__).resolve().parents[1] / "client" / "servers"


def server_command(script: str, *flags: str) -> str:
    return shlex.join([sys.executable, str(SERVERS / script), *flags])


def test_list_prints_every_known_interface_and_its_methods(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["interfaces", "list"]) == 0
    out = capsys.readouterr().out
    for name in ("media.player.v1", "code.editor.v1", "filesystem.navigator.v1", "chat.assistant.v1"):
        assert name in out
    assert "    set_volume: Set the playback volume." in out


def test_list_json_includes_definitions_from_extra_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    extra = tmp_path / "lights.yaml"
    extra.write_text(yaml.safe_dump({"interface": "home.lights.v1", "description": "Lights.",
                                     "methods": [{"name": "turn_on", "description": "Turn the lights on."}]}))
    assert main(["interfaces", "list", "--json", "--file", str(extra)]) == 0
    names = [i["interface"] for i in json.loads(capsys.readouterr().out)]
    assert "home.lights.v1" in names and "media.player.v1" in names


def test_check_a_conforming_server_exits_0_with_a_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["interfaces", "check", server_command("iface_server.py")]) == 0
    out = capsys.readouterr().out
    assert "media.player.v1 on mcp" in out and ": conforms" in out
    assert "ok   set_volume (tool player_volume)" in out


def test_check_a_server_that_gets_it_wrong_exits_1_naming_the_fault(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["interfaces", "check", server_command("iface_server.py", "--wrong"), "--json"]) == 1
    [report] = json.loads(capsys.readouterr().out)
    assert report["interface"] == "media.player.v1" and report["conforms"] is False
    volume = next(m for m in report["methods"] if m["method"] == "set_volume")
    assert volume["tool"] == "player_volume"
    assert "accepts string, the interface allows number" in volume["findings"][0]["message"]


def test_check_an_interface_a_server_does_not_declare(capsys: pytest.CaptureFixture[str]) -> None:
    command = server_command("player_server.py")
    assert main(["interfaces", "check", command, "--implements", "media.player.v1"]) == 0
    assert main(["interfaces", "check", command, "--implements", "code.editor.v1"]) == 1
    assert "no tool implements this method" in capsys.readouterr().out


def test_check_a_target_that_declares_nothing_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["interfaces", "check", server_command("player_server.py")]) == 1
    assert "declares no interface" in capsys.readouterr().out


def test_check_a_registered_driver_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["interfaces", "check", "functions", "--implements", "chat.assistant.v1"]) == 1
    assert "chat.assistant.v1 on functions: DOES NOT CONFORM" in capsys.readouterr().out


def test_an_unknown_interface_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["interfaces", "check", "functions", "--implements", "no.such.v1"]) == 2
    assert "unknown interface" in capsys.readouterr().err


def test_check_a_driver_class_by_module_and_name(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent))
    assert main(["interfaces", "check", "served_player:PlayerDriver"]) == 0
    assert "ok   set_volume (tool loudness)" in capsys.readouterr().out
    assert main(["interfaces", "check", "served_player:WrongPlayerDriver"]) == 1
    assert "parameters/volume accepts string, the interface allows number" in capsys.readouterr().out
