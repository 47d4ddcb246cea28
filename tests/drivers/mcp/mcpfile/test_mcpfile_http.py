"""HTTP invocations against a real recording server on loopback."""

from __future__ import annotations

import base64
import json
import time

import pytest
from mcpfile_support import Reply, mcp_file, tool
from mcs_mcp.mcpfile.driver import MCPFileDriver
from support.security_cases import B1_DOT_SEGMENTS, B1_PATH_VALUES
from support.servers import free_port

from mcs import AgentContext
from mcs.errors import ConfigurationError, ExecutionError, InvalidInputError, ToolTimeoutError

PROPS = {
    "id": {"type": "string"},
    "tenant": {"type": "string"},
    "limit": {"type": "integer"},
    "ratio": {"type": "number"},
    "active": {"type": "boolean"},
    "tags": {"type": "array", "items": {"type": "string"}},
    "user": {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}},
}
ARGS = {"id": "42", "tenant": "acme", "limit": 10, "ratio": 1.5, "active": True, "tags": ["a", "b"],
        "user": {"name": "Ann", "age": 30}}


def make(new_driver, write_file, recorder, method: str, url: str = "/users/{id}", headers: dict | None = None,
         properties: dict | None = None, **http) -> MCPFileDriver:
    invocation = {"http": {"method": method, "url": recorder.url + url, **({"headers": headers} if headers else {}), **http}}
    return new_driver(write_file(mcp_file(tool("t", invocation, properties or PROPS))))


def answering(new_driver, write_file, recorder, reply: Reply, **options) -> MCPFileDriver:
    """A driver whose tool ``t`` GETs /users/{id}, built with ``options``; /users/1 answers ``reply``."""
    recorder.replies["/users/1"] = reply
    invocation = {"http": {"method": "GET", "url": recorder.url + "/users/{id}"}}
    return new_driver(write_file(mcp_file(tool("t", invocation, PROPS))), **options)


@pytest.mark.parametrize("method", ["GET", "DELETE", "HEAD"])
def test_bodyless_methods_route_url_header_and_query(new_driver, write_file, recorder, method) -> None:
    driver = make(new_driver, write_file, recorder, method, headers={"X-Tenant": "{tenant}"})
    driver.call_tool("t", ARGS)
    seen = recorder.last
    assert (seen.method, seen.path) == (method, "/users/42")
    assert seen.headers["x-tenant"] == "acme"
    assert seen.query == [("limit", "10"), ("ratio", "1.5"), ("active", "true"), ("tags", "a"), ("tags", "b"),
                          ("user.name", "Ann"), ("user.age", "30")]
    assert seen.body == b""
    assert "tenant" not in dict(seen.query) and "id" not in dict(seen.query)


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH"])
def test_body_methods_route_the_rest_into_a_json_body(new_driver, write_file, recorder, method) -> None:
    driver = make(new_driver, write_file, recorder, method, headers={"X-Tenant": "{tenant}"})
    driver.call_tool("t", ARGS)
    seen = recorder.last
    assert (seen.method, seen.path, seen.query) == (method, "/users/42", [])
    assert seen.headers["content-type"].startswith("application/json")
    assert seen.json() == {"limit": 10, "ratio": 1.5, "active": True, "tags": ["a", "b"],
                           "user": {"name": "Ann", "age": 30}}


def test_nested_placeholders_leave_the_body_and_empty_parents_go(new_driver, write_file, recorder) -> None:
    driver = make(new_driver, write_file, recorder, "POST", url="/users/{user.name}")
    driver.call_tool("t", {"user": {"name": "Ann"}, "limit": 1})
    assert recorder.last.path == "/users/Ann"
    assert recorder.last.json() == {"limit": 1}


def test_body_root_sends_one_value_and_body_as_array_wraps(new_driver, write_file, recorder) -> None:
    make(new_driver, write_file, recorder, "POST", url="/bulk", bodyRoot="tags").call_tool("t", {"tags": ["x", "y"], "limit": 1})
    assert recorder.last.json() == ["x", "y"]
    make(new_driver, write_file, recorder, "POST", url="/bulk", bodyAsArray=True).call_tool("t", {"limit": 1})
    assert recorder.last.json() == [{"limit": 1}]


