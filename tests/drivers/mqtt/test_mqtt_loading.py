"""From AsyncAPI documents and topic maps to tools: every corpus file, both major versions,
schemas, annotations, and errors that name the file and the place."""

from __future__ import annotations

import json
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from mcs_mqtt import MqttDriver, SpecError
from mqtt_specs import LIGHTS, PLANT

from mcs.errors import ConfigurationError
from mcs.tools import TOOL_NAME_PATTERN


def tools_of(driver: MqttDriver) -> dict[str, dict]:
    return {t.name: {"schema": t.input_schema, "meta": t.meta, "annotations": t.annotations,
                     "description": t.description} for t in driver.list_tools()}


def test_every_asyncapi_file_of_the_corpus_loads_with_tools_named_for_providers(corpus: Path) -> None:
    files = sorted((corpus / "asyncapi").rglob("*.yml"))
    assert len(files) == 18
    for path in files:
        driver = MqttDriver(path, host="127.0.0.1")
        tools = driver.list_tools()
        assert tools, path.name
        for tool in tools:
            assert TOOL_NAME_PATTERN.match(tool.name)
            json.dumps(dict(tool.input_schema))
            assert tool.input_schema["additionalProperties"] is False
        assert driver.meta.spec_format.startswith("AsyncAPI ")


@pytest.mark.parametrize("name", ["v2/streetlights-mqtt.yml", "v3/streetlights-mqtt-asyncapi.yml"])
def test_streetlights_2_and_3_give_the_same_tools_the_application_sends_and_receives(corpus: Path, name: str) -> None:
    tools = tools_of(MqttDriver(corpus / "asyncapi" / name, host="127.0.0.1"))
    assert {n: t["meta"]["action"] for n, t in tools.items()} == {
        "receiveLightMeasurement": "receive", "turnOn": "send", "turnOff": "send", "dimLight": "send",
    }
    dim = tools["dimLight"]
    assert dim["meta"]["topic"] == "smartylighting/streetlights/1/0/action/{streetlightId}/dim"
    assert dim["meta"]["qos"] == 1  # from the operation trait's MQTT binding
    assert dim["schema"]["required"] == ["streetlightId", "payload"]
    assert dim["schema"]["properties"]["payload"]["properties"]["percentage"] == {
        "type": "integer", "description": "Percentage to which the light should be dimmed to.",
        "minimum": 0, "maximum": 100,
    }
    # YAML as AsyncAPI reads it: on/off stay strings
    assert tools["turnOn"]["schema"]["properties"]["payload"]["properties"]["command"]["enum"] == ["on", "off"]
    assert tools["turnOn"]["schema"]["properties"]["streetlightId"]["description"] == "The ID of the streetlight."
    assert dim["annotations"]["destructiveHint"] is True
    assert tools["receiveLightMeasurement"]["annotations"]["readOnlyHint"] is True
    assert "dateTime" not in json.dumps(dim["schema"]) and "date-time" in json.dumps(dim["schema"])


def test_the_spec_server_is_the_default_broker(corpus: Path) -> None:
    driver = MqttDriver(corpus / "asyncapi" / "v3" / "streetlights-mqtt-asyncapi.yml")
    assert driver.broker is not None
    assert (driver.broker.host, driver.broker.port, driver.broker.tls) == ("test.mosquitto.org", 1883, None)


def test_several_messages_of_one_operation_become_any_of(corpus: Path) -> None:
    tools = tools_of(MqttDriver(corpus / "asyncapi" / "v3" / "oneof-asyncapi.yml", host="127.0.0.1"))
    payload = tools["sendTest"]["schema"]["properties"]["payload"]
    assert [set(p["properties"]) for p in payload["anyOf"]] == [{"key"}, {"key2"}]


def test_v2_parameter_schemas_keep_their_patterns(corpus: Path) -> None:
    tools = tools_of(MqttDriver(corpus / "asyncapi" / "v2" / "rpc-client.yml", host="127.0.0.1"))
    assert tools["receiveSumResult"]["schema"]["properties"]["queue"]["pattern"] == "^amq\\\\.gen\\\\-.+$"


