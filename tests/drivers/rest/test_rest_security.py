"""SECURITY.md cases B1, B2, B5, B6 and G1 against the loopback API."""

from __future__ import annotations

import asyncio
import json
import time
from urllib.parse import quote, quote_plus

import pytest
from mcs_rest import RestDriver
from rest_paths import PETSTORE
from rest_server import ResettingServer, Running
from support.hostile import HostilePeer
from support.logs import log_everything, quoting
from support.security_cases import B1_DOT_SEGMENTS, B1_PATH_VALUES
from support.servers import JSONHandler, free_port, serving_http

from mcs.errors import ConfigurationError, ExecutionError, InvalidInputError, ToolTimeoutError


@pytest.fixture
def driver(api: Running):
    with RestDriver(PETSTORE, base_url=api.url + "/v1", auth={"bearer": "s3cret"}) as d:
        yield d


# ---------------------------------------------------------------- B1 path traversal


@pytest.mark.parametrize(("value", "expected"), B1_PATH_VALUES + B1_DOT_SEGMENTS)
def test_b1_a_path_value_stays_one_segment(driver, api, value, expected):
    driver.call_tool("getProfile", {"id": value})
    sent = api.state.requests[-1]
    assert sent.raw_path == f"/v1/users/{expected}/profile"
    assert sent.raw_path.startswith("/v1/users/")
    assert sent.query == ""


# ---------------------------------------------------------------- B2 CRLF injection


@pytest.mark.parametrize(
    "arguments",
    [
        {"id": "u1", "X-Trace": "abc\r\nX-Injected: 1"},
        {"id": "u1", "X-Trace": "abc\nX-Injected: 1"},
        {"id": "u1", "id_query": "q\r\nX-Injected: 1"},
        {"id": "u1", "theme": "dark\r\nX-Injected: 1"},
        {"id": "u1\r\nX-Injected: 1"},
    ],
)
def test_b2_cr_lf_in_any_header_query_cookie_or_path_value_is_refused_before_sending(driver, api, arguments):
    with pytest.raises(InvalidInputError) as info:
        driver.call_tool("getProfile", arguments)
    assert "line break" in info.value.message
    assert api.state.requests == []


def test_b2_cr_lf_in_a_configured_header_is_a_configuration_error():
    from mcs.errors import ConfigurationError

    with pytest.raises(ConfigurationError):
        RestDriver(PETSTORE, base_url="http://127.0.0.1:9", headers={"X-Ok": "a\r\nX-Injected: 1"})


def test_b2_the_host_cannot_come_from_arguments(driver, api):
    with pytest.raises(InvalidInputError):
        driver.call_tool("listPets", {"base_url": "http://169.254.169.254/"})
    assert api.state.requests == []


# ---------------------------------------------------------------- B5 redirects


def test_b5_same_origin_redirects_are_followed_with_credentials(driver, api):
    result = driver.call_tool("redirectSame", {})
    assert result["path"] == "/v1/echo/landed"
    assert result["headers"]["authorization"] == "Bearer s3cret"


def test_b5_a_redirect_to_another_origin_is_refused_by_default(driver, api):
    with pytest.raises(ExecutionError) as info:
        driver.call_tool("redirectAway", {})
    assert "another origin" in info.value.message
    assert [r.path for r in api.state.requests] == ["/v1/redirect-away"]


def test_b5_an_allowed_cross_origin_redirect_strips_credentials(api):
    with RestDriver(PETSTORE, base_url=api.url + "/v1", auth={"bearer": "s3cret"},
                    headers={"X-Static": "1"}, redirect_hosts=["localhost"]) as driver:
        result = driver.call_tool("redirectAway", {})
    assert result["path"] == "/v1/echo/away"
    assert "authorization" not in result["headers"]
    assert "x-static" not in result["headers"]
    assert api.state.requests[0].headers["authorization"] == "Bearer s3cret"


def test_b5_a_redirect_that_would_resend_the_body_cross_origin_is_refused(api):
    with RestDriver(PETSTORE, base_url=api.url + "/v1", redirect_hosts=["localhost"]) as driver, pytest.raises(ExecutionError) as info:
        driver.call_tool("redirectAway307", {"x": "secret body"})
    assert "re-send the request body" in info.value.message
    assert len(api.state.requests) == 1


def test_b5_redirect_count_is_bounded(api):
    with RestDriver(PETSTORE, base_url=api.url + "/v1", max_redirects=0) as driver, pytest.raises(ExecutionError) as info:
        driver.call_tool("redirectSame", {})
    assert "redirected more than 0 times" in info.value.message


