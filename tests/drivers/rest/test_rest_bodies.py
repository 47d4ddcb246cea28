"""Request bodies: recursive object bodies flattened, and a body given in the other shape repaired."""

from __future__ import annotations

import json

import pytest
from mcs_rest import RestDriver
from rest_paths import NOTES
from rest_server import Running

from mcs.errors import InvalidInputError


@pytest.fixture
def notes(api: Running):
    with RestDriver(NOTES, base_url=api.url + "/v1") as driver:
        yield driver


def test_a_recursive_body_is_flattened_keeping_the_recursive_member_as_a_defs_reference(notes):
    schema = notes.get_tool("createNote").input_schema
    assert set(schema["properties"]) == {"text", "priority", "parent"}
    assert schema["required"] == ["text"]
    assert schema["properties"]["parent"]["allOf"][0] == {"$ref": "#/$defs/NewNote"}
    assert set(schema["$defs"]["NewNote"]["properties"]) == {"text", "priority", "parent"}


def test_a_body_that_is_an_all_of_over_a_recursive_type_is_flattened_too(notes):
    schema = notes.get_tool("replaceNote").input_schema
    assert set(schema["properties"]) == {"noteId", "text", "priority", "parent"}  # id, created: read-only


def test_the_model_writing_the_fields_of_a_recursive_body_gets_its_call_made(notes, api):
    result = notes.process_llm_response(
        '{"tool": "createNote", "arguments": {"text": "buy milk", "priority": 2, "parent": {"text": "shopping"}}}'
    )
    assert result == {"text": "buy milk", "priority": 2, "parent": {"text": "shopping"}, "id": 1}
    assert json.loads(api.state.requests[-1].body) == {"text": "buy milk", "priority": 2, "parent": {"text": "shopping"}}


def test_fields_given_flat_for_a_body_that_stays_one_argument_are_folded_into_it(notes, api):
    assert "body" in notes.get_tool("editNote").input_schema["properties"]
    result = notes.call_tool("editNote", {"noteId": 3, "text": "new text"})
    assert result == {"text": "new text", "id": 3}
    assert json.loads(api.state.requests[-1].body) == {"text": "new text"}


def test_flat_fields_that_fit_no_variant_of_the_body_are_refused_with_the_unexpected_names(notes, api):
    with pytest.raises(InvalidInputError) as info:
        notes.call_tool("editNote", {"noteId": 3, "text": "x", "priority": 2})
    assert "unexpected argument(s) 'priority', 'text'" in info.value.message
    with pytest.raises(InvalidInputError):
        notes.call_tool("editNote", {"noteId": 3, "colour": "red"})
    assert api.state.requests == []


def test_flat_fields_are_not_folded_when_the_body_was_given_too(notes):
    with pytest.raises(InvalidInputError) as info:
        notes.call_tool("editNote", {"noteId": 3, "body": {"text": "x"}, "priority": 2})
    assert "'priority'" in info.value.message


def test_a_flattened_body_given_wrapped_in_body_is_unwrapped(notes, api):
    notes.call_tool("createNote", {"body": {"text": "wrapped"}})
    assert json.loads(api.state.requests[-1].body) == {"text": "wrapped"}


def test_a_wrapped_body_with_a_field_also_given_flat_is_refused(notes, api):
    with pytest.raises(InvalidInputError) as info:
        notes.call_tool("createNote", {"text": "a", "body": {"text": "b"}})
    assert "'body'" in info.value.message
    assert api.state.requests == []
