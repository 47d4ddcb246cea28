"""Subscriptions as the `stream` capability over graphql-transport-ws and Apollo's graphql-ws."""

from __future__ import annotations

import asyncio
import time

import pytest
from graphql_paths import OPERATIONS
from graphql_server import SDL, Running
from mcs_graphql import GraphQLDriver
from support.servers import free_port

from mcs.errors import ExecutionError


@pytest.mark.parametrize("path", ["/graphql", "/legacy"], ids=["graphql-transport-ws", "graphql-ws"])
def test_a_subscription_streams_its_events(server: Running, path: str) -> None:
    with GraphQLDriver(server.url + path, schema=SDL) as driver:
        assert driver.supports("stream")
        events = list(driver.stream_call("ticks", {"count": 3}))
    assert events == [{"ticks": 1}, {"ticks": 2}, {"ticks": 3}]


def test_the_stream_stops_at_the_event_count(server: Running) -> None:
    with GraphQLDriver(server.graphql, schema=SDL, subscription_max_events=4) as driver:
        assert [e["forever"] for e in driver.stream_call("forever", {})] == [1, 2, 3, 4]


def test_the_stream_stops_at_the_time_window(server: Running) -> None:
    with GraphQLDriver(server.graphql, schema=SDL, subscription_window=0.3, subscription_max_events=1000) as driver:
        started = time.monotonic()
        events = list(driver.stream_call("forever", {}))
    assert 2 <= len(events) <= 20
    assert time.monotonic() - started < 2


def test_the_async_stream_and_an_early_stop_release_the_socket(server: Running) -> None:
    async def run() -> list[int]:
        async with GraphQLDriver(server.graphql, schema=SDL) as driver:
            got = []
            stream = driver.astream_call("forever", {})
            async for event in stream:
                got.append(event["forever"])
                if len(got) == 2:
                    break
            await stream.aclose()
            return got

    assert asyncio.run(run()) == [1, 2]


def test_a_subscription_called_as_a_tool_returns_its_bounded_events(server: Running) -> None:
    with GraphQLDriver(server.graphql, operations=OPERATIONS) as driver:
        assert driver.process_llm_response('{"tool": "Ticks", "arguments": {"count": 2}}') == [{"ticks": 1}, {"ticks": 2}]
        assert asyncio.run(driver.acall_tool("ticks", {"count": 1})) == [{"ticks": 1}]


def test_a_query_tool_streams_its_one_result(server: Running) -> None:
    with GraphQLDriver(server.graphql, schema=SDL) as driver:
        assert list(driver.stream_call("now", {})) == [{"now": "2024-05-01T12:00:00Z"}]


def test_a_refused_websocket_is_a_clear_error(server: Running) -> None:
    driver = GraphQLDriver(server.graphql, schema=SDL, ws_url=f"ws://127.0.0.1:{free_port()}/graphql")
    with driver, pytest.raises(ExecutionError, match="could not open the subscription"):
        list(driver.stream_call("ticks", {"count": 1}))


def test_a_schema_without_subscriptions_does_not_declare_the_stream_capability() -> None:
    assert not GraphQLDriver(schema="type Query { a: Int }").supports("stream")
