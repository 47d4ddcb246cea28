"""search_schema, describe_type and execute against the loopback server and the GitHub schema."""

from __future__ import annotations

import pytest
from graphql_server import Running
from mcs_graphql import GraphQLDriver

from mcs.errors import ErrorCode, InvalidInputError


def test_search_schema_finds_types_and_fields_by_words(github: GraphQLDriver) -> None:
    found = github.call_tool("search_schema", {"query": "repository issues"})
    names = [r["name"] for r in found["results"]]
    assert "Repository.issues" in names[:3]
    issues = next(r for r in found["results"] if r["name"] == "Repository.issues")
    assert issues["signature"].endswith(": IssueConnection!") and "first: Int" in issues["signature"]


def test_describe_type_shows_fields_arguments_and_cuts_large_types(github: GraphQLDriver) -> None:
    repo = github.call_tool("describe_type", {"name": "Repository"})
    assert repo["kind"] == "OBJECT" and any(f.startswith("issues(") for f in repo["fields"])
    assert len(str(repo)) <= 24_500
    field = github.call_tool("describe_type", {"name": "Query.repository"})
    assert field["type"] == "Repository" and field["arguments"]["owner"].startswith("String! - The login field")
    state = github.call_tool("describe_type", {"name": "IssueState"})
    assert any(v.startswith("OPEN") for v in state["values"])


def test_an_unknown_type_suggests_close_names(github: GraphQLDriver) -> None:
    with pytest.raises(InvalidInputError, match="Close names: Repository"):
        github.call_tool("describe_type", {"name": "Repositry"})
    with pytest.raises(InvalidInputError, match="Close names: issues"):
        github.call_tool("describe_type", {"name": "Repository.isues"})


def test_every_field_is_reachable_through_execute_checks(github: GraphQLDriver) -> None:
    from mcs_graphql._limits import check

    document = ("query($owner: String!, $name: String!) { repository(owner: $owner, name: $name) "
                "{ issues(first: 5, states: OPEN) { nodes { number title labels(first: 3) { nodes { name } } } } } }")
    checked = check(document, github.schema, github.limits, mutations=False, variables={"owner": "o", "name": "n"})
    # repository 1, issues 1, then 5 each for nodes, number, title, labels; 5 x 3 for labels' nodes and name
    assert checked.complexity == 1 + 1 + 5 * 4 + 15 * 2
    with pytest.raises(InvalidInputError, match="variables do not fit"):
        check(document, github.schema, github.limits, mutations=False, variables={"owner": 1})


def test_execute_runs_a_validated_query_with_variables(server: Running) -> None:
    with GraphQLDriver(server.graphql, freeform=True) as driver:
        result = driver.process_llm_response(
            '{"tool": "execute", "arguments": {"query": "query($id: ID!) { book(id: $id) { title author { mentor { name } } } }",'
            ' "variables": {"id": "b2"}}}'
        )
        assert result == {"book": {"title": "Book 2", "author": {"mentor": {"name": "Ursula"}}}}
        sent = server.state.graphql_bodies()[-1]
        assert sent["variables"] == {"id": "b2"}
        server.state.requests.clear()
        with pytest.raises(InvalidInputError, match="variables do not fit"):
            driver.call_tool("execute", {"query": "query($id: ID!) { book(id: $id) { id } }", "variables": {}})
        assert server.state.requests == []


def test_execute_refuses_variables_the_operation_does_not_declare(server: Running) -> None:
    with GraphQLDriver(server.graphql, freeform=True) as driver:
        server.state.requests.clear()
        with pytest.raises(InvalidInputError) as info:
            driver.call_tool("execute", {"query": "query($id: ID!) { book(id: $id) { id } }",
                                         "variables": {"id": "b1", "token": "x", "admin": True}})
        assert info.value.code is ErrorCode.INVALID_INPUT
        assert "$admin, $token" in info.value.message and "it declares: $id" in info.value.message
        with pytest.raises(InvalidInputError, match=r"\$id \(it declares: none\)"):
            driver.call_tool("execute", {"query": "{ now }", "variables": {"id": "b1"}})
        assert server.state.requests == []
        assert driver.call_tool("execute", {"query": "query($id: ID!) { book(id: $id) { id } }",
                                            "variables": {"id": "b1"}}) == {"book": {"id": "b1"}}
        assert server.state.graphql_bodies()[-1]["variables"] == {"id": "b1"}


def test_execute_sends_no_operation_name_for_an_anonymous_operation(server: Running) -> None:
    with GraphQLDriver(server.graphql, freeform=True) as driver:
        server.state.requests.clear()
        assert driver.call_tool("execute", {"query": "{ now }", "operationName": "Other"}) == {"now": "2024-05-01T12:00:00Z"}
        assert "operationName" not in server.state.graphql_bodies()[-1]
        driver.call_tool("execute", {"query": "query Clock { now }", "operationName": "Other"})
        assert server.state.graphql_bodies()[-1]["operationName"] == "Clock"
