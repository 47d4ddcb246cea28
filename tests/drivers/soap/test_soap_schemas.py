"""Input schemas from XSD: every construct of world.wsdl as JSON Schema an LLM can fill."""

from __future__ import annotations

import pytest
from mcs_soap import SoapDriver
from soap_world import World

from mcs.errors import InvalidInputError


@pytest.fixture
def tools(world: World):
    with SoapDriver(world.wsdl) as driver:
        yield {t.name: t for t in driver.list_tools()}


def test_documentation_becomes_plain_text_descriptions(tools):
    add = tools["Calculator_CalculatorSoap_Add"]
    assert add.description.startswith("Adds two integers.")
    assert add.input_schema["properties"]["a"]["description"] == "The first addend ."
    assert "<b>" not in str(add.input_schema)


def test_integers_get_their_ranges_and_required_follows_min_occurs(tools):
    schema = tools["Calculator_CalculatorSoap_Add"].input_schema
    assert schema["properties"]["a"] == {"type": "integer", "minimum": -(2**31), "maximum": 2**31 - 1,
                                         "description": "The first addend ."}
    assert schema["required"] == ["a", "b"] and schema["additionalProperties"] is False


def test_restrictions_become_patterns_enums_lengths_and_bounds(tools):
    props = tools["CountriesByContinent"].input_schema["properties"]
    assert props["continent"]["enum"] == ["AF", "AN", "AS", "EU", "OC", "AM"]
    assert props["continent"]["description"] == "A continent code."
    assert props["limit"]["minimum"] == 1 and props["limit"]["exclusiveMaximum"] == 100
    assert tools["FullCountryInfo"].input_schema["properties"]["sCountryISOCode"]["pattern"] == "^(?:[A-Z]{2})$"
    by_name = tools["FindCountry"].input_schema["properties"]["byName"]
    assert (by_name["minLength"], by_name["maxLength"]) == (2, 40)


def test_total_and_fraction_digits_bound_a_decimal(tools):
    dividend = tools["Calculator_CalculatorSoap_Divide"].input_schema["properties"]["dividend"]
    assert dividend["type"] == ["string", "number"]
    assert dividend["exclusiveMaximum"] == 10**8 and "2 after the decimal point" in dividend["description"]


def test_a_choice_is_one_of_its_alternatives(tools, world):
    schema = tools["FindCountry"].input_schema
    assert schema["oneOf"] == [{"required": ["byCode"]}, {"required": ["byName"]}]
    assert "required" not in schema


def test_dates_durations_and_binary_have_formats(tools):
    props = tools["Holidays"].input_schema["properties"]
    assert props["from"] == {"type": "string", "format": "date"}
    traveller = tools["RegisterTraveller"].input_schema["properties"]["traveller"]["properties"]
    assert traveller["passport"]["contentEncoding"] == "base64"
    assert traveller["born"]["format"] == "date"


def test_extension_attributes_arrays_nillable_and_any(tools):
    schema = tools["RegisterTraveller"].input_schema
    traveller = schema["properties"]["traveller"]
    assert list(traveller["properties"]) == ["name", "born", "passport", "visited", "extra", "id", "tier"]
    assert traveller["required"] == ["name", "id"]
    assert traveller["description"] == "A person who travels."
    assert traveller["properties"]["tier"] == {"type": "string", "enum": ["basic", "gold"], "default": "basic"}
    assert traveller["properties"]["visited"]["type"] == "array" and traveller["properties"]["visited"]["maxItems"] == 5
    assert traveller["properties"]["extra"]["properties"]["_value_1"]["type"] == "string"
    assert "null" in schema["properties"]["budget"]["type"]


def test_a_recursive_type_is_a_ref_into_defs(tools):
    schema = tools["RegisterTraveller"].input_schema
    assert schema["properties"]["itinerary"] == {"$ref": "#/$defs/tNode"}
    node = schema["$defs"]["tNode"]
    assert node["properties"]["child"] == {"type": "array", "items": {"$ref": "#/$defs/tNode"}}


def test_the_core_validator_refuses_what_the_schema_forbids(world: World):
    with SoapDriver(world.wsdl) as driver:
        for bad in ({"continent": "XX"}, {"continent": "EU", "limit": 100}):
            with pytest.raises(InvalidInputError):
                driver.call_tool("CountriesByContinent", bad)
        with pytest.raises(InvalidInputError):
            driver.call_tool("FullCountryInfo", {"sCountryISOCode": "nl"})
    assert world.peer.requests == []


def test_annotations_follow_operation_names(tools, world):
    assert tools["FindCountry"].annotations["readOnlyHint"] is True
    assert tools["FindCountry"].annotations["idempotentHint"] is True
    assert tools["RegisterTraveller"].annotations == {"readOnlyHint": False, "openWorldHint": True,
                                                      "destructiveHint": False}