# ---------------------------------------------------------------- B6 size and time bounds


def test_b6_a_50_mib_body_is_cut_at_the_cap_with_a_marker(api):
    with RestDriver(PETSTORE, base_url=api.url + "/v1", max_response_bytes=100_000) as driver:
        result = driver.call_tool("big", {})
    assert isinstance(result, str)
    assert result.startswith("x" * 100_000)
    assert "[truncated: the response was cut at 100000 bytes" in result
    assert len(result) < 100_400


def test_b6_an_endless_stream_stops_at_the_cap(api):
    with RestDriver(PETSTORE, base_url=api.url + "/v1", max_response_bytes=50_000) as driver:
        result = driver.call_tool("endless", {})
    assert "[truncated" in result


def test_b6_a_gzip_bomb_is_inflated_only_up_to_the_cap(api):
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with RestDriver(PETSTORE, base_url=api.url + "/v1", max_response_bytes=1_000_000) as driver:
        result = driver.call_tool("bomb", {})
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert "[truncated: the response was cut at 1000000 bytes" in result
    assert (after - before) < 100_000  # KiB: far below the 256 MiB the bomb inflates to


def test_b6_a_slow_drip_hits_the_total_deadline(api):
    with RestDriver(PETSTORE, base_url=api.url + "/v1", timeout=1.0) as driver:
        started = time.monotonic()
        with pytest.raises(ToolTimeoutError):
            driver.call_tool("drip", {})
        assert time.monotonic() - started < 2.5


async def test_b6_the_async_path_has_the_same_deadline(api):
    driver = RestDriver(PETSTORE, base_url=api.url + "/v1", timeout=1.0)
    try:
        started = time.monotonic()
        with pytest.raises(ToolTimeoutError):
            await driver.acall_tool("drip", {})
        assert time.monotonic() - started < 2.5
    finally:
        await driver.aclose()


# ---------------------------------------------------------------- G1 retries


def test_g1_a_post_whose_connection_resets_after_sending_is_not_retried():
    server = ResettingServer()
    try:
        with RestDriver(PETSTORE, base_url=f"http://127.0.0.1:{server.port}/v1", backoff=0.01) as driver, pytest.raises(ExecutionError):
            driver.call_tool("flakyPost", {})
        assert server.received == 1
    finally:
        server.close()


def test_g1_a_get_whose_connection_resets_is_retried():
    server = ResettingServer()
    try:
        with RestDriver(PETSTORE, base_url=f"http://127.0.0.1:{server.port}/v1", backoff=0.01, retries=2) as driver, pytest.raises(ExecutionError):
            driver.call_tool("flakyGet", {})
        assert server.received == 3
    finally:
        server.close()


def test_g1_a_get_answered_503_is_retried_after_retry_after(driver, api):
    started = time.monotonic()
    result = driver.call_tool("flakyGet", {"fail": 1, "after": 1})
    assert result == {"attempts": 2}
    assert time.monotonic() - started >= 1.0


def test_g1_retries_are_capped(api):
    with RestDriver(PETSTORE, base_url=api.url + "/v1", retries=2, backoff=0.01) as driver, pytest.raises(ExecutionError) as info:
        driver.call_tool("flakyGet", {"fail": 10, "after": 0})
    assert info.value.details["status"] == 503
    assert api.state.counters["flaky:GET"] == 3


def test_g1_a_retry_after_beyond_the_deadline_is_not_waited_for(api):
    with RestDriver(PETSTORE, base_url=api.url + "/v1", timeout=2.0) as driver:
        started = time.monotonic()
        with pytest.raises(ExecutionError):
            driver.call_tool("flakyGet", {"fail": 1, "after": 30})
        assert time.monotonic() - started < 1.0


def test_g1_a_post_answered_503_is_not_retried(driver, api):
    with pytest.raises(ExecutionError):
        driver.call_tool("flakyPost", {"fail": 1, "after": 0})
    assert api.state.counters["flaky:POST"] == 1


def test_g1_a_post_with_an_idempotency_key_is_retried_with_the_same_key(api):
    with RestDriver(PETSTORE, base_url=api.url + "/v1", idempotency_header="Idempotency-Key", backoff=0.01) as driver:
        assert driver.call_tool("flakyPost", {"fail": 1, "after": 0}) == {"attempts": 2}
    keys = [r.headers["idempotency-key"] for r in api.state.requests]
    assert len(keys) == 2 and keys[0] == keys[1]


