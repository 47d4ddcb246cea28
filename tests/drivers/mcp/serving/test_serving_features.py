"""What a served function driver can do with its client: progress, elicitation, sampling, roots,
completions, subscriptions, list_changed, logs that follow the client, resumable streams.

The tools come from ``conformance_server`` (plain ``@mcs.tool`` functions) and from small
drivers built here; a real SDK client talks to ``mcs_mcp.serving`` over streamable HTTP.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError
from mcs_mcp.serving.events import MemoryEventStore
from serving_support import HERE, MCS, mcp_client, serve_driver

import mcs
from mcs.targets import load_target


def conformance_driver() -> mcs.FunctionDriver:
    driver = load_target("conformance_server")
    assert isinstance(driver, mcs.FunctionDriver)
    return driver


async def _accept(context: Any, params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.test"})


async def _sample(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    prompt = params.messages[0].content
    assert isinstance(prompt, types.TextContent)
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(type="text", text=f"echo of {prompt.text}"), model="test-model",
    )


async def _roots(context: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root.model_validate({"uri": "file:///work/repo", "name": "repo"})])


@mcs.tool
async def roots_tool(ctx: mcs.AgentContext) -> list[str]:
    """The client's roots."""
    return [f"{root.name}={root.uri}" for root in await ctx.list_roots()]


async def test_progress_reaches_the_client_for_its_token() -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    with serve_driver(conformance_driver()) as url:  # stateless: progress rides the request's stream
        async with mcp_client(url) as session:
            result = await session.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
            silent = await session.call_tool("test_tool_with_progress", {})  # no token: nothing sent
    assert result.is_error is False and silent.is_error is False
    assert seen == [(0, 100, "0% done"), (50, 100, "50% done"), (100, 100, "100% done")]


async def test_a_stateful_session_carries_elicitation_sampling_and_roots() -> None:
    driver = conformance_driver()
    driver.add(roots_tool)
    with serve_driver(driver, stateless=False) as url:
        async with mcp_client(url, elicitation_callback=_accept, sampling_callback=_sample,
                              list_roots_callback=_roots) as session:
            elicited = await session.call_tool("test_elicitation", {"message": "Who are you?"})
            sampled = await session.call_tool("test_sampling", {"prompt": "hello"})
            roots = await session.call_tool("roots_tool", {})
    assert elicited.content[0].text == (
        'User response: action=accept, content={"username": "ada", "email": "ada@example.test"}')
    assert sampled.content[0].text == "LLM response: echo of hello"
    assert json.loads(roots.content[0].text) == ["repo=file:///work/repo"]


async def test_stateless_serving_refuses_server_requests_with_a_message_that_says_to_run_stateful() -> None:
    with serve_driver(conformance_driver()) as url:
        async with mcp_client(url, elicitation_callback=_accept) as session:
            result = await session.call_tool("test_elicitation", {"message": "Who are you?"})
    assert result.is_error is True
    assert "stateless" in result.content[0].text and "-s stateful=true" in result.content[0].text


async def test_a_client_without_the_capability_is_told_so() -> None:
    with serve_driver(conformance_driver(), stateless=False) as url:
        async with mcp_client(url) as session:  # no sampling callback: no sampling capability
            result = await session.call_tool("test_sampling", {"prompt": "hi"})
    assert result.is_error is True
    assert "did not declare the sampling capability" in result.content[0].text


async def test_completions_answer_for_prompt_arguments_and_template_variables() -> None:
    with serve_driver(conformance_driver()) as url:
        async with mcp_client(url) as session:
            assert session.server_capabilities is not None and session.server_capabilities.completions is not None
            cities = await session.complete(
                types.PromptReference(name="test_prompt_with_arguments"), {"name": "arg1", "value": "par"})
            ids = await session.complete(
                types.ResourceTemplateReference(uri="test://template/{id}/data"), {"name": "id", "value": "12"})
            with pytest.raises(MCPError):
                await session.complete(types.PromptReference(name="nope"), {"name": "a", "value": ""})
    assert cities.completion.values == ["paris", "park", "party"]
    assert ids.completion.values == ["120", "121", "122", "123", "124", "125", "126", "127", "128", "129"]


