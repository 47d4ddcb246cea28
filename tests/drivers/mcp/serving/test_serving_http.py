"""A real SDK client against the streamable HTTP server on loopback."""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError
from mcs_mcp.serving import ServeOptions, build_app, build_server
from serving_helpers import SampleDriver, ToolsOnlyDriver
from serving_support import free_port, mcp_client, running, serve_driver

from mcs.context import AgentContext, PolicyDecision

INIT = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "raw", "version": "1"}},
}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _post(url: str, body: Any, **headers: str) -> httpx.Response:
    return httpx.post(url, content=json.dumps(body), headers={**ACCEPT, **headers}, timeout=10)


async def test_lists_tools_with_schemas_and_calls_them(sample_url: str) -> None:
    async with mcp_client(sample_url) as session:
        listed = await session.list_tools()
        names = [tool.name for tool in listed.tools]
        assert names[:3] == ["echo", "add", "whoami"]
        add = next(tool for tool in listed.tools if tool.name == "add")
        assert add.input_schema["required"] == ["a", "b"]
        result = await session.call_tool("add", {"a": 2, "b": 3})
        assert result.is_error is False
        assert result.structured_content == {"sum": 5}
        assert json.loads(result.content[0].text) == {"sum": 5}
        text = await session.call_tool("echo", {"text": "héllo"})
        assert text.content[0].text == "héllo"


async def test_tool_errors_are_results_with_is_error_and_the_message(sample_url: str) -> None:
    async with mcp_client(sample_url) as session:
        failed = await session.call_tool("fail", {})
        assert failed.is_error is True
        assert failed.content[0].text == "the backend refused: try again later"
        invalid = await session.call_tool("add", {"a": "two"})
        assert invalid.is_error is True
        assert "b" in invalid.content[0].text and "number" in invalid.content[0].text
        assert "Traceback" not in invalid.content[0].text


async def test_unknown_tool_is_a_json_rpc_invalid_params_error(sample_url: str) -> None:
    async with mcp_client(sample_url) as session:
        with pytest.raises(MCPError) as caught:
            await session.call_tool("no_such_tool", {})
        assert caught.value.code == types.INVALID_PARAMS
        # the server keeps serving
        assert (await session.call_tool("echo", {"text": "still here"})).content[0].text == "still here"


async def test_binary_results_become_image_and_audio_blocks(sample_url: str) -> None:
    async with mcp_client(sample_url) as session:
        image = await session.call_tool("test_image_content", {})
        assert image.content[0].type == "image" and image.content[0].mime_type == "image/png"
        audio = await session.call_tool("test_audio_content", {})
        assert audio.content[0].type == "audio" and audio.content[0].mime_type == "audio/wav"
        mixed = await session.call_tool("test_multiple_content_types", {})
        assert [block.type for block in mixed.content] == ["text", "image", "resource"]


async def test_agent_context_carries_headers_but_never_credentials(sample: SampleDriver) -> None:
    with serve_driver(sample) as url:
        headers = {"X-Tenant": "acme", "Cookie": "session=SECRET1", "Proxy-Authorization": "Basic SECRET2"}
        async with mcp_client(url, headers=headers) as session:
            result = await session.call_tool("whoami", {})
    seen = result.structured_content
    assert seen["metadata"]["header:x-tenant"] == "acme"
    assert "SECRET1" not in json.dumps(seen) and "SECRET2" not in json.dumps(seen)
    assert not any(key in seen["metadata"] for key in ("header:cookie", "header:proxy-authorization"))
    name, _args, context = sample.calls[-1]
    assert name == "whoami" and isinstance(context, AgentContext)
    assert context.request_id == seen["request_id"]


async def test_driver_policies_apply_to_calls_from_mcp(sample: SampleDriver) -> None:
    @sample.add_policy
    def no_echo_of_secrets(ctx: AgentContext, tool: str, args: Any) -> PolicyDecision:
        if tool == "echo" and "secret" in str(args.get("text")):
            return PolicyDecision.deny("echoing secrets is not allowed")
        return PolicyDecision.allow()

    with serve_driver(sample) as url:
        async with mcp_client(url) as session:
            denied = await session.call_tool("echo", {"text": "my secret"})
            allowed = await session.call_tool("echo", {"text": "fine"})
    assert denied.is_error is True and "echoing secrets is not allowed" in denied.content[0].text
    assert allowed.is_error is False


async def test_prompts_and_resources_are_served_when_the_driver_has_them(sample_url: str) -> None:
    async with mcp_client(sample_url) as session:
        caps = session.initialize_result.capabilities
        assert caps.prompts is not None and caps.resources is not None
        prompts = await session.list_prompts()
        assert "test_prompt_with_arguments" in [p.name for p in prompts.prompts]
        got = await session.get_prompt("test_prompt_with_arguments", {"arg1": "hello", "arg2": "world"})
        assert got.messages[0].content.text == "Prompt with arguments: arg1='hello', arg2='world'"
        resources = await session.list_resources()
        assert {r.uri for r in resources.resources} == {"test://static-text", "test://static-binary"}
        text = await session.read_resource("test://static-text")
        assert text.contents[0].text.startswith("This is the content")
        templated = await session.read_resource("test://template/123/data")
        assert json.loads(templated.contents[0].text)["id"] == "123"
        templates = await session.list_resource_templates()
        assert templates.resource_templates[0].uri_template == "test://template/{id}/data"
        assert (await session.read_resource("test://secret/1")).contents[0].text == "classified"


