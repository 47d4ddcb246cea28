"""Shared fixtures for the core's tests."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / ".." / "shared" / "corpus"


@pytest.fixture
def corpus() -> Path:
    """The shared corpus of real specs and model outputs; skips when it is absent."""
    if not CORPUS.is_dir():
        pytest.skip(f"the shared corpus is not beside the repository ({CORPUS})")
    return CORPUS.resolve()
