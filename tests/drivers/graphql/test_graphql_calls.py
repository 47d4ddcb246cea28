"""Real calls against the loopback server: results, errors, paging, deadlines, caps, retries."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import Iterator
from contextlib import closing

import pytest
import uvicorn
from graphql_paths import OPERATIONS
from graphql_server import Running, State, build_app
from mcs_graphql import GraphQLDriver
from support.servers import free_port, running_uvicorn

from mcs.errors import ErrorCode, ExecutionError, ToolTimeoutError


@pytest.fixture
def driver(server: Running) -> Iterator[GraphQLDriver]:
    with GraphQLDriver(server.graphql, operations=OPERATIONS, mutations="all") as driver:
        yield driver


def call(driver: GraphQLDriver, tool: str, arguments: dict) -> object:
    return driver.process_llm_response(json.dumps({"tool": tool, "arguments": arguments}))


def test_a_query_returns_the_raw_data(driver: GraphQLDriver, server: Running) -> None:
    assert call(driver, "hello", {"name": "Ada"}) == {"hello": "Hello, Ada!"}
    sent = server.state.graphql_bodies()[-1]
    assert sent["variables"] == {"name": "Ada"} and sent["operationName"] == "Hello"


def test_nested_types_enums_and_custom_scalars_round_trip(driver: GraphQLDriver) -> None:
    book = call(driver, "book", {"id": "b2"})
    assert book == {"book": {"id": "b2", "title": "Book 2", "genre": "SCIENCE", "published": "2020-01-03T00:00:00Z",
                             "link": "https://books.test/2", "tags": ["t"], "author": {"id": "a2", "name": "Ted"}}}
    science = call(driver, "books", {"genre": "SCIENCE", "first": 2})
    assert [b["genre"] for b in science["books"]["nodes"]] == ["SCIENCE", "SCIENCE"]


def test_an_input_object_mutation_runs_once(driver: GraphQLDriver, server: Running) -> None:
    added = call(driver, "addBook", {"input": {"title": "Dune", "published": "1965-08-01T00:00:00Z",
                                               "author": {"name": "Frank", "mentor": {"name": "Jack"}}}})
    assert added["addBook"]["title"] == "Dune" and added["addBook"]["genre"] == "FICTION"
    assert server.state.books[-1]["title"] == "Dune"


def test_a_relay_connection_pages_with_the_end_cursor(driver: GraphQLDriver) -> None:
    first = call(driver, "books", {"first": 4})["books"]
    assert first["pageInfo"] == {"hasNextPage": True, "endCursor": "b4"} and first["totalCount"] == 7
    second = call(driver, "books", {"first": 4, "after": first["pageInfo"]["endCursor"]})["books"]
    assert [b["id"] for b in second["nodes"]] == ["b5", "b6", "b7"]
    assert second["pageInfo"]["hasNextPage"] is False
    assert len(call(driver, "books", {})["books"]["nodes"]) == 7  # first=10 by default


def test_errors_with_partial_data_come_back_beside_the_data(driver: GraphQLDriver) -> None:
    result = call(driver, "partial", {})
    assert result["data"] == {"partial": {"ok": "fine", "broken": None}}
    assert result["errors"][0]["message"] == "broken is broken"
    assert result["errors"][0]["path"] == ["partial", "broken"]


def test_errors_without_data_are_an_execution_error_listing_message_and_path(driver: GraphQLDriver) -> None:
    with pytest.raises(ExecutionError) as info:
        call(driver, "fail", {})
    assert info.value.code is ErrorCode.EXECUTION_ERROR
    assert "the fail field always fails (at fail)" in info.value.message
    assert info.value.details["errors"][0]["path"] == ["fail"]


def test_a_union_result_carries_typenames(driver: GraphQLDriver) -> None:
    found = call(driver, "search", {"text": "ursula"})["search"]
    assert found == [{"__typename": "Author", "id": "a1", "name": "Ursula"}]


def test_a_persisted_query_with_a_fragment_runs(driver: GraphQLDriver) -> None:
    result = call(driver, "BooksByGenre", {"genre": "FICTION"})
    assert [b["id"] for b in result["books"]["nodes"]] == ["b1", "b3", "b5"]
    assert result["books"]["nodes"][0]["author"] == {"name": "Ursula"}


async def test_async_with_closes_the_pool_of_the_running_loop(server: Running) -> None:
    async with GraphQLDriver(server.graphql, operations=OPERATIONS) as driver:
        assert await driver.acall_tool("Greet", {"name": "Async"})
        assert driver._link is not None
        pair = driver._link._aclients.current()
        assert pair is not None
        pool = pair[0].transport.client
        assert pool is not None and not pool.is_closed
    assert pool.is_closed and len(driver._link._aclients) == 0


def test_the_async_twin_gives_the_same_results(driver: GraphQLDriver) -> None:
    async def both() -> tuple[object, object]:
        first = await driver.aprocess_llm_response('{"tool": "books", "arguments": {"first": 2}}')
        second = await driver.acall_tool("Greet", {"name": "Async"})
        await driver.aclose()
        return first, second

    first, second = asyncio.run(both())
    assert first == call(driver, "books", {"first": 2})
    assert second == {"hello": "Hello, Async!"}


def test_a_driver_called_from_many_asyncio_runs_keeps_no_session_of_a_finished_loop(driver: GraphQLDriver) -> None:
    for number in range(20):  # one loop per call, as sync code calling async code often does
        assert asyncio.run(driver.acall_tool("hello", {"name": f"n{number}"})) == {"hello": f"Hello, n{number}!"}
        assert len(driver._link._aclients) == 0  # the loop's shutdown closed its session and let it go


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_a_slow_answer_times_out_within_the_deadline(server: Running, use_async: bool) -> None:
    with GraphQLDriver(server.graphql, schema=server_sdl(), timeout=0.3) as driver:
        started = time.monotonic()
        with pytest.raises(ToolTimeoutError):
            if use_async:
                asyncio.run(driver.acall_tool("slow", {"ms": 3000}))
            else:
                driver.call_tool("slow", {"ms": 3000})
        assert time.monotonic() - started < 1.5
        assert driver.call_tool("slow", {"ms": 1}) == {"slow": "done"}


def test_a_large_answer_is_cut_at_the_byte_cap_with_a_marker(server: Running) -> None:
    with GraphQLDriver(server.graphql, schema=server_sdl(), max_response_bytes=4096) as driver:
        result = driver.call_tool("big", {"kb": 64})
        assert isinstance(result, str) and result.startswith('{"data":{"big":"xxxx')
        assert "[truncated: the response passed 4096 bytes" in result
        assert len(result) < 4096 + 300
        assert driver.call_tool("big", {"kb": 1}) == {"big": "x" * 1024}


def test_a_compression_bomb_is_inflated_only_up_to_the_cap(server: Running) -> None:
    with GraphQLDriver(server.url + "/bomb", schema=server_sdl(), max_response_bytes=10_000) as driver:
        result = driver.call_tool("now", {})
    assert isinstance(result, str) and "[truncated" in result and len(result) < 11_000


def server_sdl() -> str:
    from graphql_server import SDL

    return SDL


def test_an_answer_that_is_not_graphql_is_a_clear_error(server: Running) -> None:
    with GraphQLDriver(server.url + "/html", schema=server_sdl()) as driver, pytest.raises(ExecutionError) as info:
        driver.call_tool("now", {})
    assert "did not answer with a GraphQL result" in info.value.message


def test_queries_are_retried_on_503_and_mutations_are_not(server: Running) -> None:
    with GraphQLDriver(server.url + "/flaky", schema=server_sdl(), mutations="all", backoff=0.01) as driver:
        server.state.fail_next = 2
        assert driver.call_tool("now", {}) == {"now": "2024-05-01T12:00:00Z"}
        assert len(server.state.requests) == 3
        server.state.requests.clear()
        server.state.fail_next = 1
        with pytest.raises(ExecutionError) as info:
            driver.call_tool("deleteAll", {})
        assert info.value.details == {"status": 503}
        assert len(server.state.requests) == 1 and server.state.deleted == 0


def _restartable(port: int) -> socket.socket:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    return sock


def test_a_dead_server_gives_a_clear_error_and_the_next_call_reconnects() -> None:
    port = free_port()
    config = {"log_level": "error", "lifespan": "off", "ws": "none", "access_log": False}
    with GraphQLDriver(f"http://127.0.0.1:{port}/graphql", schema=server_sdl(), retries=0) as driver:
        for round_ in range(2):
            with closing(_restartable(port)) as sock, running_uvicorn(uvicorn.Config(build_app(State()), **config), sock):
                assert driver.call_tool("hello", {"name": str(round_)}) == {"hello": f"Hello, {round_}!"}
            with pytest.raises(ExecutionError) as info:
                driver.call_tool("hello", {"name": "nobody"})
            assert "could not reach the GraphQL server" in info.value.message
