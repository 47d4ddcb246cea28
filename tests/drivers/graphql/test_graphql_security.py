"""SECURITY.md C1 and the free-form limits: values only as variables, hostile documents refused
before anything is sent."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest
from graphql_paths import OPERATIONS
from graphql_server import Running
from mcs_graphql import GraphQLDriver
from support.logs import log_everything, quoting

from mcs.errors import ConfigurationError, ErrorCode, InvalidInputError

INJECTION = 'x") { deleteAll } #'


@pytest.fixture
def driver(server: Running) -> Iterator[GraphQLDriver]:
    with GraphQLDriver(server.graphql, operations=OPERATIONS, freeform=True) as driver:
        yield driver


def test_an_injected_argument_travels_only_in_variables_of_the_generated_document(driver: GraphQLDriver, server: Running) -> None:
    server.state.requests.clear()
    result = driver.process_llm_response(json.dumps({"tool": "hello", "arguments": {"name": INJECTION}}))
    assert result == {"hello": f"Hello, {INJECTION}!"}
    (body,) = server.state.graphql_bodies()
    assert body["query"] == driver.operations["hello"].text  # byte for byte
    assert body["variables"] == {"name": INJECTION}
    assert server.state.deleted == 0


def test_a_persisted_document_is_sent_byte_for_byte(driver: GraphQLDriver, server: Running) -> None:
    server.state.requests.clear()
    driver.process_llm_response(json.dumps({"tool": "Greet", "arguments": {"name": INJECTION}}))
    (recorded,) = server.state.requests
    sent = json.loads(recorded.body)
    assert sent["query"] == (OPERATIONS / "books.graphql").read_text()
    assert sent["operationName"] == "Greet" and sent["variables"] == {"name": INJECTION}


def _deep(levels: int) -> str:
    inner = "id"
    for _ in range(levels):
        inner = f"author {{ books {{ {inner} }} }}"
    return f"query {{ book(id: \"b1\") {{ {inner} }} }}"


HOSTILE = {
    "deep nesting": (_deep(8), "levels deep"),
    "alias bomb": ("query { " + " ".join(f"a{i}: now" for i in range(200)) + " }", "aliases"),
    "fragment cycle": ("query { book(id: \"b1\") { ...A } } fragment A on Book { ...B } fragment B on Book { ...A }",
                       "cycle (A -> B -> A)"),
    "field count bomb": (
        "query { book(id: \"b1\") { ...F9 } } fragment F0 on Book { id title tags }"
        + "".join(f" fragment F{i} on Book {{ ...F{i - 1} ...F{i - 1} }}" for i in range(1, 10)),
        "fields (fragments expanded)"),
    "fragment chain": (  # walking it overflowed the stack: an unexpected RecursionError, not a refusal
        "query { book(id: \"b1\") { ...F0 } }" + "".join(f" fragment F{i} on Book {{ ...F{i + 1} }}" for i in range(600))
        + " fragment F600 on Book { id }", "fragments spread each other more than 100 deep"),
    "smuggled mutation": ("mutation { deleteAll }", "holds a mutation"),
    "mutation beside a query": ("query Q { now } mutation M { deleteAll }", "holds 2 operations"),
    "subscription": ("subscription { ticks(count: 2) }", "subscription"),
    "huge document": ("query { " + "now " * 6000 + "}", "tokens"),
    "complexity": ("query { books(first: 1000) { nodes { author { books { id title } } } } }", "complexity"),
    "not graphql": ("DROP TABLE books", "not valid GraphQL"),
    "unknown field": ("query { secrets }", "Cannot query field 'secrets'"),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_documents_are_refused_before_anything_is_sent(driver: GraphQLDriver, server: Running, case: str) -> None:
    document, expected = HOSTILE[case]
    server.state.requests.clear()
    with pytest.raises(InvalidInputError) as info:
        driver.process_llm_response(json.dumps({"tool": "execute", "arguments": {"query": document}}))
    assert info.value.code is ErrorCode.INVALID_INPUT
    assert expected in info.value.message
    assert server.state.requests == [] and server.state.deleted == 0


PAGE_SIZE_BY_VARIABLE = {
    "a variable's default": ("query($n: Int = 1000) { books(first: $n) { nodes { author { books { id title } } } } }", {}),
    "an integer given as a float": ("query($n: Int) { books(first: $n) { nodes { author { books { id title } } } } }",
                                    {"n": 1000.0}),
}


@pytest.mark.parametrize("case", list(PAGE_SIZE_BY_VARIABLE))
def test_the_complexity_counts_the_page_size_the_server_will_use(driver: GraphQLDriver, server: Running, case: str) -> None:
    document, variables = PAGE_SIZE_BY_VARIABLE[case]
    server.state.requests.clear()
    with pytest.raises(InvalidInputError, match="complexity"):
        driver.call_tool("execute", {"query": document, "variables": variables})
    assert server.state.requests == []


LARGE_PAGES = {
    "first": "query { books(first: 100000) { nodes { id title } } }",
    "limit": 'query { author(id: "a1") { books(limit: 100000) { id title } } }',
    "limit as a variable": 'query($n: Int) { author(id: "a1") { books(limit: $n) { id title } } }',
}


@pytest.mark.parametrize("case", list(LARGE_PAGES))
def test_a_large_page_is_refused_whichever_argument_asks_for_it(driver: GraphQLDriver, server: Running, case: str) -> None:
    server.state.requests.clear()
    with pytest.raises(InvalidInputError, match=r"estimated complexity is \d+, over the limit"):
        driver.call_tool("execute", {"query": LARGE_PAGES[case], "variables": {"n": 100000} if "$n" in LARGE_PAGES[case] else {}})
    assert server.state.requests == []


def test_a_small_limit_is_sent_and_the_size_arguments_are_configurable(server: Running) -> None:
    document = 'query { author(id: "a1") { books(limit: 2) { id } } }'
    with GraphQLDriver(server.graphql, freeform=True) as driver:
        assert driver.call_tool("execute", {"query": document}) == {"author": {"books": [{"id": "b1"}, {"id": "b3"}]}}
    large = 'query { author(id: "a1") { books(limit: 100000) { id } } }'
    with GraphQLDriver(server.graphql, freeform=True, limits={"size_arguments": ["first", "last"]}) as relay_only:
        assert len(relay_only.call_tool("execute", {"query": large})["author"]["books"]) == 4  # sized at list_size
    with pytest.raises(ConfigurationError, match="size_arguments must be a list of argument names"):
        GraphQLDriver(server.graphql, freeform=True, limits={"size_arguments": "limit"})


def test_the_limits_are_configurable(server: Running) -> None:
    strict = GraphQLDriver(server.graphql, freeform=True, limits={"max_depth": 5})
    with strict, pytest.raises(InvalidInputError, match="nests 6 levels deep; the limit is 5"):
        strict.call_tool("execute", {"query": _deep(2)})
    with GraphQLDriver(server.graphql, freeform=True, limits={"max_depth": 6}) as driver:
        result = driver.call_tool("execute", {"query": _deep(2)})
    assert result["book"]["author"]["books"][0]["author"]["books"][0]["id"] == "b1"


def test_introspection_through_execute_can_be_turned_off(server: Running) -> None:
    query = {"query": "{ __schema { queryType { name } } }"}
    with GraphQLDriver(server.graphql, freeform=True) as allowed:
        assert allowed.call_tool("execute", query) == {"__schema": {"queryType": {"name": "Query"}}}
    with GraphQLDriver(server.graphql, freeform=True, limits={"introspection": False}) as closed:
        server.state.requests.clear()
        with pytest.raises(InvalidInputError, match="Introspection"):
            closed.call_tool("execute", query)
        assert server.state.requests == []
        assert closed.call_tool("execute", {"query": "{ now __typename }"})["__typename"] == "Query"


def test_free_form_mutations_run_only_when_all_mutations_are_enabled(server: Running) -> None:
    with GraphQLDriver(server.graphql, freeform=True, mutations="all") as driver:
        assert driver.call_tool("execute", {"query": "mutation { deleteAll }"}) == {"deleteAll": 7}
    assert server.state.deleted == 7


def test_extra_arguments_never_become_variables(driver: GraphQLDriver, server: Running) -> None:
    server.state.requests.clear()
    with pytest.raises(InvalidInputError, match="query"):
        driver.process_llm_response(json.dumps({"tool": "hello", "arguments": {"name": "a", "query": "{ x }"}}))
    assert server.state.requests == []


# ---------------------------------------------------------------- the libraries' own logs


def test_a_configured_key_is_in_no_record_the_http_and_websocket_libraries_log(server: Running, caplog) -> None:
    log_everything(caplog)
    key, token = "gk-5150-secret", "tok-8080-secret"
    with GraphQLDriver(server.graphql, operations=OPERATIONS, headers={"X-Api-Key": key},
                       auth=lambda: {"Authorization": f"Bearer {token}"}) as driver:
        driver.call_tool("hello", {"name": "x"})
        assert list(driver.stream_call("ticks", {"count": 1})) == [{"ticks": 1}]
    assert {r.name.split(".")[0] for r in caplog.records} >= {"websockets", "gql"}
    assert quoting(caplog.records, key, token) == []


@pytest.mark.parametrize("path", ["sync", "async"])
def test_a_secret_typed_variable_is_in_no_record_gql_logs_at_debug(server: Running, caplog, path: str) -> None:
    log_everything(caplog)
    secret = "pw-4711-hunter2"
    call = json.dumps({"tool": "hello", "arguments": {"name": secret}})
    with GraphQLDriver(server.graphql, scalars={"String": {"type": "string", "format": "password"}}) as driver:
        assert driver.secret_mask_of("hello") == {"name": True}
        if path == "sync":
            result = driver.process_llm_response(call)
        else:
            result = asyncio.run(driver.aprocess_llm_response(call))

    assert result == {"hello": f"Hello, {secret}!"}  # the tool itself received the real value
    assert any(r.name.startswith("gql") and "[redacted]" in r.getMessage() for r in caplog.records)
    assert quoting(caplog.records, secret) == []