def test_our_spec_maps_bindings_traits_content_types_and_markup() -> None:
    driver = MqttDriver(LIGHTS, host="127.0.0.1")
    tools = tools_of(driver)
    assert tools["setLabel"]["meta"]["qos"] == 0 and tools["setLabel"]["meta"]["retain"] is True
    assert tools["setLabel"]["annotations"]["destructiveHint"] is False  # x-mcs-destructive: false
    assert tools["sendCommand"]["meta"]["qos"] == 1 and tools["sendCommand"]["meta"]["retain"] is False
    assert tools["uploadFirmware"]["schema"]["properties"]["payload"]["contentEncoding"] == "base64"
    assert tools["setLabel"]["schema"]["properties"]["payload"] == {"type": "string", "maxLength": 40}
    read = tools["readMeasurement"]["schema"]
    assert set(read["properties"]) == {"lightId", "mode", "count", "wait_s"}
    assert "required" not in read  # an omitted parameter reads every light
    assert "QoS" not in json.dumps(read) and "retain" not in read["properties"]


def test_a_recursive_schema_becomes_a_defs_reference_not_an_infinite_tree() -> None:
    tools = tools_of(MqttDriver(LIGHTS, host="127.0.0.1"))
    schema = tools["publishTree"]["schema"]
    assert schema["properties"]["payload"] == {"$ref": "#/$defs/node"}
    assert schema["$defs"]["node"]["properties"]["children"]["items"] == {"$ref": "#/$defs/node"}


def test_descriptions_are_plain_text() -> None:
    driver = MqttDriver({
        "asyncapi": "3.0.0", "info": {"title": "t", "version": "1"},
        "channels": {"c": {"address": "a/b", "messages": {"m": {"payload": {"type": "string"}}}}},
        "operations": {"op": {"action": "send", "channel": {"$ref": "#/channels/c"},
                              "description": "### Heading\n* **bold** and [a link](https://x.test) <b>tag</b>"}},
    }, host="127.0.0.1")
    description = driver.list_tools()[0].description
    assert description.startswith("Heading\n- bold and a link tag")


def test_a_topic_map_gives_publish_read_and_discovery_tools() -> None:
    tools = tools_of(MqttDriver(PLANT, host="127.0.0.1"))
    assert set(tools) == {"line_temperature", "valve_setpoint", "alarm", "discover_topics"}
    assert tools["valve_setpoint"]["schema"]["properties"]["payload"]["additionalProperties"] is False
    assert tools["discover_topics"]["annotations"]["readOnlyHint"] is True
    assert MqttDriver(PLANT, host="127.0.0.1").meta.spec_format == "MQTT topic map"


def test_configuration_overrides_qos_retain_and_the_destructive_hint() -> None:
    driver = MqttDriver(LIGHTS, host="127.0.0.1",
                        operations={"sendCommand": {"qos": 2, "retain": True, "destructive": False}})
    tool = driver.get_tool("sendCommand")
    assert tool is not None
    assert (tool.meta["qos"], tool.meta["retain"], tool.annotations["destructiveHint"]) == (2, True, False)


def test_read_only_offers_no_publish_tool() -> None:
    names = {t.name for t in MqttDriver(LIGHTS, host="127.0.0.1", read_only=True).list_tools()}
    assert names == {"readMeasurement", "readState", "readLabel"}


@pytest.mark.parametrize(("document", "needle"), [
    ({"asyncapi": "1.2.0", "info": {}}, "#/asyncapi: AsyncAPI '1.2.0' is not supported"),
    ({"asyncapi": "3.0.0", "info": {}, "operations": {"x": {"action": "listen"}}},
     "#/operations/x/action: action must be 'send' or 'receive'"),
    ({"asyncapi": "3.0.0", "info": {}, "channels": {},
      "operations": {"x": {"action": "send", "channel": {"$ref": "#/channels/nope"}}}},
     "#/operations/x/channel: $ref '#/channels/nope' points at nothing"),
    ({"asyncapi": "2.6.0", "info": {}, "channels": {"a": {"subscribe": {"message": {"$ref": "other.yaml#/m"}}}}},
     "names a file, but the spec was given as a mapping"),
    ({"topics": {"t": {"topic": "a/{x}", "action": "send", "parameters": {"y": {}}}}},
     "#/topics/t/parameters: y not in the topic"),
    ({"topics": {"t": {"topic": "a", "action": "send", "qos": 3}}}, "#/topics/t/qos: must be 0, 1 or 2"),
    ({"topics": {"t": {"topic": "a", "action": "send", "retian": True}}}, "unknown key(s) 'retian'"),
    ({"neither": 1}, "has neither an 'asyncapi' version nor a 'topics' map"),
])
def test_a_bad_spec_is_refused_naming_the_place(document: dict, needle: str) -> None:
    with pytest.raises(SpecError) as caught:
        MqttDriver(document, host="127.0.0.1")
    assert needle in str(caught.value)


