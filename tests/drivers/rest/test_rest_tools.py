"""Tools from operations: names, schemas, selection, description modes, per-model shaping."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcs_rest import RestDriver
from rest_paths import CORPUS, PETSTORE
from rest_server import Running

from mcs.tools import TOOL_NAME_PATTERN

OPENAPI = CORPUS / "openapi"


def _spec(paths: dict, **extra) -> dict:
    return {"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": paths, **extra}


def test_names_come_from_operation_ids_else_method_and_path():
    long_id = "a" * 40 + "VeryLongOperationIdentifierThatKeepsGoing" + "b" * 20
    spec = _spec({
        "/pets/{id}": {"get": {"responses": {}}},
        "/x": {"get": {"operationId": long_id, "responses": {}},
               "post": {"operationId": long_id + "2", "responses": {}}},
        "/y": {"get": {"operationId": "repos/get thing", "responses": {}}},
    })
    with RestDriver(spec) as driver:
        names = [t.name for t in driver.list_tools()]
    assert names[0] == "get_pets_id"
    assert all(TOOL_NAME_PATTERN.match(n) and len(n) <= 64 for n in names)
    assert names[1] != names[2] and len(names[1]) == 64
    assert names[3] == "repos_get_thing"
    with RestDriver(spec) as again:
        assert [t.name for t in again.list_tools()] == names  # stable


def test_the_original_operation_id_is_an_alias(api: Running):
    spec = _spec({"/pets": {"get": {"operationId": "pets/list", "responses": {}}}},
                 servers=[{"url": api.url + "/v1"}])
    with RestDriver(spec) as driver:
        assert driver.process_llm_response('{"tool": "pets/list", "arguments": {}}') == []


def test_title_and_description_come_from_summary_and_description():
    spec = _spec({"/a": {"get": {"operationId": "a", "summary": "Short", "description": "Long text.", "responses": {}}},
                  "/b": {"get": {"operationId": "b", "summary": "Only summary", "responses": {}}}})
    with RestDriver(spec) as driver:
        a, b = driver.list_tools()
    assert (a.title, a.description) == ("Short", "Long text.")
    assert (b.title, b.description) == (None, "Only summary")
    assert a.annotations["readOnlyHint"] is True


@pytest.mark.parametrize(("method", "expected"), [
    ("get", {"readOnlyHint": True, "idempotentHint": True}),
    ("head", {"readOnlyHint": True, "idempotentHint": True}),
    ("post", {"readOnlyHint": False, "destructiveHint": True}),
    ("put", {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True}),
    ("patch", {"readOnlyHint": False, "destructiveHint": True}),
    ("delete", {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True}),
])
def test_every_write_method_is_marked_destructive_and_reads_read_only(method: str, expected: dict[str, bool]) -> None:
    spec = _spec({"/things": {method: {"operationId": "op", "responses": {}}}})
    with RestDriver(spec) as driver:
        (tool,) = driver.list_tools()
    assert dict(tool.annotations) == expected


def test_allof_is_merged_and_enum_format_default_nullable_are_kept():
    with RestDriver(PETSTORE) as driver:
        create = driver.get_tool("createPet").input_schema
        listing = driver.get_tool("listPets").input_schema
    assert create["properties"]["name"] == {"type": "string", "description": "The pet's name"}
    assert create["properties"]["tag"]["enum"] == ["dog", "cat", "bird"]
    assert create["required"] == ["name"]
    assert listing["properties"]["limit"] == {"type": "integer", "minimum": 1, "maximum": 1000, "default": 20}
    assert "required" not in listing


def test_read_only_fields_are_left_out_of_requests():
    spec = _spec(
        {"/pets": {"post": {"operationId": "add", "responses": {}, "requestBody": {"required": True, "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}}}}},
        components={"schemas": {"Pet": {"type": "object", "required": ["id", "name"], "properties": {
            "id": {"type": "integer", "readOnly": True}, "name": {"type": "string", "nullable": True},
            "secret": {"type": "string", "writeOnly": True, "format": "password"}}}}},
    )
    with RestDriver(spec) as driver:
        schema = driver.get_tool("add").input_schema
    assert schema["required"] == ["name"]
    assert "id" not in schema["properties"]
    assert schema["properties"]["name"] == {"type": ["string", "null"]}
    assert schema["properties"]["secret"]["writeOnly"] is True


def test_oneof_bodies_are_kept_whole():
    spec = _spec({"/s": {"post": {"operationId": "s", "responses": {}, "requestBody": {"content": {
        "application/json": {"schema": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}}}}}})
    with RestDriver(spec) as driver:
        schema = driver.get_tool("s").input_schema
    assert schema["properties"]["body"] == {"oneOf": [{"type": "string"}, {"type": "integer"}]}


def test_include_and_exclude_by_tag_path_method_and_operation_id():
    with RestDriver(PETSTORE, include={"tags": ["pets"]}) as d:
        assert set(d.operations) == {"listPets", "createPet", "showPetById", "deletePet", "uploadPhoto"}
    with RestDriver(PETSTORE, include={"tags": ["pets"], "methods": ["get"]}) as d:
        assert set(d.operations) == {"listPets", "showPetById"}
    with RestDriver(PETSTORE, include={"paths": ["/pets/*"]}, exclude={"operations": ["deletePet"]}) as d:
        assert set(d.operations) == {"showPetById", "uploadPhoto"}
    with RestDriver(PETSTORE, exclude={"methods": ["GET", "POST", "PUT"]}) as d:
        assert set(d.operations) == {"deletePet"}


def test_a_bad_selection_option_is_a_configuration_error():
    from mcs.errors import ConfigurationError

    with pytest.raises(ConfigurationError):
        RestDriver(PETSTORE, include={"tag": ["pets"]})


def test_swagger_form_data_and_csv_arrays_are_sent_as_swagger_says(api: Running):
    spec = {
        "swagger": "2.0", "info": {"title": "s", "version": "1"}, "basePath": "/v1",
        "paths": {
            "/login": {"post": {"operationId": "login", "consumes": ["application/x-www-form-urlencoded"],
                                "parameters": [{"name": "username", "in": "formData", "type": "string", "required": True},
                                               {"name": "remember", "in": "formData", "type": "boolean"}],
                                "responses": {}}},
            "/pets": {"get": {"operationId": "list", "parameters": [
                {"name": "tags", "in": "query", "type": "array", "items": {"type": "string"}},
                {"name": "limit", "in": "query", "type": "integer", "x-nullable": True}], "responses": {}}},
        },
    }
    with RestDriver(spec, base_url=api.url + "/v1") as driver:
        assert driver.get_tool("login").input_schema["required"] == ["username"]
        assert driver.call_tool("login", {"username": "bob"}) == {"user": "bob", "remember": None}
        assert driver.get_tool("list").input_schema["properties"]["limit"]["type"] == ["integer", "null"]
        driver.call_tool("list", {"tags": ["a", "b"]})
    assert api.state.requests[-1].query == "tags=a%2Cb"


def test_small_specs_are_described_inline_and_large_ones_in_discovery_mode(corpus):
    with RestDriver(PETSTORE) as small:
        text = small.get_function_description()
        assert "listPets" in text and "search_tools" not in text
    with RestDriver(OPENAPI / "github_api.github.com_2020-08.json") as large:
        text = large.get_function_description()
        assert "search_tools" in text and "623 tools" in text
    with RestDriver(PETSTORE, token_budget=100) as forced:
        assert "search_tools" in forced.get_function_description()


def _token_counter():
    from o200k import load_o200k

    tokenizers = CORPUS.parent / "tokenizers"
    if not (tokenizers / "o200k_base.tiktoken").is_file():
        pytest.skip("the shared o200k tokenizer (../shared/tokenizers) is not available here")
    pytest.importorskip("tiktoken")
    return load_o200k(tokenizers)


def _specs() -> list[Path]:
    if not OPENAPI.is_dir():
        return []
    from test_rest_loading import SPECS

    return SPECS


@pytest.mark.parametrize("path", _specs(), ids=lambda p: p.name)
def test_discovery_description_is_at_most_3000_o200k_tokens(corpus, path):
    encoding = _token_counter()
    with RestDriver(path, description_mode="discovery") as driver:
        text = driver.get_function_description()
    assert len(encoding.encode(text)) <= 3000


def test_every_operation_is_reachable_in_discovery_mode(corpus):
    with RestDriver(OPENAPI / "github_api.github.com_2020-08.json") as driver:
        found: set[str] = set()
        groups = {str(t.meta["group"]) for t in driver.list_tools() if "group" in t.meta}
        for group in groups:
            offset = 0
            while True:
                page = driver.call_tool("search_tools", {"group": group, "limit": 50, "offset": offset})
                found |= {t["name"] for t in page["tools"]}
                if "next_offset" not in page:
                    break
                offset = page["next_offset"]
        assert found == set(driver.operations)
        described = driver.call_tool("describe_tool", {"name": "issues_create"})
        assert described["input_schema"]["required"] == ["owner", "repo", "title"]


def test_search_finds_the_operation_for_a_task(corpus):
    with RestDriver(OPENAPI / "github_api.github.com_2020-08.json") as driver:
        result = driver.call_tool("search_tools", {"query": "create an issue comment", "limit": 3})
    assert result["tools"][0]["name"] == "issues_create-comment"


def test_models_that_reject_refs_get_them_inlined():
    with RestDriver(PETSTORE, description_mode="inline") as driver:
        plain = driver.get_function_description("claude-3-5-sonnet")
        shaped = driver.get_function_description("gemini-1.5-pro")
        tools = driver.shaped_tools("gemini-2.0-flash")
    assert "#/$defs/Node" in plain
    assert "$ref" not in shaped and "$defs" not in shaped
    echo = next(t for t in tools if t.name == "echoPost")
    children = echo.input_schema["properties"]["children"]
    assert children["items"]["properties"]["children"]["items"]["properties"]["children"]["items"]["type"] == "object"
    json.dumps(echo.input_schema)


def test_a_prefix_names_every_tool_and_calls_still_reach_their_operation(api: Running):
    with RestDriver(PETSTORE, base_url=api.url + "/v1", prefix="shop") as driver:
        names = [t.name for t in driver.list_tools()]
        assert "shop_listPets" in names and "listPets" not in names
        api.state.pets[1] = {"id": 1, "name": "Rex"}
        assert driver.process_llm_response('{"tool": "shop_showPetById", "arguments": {"petId": "1"}}') == {
            "id": 1, "name": "Rex"}


def test_a_misspelled_option_is_a_configuration_error_listing_the_options():
    from mcs.errors import ConfigurationError

    with pytest.raises(ConfigurationError) as info:
        RestDriver(PETSTORE, base_ulr="http://x")
    assert "'base_ulr'" in str(info.value) and "base_url" in str(info.value)


def test_an_include_entry_that_matches_no_operation_is_warned_about():
    with pytest.warns(UserWarning, match=r"include filter.s tags: petz; operations: listPet match no operation"):
        driver = RestDriver(PETSTORE, include={"operations": ["listPets", "listPet"], "tags": ["petz", "pets"]})
    with driver:
        assert set(driver.operations) == {"listPets"}


def test_an_operation_named_call_tool_does_not_shadow_the_discovery_meta_tool(api: Running):
    spec = _spec({"/echo/remote-call": {"get": {"operationId": "call_tool", "summary": "Run a remote job",
                                                "responses": {}}},
                  "/pets": {"get": {"operationId": "listPets", "responses": {}}}},
                 servers=[{"url": api.url + "/v1"}])
    with RestDriver(spec, description_mode="discovery") as driver:
        assert {"call_tool_op", "listPets", "call_tool"} <= {t.name for t in driver.list_tools()}
        pets = {"tool": "call_tool", "arguments": {"name": "listPets", "arguments": {}}}
        assert driver.process_llm_response(json.dumps(pets)) == []
        remote = {"tool": "call_tool", "arguments": {"name": "call_tool_op"}}
        assert driver.process_llm_response(json.dumps(remote))["path"] == "/v1/echo/remote-call"
    assert [entry.path for entry in api.state.requests] == ["/v1/pets", "/v1/echo/remote-call"]


def test_a_prefixed_drivers_call_tool_operation_is_not_reached_by_the_bare_meta_tool_name(api: Running):
    job = {"name": "name", "in": "query", "schema": {"type": "string"}}
    spec = _spec({"/echo/remote-call": {"get": {"operationId": "call_tool", "summary": "Run a remote job",
                                                "parameters": [job], "responses": {}}},
                  "/pets": {"get": {"operationId": "listPets", "responses": {}}}},
                 servers=[{"url": api.url + "/v1"}])
    with RestDriver(spec, prefix="shop", description_mode="discovery") as driver:
        assert {"shop_call_tool_op", "shop_call_tool"} <= {t.name for t in driver.list_tools()}
        meant_for_the_meta_tool = json.dumps({"tool": "call_tool", "arguments": {"name": "shop_listPets"}})
        assert driver.process_llm_response(meant_for_the_meta_tool) == meant_for_the_meta_tool
        pets = {"tool": "shop_call_tool", "arguments": {"name": "shop_listPets", "arguments": {}}}
        assert driver.process_llm_response(json.dumps(pets)) == []
    assert [entry.path for entry in api.state.requests] == ["/v1/pets"]