def test_post_without_remaining_arguments_sends_an_empty_object(new_driver, write_file, recorder) -> None:
    make(new_driver, write_file, recorder, "POST").call_tool("t", {"id": "1"})
    assert recorder.last.json() == {}


def test_optional_absent_query_values_are_left_out(new_driver, write_file, recorder) -> None:
    make(new_driver, write_file, recorder, "GET").call_tool("t", {"id": "1"})
    assert recorder.last.raw_query == ""


def test_query_appends_to_a_url_that_already_has_one(new_driver, write_file, recorder) -> None:
    make(new_driver, write_file, recorder, "GET", url="/search?v=2&id={id}").call_tool("t", {"id": "x y", "limit": 3})
    assert recorder.last.query == [("v", "2"), ("id", "x y"), ("limit", "3")]


@pytest.mark.parametrize(("value", "encoded"), B1_PATH_VALUES + B1_DOT_SEGMENTS)
def test_path_values_are_one_encoded_segment(new_driver, write_file, recorder, value, encoded) -> None:
    driver = make(new_driver, write_file, recorder, "GET", url="/v1/users/{id}/profile", properties={"id": {"type": "string"}})
    driver.call_tool("t", {"id": value})
    assert recorder.last.path == f"/v1/users/{encoded}/profile"
    assert recorder.last.raw_query == ""


@pytest.mark.parametrize("value", ["abc\r\nX-Injected: 1", "abc\nX-Injected: 1", "a\x00b"])
def test_header_injection_is_refused_before_sending(new_driver, write_file, recorder, value) -> None:
    driver = make(new_driver, write_file, recorder, "GET", headers={"X-Tenant": "{tenant}"})
    with pytest.raises(InvalidInputError, match="tenant"):
        driver.call_tool("t", {"id": "1", "tenant": value})
    assert recorder.requests == []


def test_crlf_in_query_values_is_encoded_not_injected(new_driver, write_file, recorder) -> None:
    make(new_driver, write_file, recorder, "GET").call_tool("t", {"id": "1", "tenant": "a\r\nX-Injected: 1"})
    assert "x-injected" not in recorder.last.headers
    assert dict(recorder.last.query)["tenant"] == "a\r\nX-Injected: 1"


def test_unknown_arguments_are_refused_before_sending(new_driver, write_file, recorder) -> None:
    with pytest.raises(InvalidInputError, match="unexpected argument"):
        make(new_driver, write_file, recorder, "GET").call_tool("t", {"id": "1", "config": "/evil"})
    assert recorder.requests == []


def test_env_placeholders_in_url_and_headers(new_driver, write_file, recorder, monkeypatch) -> None:
    monkeypatch.setenv("MCS_TEST_TOKEN", "s3cret")
    monkeypatch.setenv("MCS_TEST_VERSION", "v2")
    driver = make(new_driver, write_file, recorder, "GET", url="/${MCS_TEST_VERSION}/users/{id}",
                  headers={"Authorization": "Bearer {env.MCS_TEST_TOKEN}"})
    driver.call_tool("t", {"id": "7"})
    assert recorder.last.path == "/v2/users/7"
    assert recorder.last.headers["authorization"] == "Bearer s3cret"
    monkeypatch.delenv("MCS_TEST_TOKEN")
    with pytest.raises(ExecutionError, match="MCS_TEST_TOKEN is not set"):
        driver.call_tool("t", {"id": "7"})


def test_incoming_headers_fill_templates(new_driver, write_file, recorder) -> None:
    driver = make(new_driver, write_file, recorder, "GET", url="/users/{headers.X-User-Id}",
                  headers={"X-Request-Id": "{headers.X-Request-Id}"}, properties={})
    context = AgentContext(metadata={"header:x-user-id": "u/1", "header:x-request-id": "r-9"})
    driver.call_tool("t", {}, context=context)
    assert recorder.last.path == "/users/u%2F1"
    assert recorder.last.headers["x-request-id"] == "r-9"


def test_incoming_headers_are_a_clear_error_without_http(new_driver, write_file, recorder) -> None:
    driver = make(new_driver, write_file, recorder, "GET", url="/users/{headers.X-User-Id}", properties={})
    with pytest.raises(ExecutionError, match="only when this server is reached over streamable HTTP"):
        driver.call_tool("t", {})
    assert recorder.requests == []


