"""The core's contract suite (mcs.testing) over the GraphQL driver against the loopback server."""

from __future__ import annotations

import json

import pytest
from graphql_server import Running
from mcs_graphql import GraphQLDriver

testing = pytest.importorskip("mcs.testing", reason="the core's contract suite (mcs.testing) is not installed")


class TestGraphQLDriverContract(testing.DriverContractTests):  # type: ignore[name-defined,misc]
    prefix: str | None = None

    @pytest.fixture
    def driver(self, server: Running):
        with GraphQLDriver(server.graphql, prefix=self.prefix) as driver:
            yield driver

    @pytest.fixture
    def valid_call(self, driver: GraphQLDriver) -> str:
        return json.dumps({"tool": self.exposed_name(driver, "book"), "arguments": {"id": "b1"}})

    def test_valid_call_gives_the_book_the_server_holds(self, driver: GraphQLDriver, valid_call: str) -> None:
        assert driver.process_llm_response(valid_call)["book"]["title"] == "Book 1"


class TestPrefixedGraphQLDriverContract(TestGraphQLDriverContract):
    prefix = "library"

    def test_tools_carry_the_prefix(self, driver: GraphQLDriver) -> None:
        assert all(t.name.startswith("library_") for t in driver.list_tools())