def test_g1_connect_refused_is_retried_for_any_method():
    port = free_port()  # nothing listens there
    with RestDriver(PETSTORE, base_url=f"http://127.0.0.1:{port}/v1", backoff=0.2, retries=2) as driver:
        started = time.monotonic()
        with pytest.raises(ExecutionError) as info:
            driver.call_tool("flakyPost", {})
    assert "could not reach the API" in info.value.message
    assert time.monotonic() - started >= 0.3  # two backoffs of at least 0.1 s and 0.2 s


def test_non_ascii_header_values_are_refused_with_a_clear_message(driver, api):
    with pytest.raises(InvalidInputError) as info:
        driver.call_tool("getProfile", {"id": "u1", "X-Trace": "café"})
    assert "ASCII" in info.value.message
    assert api.state.requests == []


# ---------------------------------------------------------------- the HTTP libraries' own logs


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_an_api_key_in_the_query_is_in_no_record_httpx_or_httpcore_logs(api: Running, caplog, use_async):
    log_everything(caplog)
    key = "k3y-7781/secret+value"
    with RestDriver(PETSTORE, base_url=api.url + "/v1", auth={"queryKey": key}) as driver:
        if use_async:
            assert asyncio.run(driver.acall_tool("secure", {}))["ok"] is True
        else:
            assert driver.call_tool("secure", {})["ok"] is True
    assert api.state.requests[-1].query.startswith("api_key=k3y-7781")
    assert caplog.records  # the libraries did log at DEBUG
    assert quoting(caplog.records, key, quote(key, safe=""), quote_plus(key)) == []


# ---------------------------------------------------------------- B1 segments a value empties or dots


def _one_path_spec(path: str, method: str, param: dict) -> dict:
    return {
        "openapi": "3.0.3", "info": {"title": "t", "version": "1"},
        "paths": {path: {method: {"operationId": "op", "parameters": [{"name": "id", "in": "path", "required": True, **param}],
                                  "responses": {"200": {"description": "ok"}}}}},
    }


@pytest.mark.parametrize(
    ("path", "method", "param", "value", "fine", "sent"),
    [
        ("/v1/users/{id}", "delete", {"schema": {"type": "string"}}, "", "u1", "/v1/users/u1"),
        ("/v1/users/{id}", "delete", {"schema": {"type": "array", "items": {"type": "string"}}}, [], ["u1"], "/v1/users/u1"),
        ("/v1/users/{id}/delete", "post", {"style": "label", "schema": {"type": "string"}}, "", "u1", "/v1/users/.u1/delete"),
        ("/v1/users/{id}/delete", "post", {"style": "label", "schema": {"type": "array", "items": {"type": "string"}}},
         [], ["u1"], "/v1/users/.u1/delete"),
    ],
    ids=["empty", "empty-list", "label-empty", "label-empty-list"],
)
def test_b1_a_value_that_would_empty_or_dot_its_path_segment_is_refused_before_sending(path, method, param, value, fine, sent):
    # An empty segment or a dot segment is merged or removed on the way: DELETE /v1/users/{id}
    # with id "" went to the collection, /v1/users/; the label style's "." prefix made ""
    # a "." segment, which httpx removed: the POST went to /v1/users/delete.
    with HostilePeer() as peer, RestDriver(_one_path_spec(path, method, param), base_url=peer.url) as driver:
        with pytest.raises(InvalidInputError, match="empty or a dot segment") as info:
            driver.call_tool("op", {"id": value})
        assert info.value.details["fields"] == ["id"]
        assert peer.requests == []
        driver.call_tool("op", {"id": fine})
        assert [r.path for r in peer.requests] == [sent]


def test_b1_a_spec_path_without_its_leading_slash_is_refused_so_a_value_cannot_continue_the_port():
    # "{id}" right after "http://127.0.0.1:<port // 10>" let the value "<last digit>" pick the
    # port: the request reached another listener.
    with HostilePeer() as peer:
        spec = _one_path_spec("{id}", "get", {"schema": {"type": "string"}})
        with (pytest.raises(ConfigurationError, match="must begin with '/'"),
              RestDriver(spec, base_url=f"http://127.0.0.1:{peer.port // 10}") as driver):
            driver.call_tool("op", {"id": str(peer.port % 10)})
        with pytest.warns(UserWarning, match="must begin with '/'"):
            skipped = RestDriver(spec, base_url=f"http://127.0.0.1:{peer.port // 10}", invalid_operations="skip")
        assert skipped.get_tool("op") is None
        skipped.close()
    assert peer.connections == 0


