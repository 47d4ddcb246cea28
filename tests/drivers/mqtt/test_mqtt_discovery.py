"""A large AsyncAPI document goes to discovery mode on its own (default ``token_budget``), and
every operation stays searchable, describable and callable through the meta-tools.

The corpus has no large AsyncAPI document, so the large one is the corpus's streetlights
(AsyncAPI 3) repeated for twelve districts of a city: the same channels, messages and
traits under ``smartylighting/<district>/...``, the operations named ``<district>_<operation>``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from mcs_mqtt import MqttDriver
from mqtt_broker import Mosquitto, Observer

CORPUS = Path(__file__).resolve().parents[3] / ".." / "shared" / "corpus"
STREETLIGHTS = CORPUS / "asyncapi" / "v3" / "streetlights-mqtt-asyncapi.yml"
DISTRICTS = ("harbour", "castle", "market", "station", "university", "airport",
             "riverside", "oldtown", "stadium", "hospital", "museum", "zoo")


def city_spec(streetlights: dict[str, Any]) -> dict[str, Any]:
    """The streetlights document with its channels and operations once per district."""
    spec = copy.deepcopy(streetlights)
    spec["channels"], spec["operations"] = {}, {}
    for district in DISTRICTS:
        for name, channel in streetlights["channels"].items():
            copied = copy.deepcopy(channel)
            copied["address"] = channel["address"].replace("smartylighting/", f"smartylighting/{district}/", 1)
            spec["channels"][f"{district}_{name}"] = copied
        for name, operation in streetlights["operations"].items():
            copied = copy.deepcopy(operation)
            channel_name = operation["channel"]["$ref"].rsplit("/", 1)[1]
            copied["channel"] = {"$ref": f"#/channels/{district}_{channel_name}"}
            copied["messages"] = [{"$ref": m["$ref"].replace(f"/channels/{channel_name}/",
                                                             f"/channels/{district}_{channel_name}/")}
                                  for m in operation["messages"]]
            copied["summary"] = f"{operation.get('summary', name)} In the {district} district."
            spec["operations"][f"{district}_{name}"] = copied
    return spec


@pytest.fixture(scope="module")
def city(broker: Mosquitto, tmp_path_factory: pytest.TempPathFactory) -> Iterator[MqttDriver]:
    if not STREETLIGHTS.is_file():
        pytest.skip(f"the shared corpus is not beside the repository ({STREETLIGHTS.name} is missing)")
    path = tmp_path_factory.mktemp("city") / "city-streetlights.yaml"
    path.write_text(yaml.safe_dump(city_spec(yaml.safe_load(STREETLIGHTS.read_text()))))
    with MqttDriver(path, host="127.0.0.1", port=broker.port) as driver:
        yield driver


def test_the_large_spec_is_described_in_discovery_mode_by_default(city: MqttDriver) -> None:
    description = city.get_function_description()
    assert city.token_budget == 8000
    assert "search_tools" in description and "percentage" not in description  # no inline schemas
    names = {tool.name for tool in city.list_tools()}
    assert {"search_tools", "describe_tool", "call_tool"} <= names
    assert len(names - {"search_tools", "describe_tool", "call_tool"}) == 4 * len(DISTRICTS)


def test_search_describe_and_publish_through_the_meta_tools(city: MqttDriver, broker: Mosquitto) -> None:
    found = city.process_llm_response(json.dumps(
        {"tool": "search_tools", "arguments": {"query": "dim the streetlights in the harbour district"}}))
    assert "harbour_dimLight" in [tool["name"] for tool in found["tools"][:3]]
    described = city.process_llm_response(json.dumps(
        {"tool": "describe_tool", "arguments": {"name": "harbour_dimLight"}}))
    schema = described["input_schema"]
    assert {"streetlightId", "payload"} <= set(schema["properties"])
    assert "percentage" in json.dumps(schema["properties"]["payload"])
    topic = "smartylighting/harbour/streetlights/1/0/action/7/dim"
    seen = Observer(broker.port, topic)
    try:
        result = city.process_llm_response(json.dumps({"tool": "call_tool", "arguments": {
            "name": "harbour_dimLight",
            "arguments": {"streetlightId": "7", "payload": {"percentage": 30, "sentAt": "2024-05-01T10:00:00Z"}}}}))
        assert result["published"] is True and result["topic"] == topic
        [message] = seen.wait_for(1)
        assert json.loads(message.payload) == {"percentage": 30, "sentAt": "2024-05-01T10:00:00Z"}
    finally:
        seen.close()
