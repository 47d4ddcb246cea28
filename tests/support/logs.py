"""Reading what libraries logged during a test: which records quote a secret."""

from __future__ import annotations

import logging
from collections.abc import Iterable

import pytest

#: The libraries the drivers send through, at the level where they log most.
LIBRARIES = ("httpx", "httpcore", "httpx2", "httpcore2", "gql", "websockets", "zeep", "urllib3")


def log_everything(caplog: pytest.LogCaptureFixture) -> None:
    """Capture every record of :data:`LIBRARIES` at ``DEBUG``."""
    for name in LIBRARIES:
        caplog.set_level(logging.DEBUG, logger=name)


def quoting(records: Iterable[logging.LogRecord], *secrets: str) -> list[str]:
    """The records (as ``logger: message``) whose message, args or exception text hold one of ``secrets``."""
    found = []
    for record in records:
        texts = (record.getMessage(), repr(record.args), record.exc_text or "")
        if any(secret in text for secret in secrets for text in texts):
            found.append(f"{record.name}: {record.getMessage()[:200]}")
    return found
