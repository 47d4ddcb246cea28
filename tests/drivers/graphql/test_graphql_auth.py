"""Credentials: static headers, a refreshing callable, and nothing forwarded from the caller."""

from __future__ import annotations

import asyncio

import pytest
from graphql_server import SDL, Running
from mcs_graphql import GraphQLDriver

from mcs.context import AgentContext
from mcs.errors import ExecutionError


def test_static_headers_reach_the_server(server: Running) -> None:
    with GraphQLDriver(server.url + "/private", schema=SDL, headers={"Authorization": "Bearer good"}) as driver:
        assert driver.call_tool("whoami", {}) == {"whoami": "Bearer good"}


def test_a_missing_token_is_an_execution_error_that_says_so(server: Running) -> None:
    with GraphQLDriver(server.url + "/private", schema=SDL) as driver, pytest.raises(ExecutionError) as info:
        driver.call_tool("whoami", {})
    assert "HTTP 401" in info.value.message and "not authorised" in info.value.message


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_the_auth_callable_is_asked_again_after_a_401(server: Running, use_async: bool) -> None:
    issued: list[str] = []

    def auth() -> dict[str, str]:
        token = "stale" if not issued else "good"
        issued.append(token)
        return {"Authorization": f"Bearer {token}"}

    with GraphQLDriver(server.url + "/private", schema=SDL, auth=auth) as driver:
        if use_async:
            result = asyncio.run(driver.acall_tool("whoami", {}))
        else:
            result = driver.call_tool("whoami", {})
    assert result == {"whoami": "Bearer good"}
    assert issued == ["stale", "good"]


def test_an_async_auth_callable_is_awaited(server: Running) -> None:
    async def auth() -> dict[str, str]:
        return {"Authorization": "Bearer good"}

    with GraphQLDriver(server.url + "/private", schema=SDL, auth=auth) as driver:
        assert asyncio.run(driver.acall_tool("whoami", {})) == {"whoami": "Bearer good"}
        assert driver.call_tool("whoami", {}) == {"whoami": "Bearer good"}


def test_the_callers_credentials_are_never_forwarded(server: Running) -> None:
    context = AgentContext(agent_id="a", metadata={"authorization": "Bearer INBOUND", "headers": {"Authorization": "x"}})
    with GraphQLDriver(server.graphql, schema=SDL) as driver:
        result = driver.process_llm_response('{"tool": "whoami", "arguments": {}}', context=context)
    assert result == {"whoami": None}
    assert all("INBOUND" not in str(r.headers) for r in server.state.requests)


def test_a_header_with_a_line_break_from_the_callable_is_refused_before_sending(server: Running) -> None:
    bad = {"X-Token": "a\r\nX-Injected: 1"}
    with GraphQLDriver(server.graphql, schema=SDL, auth=lambda: bad) as driver, pytest.raises(ExecutionError, match="line break"):
        driver.call_tool("now", {})
    assert server.state.requests == []


_ECHOED = ["Bearer echo-token-1", "echo-token-1", "api-key-2"]


def _assert_scrubbed(text: str) -> None:
    assert "[redacted]" in text
    for secret in _ECHOED:
        assert secret not in text


def _echo_driver(server: Running, path: str) -> GraphQLDriver:
    return GraphQLDriver(server.url + path, schema=SDL, headers={"X-Api-Key": "api-key-2"},
                         auth=lambda: {"Authorization": "Bearer echo-token-1"})


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_credentials_echoed_in_graphql_errors_never_reach_the_model(server: Running, use_async: bool) -> None:
    with _echo_driver(server, "/echo-denied") as driver, pytest.raises(ExecutionError) as info:
        if use_async:
            asyncio.run(driver.acall_tool("whoami", {}))
        else:
            driver.call_tool("whoami", {})
    assert "is not valid" in info.value.message  # the server's error did come through
    _assert_scrubbed(f"{info.value.message} {info.value.details} {info.value}")


def test_credentials_echoed_beside_partial_data_never_reach_the_model(server: Running) -> None:
    with _echo_driver(server, "/echo-partial") as driver:
        result = driver.call_tool("whoami", {})
    assert result["data"] == {"whoami": None}
    _assert_scrubbed(str(result["errors"]))


@pytest.mark.parametrize("path", ["/echo-html", "/echo-refs"], ids=["as-is", "character-references"])
def test_credentials_echoed_in_a_page_that_is_not_graphql_never_reach_the_model(server: Running, path: str) -> None:
    with _echo_driver(server, path) as driver, pytest.raises(ExecutionError) as info:
        driver.call_tool("whoami", {})
    assert "did not answer with a GraphQL result" in info.value.message
    _assert_scrubbed(f"{info.value.message} {info.value.details}")