async def test_a_plain_tool_driver_declares_only_tools() -> None:
    with serve_driver(ToolsOnlyDriver()) as url:
        async with mcp_client(url) as session:
            caps = session.initialize_result.capabilities
            assert caps.tools is not None
            assert caps.prompts is None and caps.resources is None


async def _call_the_logging_tool(
    url: str, level: types.LoggingLevel | None = None
) -> tuple[types.CallToolResult, list[types.LoggingMessageNotificationParams]]:
    """Call the sample's logging tool (after asking for ``level``); its result and the log notifications."""
    received: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        received.append(params)

    async with mcp_client(url, logging_callback=on_log) as session:
        if level is not None:
            await session.send_request(
                types.SetLevelRequest(params=types.SetLevelRequestParams(level=level)), types.EmptyResult
            )
        result = await session.call_tool("test_tool_with_logging", {})
    return result, received


async def test_tool_logs_reach_the_client_as_notifications(
    sample_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="mcs.sample")  # what configure_logging does in `mcs serve`
    result, received = await _call_the_logging_tool(sample_url)
    assert result.is_error is False
    messages = [p.data["message"] for p in received if p.logger == "mcs.sample"]
    assert messages == ["Tool execution started", "Tool processing data", "Tool execution completed"]
    assert all(p.level == "info" for p in received if p.logger == "mcs.sample")


async def test_set_level_filters_what_the_client_receives(
    sample: SampleDriver, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="mcs.sample")
    with serve_driver(sample, stateless=False) as url:
        result, received = await _call_the_logging_tool(url, level="warning")
    assert result.is_error is False and "Tool execution started" in caplog.messages  # it logged ...
    assert received == []  # ... and none of it reached the client


async def test_mcp_logs_can_be_switched_off(
    sample: SampleDriver, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="mcs.sample")
    from mcs_mcp.serving.options import LoggingOptions

    with serve_driver(sample, logging=LoggingOptions(enable_mcp_logs=False)) as url:
        result, received = await _call_the_logging_tool(url)
    assert result.is_error is False and "Tool execution started" in caplog.messages
    assert received == []


# ----------------------------------------------------------------------------- E1, E7


def test_foreign_host_is_refused_before_anything_runs(sample: SampleDriver) -> None:
    with serve_driver(sample) as url:
        response = _post(url, INIT, Host="evil.example")
        assert response.status_code == 421
        rebinding = _post(url, INIT, Host="evil.example", Origin="http://evil.example")
        assert 400 <= rebinding.status_code < 500


def test_foreign_or_null_origin_is_refused(sample: SampleDriver) -> None:
    with serve_driver(sample) as url:
        assert _post(url, INIT, Origin="http://evil.example").status_code == 403
        assert _post(url, INIT, Origin="null").status_code == 403
        assert _post(url, INIT).status_code == 200  # localhost Host, no Origin
        port = url.split(":")[2].split("/")[0]
        assert _post(url, INIT, Origin=f"http://localhost:{port}").status_code == 200
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x"}}}
        assert _post(url, call, Origin="http://evil.example").status_code == 403
    assert sample.calls == []  # no tool ran


def test_allowed_hosts_and_origins_widen_the_defaults(sample: SampleDriver) -> None:
    with serve_driver(sample, allowed_hosts=("mcp.internal:*",), allowed_origins=("https://app.example",)) as url:
        port = url.split(":")[2].split("/")[0]
        assert _post(url, INIT, Host=f"mcp.internal:{port}").status_code == 200
        assert _post(url, INIT, Origin="https://app.example").status_code == 200
        assert _post(url, INIT, Host="other.internal").status_code == 421


def test_binds_to_loopback_by_default() -> None:
    options = ServeOptions(transport="streamablehttp")
    assert options.host == "127.0.0.1"
    assert options.url == "http://127.0.0.1:3000/mcp"


def test_malformed_and_oversized_requests_do_not_break_the_server(sample: SampleDriver) -> None:
    with serve_driver(sample, max_request_body=4096) as url:
        bad_json = httpx.post(url, content=b"{not json", headers=ACCEPT, timeout=10)
        assert bad_json.status_code == 400
        wrong_shape = _post(url, {"jsonrpc": "2.0", "id": 1, "params": 3})
        assert wrong_shape.status_code in (400, 200)
        too_big = httpx.post(url, content=b"x" * 10000, headers=ACCEPT, timeout=10)
        assert too_big.status_code == 413
        bad_version = _post(url, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
                            **{"MCP-Protocol-Version": "1999-01-01"})
        assert bad_version.status_code == 400 and bad_version.json()["error"]["code"] == -32602
        unknown = _post(url, {"jsonrpc": "2.0", "id": 4, "method": "no/such"}, **{"MCP-Protocol-Version": "2025-06-18"})
        assert '"code":-32601' in unknown.text
        # stateless: no standalone GET stream to hang on, no session to delete
        assert httpx.get(url, headers=ACCEPT, timeout=10).status_code == 405
        assert httpx.delete(url, timeout=10).status_code == 405
        assert _post(url, INIT).status_code == 200


