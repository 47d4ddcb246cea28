"""Input schemas by the proto3 JSON mapping, and arguments accepted under both field names."""

from __future__ import annotations

from pathlib import Path

import jsonschema_rs
import pytest
from grpc_servers import LAB_PROTO
from mcs_grpc import GrpcDriver

from mcs.errors import InvalidInputError
from mcs.tools import ToolCall


@pytest.fixture(scope="module")
def driver():
    with GrpcDriver(proto=LAB_PROTO, description_mode="inline") as driver:
        yield driver


def schema(driver: GrpcDriver, tool: str) -> dict:
    found = driver.get_tool(tool)
    assert found is not None
    return dict(found.input_schema)


def test_scalars_follow_the_proto3_json_mapping(driver: GrpcDriver) -> None:
    props = schema(driver, "Lab_Echo")["properties"]
    assert props["text"] == {"type": "string", "description": "A plain text field."}
    assert props["small"] == {"type": "integer", "minimum": -(2**31), "maximum": 2**31 - 1}
    assert props["big"] == {"type": "string", "pattern": "^-?[0-9]+$", "format": "int64"}
    assert props["unsignedBig"]["format"] == "uint64"
    assert props["ratio"] == {"type": "number"} and props["flag"] == {"type": "boolean"}
    assert props["blob"] == {"type": "string", "contentEncoding": "base64", "pattern": "^[A-Za-z0-9+/_\\s-]*(=\\s*){0,2}$"}
    assert props["tags"] == {"type": "array", "items": {"type": "string"}}


def test_enums_are_named_with_their_values_documented(driver: GrpcDriver) -> None:
    color = schema(driver, "Lab_Echo")["properties"]["color"]
    assert color["enum"] == ["COLOR_UNSPECIFIED", "RED", "GREEN"]
    assert color["description"] == (
        "The colours a thing can have. COLOR_UNSPECIFIED: No colour was given.; RED: The colour of fire trucks."
    )


def test_maps_are_objects_with_keys_checked_when_not_text(driver: GrpcDriver) -> None:
    props = schema(driver, "Lab_Echo")["properties"]
    assert props["counts"]["additionalProperties"]["type"] == "integer"
    assert "propertyNames" not in props["counts"]
    assert props["namesById"] == {"type": "object", "additionalProperties": {"type": "string"},
                                  "propertyNames": {"pattern": "^-?[0-9]+$"}}


def test_a_oneof_lets_at_most_one_field_be_set_and_optional_is_plain(driver: GrpcDriver) -> None:
    echo = schema(driver, "Lab_Echo")
    assert echo["oneOf"][:2] == [{"required": ["choiceText"]}, {"required": ["choiceNumber"]}]
    assert echo["properties"]["maybe"] == {"type": "integer", "minimum": -(2**31), "maximum": 2**31 - 1}
    validator = jsonschema_rs.validator_for(echo)
    assert validator.is_valid({}) and validator.is_valid({"choiceText": "a"})
    assert not validator.is_valid({"choiceText": "a", "choiceNumber": 1})
    with pytest.raises(InvalidInputError):
        driver.prepare(ToolCall("Lab_Echo", {"choice_text": "a", "choiceNumber": 1}))


def test_well_known_types_take_their_json_forms(driver: GrpcDriver) -> None:
    props = schema(driver, "Lab_Echo")["properties"]
    assert props["when"]["format"] == "date-time"
    assert props["howLong"]["pattern"] == "^-?[0-9]+(\\.[0-9]{1,9})?s$"
    assert props["data"] == {"type": "object"} and props["list"] == {"type": "array"}
    assert props["anyValue"] == {"description": "any JSON value"}
    assert props["packed"]["required"] == ["@type"]
    assert props["mask"]["type"] == "string"
    assert props["nothing"] == {"type": "object", "properties": {}, "additionalProperties": False}
    assert props["wDouble"] == {"type": "number"} and props["wBool"] == {"type": "boolean"}
    assert props["wInt64"]["format"] == "int64" and props["wUint64"]["format"] == "uint64"
    assert props["wInt32"]["type"] == "integer" and props["wBytes"]["contentEncoding"] == "base64"
    assert props["nullValue"] == {"type": "null"}


