"""HTTP invocations and their connections: pooled per event loop, closed by close()/aclose()."""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from collections.abc import Iterator
from urllib.parse import quote, quote_plus

import pytest
from mcpfile_support import Reply, mcp_file, tool
from mcs_mcp.mcpfile.driver import MCPFileDriver
from support.servers import silent_peer as hanging_peer

from mcs.errors import ExecutionError, ToolTimeoutError

CALLS = 5


def fetching(new_driver, write_file, recorder) -> MCPFileDriver:
    """A driver whose tool ``t`` GETs /items/{id} from the recorder."""
    invocation = {"http": {"method": "GET", "url": recorder.url + "/items/{id}"}}
    return new_driver(write_file(mcp_file(tool("t", invocation, {"id": {"type": "string"}}))))


# ---------------------------------------------------------------------- pooled connections


def test_sequential_sync_calls_share_one_connection_and_close_releases_it(new_driver, write_file, recorder) -> None:
    driver = fetching(new_driver, write_file, recorder)
    for number in range(CALLS):
        assert driver.call_tool("t", {"id": str(number)}) == {"ok": True}
    assert len(recorder.requests) == CALLS
    assert recorder.connections == 1
    driver.close()
    assert recorder.wait_until_closed() == 0


async def test_sequential_async_calls_share_one_connection_and_aclose_releases_it(
    new_driver, write_file, recorder
) -> None:
    driver = fetching(new_driver, write_file, recorder)
    for number in range(CALLS):
        assert await driver.acall_tool("t", {"id": str(number)}) == {"ok": True}
    assert len(recorder.requests) == CALLS
    assert recorder.connections == 1
    await driver.aclose()
    assert await asyncio.to_thread(recorder.wait_until_closed) == 0


def test_a_finished_event_loop_closes_its_pool_and_keeps_none(new_driver, write_file, recorder) -> None:
    driver = fetching(new_driver, write_file, recorder)

    async def calls() -> None:
        for number in range(CALLS):
            await driver.acall_tool("t", {"id": str(number)})

    asyncio.run(calls())
    assert recorder.connections == 1
    assert recorder.wait_until_closed() == 0  # asyncio.run's shutdown closed the loop's pool
    asyncio.run(calls())  # a new loop gets a pool of its own
    assert recorder.connections == 2
    assert len(driver._aclients) == 0


async def test_the_driver_is_an_async_context_manager_that_closes_its_pools(write_file, recorder) -> None:
    invocation = {"http": {"method": "GET", "url": recorder.url + "/items/1"}}
    async with MCPFileDriver(write_file(mcp_file(tool("t", invocation)))) as driver:
        await driver.acall_tool("t", {})
        driver.call_tool("t", {})
        assert recorder.connections == 2  # one pool for the sync path, one for this loop
    assert await asyncio.to_thread(recorder.wait_until_closed) == 0


# ---------------------------------------------------------------------- the libraries' own logs

QUERY_KEY = "qk-7781/secret+value"
HEADER_KEY = "hk-5512-secret-value"
LITERAL_TOKEN = "lt-9043-literal-token"
PASSWORD_ARG = "pw-3321-typed-secret"