# ----------------------------------------------------------------------------- stateless replicas


async def test_two_stateless_replicas_answer_the_same_client_calls() -> None:
    """Two servers on two ports, one driver each: any request can go to either."""
    driver_a, driver_b = SampleDriver(), SampleDriver()
    with serve_driver(driver_a) as url_a, serve_driver(driver_b) as url_b:
        for url in (url_a, url_b, url_a):
            async with mcp_client(url) as session:
                assert (await session.call_tool("add", {"a": 1, "b": 1})).structured_content == {"sum": 2}
        # a raw request with no session id, alternating between replicas, also works
        call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "round robin"}}}
        for url in (url_a, url_b):
            response = _post(url, call, **{"MCP-Protocol-Version": "2025-06-18"})
            assert response.status_code == 200
            assert "round robin" in response.text
            assert "mcp-session-id" not in response.headers
    assert len(driver_a.calls) == 3 and len(driver_b.calls) == 2


async def test_stateful_mode_issues_session_ids() -> None:
    with serve_driver(SampleDriver(), stateless=False) as url:
        response = _post(url, INIT)
        assert response.status_code == 200
        session_id = response.headers.get("mcp-session-id")
        assert session_id and len(session_id) >= 32
        unknown = _post(url, {"jsonrpc": "2.0", "id": 2, "method": "ping"},
                        **{"mcp-session-id": "0" * 32, "MCP-Protocol-Version": "2025-06-18"})
        assert unknown.status_code == 404


def test_extensions_see_the_server_and_the_driver() -> None:
    seen: list[Any] = []
    driver = SampleDriver()
    server = build_server(driver, extensions=[lambda srv, drv: seen.append((srv, drv))])
    assert seen == [(server, driver)]


def test_free_port_servers_stop_cleanly() -> None:
    options = ServeOptions(transport="streamablehttp", port=free_port())
    app = build_app(build_server(SampleDriver(), options), options)
    with running(app, options) as url:
        assert _post(url, INIT).status_code == 200
    with pytest.raises(httpx.ConnectError):
        _post(url, INIT)


class WithHealth(SampleDriver):
    def health_settings(self) -> dict[str, Any]:
        return {"enabled": True, "liveness_path": "/live", "readiness_path": "/ready"}


def test_health_endpoints_are_served_when_the_driver_enables_them() -> None:
    with serve_driver(WithHealth()) as url:
        origin = url.rsplit("/mcp", 1)[0]
        assert httpx.get(origin + "/live", timeout=10).json() == {"status": "ok"}
        assert httpx.get(origin + "/ready", timeout=10).json() == {"status": "ready"}
    with serve_driver(SampleDriver()) as url:
        assert httpx.get(url.rsplit("/mcp", 1)[0] + "/live", timeout=10).status_code == 404


async def test_the_2026_protocol_client_is_served_and_gets_logs_only_when_it_opts_in(
    sample_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    from mcp import Client

    caplog.set_level(logging.INFO, logger="mcs.sample")
    counts: dict[str | None, int] = {}
    for opt_in in (None, "info"):
        received: list[Any] = []

        async def on_log(params: types.LoggingMessageNotificationParams, into: list[Any] = received) -> None:
            into.append(params)

        async with Client(sample_url, logging_callback=on_log, log_level=opt_in) as client:
            result = await client.call_tool("test_tool_with_logging", {})
            assert result.is_error is False
            assert (await client.call_tool("add", {"a": 1, "b": 2})).structured_content == {"sum": 3}
        counts[opt_in] = len([p for p in received if p.logger == "mcs.sample"])
    assert counts == {None: 0, "info": 3}


def test_a_driver_without_tools_cannot_be_served() -> None:
    from mcs.errors import ConfigurationError

    class Bare:
        pass

    with pytest.raises(ConfigurationError, match="ToolDriver"):
        build_server(Bare())


async def test_with_two_servers_in_one_process_each_log_record_reaches_the_client_once(
    sample_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    from mcp import Client

    caplog.set_level(logging.INFO, logger="mcs.sample")
    received: list[Any] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        received.append(params)

    with serve_driver(SampleDriver()):  # a second server, its log forwarder installed too
        async with Client(sample_url, logging_callback=on_log, log_level="info") as client:
            assert (await client.call_tool("test_tool_with_logging", {})).is_error is False
    assert len([p for p in received if p.logger == "mcs.sample"]) == 3