def test_recursive_messages_are_refs_into_defs(driver: GrpcDriver) -> None:
    tree = schema(driver, "Lab_EchoTree")
    assert tree["properties"]["children"] == {"type": "array", "items": {"$ref": "#/$defs/mcs.test.Node"}}
    assert set(tree["$defs"]) == {"mcs.test.Node"}
    expr = schema(driver, "Lab_EchoExpr")
    assert set(expr["$defs"]) == {"mcs.test.Expr", "mcs.test.BinaryOp"}
    assert expr["$defs"]["mcs.test.BinaryOp"]["properties"]["left"] == {"$ref": "#/$defs/mcs.test.Expr"}
    validator = jsonschema_rs.validator_for(expr)
    deep = {"op": {"operator": "+", "left": {"number": "1"}, "right": {"op": {"operator": "*", "left": {"number": "2"}}}}}
    assert validator.is_valid(deep)
    assert not validator.is_valid({"op": {"left": {"number": 1.5}}})


def test_client_streams_take_a_bounded_list_of_messages(driver: GrpcDriver) -> None:
    total = schema(driver, "Lab_Sum")
    assert total["required"] == ["messages"]
    assert total["properties"]["messages"]["maxItems"] == 1000
    assert total["properties"]["messages"]["items"]["properties"]["value"]["type"] == "integer"


def test_a_request_that_is_not_an_object_in_json_is_given_as_request(driver: GrpcDriver) -> None:
    assert schema(driver, "Lab_Shout")["properties"] == {"request": {"type": "string"}}


def test_original_field_names_and_numbers_for_int64_and_enums_are_accepted(driver: GrpcDriver) -> None:
    invocation = driver.prepare(ToolCall("Lab_Echo", {
        "unsigned_big": 7, "big": -3, "color": 1, "names_by_id": {"5": "five"},
        "inners": [{"note": "a"}], "w_int64": 9,
    }))
    assert invocation.arguments == {"unsignedBig": "7", "big": "-3", "color": "RED",
                                    "namesById": {"5": "five"}, "inners": [{"note": "a"}], "wInt64": "9"}
    streamed = driver.prepare(ToolCall("Lab_Sum", {"messages": [{"value": "4"}]}))
    assert streamed.arguments == {"messages": [{"value": 4}]}


def test_unknown_fields_are_refused_with_their_name(driver: GrpcDriver) -> None:
    with pytest.raises(InvalidInputError, match=r"argument 'inner'.*'colour' was unexpected"):
        driver.prepare(ToolCall("Lab_Echo", {"inner": {"colour": "red"}}))
    with pytest.raises(InvalidInputError, match="'target'"):
        driver.prepare(ToolCall("Lab_Echo", {"target": "evil.example:443"}))


def test_pubsub_field_behavior_and_comments_shape_the_schema(corpus: Path) -> None:
    root = corpus / "proto" / "googleapis"
    with GrpcDriver(proto=root / "google/pubsub/v1/pubsub.proto", include_paths=[root]) as pubsub:
        topic = schema(pubsub, "Publisher_CreateTopic")
        assert topic["required"] == ["name"]
        assert topic["properties"]["name"]["description"].startswith("Required. Identifier. The name of the topic.")
        assert "state" not in topic["properties"]  # OUTPUT_ONLY
        assert topic["properties"]["messageRetentionDuration"]["pattern"].endswith("s$")
        seek = schema(pubsub, "Subscriber_Seek")
        assert seek["oneOf"][:2] == [{"required": ["time"]}, {"required": ["snapshot"]}]
        description = pubsub.get_tool("Publisher_Publish").description
        assert description == "Adds one or more messages to the topic. Returns `NOT_FOUND` if the topic does not exist.".replace("`", "")