@pytest.mark.parametrize("topic", ["plant/+/valve", "plant/#", "plant/{line}/+"])
def test_a_publish_operation_whose_address_is_no_publish_topic_is_refused_at_load(topic: str) -> None:
    with pytest.raises(ConfigurationError, match="no topic one can publish to"):
        MqttDriver({"topics": {"set": {"topic": topic, "action": "send"}}}, host="127.0.0.1")
    MqttDriver({"topics": {"watch": {"topic": topic, "action": "receive"}}}, host="127.0.0.1")  # a filter is fine


def test_a_broken_file_is_named_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("asyncapi: 3.0.0\ninfo: [\n")
    with pytest.raises(SpecError) as caught:
        MqttDriver(path)
    assert str(path) in str(caught.value) and "line 3" in str(caught.value)


def test_references_to_other_files_stay_in_the_spec_folder(tmp_path: Path) -> None:
    (tmp_path / "schemas.yaml").write_text("level: {type: integer, maximum: 9}\n")
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "asyncapi: 3.0.0\ninfo: {title: t, version: '1'}\n"
        "channels: {c: {address: a, messages: {m: {payload: {$ref: 'schemas.yaml#/level'}}}}}\n"
        "operations: {op: {action: send, channel: {$ref: '#/channels/c'}}}\n")
    tool = MqttDriver(spec, host="127.0.0.1").list_tools()[0]
    assert tool.input_schema["properties"]["payload"] == {"type": "integer", "maximum": 9}
    spec.write_text(spec.read_text().replace("schemas.yaml", "../outside.yaml"))
    with pytest.raises(SpecError, match="leaves the spec's folder"):
        MqttDriver(spec, host="127.0.0.1").list_tools()


@pytest.mark.parametrize(("options", "needle"), [
    ({}, "needs spec="),
    ({"spec": LIGHTS, "colour": "red"}, "no option 'colour'"),
    ({"spec": LIGHTS, "default_qos": 3}, "default_qos must be 0, 1 or 2"),
    ({"spec": LIGHTS, "protocol": "4"}, "protocol must be '3.1.1' or '5'"),
    ({"spec": LIGHTS, "rate_limit": "fast"}, "rate_limit"),
    ({"spec": LIGHTS, "operations": {"nope": {"qos": 1}}}, "no operation 'nope'"),
    ({"spec": LIGHTS, "operations": {"sendCommand": {"qos": 5}}}, "qos must be 0, 1 or 2"),
    ({"spec": LIGHTS, "operations": {"sendCommand": {"clear_retained": True}}},
     "operations.sendCommand.clear_retained: the operation does not publish retained messages"),
    ({"spec": LIGHTS, "operations": {"setLabel": {"clear_retained": "yes"}}}, "clear_retained must be true or false"),
    ({"spec": LIGHTS, "tls": True, "ca_file": "/nonexistent/ca.pem"}, "ca_file"),
    ({"spec": {"discover": ["plant/#"], "topics": {"t": {"topic": "plant/temp", "action": "receive"}}}},
     "discover filter 'plant/#' reaches beyond the topic map's own topics"),
    ({"spec": {"discover": ["plant/#"], "topics": {"t": {"topic": "plant/temp", "action": "receive"}}},
      "subscribe_allow": ["plant/temp"]}, "discover filter 'plant/#' is not on the subscribe_allow list"),
])
def test_bad_options_are_a_configuration_error(options: dict, needle: str) -> None:
    with pytest.raises(ConfigurationError, match=None) as caught:
        MqttDriver(**options)
    assert needle in str(caught.value)


HIDDEN = "\u200b\u202e\U000e0049\U000e0047\U000e004e\U000e004f\U000e0052\U000e0045"  # zero-width, bidi, "IGNORE" in tag characters


