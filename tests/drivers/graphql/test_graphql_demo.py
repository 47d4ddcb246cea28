"""`make demo-graphql` (python -m mcs_graphql.demo) makes real GraphQL calls on loopback and prints them."""

from __future__ import annotations

import json

import httpx
import pytest
from mcs_graphql import demo


def test_the_demo_prints_the_prompt_the_documents_and_the_results(capsys: pytest.CaptureFixture[str]) -> None:
    demo.main()
    out = capsys.readouterr().out
    assert "== System prompt for gpt-4o ==" in out
    assert "query Books($author: String) { books(author: $author) { id title author year } }" in out
    results = [json.loads(part.split("\n\n")[0]) for part in out.split("== Result of the real GraphQL call ==\n")[1:]]
    assert [b["id"] for b in results[0]["books"]] == ["1", "2"]
    assert results[1] == {"book": {"id": "3", "title": "Dune", "author": "Frank Herbert", "year": 1965}}


def test_the_demo_server_stops_after_use() -> None:
    with demo.serve_library() as url:
        assert httpx.post(url, json={"query": "{ books { id } }"}).json()["data"]["books"][0] == {"id": "1"}
    with pytest.raises(httpx.ConnectError):
        httpx.post(url, json={"query": "{ books { id } }"})
