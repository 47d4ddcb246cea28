"""The Interface model, the registry of definitions, and the versioning rules."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from mcs_mcp.interfaces import (
    InterfaceRegistry,
    breaking_changes,
    default_registry,
    highest,
    negotiate,
)
from mcs_mcp.interfaces.registry import PATH_ENV
from pydantic import ValidationError
from support.servers import JSONHandler, serving_http

import mcs
from mcs.errors import ConfigurationError
from mcs.interfaces import parse_interface_name

PLAYER_V2 = {
    "interface": "media.player.v2",
    "description": "Playback with seeking.",
    "methods": [
        {"name": "play", "description": "Begin playback.", "parameters": {}},
        {"name": "seek", "description": "Jump to a position.",
         "parameters": {"type": "object", "properties": {"seconds": {"type": "number"}}, "required": ["seconds"]}},
    ],
}


def test_interface_is_public_and_reads_the_seed_shape() -> None:
    assert "Interface" in mcs.__all__
    interface = mcs.Interface.model_validate(PLAYER_V2)
    assert (interface.name, interface.family, interface.major) == ("media.player.v2", "media.player", 2)
    assert interface.method("seek") is not None and interface.method("stop") is None
    assert interface.method("play").input_schema == {"type": "object", "properties": {}}  # type: ignore[union-attr]
    assert mcs.Interface.from_dict(interface.to_dict()) == interface


@pytest.mark.parametrize("bad", ["media.player", "Media.player.v1", "media.player.v0", "unclassified", "x.v1.2"])
def test_names_must_be_name_dot_v_major(bad: str) -> None:
    with pytest.raises(ValidationError):
        mcs.Interface.model_validate({**PLAYER_V2, "interface": bad})


def test_methods_must_be_unique_and_present() -> None:
    with pytest.raises(ValidationError, match="twice"):
        mcs.Interface.model_validate({**PLAYER_V2, "methods": [PLAYER_V2["methods"][0]] * 2})
    with pytest.raises(ValidationError, match="no methods"):
        mcs.Interface.model_validate({**PLAYER_V2, "methods": []})
    assert parse_interface_name("code.editor.v12") == ("code.editor", 12)


def test_the_seed_examples_are_shipped() -> None:
    registry = default_registry(environ={})
    assert registry.names() == ["chat.assistant.v1", "code.editor.v1", "filesystem.navigator.v1", "media.player.v1"]
    assert registry.get("code.editor.v1").method_names == ("open_file", "edit_line", "run_code")
    assert registry.get("filesystem.navigator.v1").method_names == ("list_dir", "open_file", "delete_file")
    assert registry.get("chat.assistant.v1").method_names == ("summarize", "reply", "search_docs")
    volume = registry.get("media.player.v1").method("set_volume")
    assert volume is not None and volume.parameters["properties"]["volume"]["maximum"] == 1.0


def test_definitions_load_from_json_and_yaml_files_and_directories(tmp_path: Path) -> None:
    (tmp_path / "v2.yaml").write_text(yaml.safe_dump(PLAYER_V2))
    (tmp_path / "more.json").write_text(json.dumps({"interfaces": [{**PLAYER_V2, "interface": "media.recorder.v1"}]}))
    registry = default_registry(environ={PATH_ENV: str(tmp_path)})
    assert {"media.player.v2", "media.recorder.v1"} <= set(registry.names())
    assert registry.get("media.player").name == "media.player.v2"  # a family gives its highest version
    assert [i.major for i in registry.versions("media.player")] == [1, 2]


def test_a_broken_definition_file_names_the_file_and_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump({"interface": "bad name", "methods": []}))
    with pytest.raises(ConfigurationError, match=r"bad\.yaml.*interface"):
        InterfaceRegistry().load_file(path)
    with pytest.raises(KeyError, match="known interfaces"):
        InterfaceRegistry().get("nothing.v1")


def test_a_redefinition_may_only_add_optional_fields() -> None:
    registry = InterfaceRegistry()
    registry.add(mcs.Interface.model_validate(PLAYER_V2))
    seek = PLAYER_V2["methods"][1]
    added_optional = {**seek, "parameters": {**seek["parameters"], "properties": {
        "seconds": {"type": "number"}, "relative": {"type": "boolean"}}}}
    registry.add(mcs.Interface.model_validate({**PLAYER_V2, "methods": [PLAYER_V2["methods"][0], added_optional]}))
    retyped = {**seek, "parameters": {**seek["parameters"], "properties": {"seconds": {"type": "string"}}}}
    with pytest.raises(ConfigurationError, match=r"new major version.*seconds: type changed"):
        registry.add(mcs.Interface.model_validate({**PLAYER_V2, "methods": [PLAYER_V2["methods"][0], retyped]}))


def test_breaking_changes_lists_what_needs_a_new_major() -> None:
    old = mcs.Interface.model_validate(PLAYER_V2)
    new = mcs.Interface.model_validate({**PLAYER_V2, "methods": [PLAYER_V2["methods"][0]]})
    assert breaking_changes(old, new) == ["method seek removed"]
    assert breaking_changes(new, old) == [
        "method seek added (a server implementing media.player.v2 would not have it)"
    ]
    reworded = {**PLAYER_V2["methods"][1], "description": "Move to a position."}
    assert breaking_changes(old, mcs.Interface.model_validate({**PLAYER_V2, "methods": [PLAYER_V2["methods"][0], reworded]})) == []


def test_negotiation_picks_the_highest_version_both_sides_support() -> None:
    client = ["media.player.v1", "media.player.v2", "code.editor.v1"]
    server = ["media.player.v1", "media.player.v2", "media.player.v3", "chat.assistant.v1"]
    assert negotiate(client, server) == {"media.player": "media.player.v2"}
    assert highest(server) == {"media.player": "media.player.v3", "chat.assistant": "chat.assistant.v1"}


class _Definitions(JSONHandler):
    def do_GET(self) -> None:
        self.send_json([PLAYER_V2])


@pytest.fixture
def registry_url() -> Iterator[str]:
    with serving_http(_Definitions) as url:
        yield url + "/interfaces"


def test_definitions_load_from_a_registry_url(registry_url: str) -> None:
    registry = InterfaceRegistry()
    [loaded] = registry.load_url(registry_url)
    assert loaded.name == "media.player.v2" and "media.player.v2" in registry