# ---------------------------------------------------------------- B2 in keys and nested items


@pytest.mark.parametrize(
    ("param", "value"),
    [
        ({"style": "deepObject", "explode": True, "schema": {"type": "object", "additionalProperties": True}},
         {"a": ["x\r\nX-Injected: 1"]}),
        ({"style": "deepObject", "explode": True, "schema": {"type": "object", "additionalProperties": True}},
         {"a\r\nX-Injected: 1": "x"}),
        ({"schema": {"type": "object", "additionalProperties": {"type": "string"}}}, {"k\r\nX-Injected: 1": "v"}),
    ],
    ids=["deep-object-list-item", "deep-object-key", "form-object-key"],
)
def test_b2_cr_lf_in_a_query_objects_key_or_nested_item_is_refused_before_sending(param, value):
    spec = {
        "openapi": "3.0.3", "info": {"title": "t", "version": "1"},
        "paths": {"/q": {"get": {"operationId": "q", "parameters": [{"name": "filter", "in": "query", **param}],
                                 "responses": {"200": {"description": "ok"}}}}},
    }
    with HostilePeer() as peer, RestDriver(spec, base_url=peer.url) as driver:
        with pytest.raises(InvalidInputError, match="line break"):
            driver.call_tool("q", {"filter": value})
        assert peer.requests == []


# ---------------------------------------------------------------- B6 JSON nested past any stack


class _Deep(JSONHandler):
    """``GET /deep/N``: a JSON array nested N levels deep; ``/deep/N-wide`` with a 17-digit integer inside."""

    def do_GET(self) -> None:
        levels, _, wide = self.path.rsplit("/", 1)[1].partition("-")
        inner = b"12345678901234567" if wide else b""
        body = b"[" * int(levels) + inner + b"]" * int(levels)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


_DEEP_SPEC = {
    "openapi": "3.0.3", "info": {"title": "t", "version": "1"},
    "paths": {"/deep/{levels}": {"get": {
        "operationId": "deep",
        "parameters": [{"name": "levels", "in": "path", "required": True, "schema": {"type": "string"}}],
        "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "array"}}}}},
    }}},
}


@pytest.mark.parametrize("levels", ["1000", "990-wide", "5000"])
@pytest.mark.parametrize("validate", [False, True], ids=["plain", "validated"])
def test_b6_json_nested_past_the_depth_limit_comes_back_as_its_text(levels, validate):
    # orjson reads 1,024 levels: the value it gave back broke json.dumps (and `mcs serve`'s
    # answer) with a RecursionError; with a wide integer the standard library's parser,
    # and the response checks, ran out of stack themselves.
    with serving_http(_Deep) as url, RestDriver(_DEEP_SPEC, base_url=url, validate_responses=validate) as driver:
        result = driver.call_tool("deep", {"levels": levels})
        assert isinstance(result, str) and result.startswith("[[[[")
        json.dumps(result)
        assert driver.call_tool("deep", {"levels": "128"}) != driver.call_tool("deep", {"levels": "129"})
        assert isinstance(driver.call_tool("deep", {"levels": "128"}), list | dict)


# ---------------------------------------------------------------- B5 a multipart body and a 307


class _Moved(JSONHandler):
    """``POST /upload`` answers 307 to ``/landed`` (this origin); ``POST /landed`` echoes the body's length."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path == "/upload":
            self.send_response(307)
            self.send_header("Location", "/landed")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_json({"landed": len(body), "file": b"FILEDATA" in body})


def test_b5_a_multipart_upload_redirected_307_within_its_origin_is_sent_again_whole():
    # The multipart body was an unread stream: following the 307 failed with httpx's
    # RequestNotRead ("failed unexpectedly"), and so did refusing one to another origin.
    spec = {
        "openapi": "3.0.3", "info": {"title": "t", "version": "1"},
        "paths": {"/upload": {"post": {
            "operationId": "upload",
            "requestBody": {"content": {"multipart/form-data": {"schema": {
                "type": "object", "properties": {"file": {"type": "string", "format": "binary"}, "note": {"type": "string"}}}}}},
            "responses": {"200": {"description": "ok"}},
        }}},
    }
    with serving_http(_Moved) as url, RestDriver(spec, base_url=url) as driver:
        answer = driver.call_tool("upload", {"file": "FILEDATA", "note": "n"})
    assert answer["file"] is True and answer["landed"] > 0
