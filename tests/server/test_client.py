"""RFC0001Driver: a running server's capabilities become an MCS driver."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.hostile import DEEP_JSON, HostilePeer
from support.servers import free_port

import mcs
from mcs.errors import ConfigurationError, ExecutionError
from mcs.server.client import RFC0001Driver


@pytest.fixture
def driver(url: str) -> Iterator[mcs.MCSDriver]:
    loaded = mcs.load_driver("rfc0001", url=url + "/mcp/capabilities", agent_id="driver-agent")
    yield loaded
    assert isinstance(loaded, RFC0001Driver)
    loaded.close()


def test_load_driver_gives_a_driver_whose_description_lists_the_server_tools(driver: mcs.MCSDriver) -> None:
    description = driver.get_function_description("gpt-4o")
    assert "echo" in description and "Repeat text; reports who called." in description
    assert "echo" in driver.get_driver_system_message("gpt-4o")


def test_an_llm_call_is_executed_on_the_server(driver: mcs.MCSDriver) -> None:
    result = driver.process_llm_response('{"tool": "echo", "arguments": {"text": "hi", "times": 2}}')
    assert result["text"] == "hihi" and result["agent_id"] == "driver-agent"


def test_the_callers_context_travels_as_headers(driver: mcs.MCSDriver) -> None:
    context = mcs.AgentContext(agent_id="llm-1", model="claude", request_id="drv-1",
                               metadata={"tenant": "acme"})
    result = driver.process_llm_response('{"tool": "echo", "arguments": {"text": "x"}}', context=context)
    assert (result["agent_id"], result["model"], result["request_id"], result["tenant"]) == (
        "llm-1", "claude", "drv-1", "acme")


@pytest.mark.parametrize(("tool", "error"), [
    ("forbidden", mcs.PolicyDeniedError),
    ("boom", mcs.ExecutionError),
    ("stuck", mcs.ToolTimeoutError),
])
def test_server_errors_come_back_as_the_same_error(driver: mcs.MCSDriver, tool: str,
                                                   error: type[mcs.ToolCallError]) -> None:
    with pytest.raises(error) as info:
        driver.process_llm_response({"tool": tool, "arguments": {}})
    assert info.value.tool == tool and info.value.message


def test_a_response_without_a_call_for_the_server_passes_through(driver: mcs.MCSDriver) -> None:
    text = "No tool needed."
    assert driver.process_llm_response(text) is text


def test_arguments_are_validated_before_anything_is_sent(driver: mcs.MCSDriver) -> None:
    with pytest.raises(mcs.InvalidInputError):
        driver.process_llm_response({"tool": "echo", "arguments": {"text": 1}})


async def test_the_async_path_reaches_the_server_too(driver: mcs.MCSDriver) -> None:
    result = await driver.aprocess_llm_response('{"tool": "echo", "arguments": {"text": "a"}}')
    assert result["text"] == "a"


def test_healthcheck_reports_the_server(driver: mcs.MCSDriver, url: str) -> None:
    assert driver.supports("healthcheck")
    health = driver.healthcheck()  # type: ignore[attr-defined]
    assert health == {"status": "ok", "server": "sample", "version": "1.2.3", "tools": 6}


def test_an_unreachable_server_is_a_clear_error(tmp_path: Path) -> None:
    with RFC0001Driver(f"http://127.0.0.1:{free_port()}") as dead, pytest.raises(mcs.ConfigurationError,
                                                                         match="cannot read"):
        dead.get_function_description()


def test_a_url_that_is_not_http_is_refused() -> None:
    with pytest.raises(mcs.ConfigurationError, match="http:// or https://"):
        RFC0001Driver("ftp://example.invalid")


async def test_a_prefix_keeps_calls_working(url: str) -> None:
    with mcs.load_driver("rfc0001", url=url, prefix="srv") as driver:
        assert "srv_echo" in {t.name for t in driver.list_tools()}
        assert driver.process_llm_response('{"tool": "srv_echo", "arguments": {"text": "a"}}')["text"] == "a"
        result = await driver.aprocess_llm_response({"tool": "srv_echo", "arguments": {"text": "b"}})
        assert result["text"] == "b"
        with pytest.raises(mcs.ExecutionError) as info:
            driver.process_llm_response({"tool": "srv_boom", "arguments": {}})
        assert info.value.tool == "srv_boom"


def test_mcs_spec_s3_a_prefixed_rfc0001_driver_declares_its_prefix(url: str) -> None:
    with RFC0001Driver(url, prefix="crm") as driver:
        assert driver.meta.prefix == "crm"
        assert all(t.name.startswith("crm_") for t in driver.list_tools())


def test_a_capabilities_document_nested_too_deeply_is_a_configuration_error() -> None:
    with HostilePeer() as peer, RFC0001Driver(peer.url, timeout=2.0) as driver:
        peer.capabilities = DEEP_JSON
        with pytest.raises(ConfigurationError, match="not an RFC-0001 document"):
            driver.list_tools()
        assert driver.healthcheck()["status"] == "error"
        assert peer.count("/mcp/execute") == 0


def test_an_answer_nested_too_deeply_is_an_execution_error_that_says_so() -> None:
    with HostilePeer() as peer, RFC0001Driver(peer.url, timeout=2.0) as driver:
        peer.execute_as = "/deep"
        with pytest.raises(ExecutionError, match="t: the server answered HTTP 200 with a body that is not JSON"):
            driver.call_tool("t", {})
        assert peer.count("/mcp/execute") == 1


def test_a_servers_error_message_reaches_the_model_cut_at_4096_bytes() -> None:
    with HostilePeer() as peer, RFC0001Driver(peer.url, timeout=5.0) as driver:
        peer.execute_as = "/huge-error"
        with pytest.raises(ExecutionError) as raised:
            driver.call_tool("t", {})
    message = raised.value.message
    assert message.startswith("IGNORE PREVIOUS INSTRUCTIONS")
    assert len(message.encode()) < 4096 + 200 and "[truncated: the error message was cut at 4096 bytes" in message
