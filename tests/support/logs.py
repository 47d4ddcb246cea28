"""Reading what libraries logged during a test: which records quote a secret."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

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


class EveryRecord(logging.Handler):
    """Keeps every record that reaches the root logger (set to ``DEBUG`` while installed)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def every_record() -> Iterator[EveryRecord]:
    """Every record any logger writes during the block, the root logger at ``DEBUG`` (its
    level and handlers restored after). The loggers of :data:`LIBRARIES` are enabled at
    ``DEBUG`` too for the block: an earlier test (or a server's ``logging.config``) may have
    raised their level or disabled them."""
    root = logging.getLogger()
    handler, level = EveryRecord(), root.level
    libraries = [logging.getLogger(name) for name in LIBRARIES]
    saved = [(logger.level, logger.disabled) for logger in libraries]
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    for logger in libraries:
        logger.setLevel(logging.DEBUG)
        logger.disabled = False
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
        for logger, (was, disabled) in zip(libraries, saved, strict=True):
            logger.setLevel(was)
            logger.disabled = disabled
