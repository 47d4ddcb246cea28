"""RFC0001Driver: a secret-typed argument it sends never reaches a log record of this process.

The vault server runs in its own process, so every record captured is the client's
(httpx and httpcore log each exchange at ``INFO`` and ``DEBUG``).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.logs import every_record, quoting
from support.servers import free_port, server_process

import mcs
from mcs.errors import ExecutionError

VAULT = Path(__file__).resolve().parent / "rfc0001_vault.py"
PASSWORD = "open-sesame-4711"
WRONG = "not-the-password-0815"


@pytest.fixture(scope="module")
def vault() -> Iterator[str]:
    port = free_port()
    with server_process([sys.executable, VAULT, str(port)], port):
        yield f"http://127.0.0.1:{port}"


@pytest.fixture
def driver(vault: str) -> Iterator[mcs.MCSDriver]:
    with mcs.load_driver("rfc0001", url=vault) as loaded:
        assert loaded.list_tools()[0].input_schema["properties"]["password"]["writeOnly"] is True
        yield loaded


def test_a_call_logs_no_secret_argument_at_debug(driver: mcs.MCSDriver) -> None:
    with every_record() as logged:
        assert driver.process_llm_response({"tool": "unlock", "arguments": {"password": PASSWORD}}) == "unlocked"
    assert any(r.name == "httpx" for r in logged.records)  # the exchange was logged
    assert quoting(logged.records, PASSWORD) == []


async def test_an_async_call_logs_no_secret_argument_at_debug(driver: mcs.MCSDriver) -> None:
    with every_record() as logged:
        result = await driver.aprocess_llm_response({"tool": "unlock", "arguments": {"password": PASSWORD}})
    assert result == "unlocked"
    assert quoting(logged.records, PASSWORD) == []


def test_a_failed_call_quotes_the_secret_neither_in_its_error_nor_in_a_log_record(driver: mcs.MCSDriver) -> None:
    with every_record() as logged, pytest.raises(ExecutionError) as info:
        driver.process_llm_response({"tool": "unlock", "arguments": {"password": WRONG}})
    assert WRONG not in str(info.value)
    assert quoting(logged.records, WRONG) == []