async def test_completion_is_not_advertised_by_a_driver_without_completers() -> None:
    driver = mcs.FunctionDriver([mcs.prompt(lambda topic: f"about {topic}")])
    with serve_driver(driver) as url:
        async with mcp_client(url) as session:
            caps = session.server_capabilities
            assert caps is not None and caps.prompts is not None and caps.completions is None
            assert caps.resources is None  # no resources: not advertised either


async def _wait_for(condition: Any, timeout: float = 10.0) -> None:
    with anyio.fail_after(timeout):
        while not condition():
            await anyio.sleep(0.01)


@pytest.mark.filterwarnings("ignore:resources/.*subscribe is removed:mcp.shared.exceptions.MCPDeprecationWarning")
async def test_subscribers_hear_of_a_resources_new_content_until_they_unsubscribe() -> None:
    driver = conformance_driver()
    updates: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(str(message.params.uri))

    with serve_driver(driver, stateless=False) as url:
        async with mcp_client(url, message_handler=on_message) as session:
            caps = session.server_capabilities
            assert caps is not None and caps.resources is not None and caps.resources.subscribe is True
            await session.subscribe_resource("test://watched-resource")
            with pytest.raises(MCPError):
                await session.subscribe_resource("test://no-such-resource")
            driver.resource_updated("test://static-text")  # not subscribed: not sent
            driver.resource_updated("test://watched-resource")
            await _wait_for(lambda: updates)
            await session.unsubscribe_resource("test://watched-resource")
            driver.resource_updated("test://watched-resource")
            await session.send_ping()  # a round trip after the second update
            await asyncio.sleep(0.1)
    assert updates == ["test://watched-resource"]


async def test_adding_a_tool_sends_list_changed_which_is_advertised_only_with_sessions() -> None:
    driver = conformance_driver()
    changed: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification | types.PromptListChangedNotification):
            changed.append(message.method)

    with serve_driver(driver, stateless=False) as url:
        async with mcp_client(url, message_handler=on_message) as session:
            caps = session.server_capabilities
            assert caps is not None and caps.tools is not None and caps.tools.list_changed is True
            before = {t.name for t in (await session.list_tools()).tools}
            driver.add(mcs.tool(name="late_tool")(lambda: "late"))
            await _wait_for(lambda: "notifications/tools/list_changed" in changed)
            after = {t.name for t in (await session.list_tools()).tools}
    assert after - before == {"late_tool"}
    with serve_driver(conformance_driver()) as url:
        async with mcp_client(url) as session:
            caps = session.server_capabilities
            assert caps is not None and caps.tools is not None and not caps.tools.list_changed
            assert caps.resources is not None and not caps.resources.subscribe


async def test_a_served_mcp_bridge_relays_each_of_its_upstreams_list_changed_once() -> None:
    from mcs_mcp.client_driver import MCPDriver

    upstream = mcs.FunctionDriver([mcs.tool(name="first")(lambda: "one")], name="upstream")
    changed: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.append(message.method)

    with serve_driver(upstream, stateless=False) as upstream_url:
        bridge = MCPDriver(url=upstream_url, trust_new_tools=True)
        try:
            with serve_driver(bridge, stateless=False) as url:
                async with mcp_client(url, message_handler=on_message) as session:
                    caps = session.server_capabilities
                    assert caps is not None and caps.tools is not None and caps.tools.list_changed is True
                    assert {t.name for t in (await session.list_tools()).tools} == {"first"}
                    upstream.add(mcs.tool(name="later")(lambda: "late"))
                    await _wait_for(lambda: "notifications/tools/list_changed" in changed)
                    assert {t.name for t in (await session.list_tools()).tools} == {"first", "later"}
                    called = await session.call_tool("later", {})
                    assert [c.text for c in called.content if isinstance(c, types.TextContent)] == ["late"]
                    # the bridge now holds a session on the serving loop and one for synchronous
                    # use; the upstream tells both of the next change, and it is relayed once
                    upstream.add(mcs.tool(name="last")(lambda: "last"))
                    await _wait_for(lambda: len(changed) >= 2)
                    assert "last" in {t.name for t in (await session.list_tools()).tools}
                    await session.call_tool("last", {})
                    await session.send_ping()
                    assert len(bridge.connections["mcp"]._sessions) == 2
                    assert changed == ["notifications/tools/list_changed"] * 2
        finally:
            await bridge.aclose()


