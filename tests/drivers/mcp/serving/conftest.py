"""Fixtures for the serving tests (helpers live in serving_support.py)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from serving_helpers import SampleDriver
from serving_support import serve_driver


@pytest.fixture
def sample() -> SampleDriver:
    return SampleDriver()


@pytest.fixture
def sample_url(sample: SampleDriver) -> Iterator[str]:
    with serve_driver(sample) as url:
        yield url