def _invisible(text: str) -> list[str]:
    return [f"U+{ord(c):04X}" for c in text if unicodedata.category(c) == "Cf"]


def test_descriptions_from_the_spec_carry_no_invisible_characters(tmp_path: Path) -> None:
    (tmp_path / "hidden.yaml").write_text(f"""asyncapi: 3.0.0
info: {{title: "Hidden{HIDDEN}", version: "1"}}
channels:
  lamp:
    address: 'lamps/{{lampId}}/set'
    parameters:
      lampId: {{description: "Which lamp{HIDDEN}."}}
    messages:
      set:
        summary: Set a lamp{HIDDEN}.
        payload:
          type: object
          title: Setting{HIDDEN}
          properties:
            level: {{type: integer, description: "Brightness{HIDDEN}.", title: "Level{HIDDEN}"}}
operations:
  setLamp:
    action: send
    channel: {{$ref: '#/channels/lamp'}}
    summary: Set{HIDDEN} a lamp
    description: Sets the lamp{HIDDEN}.
""", encoding="utf-8")
    with MqttDriver(tmp_path / "hidden.yaml", host="127.0.0.1") as driver:
        tool = driver.get_tool("setLamp")
        shown = [tool.description, tool.title or "", json.dumps(tool.input_schema, ensure_ascii=False),
                 driver.get_function_description()]
    assert "Sets the lamp." in shown[0] and "Brightness." in shown[2] and "Which lamp." in shown[2]
    assert [_invisible(text) for text in shown] == [[], [], [], []]


def describe(spec: Path) -> subprocess.CompletedProcess[str]:
    """``mcs describe mqtt`` on ``spec`` in a process of its own (killed if it does not end)."""
    return subprocess.run([str(Path(sys.executable).with_name("mcs")), "describe", "mqtt", "-o", f"spec={spec}"],
                          capture_output=True, text=True, timeout=60)


def test_references_that_fan_out_are_refused_at_load_not_inlined(tmp_path: Path) -> None:
    # Each schema names the next one twice: 2**40 schema objects once inlined, from 3 KB.
    schemas = {f"s{n}": {"allOf": [{"$ref": f"#/components/schemas/s{n + 1}"}] * 2} for n in range(40)}
    schemas["s40"] = {"type": "string"}
    spec = tmp_path / "fan-out.json"
    spec.write_text(json.dumps({
        "asyncapi": "2.6.0", "info": {"title": "t", "version": "1"},
        "channels": {"a/b": {"subscribe": {"operationId": "x", "message": {
            "payload": {"$ref": "#/components/schemas/s0"}}}}},
        "components": {"schemas": schemas}}))
    ran = describe(spec)
    assert ran.returncode == 2
    assert "expand to more than 100000 schema objects" in ran.stderr


def test_yaml_aliases_that_expand_a_small_file_into_millions_of_values_are_refused(tmp_path: Path) -> None:
    levels = ["- &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"] + [
        f"- &l{n} [{', '.join([f'*l{n - 1}'] * 9)}]" for n in range(1, 8)]
    spec = tmp_path / "laughs.yaml"
    spec.write_text("asyncapi: 2.6.0\ninfo: {title: t, version: '1'}\nchannels:\n  a/b:\n    subscribe:\n"
                    "      operationId: x\n      message:\n        payload:\n          type: string\n"
                    "          examples:\n" + "".join(f"            {line}\n" for line in levels))
    ran = describe(spec)
    assert ran.returncode == 2
    assert "expands to more than 1000000 values once its YAML aliases are expanded" in ran.stderr


def test_schemas_nested_past_what_python_can_walk_are_a_spec_error() -> None:
    schemas = {f"s{n}": {"type": "object", "properties": {"a": {"$ref": f"#/components/schemas/s{n + 1}"}}}
               for n in range(3000)}
    schemas["s3000"] = {"type": "string"}
    spec = {"asyncapi": "2.6.0", "info": {"title": "t", "version": "1"},
            "channels": {"a/b": {"subscribe": {"operationId": "x", "message": {
                "payload": {"$ref": "#/components/schemas/s0"}}}}},
            "components": {"schemas": schemas}}
    with pytest.raises(SpecError, match="nested too deeply"):
        MqttDriver(spec, host="127.0.0.1")
