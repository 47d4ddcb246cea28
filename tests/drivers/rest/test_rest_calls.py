"""Calls through the REST driver against a real HTTP API on loopback."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from urllib.parse import parse_qsl

import pytest
from mcs_rest import BinaryContent, RestDriver
from mcs_rest._results import load_json
from rest_paths import PETSTORE
from rest_server import PNG, Running

from mcs import Toolbox
from mcs.errors import ExecutionError, InvalidInputError


@pytest.fixture
def driver(api: Running):
    with RestDriver(PETSTORE, base_url=api.url + "/v1") as d:
        yield d


def test_a_get_with_query_array_and_header_reaches_the_server_as_the_spec_says(driver, api):
    api.state.pets[1] = {"id": 1, "name": "Rex", "tag": "dog"}
    api.state.pets[2] = {"id": 2, "name": "Tom", "tag": "cat"}
    result = driver.process_llm_response(
        '{"tool": "listPets", "arguments": {"limit": 5, "tags": ["dog", "bird"], "X-Request-Id": "r-1"}}'
    )
    assert result == [{"id": 1, "name": "Rex", "tag": "dog"}]
    sent = api.state.requests[-1]
    assert sent.query == "limit=5&tags=dog&tags=bird"
    assert sent.headers["x-request-id"] == "r-1"


def test_a_json_body_is_sent_from_flattened_arguments(driver, api):
    result = driver.call_tool("createPet", {"name": "Rex", "tag": "dog"})
    assert result == {"id": 1, "name": "Rex", "tag": "dog"}
    sent = api.state.requests[-1]
    assert sent.headers["content-type"] == "application/json"
    assert json.loads(sent.body) == {"name": "Rex", "tag": "dog"}


def test_an_enum_violation_is_refused_before_any_request(driver, api):
    with pytest.raises(InvalidInputError) as info:
        driver.call_tool("createPet", {"name": "Rex", "tag": "fish"})
    assert "tag" in info.value.message
    assert api.state.requests == []


def test_a_404_becomes_an_execution_error_with_status_and_body(driver, api):
    with pytest.raises(ExecutionError) as info:
        driver.call_tool("showPetById", {"petId": "42"})
    assert info.value.details["status"] == 404
    assert "HTTP 404" in info.value.message
    assert "no pet 42" in info.value.message


def test_a_400_tells_the_llm_to_fix_its_arguments(driver, api):
    with pytest.raises(ExecutionError) as info:
        driver.call_tool("listPets", {"limit": 500})
    assert "HTTP 400" in info.value.message
    assert "Fix the arguments" in info.value.message
    assert "limit must be at most 100" in info.value.message


def test_an_empty_204_answer_is_none(driver, api):
    api.state.pets[3] = {"id": 3, "name": "Bo"}
    assert driver.call_tool("deletePet", {"petId": "3"}) is None
    assert api.state.requests[-1].method == "DELETE"


def test_multipart_upload_sends_the_binary_field_as_a_file(driver, api):
    result = driver.call_tool("uploadPhoto", {"petId": 7, "file": "PNGDATA", "caption": "smile"})
    assert result == {"pet": "7", "caption": "smile", "size": 7}
    assert api.state.requests[-1].headers["content-type"].startswith("multipart/form-data")


def test_form_urlencoded_body(driver, api):
    result = driver.call_tool("login", {"username": "alice", "remember": True})
    assert result == {"user": "alice", "remember": "true"}
    assert api.state.requests[-1].body == b"username=alice&remember=true"


def test_plain_text_body_and_text_response(driver, api):
    result = driver.call_tool("putNote", {"body": "hello\nworld"})
    assert result == "stored: hello\nworld"
    assert api.state.requests[-1].headers["content-type"] == "text/plain"


def test_a_binary_response_is_json_with_its_content_type_and_base64_bytes(driver, api):
    result = driver.process_llm_response('{"tool": "image", "arguments": {}}')
    assert json.loads(json.dumps(result)) == {"content_type": "image/png", "base64": base64.b64encode(PNG).decode()}
    assert isinstance(result, BinaryContent) and result.data == PNG and result.content_type == "image/png"


@pytest.mark.parametrize("big", [2**53, -(2**53), 2**63 + 1, 10**30])
def test_an_integer_a_javascript_client_would_round_comes_back_as_its_text(driver, api, big):
    api.state.pets[1] = {"id": 1, "name": "Rex", "tag": "dog", "chip": big, "litters": [big, 2**53 - 1]}
    result = driver.process_llm_response('{"tool": "showPetById", "arguments": {"petId": "1"}}')
    assert result == {"id": 1, "name": "Rex", "tag": "dog", "chip": str(big), "litters": [str(big), 2**53 - 1]}
    json.dumps(result)


def test_a_json_body_with_a_wide_integer_still_refuses_nan_as_orjson_does():
    with pytest.raises(ValueError, match="NaN"):
        load_json(b'{"chip": 12345678901234567, "weight": NaN}')


def test_gzip_responses_are_decoded(driver, api):
    assert driver.call_tool("gzipped", {}) == {"compressed": True}


def test_clashing_names_are_suffixed_by_location_and_cookies_sent(driver, api):
    schema = driver.get_tool("getProfile").input_schema
    assert set(schema["properties"]) == {"id", "id_query", "X-Trace", "theme"}
    result = driver.call_tool("getProfile", {"id": "u1", "id_query": "q", "X-Trace": "t", "theme": "dark mode"})
    assert result["path"] == "/v1/users/u1/profile"
    assert result["query"] == "id=q"
    assert result["headers"]["x-trace"] == "t"
    assert result["headers"]["cookie"] == "theme=dark%20mode"


def test_a_recursive_body_is_flattened_and_its_recursive_member_refers_to_defs(driver, api):
    schema = driver.get_tool("echoPost").input_schema
    assert set(schema["properties"]) == {"rest", "value", "children"}
    assert schema["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert schema["$defs"]["Node"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    tree = {"value": "root", "children": [{"value": "leaf", "children": []}]}
    driver.call_tool("echoPost", {"rest": "tree", **tree})
    assert json.loads(api.state.requests[-1].body) == tree


async def test_the_async_path_makes_the_same_call(api):
    driver = RestDriver(PETSTORE, base_url=api.url + "/v1")
    try:
        api.state.pets[1] = {"id": 1, "name": "Rex", "tag": "dog"}
        result = await driver.aprocess_llm_response({"tool": "showPetById", "arguments": {"petId": "1"}})
        assert result == {"id": 1, "name": "Rex", "tag": "dog"}
        with pytest.raises(ExecutionError):
            await driver.acall_tool("showPetById", {"petId": "9"})
    finally:
        await driver.aclose()


async def test_async_with_closes_the_pool_of_the_running_loop(api):
    async with RestDriver(PETSTORE, base_url=api.url + "/v1") as driver:
        api.state.pets[1] = {"id": 1, "name": "Rex", "tag": "dog"}
        assert (await driver.acall_tool("showPetById", {"petId": "1"}))["name"] == "Rex"
        pair = driver._aclients.current()
        assert pair is not None and not pair[0].is_closed
    assert pair[0].is_closed and len(driver._aclients) == 0


async def test_async_with_a_toolbox_closes_its_rest_member_s_pool_on_the_running_loop(api):
    member = RestDriver(PETSTORE, base_url=api.url + "/v1")
    async with Toolbox([member]) as box:
        api.state.pets[1] = {"id": 1, "name": "Rex", "tag": "dog"}
        assert (await box.acall_tool("showPetById", {"petId": "1"}))["name"] == "Rex"
        pair = member._aclients.current()
        assert pair is not None and not pair[0].is_closed
    assert pair[0].is_closed and len(member._aclients) == 0


def test_a_response_that_names_no_tool_is_returned_unchanged(driver):
    text = "I do not need a tool for this."
    assert driver.process_llm_response(text) is text


def test_base_url_comes_from_the_spec_servers_and_their_variables():
    driver = RestDriver(PETSTORE, server_variables={"scheme": "http"})
    op = driver.operations["listPets"]
    assert driver.base_url_for(op) == "http://api.example.invalid/v1"
    assert RestDriver(PETSTORE).base_url_for(op) == "https://api.example.invalid/v1"


def test_a_mock_transport_can_stand_in_for_the_network():
    import httpx

    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(200, json={"id": 5, "name": "Mock"})

    with RestDriver(PETSTORE, base_url="http://api.test/v1", transport=httpx.MockTransport(handler)) as driver:
        assert driver.call_tool("showPetById", {"petId": "5"}) == {"id": 5, "name": "Mock"}
    assert seen == ["http://api.test/v1/pets/5"]


def test_async_calls_from_several_event_loops_leave_no_socket_open(api):
    import asyncio
    import gc

    driver = RestDriver(PETSTORE, base_url=api.url + "/v1")
    api.state.pets[1] = {"id": 1, "name": "Rex"}
    for _ in range(2):  # each asyncio.run ends its loop; the pool must close with it
        assert asyncio.run(driver.acall_tool("showPetById", {"petId": "1"}))["name"] == "Rex"
    driver.close()
    gc.collect()  # an unclosed socket would raise ResourceWarning here (warnings are errors)


def test_a_driver_called_from_many_asyncio_runs_keeps_no_pool_of_a_finished_loop(api):
    import asyncio

    api.state.pets[1] = {"id": 1, "name": "Rex"}
    with RestDriver(PETSTORE, base_url=api.url + "/v1") as driver:
        for _ in range(30):  # one loop per call, as sync code calling async code often does
            assert asyncio.run(driver.acall_tool("showPetById", {"petId": "1"}))["name"] == "Rex"
            assert len(driver._aclients) == 0  # the loop's shutdown closed its pool and let it go


def test_a_spec_from_a_url_with_a_relative_server_calls_that_origin(api):
    import mcs

    driver = mcs.load_driver("rest", spec=api.url + "/spec.yaml")
    try:
        assert driver.base_url_for(driver.operations["listPets"]) == api.url + "/v1"
        api.state.pets[1] = {"id": 1, "name": "Rex"}
        assert driver.call_tool("showPetById", {"petId": "1"}) == {"id": 1, "name": "Rex"}
    finally:
        driver.close()


def test_a_spec_from_a_url_that_inflates_past_the_cap_is_refused_without_filling_memory(api):
    import resource

    from mcs_rest import SpecError

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(SpecError) as info:
        RestDriver(api.url + "/spec-bomb.json", base_url=api.url + "/v1")
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert "larger than 67108864 bytes" in str(info.value)
    # KiB: the read stops at the 64 MiB cap (the reader holds a few copies of it), far below
    # what reading the 256 MiB inflated document whole takes
    assert (after - before) < 400_000


def test_openapi_3_1_type_lists_const_and_ref_siblings(api):
    spec = {
        "openapi": "3.1.0", "info": {"title": "t", "version": "1"},
        "servers": [{"url": api.url + "/v1"}],
        "webhooks": {"newPet": {"post": {"responses": {"200": {"description": "ok"}}}}},
        "components": {"schemas": {"Tag": {"type": "string", "enum": ["dog", "cat"]}}},
        "paths": {"/pets": {"post": {"operationId": "createPet", "responses": {}, "requestBody": {
            "required": True, "content": {"application/json": {"schema": {
                "type": "object", "required": ["name"],
                "properties": {
                    "name": {"type": ["string", "null"], "examples": ["Rex"]},
                    "kind": {"const": "pet"},
                    "tag": {"$ref": "#/components/schemas/Tag", "description": "the species"},
                }}}}}}}},
    }
    with RestDriver(spec) as driver:
        schema = driver.get_tool("createPet").input_schema
        assert schema["properties"]["name"] == {"type": ["string", "null"]}
        assert schema["properties"]["tag"] == {"type": "string", "enum": ["dog", "cat"], "description": "the species"}
        assert [t.name for t in driver.list_tools()] == ["createPet"]  # webhooks are not operations
        assert driver.call_tool("createPet", {"name": "Rex", "kind": "pet", "tag": "dog"})["name"] == "Rex"


def test_form_bodies_follow_the_spec_encoding_stripe_style(api):
    spec = {
        "openapi": "3.0.0", "info": {"title": "t", "version": "1"},
        "paths": {"/login": {"post": {"operationId": "create", "responses": {}, "requestBody": {"content": {
            "application/x-www-form-urlencoded": {
                "schema": {"type": "object", "properties": {
                    "username": {"type": "string"},
                    "expand": {"type": "array", "items": {"type": "string"}},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "metadata": {"type": "object", "additionalProperties": {"type": "string"}},
                    "items": {"type": "array", "items": {"type": "object", "properties": {"price": {"type": "string"}}}},
                }},
                "encoding": {"expand": {"style": "deepObject", "explode": True},
                             "metadata": {"style": "deepObject", "explode": True}},
            }}}}}},
    }
    with RestDriver(spec, base_url=api.url + "/v1") as driver:
        driver.call_tool("create", {"username": "a", "expand": ["x", "y"], "tags": ["t1", "t2"],
                                    "metadata": {"k": "v"}, "items": [{"price": "p1"}]})
    assert parse_qsl(api.state.requests[-1].body.decode()) == [
        ("username", "a"), ("expand[]", "x"), ("expand[]", "y"), ("tags", "t1"), ("tags", "t2"),
        ("metadata[k]", "v"), ("items[0][price]", "p1"),
    ]


HEALTHY_SPEC = {
    "openapi": "3.0.3", "info": {"title": "health", "version": "1"},
    "paths": {
        "/health": {"get": {"operationId": "health", "responses": {"200": {"description": "up"}}}},
        "/pets": {"get": {"operationId": "listPets", "responses": {"200": {"description": "pets"}}}},
    },
}


def test_mcs_spec_s5_healthcheck_calls_the_health_operation_the_spec_names(api: Running) -> None:
    with RestDriver(HEALTHY_SPEC, base_url=api.url + "/v1") as driver:
        assert driver.supports("healthcheck")
        assert driver.healthcheck() == {"status": "ok", "check": "GET /health", "http_status": 200}
    assert [r.path for r in api.state.requests] == ["/v1/health"]


def test_mcs_spec_s5_without_a_health_operation_healthcheck_shows_the_api_is_reachable(
    driver: RestDriver, api: Running
) -> None:
    report = driver.healthcheck()
    assert report["status"] == "ok" and report["check"] == f"HEAD {api.url}/v1"
    assert isinstance(report["http_status"], int)


def test_mcs_spec_s5_healthcheck_reports_an_unreachable_api_without_raising() -> None:
    from support.servers import free_port

    with RestDriver(PETSTORE, base_url=f"http://127.0.0.1:{free_port()}/v1", timeout=2) as driver:
        report = driver.healthcheck()
    assert report["status"] == "error" and "ConnectError" in report["detail"]


def test_a_required_body_whose_fields_were_all_left_out_is_sent_as_an_empty_object(api, tmp_path):
    spec = tmp_path / "endpoints.json"
    spec.write_text(json.dumps({
        "openapi": "3.0.3", "info": {"title": "t", "version": "1"},
        "paths": {"/echo/{rest}": {"post": {
            "operationId": "createEndpoints",
            "parameters": [{"name": "rest", "in": "path", "required": True, "schema": {"type": "string"}}],
            "requestBody": {"required": True, "content": {"application/json": {"schema": {
                "type": "object", "properties": {"kind": {"type": "string"}, "subsets": {"type": "array"}}}}}},
            "responses": {"200": {"description": "echo"}},
        }}},
    }))
    with RestDriver(spec, base_url=api.url + "/v1") as driver:
        driver.call_tool("createEndpoints", {"rest": "x"})
    sent = api.state.requests[-1]
    assert sent.method == "POST"
    assert sent.headers["content-type"] == "application/json"
    assert json.loads(sent.body) == {}


def test_an_optional_body_left_out_is_not_sent(driver, api):
    driver.call_tool("echoPost", {"rest": "x"})
    sent = api.state.requests[-1]
    assert sent.body == b"" and "content-type" not in sent.headers


def test_a_deep_object_query_array_is_sent_in_brackets_as_stripe_reads_it(api):
    spec = {
        "openapi": "3.0.0", "info": {"title": "t", "version": "1"},
        "paths": {"/echo/{rest}": {"get": {"operationId": "get", "responses": {}, "parameters": [
            {"name": "rest", "in": "path", "required": True, "schema": {"type": "string"}},
            {"name": "expand", "in": "query", "style": "deepObject", "explode": True,
             "schema": {"type": "array", "items": {"type": "string"}}},
            {"name": "created", "in": "query", "style": "deepObject", "explode": True,
             "schema": {"type": "object", "properties": {"gt": {"type": "integer"}}}},
        ]}}},
    }
    with RestDriver(spec, base_url=api.url + "/v1") as driver:
        answer = driver.call_tool("get", {"rest": "q", "expand": ["data.customer", "data.plan"], "created": {"gt": 5}})
    assert parse_qsl(answer["query"]) == [
        ("expand[]", "data.customer"), ("expand[]", "data.plan"), ("created[gt]", "5")]


async def test_mcs_serve_gives_a_binary_response_as_an_mcp_image_block(api):
    pytest.importorskip("mcs_mcp.serving", reason="MCP serving (mcs serve --protocol mcp) is not in this build")
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    mcs = Path(sys.executable).with_name("mcs")
    params = StdioServerParameters(command=str(mcs), args=[
        "serve", "rest", "-o", f"spec={PETSTORE}", "-o", f"base_url={api.url}/v1"])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("image", {})
    assert [(block.type, block.mime_type, block.data) for block in result.content] == [
        ("image", "image/png", base64.b64encode(PNG).decode())]
