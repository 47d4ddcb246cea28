"""Response validation by openapi-core: a server that breaks its own contract is named, or refused."""

from __future__ import annotations

import pytest
from mcs_rest import RestDriver
from mcs_rest._promised import unpromised
from mcs_rest._spec import Spec
from rest_paths import NOTES, PETSTORE
from rest_server import Running

from mcs.errors import ExecutionError


@pytest.fixture
def checked(api: Running):
    with RestDriver(NOTES, base_url=api.url + "/v1", validate_responses=True) as driver:
        yield driver


def test_an_answer_that_keeps_the_contract_comes_back_as_it_is(checked):
    assert checked.call_tool("getNote", {"noteId": 1}) == {
        "id": 1, "text": "hello", "priority": 2, "created": "2026-01-02T03:04:05Z"}
    assert checked.call_tool("createNote", {"text": "a"}) == {"text": "a", "id": 1}


def test_a_broken_body_and_header_come_back_with_a_note_naming_each_place(checked):
    answer = checked.call_tool("getNote", {"noteId": 13})
    assert answer["result"] == {"id": "thirteen", "priority": 9, "created": "yesterday", "secret": "x"}
    note = answer["contract_note"]
    assert note.startswith("The API's answer does not match its own spec, so do not rely on the parts named here")
    for place in ("body /: 'text' is a required property", "body /priority: 9 is greater than the maximum of 5",
                  "body /id: 'thirteen' is not of type 'integer'", "body /created: 'yesterday' is not a 'date-time'",
                  "header X-Rate-Limit:"):
        assert place in note
    assert note.endswith("The answer has fields its spec does not promise; do not rely on them (they may be "
                         "missing or mean something else next time): /secret")


def test_fields_the_spec_does_not_promise_are_named_down_a_recursive_body(checked):
    answer = checked.call_tool("getNote", {"noteId": 16})
    assert answer["result"]["parent"]["mood"] == "calm"
    assert answer["contract_note"] == (
        "The answer has fields its spec does not promise; do not rely on them (they may be missing or "
        "mean something else next time): /parent/mood, /views")


def test_strict_responses_return_an_answer_whose_only_fault_is_unpromised_fields(api: Running):
    with RestDriver(NOTES, base_url=api.url + "/v1", strict_responses=True) as driver:
        answer = driver.call_tool("getNote", {"noteId": 16})
    assert answer["result"]["views"] == 3 and answer["contract_note"].endswith("/parent/mood, /views")


def test_an_undeclared_media_type_and_an_undocumented_status_are_named(checked):
    text = checked.call_tool("getNote", {"noteId": 14})
    assert text["result"] == "just text"
    assert "media type 'text/plain' is not one the spec declares (application/json)" in text["contract_note"]
    queued = checked.call_tool("getNote", {"noteId": 15})
    assert "status 202 is not one the spec documents for this operation" in queued["contract_note"]


def test_strict_responses_turn_a_broken_contract_into_an_execution_error(api: Running):
    with RestDriver(NOTES, base_url=api.url + "/v1", strict_responses=True) as driver:
        assert driver.call_tool("getNote", {"noteId": 1})["text"] == "hello"
        with pytest.raises(ExecutionError) as info:
            driver.call_tool("getNote", {"noteId": 13})
    assert "GET /memos/{noteId} answered, but the answer breaks the API's own spec" in info.value.message
    assert info.value.details["status"] == 200
    assert "body /id: 'thirteen' is not of type 'integer'" in info.value.details["violations"]


def test_without_the_option_an_answer_is_not_checked(api: Running):
    with RestDriver(NOTES, base_url=api.url + "/v1") as driver:
        assert driver.call_tool("getNote", {"noteId": 13})["id"] == "thirteen"


async def test_the_async_path_checks_the_answer_too(api: Running):
    driver = RestDriver(NOTES, base_url=api.url + "/v1", validate_responses=True)
    try:
        answer = await driver.acall_tool("getNote", {"noteId": 13})
    finally:
        await driver.aclose()
    assert "body /id" in answer["contract_note"]


def test_the_petstore_answers_are_checked(api: Running):
    with RestDriver(PETSTORE, base_url=api.url + "/v1", validate_responses=True) as driver:
        broken = driver.call_tool("badResponse", {})
        api.state.pets[1] = {"id": 1, "name": "Rex", "tag": None}
        assert driver.call_tool("showPetById", {"petId": "1"}) == {"id": 1, "name": "Rex", "tag": None}
    assert broken["result"] == {"id": "not-a-number", "name": 5}
    assert "body /id: 'not-a-number' is not of type 'integer'" in broken["contract_note"]


def test_a_swagger_2_spec_is_checked_against_its_converted_schema(api: Running):
    swagger = {
        "swagger": "2.0", "info": {"title": "s", "version": "1"}, "basePath": "/v1",
        "paths": {"/pets/{petId}": {"get": {"operationId": "pet", "parameters": [
            {"name": "petId", "in": "path", "required": True, "type": "string"}],
            "responses": {"200": {"description": "a pet", "schema": {
                "type": "object", "required": ["id", "name"],
                "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}}}}}}},
    }
    api.state.pets[1] = {"id": 1, "name": 7}
    with RestDriver(swagger, base_url=api.url + "/v1", validate_responses=True) as driver:
        answer = driver.call_tool("pet", {"petId": "1"})
    assert answer["result"] == {"id": 1, "name": 7}
    assert "body /name: 7 is not of type \"string\"" in answer["contract_note"]


def test_maps_and_free_form_objects_promise_any_field_while_listed_objects_do_not():
    spec = Spec.load({"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {}, "components": {
        "schemas": {"Labels": {"type": "object", "additionalProperties": {"type": "string"}}}}})
    schema = {"type": "object", "properties": {
        "labels": {"$ref": "#/components/schemas/Labels"}, "extra": {"type": "object"},
        "items": {"type": "array", "items": {"anyOf": [
            {"type": "object", "properties": {"a": {}}}, {"type": "object", "properties": {"b": {}}}]}}}}
    body = {"labels": {"any": "x"}, "extra": {"free": 1}, "items": [{"a": 1}, {"b": 2, "c": 3}], "other": {"deep": 1}}
    assert unpromised(spec, schema, spec.root_key, body) == ["/items/1/c", "/other"]
