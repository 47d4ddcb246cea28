"""Fixtures for the REST driver: the loopback API, its spec, and the shared corpus."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from rest_paths import CORPUS
from rest_server import Running, serve


@pytest.fixture(scope="session")
def api_server() -> Iterator[Running]:
    with serve() as running:
        yield running


@pytest.fixture
def api(api_server: Running) -> Running:
    """The running API with its recorder and counters cleared for this test."""
    api_server.state.requests.clear()
    api_server.state.counters.clear()
    api_server.state.pets.clear()
    api_server.state.tokens_issued = 0
    return api_server


@pytest.fixture
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip("the shared corpus (../shared/corpus) is not available here")
    return CORPUS.resolve()