@pytest.mark.parametrize("stateless", [True, False])
async def test_a_served_mcp_bridge_never_sends_one_clients_upstream_logs_to_another(stateless: bool) -> None:
    from mcs_mcp.client_driver import MCPDriver

    heard_by_a: list[str] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        heard_by_a.append(json.dumps(params.data))

    # over stdio one reader task receives what the upstream sends, for every caller
    bridge = MCPDriver(command=str(MCS), args=["serve", "bridged_upstream", "-s", "log_level=warning"],
                       env={"PYTHONPATH": str(HERE)})
    try:
        with serve_driver(bridge, stateless=stateless) as url:
            async with mcp_client(url, logging_callback=on_log) as a, mcp_client(url) as b:
                # A's call is the first on the serving loop: it opens the bridge's connection
                slow = asyncio.create_task(a.call_tool("slow_upstream", {}))
                await asyncio.sleep(0.5)
                assert (await b.call_tool("log_upstream", {"text": "B-SECRET"})).is_error is False
                assert (await slow).is_error is False
        assert heard_by_a and not [line for line in heard_by_a if "B-SECRET" in line]
    finally:
        await bridge.aclose()


@mcs.tool
async def chatty(level: str) -> str:
    """Logs on a logger of its own (not under mcs.*), once per level."""
    own = logging.getLogger("thirdparty.chatty")
    own.debug("debug line")
    own.info("info line")
    own.warning("warning line")
    return level


async def test_a_tools_own_logger_reaches_the_client_at_the_level_the_client_chose() -> None:
    root = logging.getLogger()
    saved = root.level
    root.setLevel(logging.ERROR)  # the server's console is quiet; the client decides what it gets
    try:
        for level, expected in (("debug", ["debug line", "info line", "warning line"]),
                                ("warning", ["warning line"])):
            received: list[str] = []

            async def on_log(params: types.LoggingMessageNotificationParams, into: list[str] = received) -> None:
                if params.logger == "thirdparty.chatty":
                    into.append(params.data["message"])

            # stateful: the level a client sets is kept for its session
            with serve_driver(mcs.FunctionDriver([chatty]), stateless=False) as url:
                async with mcp_client(url, logging_callback=on_log) as session:
                    await session.send_request(types.SetLevelRequest(
                        params=types.SetLevelRequestParams(level=level)), types.EmptyResult)  # type: ignore[arg-type]
                    await session.call_tool("chatty", {"level": level})
            assert received == expected
        assert root.level == logging.ERROR  # restored when the server stopped
    finally:
        root.setLevel(saved)


async def test_a_resumable_stream_delivers_the_result_after_the_tool_lets_go_of_it() -> None:
    store = MemoryEventStore()
    with serve_driver(conformance_driver(), stateless=False, event_store=store, retry_interval=100) as url:
        async with mcp_client(url) as session:
            result = await session.call_tool("test_reconnection", {})
    assert result.is_error is False
    assert result.content[0].text == "Reconnection test completed successfully"
    assert store._events  # the stream's events were kept for the reconnection


async def test_typed_content_is_served_as_blocks_without_an_output_schema() -> None:
    with serve_driver(conformance_driver()) as url:
        async with mcp_client(url) as session:
            tools = {t.name: t for t in (await session.list_tools()).tools}
            assert tools["test_image_content"].output_schema is None
            image = await session.call_tool("test_image_content", {})
            mixed = await session.call_tool("test_multiple_content_types", {})
            prompt = await session.get_prompt("test_prompt_with_image")
            binary = await session.read_resource("test://static-binary")
    assert image.content[0].type == "image" and image.content[0].mime_type == "image/png"
    assert [b.type for b in mixed.content] == ["text", "image", "resource"]
    assert [m.content.type for m in prompt.messages] == ["image", "text"]
    assert isinstance(binary.contents[0], types.BlobResourceContents)
    assert binary.contents[0].mime_type == "image/png"


async def test_a_toolbox_serves_its_members_prompts_and_resources() -> None:
    box = mcs.Toolbox({"conf": conformance_driver(), "more": mcs.FunctionDriver([roots_tool], name="more")})
    with serve_driver(box) as url:
        async with mcp_client(url) as session:
            prompts = [p.name for p in (await session.list_prompts()).prompts]
            text = await session.read_resource("test://template/7/data")
    assert "test_simple_prompt" in prompts
    first = text.contents[0]
    assert isinstance(first, types.TextResourceContents) and json.loads(first.text)["id"] == "7"