class Collected(logging.Handler):
    """Every record of the logger it is attached to, formatted as a handler would write it."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def library_logs() -> Iterator[Collected]:
    """A handler at DEBUG on ``httpx`` and ``httpcore`` (restored after the test)."""
    handler = Collected()
    loggers = [logging.getLogger(name) for name in ("httpx", "httpcore")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.DEBUG)
        logger.addHandler(handler)
    yield handler
    for logger, level in zip(loggers, levels, strict=True):
        logger.removeHandler(handler)
        logger.setLevel(level)


def quoting(records: list[logging.LogRecord], *secrets: str) -> list[str]:
    """The records whose message or args hold a secret, in any form a URL or a repr writes it."""
    forms = {form for secret in secrets for form in (secret, quote(secret, safe=""), quote_plus(secret))}
    return [
        f"{record.name}: {record.getMessage()}" for record in records
        if any(form in text for form in forms for text in (record.getMessage(), repr(record.args)))
    ]


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_configured_credentials_are_in_no_httpx_or_httpcore_record(
    new_driver, write_file, recorder, monkeypatch, library_logs, use_async
) -> None:
    monkeypatch.setenv("MCPFILE_QUERY_KEY", QUERY_KEY)
    monkeypatch.setenv("MCPFILE_HEADER_KEY", HEADER_KEY)
    invocation = {"http": {
        "method": "GET",
        "url": recorder.url + "/items/{id}?api_key={env.MCPFILE_QUERY_KEY}&access_token=" + LITERAL_TOKEN,
        "headers": {"X-Api-Key": "{env.MCPFILE_HEADER_KEY}", "X-Password": "{password}"},
    }}
    properties = {"id": {"type": "string"}, "password": {"type": "string", "format": "password"}}
    driver = new_driver(write_file(mcp_file(tool("t", invocation, properties))))
    arguments = {"id": "1", "password": PASSWORD_ARG}
    if use_async:
        assert asyncio.run(driver.acall_tool("t", arguments)) == {"ok": True}
    else:
        assert driver.call_tool("t", arguments) == {"ok": True}
    sent = recorder.last
    assert sent.raw_query == f"api_key={QUERY_KEY}&access_token={LITERAL_TOKEN}"  # an env value goes in as written
    assert (sent.headers["x-api-key"], sent.headers["x-password"]) == (HEADER_KEY, PASSWORD_ARG)
    names = {record.name for record in library_logs.records}
    assert "httpx" in names and any(name.startswith("httpcore") for name in names)  # they did log
    assert quoting(library_logs.records, QUERY_KEY, HEADER_KEY, LITERAL_TOKEN, PASSWORD_ARG) == []
    assert any("[redacted]" in record.getMessage() for record in library_logs.records)


@pytest.mark.parametrize(("content_type", "echo"), [
    ("text/plain", "{key}"),
    ("text/html", "<p>bad key {entities}</p>"),
], ids=["plain", "html-character-references"])
@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_an_error_page_that_echoes_a_configured_credential_reaches_the_model_without_it(
    new_driver, write_file, recorder, monkeypatch, content_type, echo, use_async
) -> None:
    monkeypatch.setenv("MCPFILE_HEADER_KEY", HEADER_KEY)
    entities = "".join(f"&#{ord(char)};" for char in HEADER_KEY)
    body = f"denied: {echo.format(key=HEADER_KEY, entities=entities)}".encode()
    recorder.replies["/items/1"] = Reply(status=401, body=body, content_type=content_type)
    invocation = {"http": {"method": "GET", "url": recorder.url + "/items/{id}",
                           "headers": {"X-Api-Key": "{env.MCPFILE_HEADER_KEY}"}}}
    driver = new_driver(write_file(mcp_file(tool("t", invocation, {"id": {"type": "string"}}))))
    with pytest.raises(ExecutionError) as raised:
        if use_async:
            asyncio.run(driver.acall_tool("t", {"id": "1"}))
        else:
            driver.call_tool("t", {"id": "1"})
    assert recorder.last.headers["x-api-key"] == HEADER_KEY
    assert "HTTP 401" in raised.value.message and "[redacted]" in raised.value.message
    assert HEADER_KEY not in raised.value.message and entities not in raised.value.message


def test_a_key_in_the_path_is_redacted_and_the_base_url_stays_readable(
    new_driver, write_file, recorder, monkeypatch, library_logs
) -> None:
    monkeypatch.setenv("MCPFILE_BASE", recorder.url)
    monkeypatch.setenv("MCPFILE_BOT_TOKEN", "bt-4410-path-token")
    invocation = {"http": {"method": "GET", "url": "{env.MCPFILE_BASE}/bot{env.MCPFILE_BOT_TOKEN}/items/{id}?format=json"}}
    driver = new_driver(write_file(mcp_file(tool("t", invocation, {"id": {"type": "string"}}))))
    assert driver.call_tool("t", {"id": "7"}) == {"ok": True}
    assert recorder.last.path == "/botbt-4410-path-token/items/7"
    logged = [record.getMessage() for record in library_logs.records if record.name == "httpx"]
    assert any(f"GET {recorder.url}/bot[redacted]/items/7?format=json " in message for message in logged), logged


# ---------------------------------------------------------------------- the deadline


@pytest.fixture
def silent_peer() -> Iterator[int]:
    """A loopback TCP peer that accepts every connection and never sends a byte; yields its port."""
    with hanging_peer() as port:
        yield port


TIMEOUT = 0.5
MARGIN = 1.0


# The async TLS case also proves the handshake cut by the deadline closes its socket: an
# unclosed one is a ResourceWarning, which fails the test.
@pytest.mark.parametrize(
    ("scheme", "use_async"),
    [
        pytest.param("http", False, id="sync-no-answer"),
        pytest.param("https", False, id="sync-no-tls-handshake"),
        pytest.param("http", True, id="async-no-answer"),
        pytest.param("https", True, id="async-no-tls-handshake"),
    ],
)
def test_a_peer_that_accepts_and_never_answers_times_out_at_the_deadline(
    new_driver, write_file, silent_peer, scheme, use_async
) -> None:
    invocation = {"http": {"method": "GET", "url": f"{scheme}://127.0.0.1:{silent_peer}/items/1"}}
    driver = new_driver(write_file(mcp_file(tool("t", invocation))), timeout=TIMEOUT)
    started = time.monotonic()
    with pytest.raises(ToolTimeoutError):
        if use_async:
            asyncio.run(driver.acall_tool("t", {}))
        else:
            driver.call_tool("t", {})
    assert time.monotonic() - started < TIMEOUT + MARGIN
    gc.collect()  # an unclosed socket warns when it is collected: here, inside this test


async def test_reload_inside_an_event_loop_keeps_calling_and_aclose_releases_every_connection(
    new_driver, write_file, recorder
) -> None:
    driver = fetching(new_driver, write_file, recorder)
    assert await driver.acall_tool("t", {"id": "1"}) == {"ok": True}
    driver.reload()  # the loop's old pool is left to the loop, which closes it
    assert await driver.acall_tool("t", {"id": "2"}) == {"ok": True}
    await driver.aclose()
    await asyncio.sleep(0)  # the loop runs the old pool's close
    assert await asyncio.to_thread(recorder.wait_until_closed) == 0
