"""The bridge reads every page of a server's prompts, resources and resource templates
(``nextCursor``, MCP "Pagination"), with the same bounds as its tool listing."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import mcp.types as mt
import pytest
import uvicorn
from mcs_mcp.client_driver import MCPDriver
from support.servers import uvicorn_on_loopback

from mcs.errors import ExecutionError


def _page(params: Any, pages: list[list[Any]], loop: bool) -> tuple[list[Any], str | None]:
    index = int(params.cursor) if params is not None and params.cursor else 0
    following = index + 1 if index + 1 < len(pages) else (0 if loop else None)
    return pages[index], None if following is None else str(following)


@contextmanager
def paging_server(*, loop_resources: bool = False, with_tools: bool = True) -> Iterator[str]:
    """A low-level SDK server listing two prompts, two resources and two templates, one per
    page, and (``with_tools``) one tool."""
    from mcp.server.lowlevel import Server

    prompts = [[mt.Prompt(name="first")], [mt.Prompt(name="second")]]
    resources = [[mt.Resource(uri="memo://one", name="one")], [mt.Resource(uri="memo://two", name="two")]]
    templates = [[mt.ResourceTemplate(uri_template="memo://day/{day}", name="day")],
                 [mt.ResourceTemplate(uri_template="memo://week/{week}", name="week")]]

    async def list_prompts(ctx: Any, params: Any) -> Any:
        page, cursor = _page(params, prompts, False)
        return mt.ListPromptsResult(prompts=page, next_cursor=cursor)

    async def get_prompt(ctx: Any, params: Any) -> Any:
        text = mt.TextContent(type="text", text=f"prompt {params.name}")
        return mt.GetPromptResult(messages=[mt.PromptMessage(role="user", content=text)])

    async def list_resources(ctx: Any, params: Any) -> Any:
        page, cursor = _page(params, resources, loop_resources)
        return mt.ListResourcesResult(resources=page, next_cursor=cursor)

    async def list_templates(ctx: Any, params: Any) -> Any:
        page, cursor = _page(params, templates, False)
        return mt.ListResourceTemplatesResult(resource_templates=page, next_cursor=cursor)

    async def read_resource(ctx: Any, params: Any) -> Any:
        contents = mt.TextResourceContents(uri=str(params.uri), mime_type="text/plain", text=f"read {params.uri}")
        return mt.ReadResourceResult(contents=[contents])

    async def list_tools(ctx: Any, params: Any) -> Any:
        return mt.ListToolsResult(tools=[mt.Tool(name="ping", input_schema={"type": "object"})])

    async def call_tool(ctx: Any, params: Any) -> Any:
        return mt.CallToolResult(content=[mt.TextContent(type="text", text="pong")])

    tool_handlers = {"on_list_tools": list_tools, "on_call_tool": call_tool} if with_tools else {}
    server: Server[Any] = Server("pager", version="1.0.0", on_list_prompts=list_prompts, on_get_prompt=get_prompt,
                                 on_list_resources=list_resources, on_list_resource_templates=list_templates,
                                 on_read_resource=read_resource, **tool_handlers)
    app = server.streamable_http_app(stateless_http=True)
    with uvicorn_on_loopback(uvicorn.Config(app, log_level="critical", lifespan="on")) as base:
        yield base + "/mcp"


def test_prompts_resources_and_templates_on_later_pages_are_offered() -> None:
    with paging_server() as url, MCPDriver(url=url, include_prompts=True, include_resources=True) as driver:
        names = {t.name for t in driver.list_tools()}
        assert {"ping", "prompt_first", "prompt_second", "read_resource"} <= names
        read = driver.get_tool("read_resource")
        assert read is not None
        assert "memo://one: one" in read.description and "memo://two: two" in read.description
        assert "memo://day/{day}" in read.description and "memo://week/{week}" in read.description
        assert driver.call_tool("read_resource", {"uri": "memo://two"}) == "read memo://two"
        assert driver.call_tool("read_resource", {"uri": "memo://week/3"}) == "read memo://week/3"
        assert driver.call_tool("prompt_second", {}) == [{"role": "user", "content": "prompt second"}]


def test_a_resource_listing_that_pages_in_a_loop_is_refused() -> None:
    with paging_server(loop_resources=True) as url, MCPDriver(url=url, include_resources=True) as driver, \
            pytest.raises(ExecutionError, match="pages its resources in a loop"):
        driver.list_tools()


def test_a_server_without_the_tools_capability_is_bridged_for_its_prompts_and_resources() -> None:
    with paging_server(with_tools=False) as url, \
            MCPDriver(url=url, include_prompts=True, include_resources=True) as driver:
        assert {t.name for t in driver.list_tools()} == {"prompt_first", "prompt_second", "read_resource"}
        assert driver.call_tool("read_resource", {"uri": "memo://one"}) == "read memo://one"
