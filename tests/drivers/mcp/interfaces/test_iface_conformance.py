"""A conformance test per shipped interface: a server that implements it, one that gets it wrong."""

from __future__ import annotations

import pytest
from iface_impls import WRONG_BECAUSE, good, listed_tools, wrong
from mcs_mcp.interfaces import check, default_registry
from mcs_mcp.interfaces.schemas import accepts, provides

from mcs import Interface

SHIPPED = ["media.player.v1", "code.editor.v1", "filesystem.navigator.v1", "chat.assistant.v1"]


@pytest.mark.parametrize("name", SHIPPED)
async def test_a_server_implementing_the_interface_conforms(name: str) -> None:
    interface = default_registry().get(name)
    report = check(interface, await listed_tools(good(name)), target="good")
    assert report.conforms, report.to_text()
    assert [m.method for m in report.methods] == list(interface.method_names)
    assert all(m.description_differs for m in report.methods)  # the canonical text is used instead


@pytest.mark.parametrize("name", SHIPPED)
async def test_a_server_that_gets_it_wrong_fails_on_that_method(name: str) -> None:
    report = check(default_registry().get(name), await listed_tools(wrong(name)), target="wrong")
    assert not report.conforms
    method, because = WRONG_BECAUSE[name]
    failing = [m for m in report.methods if not m.conforms]
    assert [m.method for m in failing] == [method]
    assert any(because in line for line in report.errors()), report.to_text()
    assert "DOES NOT CONFORM" in report.to_text()


def test_a_mapping_lets_tools_have_their_own_names() -> None:
    interface = Interface.model_validate({
        "interface": "demo.greeter.v1",
        "description": "Greets.",
        "methods": [{"name": "greet", "description": "Greet someone.",
                     "parameters": {"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]}}],
    })
    tools = [{"name": "say_hello", "description": "hi", "inputSchema": {
        "type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]}}]
    assert not check(interface, tools).conforms
    report = check(interface, tools, {"greet": "say_hello"})
    assert report.conforms and report.methods[0].tool == "say_hello"


def test_parameters_must_accept_everything_the_interface_allows() -> None:
    iface = {"type": "object", "properties": {"v": {"type": "number", "minimum": 0, "maximum": 1}}, "required": ["v"]}
    assert accepts({"type": "object", "properties": {"v": {"type": "number"}}, "required": ["v"]}, iface) == []
    narrower = accepts({"type": "object", "properties": {"v": {"type": "number", "maximum": 0.5}}}, iface)
    assert [f.message for f in narrower] == ["maximum is 0.5, the interface allows 1"]
    enum_narrow = accepts({"enum": ["a"]}, {"enum": ["a", "b"]})
    assert "does not accept ['b']" in enum_narrow[0].message


def test_results_must_stay_within_what_the_interface_promises() -> None:
    iface = {"type": "object", "properties": {"status": {"type": "string", "enum": ["playing"]}}, "required": ["status"]}
    assert provides({"type": "object", "properties": {"status": {"const": "playing"}}, "required": ["status"]}, iface) == []
    wider = provides({"type": "object", "properties": {"status": {"type": "string"}}, "required": ["status"]}, iface)
    assert "may return any value" in wider[0].message
    optional = provides({"type": "object", "properties": {"status": {"const": "playing"}}}, iface)
    assert "optional in the tool's result" in optional[0].message
    unknown = provides(None, iface)
    assert unknown[0].severity == "warning"


def test_report_serialises_to_json_ready_data() -> None:
    interface = default_registry().get("media.player.v1")
    data = check(interface, []).to_dict()
    assert data["conforms"] is False and len(data["methods"]) == 3
    assert data["methods"][0]["tool"] is None
