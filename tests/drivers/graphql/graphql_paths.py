"""Paths the GraphQL tests share: the operation documents beside them, and the shared corpus
for module-scoped fixtures (the core's ``corpus`` fixture is per test)."""

from __future__ import annotations

from pathlib import Path

import pytest

GITHUB = "github_schema_2024-04-16.graphql"
OPERATIONS = Path(__file__).parent / "operations"
CORPUS = Path(__file__).resolve().parents[3] / ".." / "shared" / "corpus"


def corpus_path() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"the shared corpus is not beside the repository ({CORPUS})")
    return CORPUS.resolve()
