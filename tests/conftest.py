"""Shared fixtures for the core's tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcs.registry import KNOWN_DISTRIBUTIONS, ONLY_ENV

pytest_plugins = ["pytester"]

#: Distributions the tests install on the fly (tmp dist-info folders with entry points).
TEST_DISTRIBUTIONS = ("acme-mcs-plugins", "first-dist", "second-dist", "needy-plugin", "broken-plugin")
# The suite sees the project's own plugins and the ones its tests install, never whatever
# else the environment holds: a user's plugin named like a fixture's must not change it.
os.environ.setdefault(ONLY_ENV, ",".join(sorted(
    {"mcs-framework", *(d.split("[")[0] for d in KNOWN_DISTRIBUTIONS.values()), *TEST_DISTRIBUTIONS}
)))

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / ".." / "shared" / "corpus"


@pytest.fixture
def corpus() -> Path:
    """The shared corpus of real specs and model outputs; skips when it is absent."""
    if not CORPUS.is_dir():
        pytest.skip(f"the shared corpus is not beside the repository ({CORPUS})")
    return CORPUS.resolve()
