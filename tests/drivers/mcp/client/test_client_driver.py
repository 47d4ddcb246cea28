"""The MCP driver against a real SDK-built server, over stdio and streamable HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from mcp_bridge_servers import PLAYER, free_port, player_stdio_options
from mcs_mcp.client_driver import MCPDriver
from support.processes import assert_process_gone
from support.servers import start_server, stop

import mcs
from mcs.errors import ConfigurationError, ExecutionError, ToolTimeoutError
from mcs.registry import load_driver


@pytest.fixture
def stdio_driver(quiet: Any, backend: str) -> Any:
    driver = load_driver("mcp", **player_stdio_options(MCS_TEST_BACKEND=backend), stderr=quiet)
    yield driver
    driver.close()


@pytest.fixture
def http_driver(player_http: str) -> Any:
    driver = load_driver("mcp", url=player_http)
    yield driver
    driver.close()


def test_load_driver_mcp_gives_the_mcp_driver_with_the_servers_tools(stdio_driver: MCPDriver) -> None:
    assert isinstance(stdio_driver, MCPDriver)
    names = [t.name for t in stdio_driver.list_tools()]
    assert names[:5] == ["play", "pause", "set_volume", "add", "echo"]
    add = stdio_driver.get_tool("add")
    assert add is not None and add.description == "Add two integers."
    assert add.input_schema["required"] == ["a", "b"]
    assert add.meta["original_name"] == "add"
    assert stdio_driver.meta.protocol == "MCP" and stdio_driver.meta.transport == "STDIO"


def test_consecutive_sync_calls_keep_the_driven_loops_worker(stdio_driver: MCPDriver) -> None:
    """Each synchronous call hands the driven loop an equal context, so its worker task runs
    every call (a new worker per call costs a task and one more loop turn each time)."""
    from mcs_mcp.client.loop import sync_loop

    stdio_driver.call_tool("add", {"a": 1, "b": 2})
    worker = sync_loop()._worker
    assert stdio_driver.call_tool("add", {"a": 2, "b": 3}) == 5
    assert stdio_driver.process_llm_response({"name": "add", "parameters": {"a": 3, "b": 4}}) == 7
    assert worker is not None and sync_loop()._worker is worker


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_llm_output_round_trips_through_the_server_and_back(
    transport: str, request: pytest.FixtureRequest
) -> None:
    driver: MCPDriver = request.getfixturevalue(f"{transport}_driver")
    text = json.dumps({"tool": "set_volume", "arguments": {"volume": 0.25}})
    assert driver.process_llm_response(text) == {"success": True}
    assert driver.process_llm_response({"name": "add", "parameters": {"a": 40, "b": 2}}) == 42
    assert driver.process_llm_response('{"tool": "play", "arguments": {}}') == {"status": "playing"}
    through_backend = driver.process_llm_response(json.dumps({"tool": "lookup", "arguments": {"key": "k1"}}))
    assert through_backend == {"key": "k1", "value": "value of k1", "served_by": "backend"}


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_async_calls_share_the_connection_with_sync_calls(
    transport: str, request: pytest.FixtureRequest
) -> None:
    driver: MCPDriver = request.getfixturevalue(f"{transport}_driver")
    assert driver.call_tool("echo", {"text": "sync"}) == "sync"
    results = await asyncio.gather(
        *(driver.aprocess_llm_response({"tool": "echo", "arguments": {"text": str(i)}}) for i in range(5))
    )
    assert results == [str(i) for i in range(5)]


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_driver_called_from_many_asyncio_runs_keeps_no_session_of_a_finished_loop(
    transport: str, request: pytest.FixtureRequest
) -> None:
    driver: MCPDriver = request.getfixturevalue(f"{transport}_driver")
    assert driver.call_tool("echo", {"text": "sync"}) == "sync"  # the synchronous session stays
    for number in range(6):  # one loop per call, as sync code calling async code often does
        assert asyncio.run(driver.acall_tool("echo", {"text": str(number)})) == str(number)
        # the synchronous session, and the last loop's until the next loop comes
        assert len(driver.connections["mcp"]._sessions) <= 2


def test_a_response_without_a_call_is_returned_unchanged(stdio_driver: MCPDriver) -> None:
    response = "No tool needed, the answer is 4."
    assert stdio_driver.process_llm_response(response) is response


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_an_error_the_server_reports_is_an_execution_error_with_its_text(
    transport: str, request: pytest.FixtureRequest
) -> None:
    driver: MCPDriver = request.getfixturevalue(f"{transport}_driver")
    with pytest.raises(ExecutionError) as caught:
        driver.process_llm_response('{"tool": "fail", "arguments": {"reason": "disk full"}}')
    assert "refused: disk full" in caught.value.message
    assert caught.value.code == mcs.ErrorCode.EXECUTION_ERROR


def test_arguments_are_validated_before_reaching_the_server(stdio_driver: MCPDriver) -> None:
    with pytest.raises(mcs.InvalidInputError) as caught:
        stdio_driver.call_tool("add", {"a": "x"})
    assert "b" in caught.value.message or "a" in caught.value.message


def test_a_dying_server_fails_the_call_in_flight_promptly_and_the_next_call_starts_it_again(
    stdio_driver: MCPDriver,
) -> None:
    assert stdio_driver.call_tool("echo", {"text": "alive"}) == "alive"
    started = time.monotonic()
    with pytest.raises(ExecutionError) as caught:
        stdio_driver.call_tool("crash")
    assert time.monotonic() - started < 5
    assert "closed the connection" in caught.value.message
    assert stdio_driver.get_status()["servers"]["mcp"]["connected"] is False
    # the call in flight is not sent again (it would crash the new process too)
    assert stdio_driver.call_tool("echo", {"text": "still there?"}) == "still there?"
    assert stdio_driver.get_status()["servers"]["mcp"]["connected"] is True


def test_the_call_deadline_is_honoured_and_the_connection_survives(quiet: Any) -> None:
    driver = MCPDriver(**player_stdio_options(), stderr=quiet, timeout=0.5)  # type: ignore[arg-type]
    try:
        driver.list_tools()
        started = time.monotonic()
        with pytest.raises(ToolTimeoutError):
            driver.call_tool("slow", {"seconds": 5})
        assert time.monotonic() - started < 3
        driver.timeout = 30  # a loaded machine must not make the next call look like a failure
        assert driver.call_tool("echo", {"text": "after"}) == "after"
    finally:
        driver.close()


async def test_the_async_deadline_cancels_the_call(quiet: Any) -> None:
    driver = MCPDriver(**player_stdio_options(), stderr=quiet, timeout=0.5)  # type: ignore[arg-type]
    try:
        await asyncio.to_thread(driver.list_tools)
        with pytest.raises(ToolTimeoutError):
            await driver.acall_tool("slow", {"seconds": 5})
        driver.timeout = 30
        assert await driver.acall_tool("echo", {"text": "ok"}) == "ok"
    finally:
        await asyncio.to_thread(driver.close)


def test_an_unreachable_url_fails_fast_with_the_reason() -> None:
    driver = MCPDriver(url=f"http://127.0.0.1:{free_port()}/mcp", connect_timeout=5)
    started = time.monotonic()
    with pytest.raises(ExecutionError) as caught:
        driver.list_tools()
    assert time.monotonic() - started < 10
    assert "cannot reach MCP server" in caught.value.message
    driver.close()


def test_a_command_that_does_not_exist_is_reported() -> None:
    driver = MCPDriver(command="/nonexistent/mcp-server-binary", connect_timeout=5)
    with pytest.raises(ExecutionError) as caught:
        driver.list_tools()
    assert "cannot reach MCP server" in caught.value.message
    driver.close()


def test_close_ends_the_session_and_later_calls_say_so(stdio_driver: MCPDriver) -> None:
    assert stdio_driver.call_tool("echo", {"text": "x"}) == "x"
    stdio_driver.close()
    stdio_driver.close()  # twice is fine
    with pytest.raises(ExecutionError) as caught:
        stdio_driver.call_tool("echo", {"text": "x"})
    assert "closed" in caught.value.message


def test_prompts_and_resources_can_be_offered_as_tools(quiet: Any) -> None:
    with MCPDriver(**player_stdio_options(), stderr=quiet, include_prompts=True,  # type: ignore[arg-type]
                   include_resources=True) as driver:
        names = {t.name for t in driver.list_tools()}
        assert {"prompt_greeting", "read_resource"} <= names
        assert driver.call_tool("prompt_greeting", {"name": "Ada"}) == [
            {"role": "user", "content": "Say hello to Ada."}
        ]
        read = driver.get_tool("read_resource")
        assert read is not None and read.input_schema["properties"]["uri"]["enum"] == ["memo://readme"]
        assert driver.call_tool("read_resource", {"uri": "memo://readme"}) == "This is the readme."


def test_tool_names_are_sanitised_with_the_original_kept(quiet: Any) -> None:
    with MCPDriver(**player_stdio_options(), stderr=quiet, namespace=True, name="media box") as driver:  # type: ignore[arg-type]
        tool = driver.get_tool("media_box_play")
        assert tool is not None and tool.meta["original_name"] == "play"
        assert driver.call_tool("media_box_play") == {"status": "playing"}


def test_exactly_one_way_to_reach_a_server_is_required() -> None:
    with pytest.raises(ConfigurationError, match="exactly one"):
        MCPDriver()
    with pytest.raises(ConfigurationError, match="exactly one"):
        MCPDriver(command=sys.executable, url="http://127.0.0.1:1/mcp")
    with pytest.raises(ConfigurationError, match="http"):
        MCPDriver(url="ftp://example/mcp")


def test_healthcheck_reports_each_server(stdio_driver: MCPDriver) -> None:
    assert stdio_driver.supports("healthcheck")
    assert stdio_driver.healthcheck() == {"status": "ok", "servers": {"mcp": "ok"}}


def test_the_player_script_is_a_real_file() -> None:
    assert PLAYER.is_file()


def test_sync_calls_from_many_threads_share_the_session(stdio_driver: MCPDriver) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def work(index: int) -> list[Any]:
        return [stdio_driver.call_tool("echo", {"text": f"{index}-{i}"}) for i in range(10)]

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(work, range(8)))
    assert results == [[f"{t}-{i}" for i in range(10)] for t in range(8)]
    assert stdio_driver.call_tool("echo", {"text": "after"}) == "after"


async def test_a_sync_call_from_inside_a_running_loop_still_works(stdio_driver: MCPDriver) -> None:
    # call_tool() is synchronous: inside async code the shared loop is run by a helper thread
    assert stdio_driver.call_tool("echo", {"text": "in loop"}) == "in loop"


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_prefix_keeps_tools_prompts_and_resources_callable(
    transport: str, request: pytest.FixtureRequest, quiet: Any
) -> None:
    if transport == "stdio":
        options: dict[str, Any] = {**player_stdio_options(), "stderr": quiet}
    else:
        options = {"url": request.getfixturevalue("player_http")}
    driver = load_driver("mcp", prefix="pl", include_prompts=True, include_resources=True, **options)
    try:
        names = {t.name for t in driver.list_tools()}
        assert {"pl_add", "pl_prompt_greeting", "pl_read_resource"} <= names
        assert driver.process_llm_response('{"tool": "pl_add", "arguments": {"a": 1, "b": 2}}') == 3
        assert driver.call_tool("pl_prompt_greeting", {"name": "Ann"}) == [
            {"role": "user", "content": "Say hello to Ann."}
        ]
        assert driver.call_tool("pl_read_resource", {"uri": "memo://readme"}) == "This is the readme."
        assert await driver.aprocess_llm_response({"tool": "pl_echo", "arguments": {"text": "a"}}) == "a"
    finally:
        await driver.aclose()  # close() here could only schedule the stop on this loop


async def test_async_with_closes_the_session_of_the_running_loop(player_http: str) -> None:
    loop = asyncio.get_running_loop()
    async with MCPDriver(url=player_http) as driver:
        assert await driver.acall_tool("add", {"a": 2, "b": 3}) == 5
        connection = driver.connections["mcp"]
        assert connection.connected_on(loop)
    assert not connection.connected_on(loop)


def _servers_started_by_us() -> set[int]:
    """The pids of player servers this process started (read from /proc)."""
    found: set[int] = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            command = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if int(fields[1]) == os.getpid() and PLAYER.name.encode() in command:
            found.add(int(stat.parent.name))
    return found


def test_close_from_sync_code_stops_a_server_opened_on_an_idle_event_loop(quiet: Any) -> None:
    # An async test's loop between the test and its sync fixture's teardown: the session
    # opened there must be ended there, its process stopped and reaped, not abandoned.
    before = _servers_started_by_us()
    loop = asyncio.new_event_loop()
    try:
        driver = MCPDriver(**player_stdio_options(), stderr=quiet)  # type: ignore[arg-type]
        assert loop.run_until_complete(driver.acall_tool("echo", {"text": "a"})) == "a"
        [pid] = _servers_started_by_us() - before
        driver.close()
        assert_process_gone(pid, within=10)
        with pytest.raises(ExecutionError, match="closed"):
            loop.run_until_complete(driver.acall_tool("echo", {"text": "b"}))
    finally:
        loop.close()


def test_mcs_spec_s8_an_mcp_over_sse_server_is_a_bridge() -> None:
    port = free_port()
    process = start_server([sys.executable, str(PLAYER), "--sse", str(port)], port)
    try:
        with MCPDriver(url=f"http://127.0.0.1:{port}/sse", sse=True) as driver:
            assert driver.meta.transport == "SSE"
            assert driver.process_llm_response('{"tool": "echo", "arguments": {"text": "over sse"}}') == "over sse"
            assert driver.healthcheck()["status"] == "ok"
    finally:
        stop(process)


def test_mcs_spec_s3_a_prefixed_mcp_driver_declares_its_prefix(stdio_driver: MCPDriver, quiet: Any) -> None:
    with MCPDriver(**player_stdio_options(), stderr=quiet, prefix="media") as driver:  # type: ignore[arg-type]
        assert driver.meta.prefix == "media"
        assert driver.get_tool("media_echo") is not None
    assert stdio_driver.meta.prefix is None


def test_mcs_spec_s7_a_server_too_large_for_the_budget_is_described_in_discovery_mode(quiet: Any) -> None:
    from pathlib import Path

    with MCPDriver(**player_stdio_options(), stderr=quiet, token_budget=50) as driver:  # type: ignore[arg-type]
        description = driver.get_function_description()
        assert "search_tools" in description and "describe_tool" in description
        assert driver.process_llm_response('{"tool": "echo", "arguments": {"text": "still here"}}') == "still here"
    docs = (Path(__file__).resolve().parents[4] / "docs" / "mcp-client.md").read_text(encoding="utf-8")
    assert "## Description mode (MCS spec, section 7)" in docs


def test_name_is_a_driver_option_like_any_other(http_driver: MCPDriver, player_http: str) -> None:
    with load_driver("mcp", url=player_http, name="notes") as notes:
        assert notes.meta.name == "notes"
        assert notes.call_tool("echo", {"text": "named"}) == "named"


def test_a_tool_returning_a_dict_gives_the_dict_and_one_returning_a_str_the_str(http_driver: MCPDriver) -> None:
    assert http_driver.call_tool("echo", {"text": "plain"}) == "plain"
    looked_up = http_driver.call_tool("lookup", {"key": "k1"})
    assert isinstance(looked_up, dict) and looked_up["key"] == "k1"
