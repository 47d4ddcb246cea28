"""A secret-typed argument the bridge sends never reaches a log record of this process.

The SDK-built vault server's ``unlock`` takes a ``SecretStr``; the ``mcp`` SDK logs every
message it sends over streamable HTTP at ``DEBUG``, and the server sends a log message
quoting the password back (the bridge relays those to ``mcs_mcp.client.server``).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest
from mcp_bridge_servers import SERVERS, start_http, stop
from support.logs import every_record, quoting

from mcs.registry import load_driver

VAULT = SERVERS / "vault_server.py"
PASSWORD = "open-sesame-4711"
CALL = {"tool": "unlock", "arguments": {"password": PASSWORD}}


@pytest.fixture
def vault_http() -> Iterator[str]:
    process, url = start_http(VAULT)
    try:
        yield url
    finally:
        stop(process)


def test_the_unlock_password_is_a_secret_typed_argument(vault_http: str) -> None:
    with load_driver("mcp", url=vault_http) as driver:
        schema = driver.list_tools()[0].input_schema
    assert schema["properties"]["password"]["writeOnly"] is True


def test_a_call_over_streamable_http_logs_no_secret_argument_at_debug(vault_http: str) -> None:
    with load_driver("mcp", url=vault_http) as driver, every_record() as logged:
        assert driver.process_llm_response(CALL) == "unlocked"
    assert any(r.name == "mcp.client.streamable_http" for r in logged.records)  # the SDK did log the send
    assert any(r.name == "mcs_mcp.client.server" for r in logged.records)  # and the server's message
    assert quoting(logged.records, PASSWORD) == []


async def test_an_async_call_over_streamable_http_logs_no_secret_argument_at_debug(vault_http: str) -> None:
    with load_driver("mcp", url=vault_http) as driver, every_record() as logged:
        assert await driver.aprocess_llm_response(CALL) == "unlocked"
    assert quoting(logged.records, PASSWORD) == []


def test_a_call_over_stdio_logs_no_secret_argument_at_debug(quiet: Any) -> None:
    with load_driver("mcp", command=sys.executable, args=[str(VAULT)], stderr=quiet) as driver, \
            every_record() as logged:
        assert driver.process_llm_response(CALL) == "unlocked"
    assert any(r.name == "mcs_mcp.client.server" for r in logged.records)
    assert quoting(logged.records, PASSWORD) == []
