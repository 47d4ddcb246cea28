"""Fixtures: the sample server over each transport (helpers live in rfc0001_helpers)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from rfc0001_helpers import (
    Audit,
    HttpClient,
    StdioClient,
    WsClient,
    build_server,
    running_app,
)


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The sample server over HTTP, one per test module; yields its base URL."""
    server = build_server(tmp_path_factory.mktemp("sample") / "audit.jsonl")
    with running_app(server.asgi_app()) as base:
        yield base
    server.close()


@pytest.fixture(params=["http", "websocket", "stdio"])
def wire(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Any, Audit]]:
    """A client of a fresh sample server over one transport, and the server's audit record."""
    audit = Audit(tmp_path / "audit.jsonl")
    with ExitStack() as stack:
        client: Any
        if request.param == "stdio":
            client = StdioClient(audit.path)
        else:
            server = build_server(audit.path)
            stack.callback(server.close)
            url = stack.enter_context(running_app(server.asgi_app()))
            client = HttpClient(url) if request.param == "http" else WsClient(url)
        stack.callback(client.close)
        yield client, audit