def test_forwarding_credentials_is_refused_unless_allowed(new_driver, write_file, recorder) -> None:
    invocation = {"http": {"method": "GET", "url": recorder.url + "/p",
                           "headers": {"Authorization": "{headers.Authorization}"}}}
    path = write_file(mcp_file(tool("t", invocation)))
    with pytest.raises(ConfigurationError, match="token passthrough"):
        MCPFileDriver(path)
    driver = new_driver(path, allow_credential_forwarding=True)
    driver.call_tool("t", {}, context=AgentContext(metadata={"header:authorization": "Bearer X"}))
    assert recorder.last.headers["authorization"] == "Bearer X"


def test_arguments_cannot_choose_the_host(new_driver, write_file) -> None:
    invocation = {"http": {"method": "GET", "url": "http://{host}/x"}}
    with pytest.raises(ConfigurationError, match="choose the destination"):
        MCPFileDriver(write_file(mcp_file(tool("t", invocation, {"host": {"type": "string"}}))))
    invocation = {"http": {"method": "GET", "url": "{base}/x"}}
    with pytest.raises(ConfigurationError, match="choose the destination"):
        MCPFileDriver(write_file(mcp_file(tool("t", invocation, {"base": {"type": "string"}}))))


def test_json_objects_become_structured_results_and_text_stays_text(new_driver, write_file, recorder) -> None:
    driver = make(new_driver, write_file, recorder, "GET")
    recorder.replies["/users/1"] = Reply(body=b'{"name": "Ann"}')
    assert driver.call_tool("t", {"id": "1"}) == {"name": "Ann"}
    recorder.replies["/users/2"] = Reply(body=b"[1, 2]")
    assert driver.call_tool("t", {"id": "2"}) == "[1, 2]"
    recorder.replies["/users/3"] = Reply(body=b"plain", content_type="text/plain")
    assert driver.call_tool("t", {"id": "3"}) == "plain"


def test_non_2xx_is_an_error_with_the_status(new_driver, write_file, recorder) -> None:
    recorder.replies["/users/1"] = Reply(status=404, body=b'{"error": "no such user"}')
    with pytest.raises(ExecutionError) as error:
        make(new_driver, write_file, recorder, "GET").call_tool("t", {"id": "1"})
    assert "HTTP 404" in error.value.message and "no such user" in error.value.message
    assert error.value.details["status"] == 404


def test_large_bodies_are_capped_with_a_marker(new_driver, write_file, recorder) -> None:
    reply = Reply(body=b"y" * 5000, content_type="text/plain")
    driver = answering(new_driver, write_file, recorder, reply, max_response_bytes=1000)
    text = driver.call_tool("t", {"id": "1"})
    assert text.startswith("y" * 1000) and "[truncated: the response exceeded 1000 bytes]" in text
    assert len(text) < 1100


def test_an_endless_stream_stops_at_the_cap(new_driver, write_file, recorder) -> None:
    reply = Reply(stream_forever=True, content_type="text/plain")
    driver = answering(new_driver, write_file, recorder, reply, max_response_bytes=200_000)
    text = driver.call_tool("t", {"id": "1"})
    assert "[truncated" in text


@pytest.mark.parametrize(
    ("reply", "timeout"),
    [
        pytest.param(Reply(delay=3), 0.5, id="slow-to-answer"),
        pytest.param(Reply(stream_forever=True, drip_interval=0.2, content_type="text/plain"), 1, id="dripping-body"),
    ],
)
def test_a_slow_server_times_out_at_the_total_deadline(new_driver, write_file, recorder, reply, timeout) -> None:
    driver = answering(new_driver, write_file, recorder, reply, timeout=timeout)
    started = time.monotonic()
    with pytest.raises(ToolTimeoutError):
        driver.call_tool("t", {"id": "1"})
    assert time.monotonic() - started < 2.5


