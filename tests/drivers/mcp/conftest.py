"""Fixtures for every MCP test folder."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture
def quiet() -> Iterator[object]:
    """A sink for stdio servers' stderr (their tracebacks for refused calls)."""
    with open(os.devnull, "w", encoding="utf-8") as sink:
        yield sink
