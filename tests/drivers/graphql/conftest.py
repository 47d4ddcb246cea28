"""Fixtures for the GraphQL driver: the loopback server and the shared corpus."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from graphql_paths import GITHUB, corpus_path
from graphql_server import Running, serve
from mcs_graphql import GraphQLDriver


@pytest.fixture(scope="session")
def github() -> GraphQLDriver:
    """GitHub's 2024 public schema with every tool (mutations, free-form), built once."""
    return GraphQLDriver(schema=corpus_path() / "graphql" / GITHUB, mutations="all", freeform=True)


@pytest.fixture(scope="session")
def server_running() -> Iterator[Running]:
    with serve() as running:
        yield running


@pytest.fixture
def server(server_running: Running) -> Running:
    """The running server with its data and recorder reset for this test."""
    server_running.state.reset()
    return server_running
