"""Fixtures for the gRPC driver: real gRPC servers on loopback, certificates, the corpus."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from grpc_servers import (
    CORPUS,
    Certificates,
    Running,
    greeter_servicer,
    key_value_servicer,
    lab_servicer,
    make_certificates,
    publisher_servicer,
    route_guide_servicer,
    serve,
)


@pytest.fixture
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip("the shared corpus (../shared/corpus) is not available here")
    return CORPUS.resolve()


@pytest.fixture(scope="session")
def lab_server() -> Iterator[Running]:
    """The lab service with v1alpha reflection (as grpcio-reflection serves it) and health."""
    with serve([lab_servicer]) as running:
        yield running


@pytest.fixture
def lab(lab_server: Running) -> Running:
    lab_server.state.reset()
    return lab_server


@pytest.fixture(scope="session")
def examples_server() -> Iterator[Running]:
    """helloworld, route_guide and keyvaluestore from the corpus protos, with v1 reflection."""
    if not CORPUS.is_dir():
        pytest.skip("the shared corpus (../shared/corpus) is not available here")
    with serve([greeter_servicer, route_guide_servicer, key_value_servicer], reflection_version="v1") as running:
        yield running


@pytest.fixture
def examples(examples_server: Running) -> Running:
    examples_server.state.reset()
    return examples_server


@pytest.fixture(scope="session")
def certificates() -> Certificates:
    return make_certificates()


@pytest.fixture(scope="module")
def pubsub_server() -> Iterator[Running]:
    """Pub/Sub's Publisher, generated from the corpus's googleapis (no reflection: the driver reads the proto)."""
    if not CORPUS.is_dir():
        pytest.skip("the shared corpus (../shared/corpus) is not available here")
    with serve([publisher_servicer], reflection_version=None) as running:
        yield running