def test_same_origin_redirects_are_followed_and_others_refused(new_driver, write_file, recorder) -> None:
    recorder.replies["/users/old"] = Reply(status=302, headers={"Location": "/users/new"})
    recorder.replies["/users/new"] = Reply(body=b'{"moved": true}')
    driver = make(new_driver, write_file, recorder, "GET")
    assert driver.call_tool("t", {"id": "old"}) == {"moved": True}
    recorder.replies["/users/away"] = Reply(status=302, headers={"Location": "http://127.0.0.2:6379/"})
    with pytest.raises(ExecutionError, match="another origin"):
        driver.call_tool("t", {"id": "away"})


async def test_async_calls_route_the_same_way(new_driver, write_file, recorder) -> None:
    driver = make(new_driver, write_file, recorder, "POST", headers={"X-Tenant": "{tenant}"})
    result = await driver.acall_tool("t", ARGS)
    assert result == {"ok": True}
    assert recorder.last.path == "/users/42" and recorder.last.headers["x-tenant"] == "acme"
    assert json.loads(recorder.last.body)["limit"] == 10


async def test_async_timeout(new_driver, write_file, recorder) -> None:
    driver = answering(new_driver, write_file, recorder, Reply(delay=3), timeout=0.5)
    with pytest.raises(ToolTimeoutError):
        await driver.acall_tool("t", {"id": "1"})


def test_an_unreachable_server_is_an_execution_error(new_driver, write_file) -> None:
    invocation = {"http": {"method": "GET", "url": f"http://127.0.0.1:{free_port()}/x"}}
    driver = new_driver(write_file(mcp_file(tool("t", invocation))))
    with pytest.raises(ExecutionError, match="the HTTP request failed"):
        driver.call_tool("t", {})


def test_a_decompression_bomb_stops_at_the_cap(new_driver, write_file, recorder) -> None:
    import gzip

    bomb = gzip.compress(b"z" * 20_000_000)
    assert len(bomb) < 100_000
    reply = Reply(body=bomb, content_type="text/plain", headers={"Content-Encoding": "gzip"})
    driver = answering(new_driver, write_file, recorder, reply, max_response_bytes=100_000)
    text = driver.call_tool("t", {"id": "1"})
    assert text.startswith("z" * 1000) and "[truncated" in text and len(text) < 100_200


@pytest.mark.parametrize("content_type", ["image/png", "application/octet-stream", "application/pdf"])
def test_a_body_that_is_not_text_comes_back_whole_as_base64_json(new_driver, write_file, recorder,
                                                                 content_type: str) -> None:
    body = bytes(range(256))  # not UTF-8: decoding it as text would replace bytes
    driver = answering(new_driver, write_file, recorder, Reply(body=body, content_type=content_type))
    result = driver.process_llm_response('{"tool": "t", "arguments": {"id": "1"}}')
    assert json.loads(json.dumps(result)) == {"content_type": content_type, "base64": base64.b64encode(body).decode()}


def test_a_cut_binary_body_says_it_was_cut(new_driver, write_file, recorder) -> None:
    reply = Reply(body=b"\x89PNG" + b"\xff" * 5000, content_type="image/png")
    driver = answering(new_driver, write_file, recorder, reply, max_response_bytes=1000)
    result = driver.call_tool("t", {"id": "1"})
    assert result["truncated"] is True and base64.b64decode(result["base64"]) == (b"\x89PNG" + b"\xff" * 5000)[:1000]


def test_text_with_a_charset_stays_text(new_driver, write_file, recorder) -> None:
    reply = Reply(body="café".encode("latin-1"), content_type="application/x-custom; charset=latin-1")
    assert answering(new_driver, write_file, recorder, reply).call_tool("t", {"id": "1"}) == "café"


async def test_async_with_runs_calls_and_closes_the_http_pool_after(write_file, recorder) -> None:
    recorder.replies["/users/1"] = Reply(body=b'{"name": "Ann"}')
    invocation = {"http": {"method": "GET", "url": recorder.url + "/users/{id}"}}
    async with MCPFileDriver(write_file(mcp_file(tool("t", invocation, PROPS)))) as driver:
        assert await driver.acall_tool("t", {"id": "1"}) == {"name": "Ann"}
        assert driver.healthcheck()["status"] == "ok"  # a sync check: it opens the pooled client
        pool = driver._client
        assert pool is not None and not pool.is_closed
    assert pool.is_closed and driver._client is None
