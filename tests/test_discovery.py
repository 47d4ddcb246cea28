"""Discovery mode (mcs.discovery): a bounded index, search and describe, whatever the tool count."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from mcs import discovery
from mcs.driver import DriverMeta, ToolDriver
from mcs.errors import InvalidInputError, ToolNotFoundError
from mcs.pipeline import Invocation
from mcs.tools import Tool


class ManyTools(ToolDriver):
    """``count`` tools spread over ``groups`` groups; calling one returns its name."""

    def __init__(self, count: int, groups: int, **options: Any) -> None:
        super().__init__(**options)
        self.meta = DriverMeta(id="00000000-0000-4000-8000-000000000001", name="many", version="1",
                               protocol="test", transport="none", spec_format="none")
        self._count, self._groups = count, groups

    def _list_tools(self) -> Iterable[Tool]:
        for i in range(self._count):
            group = f"area{i % self._groups}"
            yield Tool(
                name=f"{group}_operation_number_{i}",
                description=f"Does thing {i} for {group}: {'create' if i % 2 else 'list'} widgets.",
                input_schema={"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]},
                meta={"group": group},
            )

    def _call_tool(self, invocation: Invocation) -> Any:
        return invocation.tool.name


@pytest.mark.parametrize(("count", "groups"), [(50, 3), (2000, 40), (5000, 900)])
def test_the_discovery_description_stays_within_its_budget(count, groups):
    driver = ManyTools(count, groups, description_mode="discovery")
    text = driver.get_function_description()
    assert f"{count} tools are available" in text
    assert discovery.estimate_tokens(text) <= discovery.MAX_DESCRIPTION_TOKENS
    assert "search_tools" in text and "describe_tool" in text


def test_auto_mode_switches_at_the_token_budget():
    inline = ManyTools(3, 1).get_function_description()
    assert "search_tools" not in inline
    assert all(f"area0_operation_number_{i}" in inline for i in range(3))
    assert "search_tools" in ManyTools(3, 1, token_budget=10).get_function_description()


def test_every_tool_is_reachable_by_listing_its_group_page_by_page():
    driver = ManyTools(300, 7, description_mode="discovery")
    found: set[str] = set()
    for g in range(7):
        offset: int | None = 0
        while offset is not None:
            page = driver.call_tool("search_tools", {"group": f"area{g}", "limit": 50, "offset": offset})
            found |= {t["name"] for t in page["tools"]}
            offset = page.get("next_offset")
    assert len(found) == 300


def test_search_ranks_by_words_and_describe_returns_the_schema():
    driver = ManyTools(100, 5, description_mode="discovery")
    page = driver.call_tool("search_tools", {"query": "create widgets area3", "limit": 5})
    assert all(t["group"] == "area3" for t in page["tools"])
    described = driver.call_tool("describe_tool", {"name": page["tools"][0]["name"]})
    assert described["input_schema"]["required"] == ["x"]
    assert driver.call_tool(page["tools"][0]["name"], {"x": 1}) == page["tools"][0]["name"]


def test_search_needs_words_or_a_group():
    with pytest.raises(InvalidInputError):
        ManyTools(100, 5, description_mode="discovery").call_tool("search_tools", {})


def test_describing_an_unknown_tool_suggests_close_names():
    with pytest.raises(ToolNotFoundError) as info:
        ManyTools(100, 5, description_mode="discovery").call_tool("describe_tool", {"name": "area1_operation_number"})
    assert "Close matches" in info.value.message


def test_choose_mode_stops_measuring_once_over_budget():
    measured = []

    def tools() -> Iterable[Tool]:
        for i in range(10_000):
            measured.append(i)
            yield Tool(name=f"t{i}", description="x" * 400)

    assert discovery.choose_mode(tools(), token_budget=1000) == "discovery"
    assert len(measured) < 100


def test_describing_a_huge_tool_drops_nested_descriptions_but_no_field():
    def level(depth: int) -> dict[str, Any]:
        props: dict[str, Any] = {f"f{i}": {"type": "string", "enum": ["a", "b"], "description": "words " * 50}
                                 for i in range(20)}
        if depth:
            props["child"] = level(depth - 1)
        return {"type": "object", "description": "an object " * 20, "properties": props, "required": ["f0"]}

    tool = Tool(name="huge", description="A huge tool.", input_schema=level(6))
    described = discovery.describe(tool, max_chars=20_000)
    assert "note" in described
    assert len(str(described)) < 25_000
    inner = described["input_schema"]
    for _ in range(6):
        assert inner["properties"]["f3"]["enum"] == ["a", "b"] and inner["required"] == ["f0"]
        inner = inner["properties"]["child"]
    small = Tool(name="small", description="Small.")
    assert discovery.describe(small) == small.to_dict()


def _remote_functions() -> list[Any]:
    """Functions whose names are those of discovery's meta-tools (an OpenAPI operationId can be anything)."""

    def call_tool(name: str) -> str:
        """Call a named procedure on the remote side."""
        return f"remote call_tool({name})"

    def search_tools(query: str) -> str:
        """Search the remote catalogue."""
        return f"remote search_tools({query})"

    def ping() -> str:
        """Answer pong."""
        return "pong"

    return [call_tool, search_tools, ping]


def test_a_tool_named_like_a_meta_tool_never_shadows_it_and_stays_callable_renamed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import asyncio
    import json

    from mcs.functions import FunctionDriver

    driver = FunctionDriver(_remote_functions(), description_mode="discovery")

    names = [tool.name for tool in driver.list_tools()]
    assert names == ["call_tool_op", "search_tools_op", "ping", "search_tools", "describe_tool", "call_tool"]
    found = driver.process_llm_response(json.dumps({"tool": "search_tools", "arguments": {"query": "remote"}}))
    assert {tool["name"] for tool in found["tools"]} == {"call_tool_op", "search_tools_op"}
    described = driver.process_llm_response(json.dumps({"tool": "describe_tool", "arguments": {"name": "call_tool_op"}}))
    assert described["description"] == "Call a named procedure on the remote side."
    through = {"tool": "call_tool", "arguments": {"name": "call_tool_op", "arguments": {"name": "reboot"}}}
    assert driver.process_llm_response(json.dumps(through)) == "remote call_tool(reboot)"
    assert asyncio.run(driver.aprocess_llm_response(json.dumps(through))) == "remote call_tool(reboot)"
    direct = {"tool": "search_tools_op", "arguments": {"query": "q"}}
    assert driver.process_llm_response(json.dumps(direct)) == "remote search_tools(q)"
    assert "'call_tool' has the name of a discovery meta-tool" in caplog.text and "'call_tool_op'" in caplog.text


def test_call_tool_naming_the_meta_tool_itself_is_refused_not_run_as_the_drivers_tool() -> None:
    import json

    from mcs.functions import FunctionDriver

    driver = FunctionDriver(_remote_functions(), description_mode="discovery")

    with pytest.raises(ToolNotFoundError):
        driver.process_llm_response(json.dumps({"tool": "call_tool", "arguments": {"name": "call_tool"}}))


def test_inline_mode_keeps_a_tool_named_like_a_meta_tool_as_it_is() -> None:
    import json

    from mcs.functions import FunctionDriver

    driver = FunctionDriver(_remote_functions(), description_mode="inline")

    assert [tool.name for tool in driver.list_tools()] == ["call_tool", "search_tools", "ping"]
    assert driver.process_llm_response(json.dumps({"tool": "call_tool", "arguments": {"name": "x"}})) == (
        "remote call_tool(x)")


def test_a_prefixed_drivers_renamed_tool_is_not_reached_by_a_meta_tools_bare_name() -> None:
    import json

    from mcs.functions import FunctionDriver

    called: list[str] = []

    def call_tool(name: str) -> str:
        """Call a named procedure on the remote side."""
        called.append(name)
        return f"remote call_tool({name})"

    def ping() -> str:
        """Answer pong."""
        return "pong"

    prefixed = FunctionDriver([call_tool, ping], prefix="crm", description_mode="discovery")
    meant_for_the_meta_tool = {"tool": "call_tool", "arguments": {"name": "crm_ping"}}

    assert prefixed.get_tool("call_tool") is None
    reply = json.dumps(meant_for_the_meta_tool)
    assert prefixed.process_llm_response(reply) == reply  # not this driver's call: passed on unchanged
    assert called == []
    through = {"tool": "crm_call_tool", "arguments": {"name": "crm_call_tool_op", "arguments": {"name": "a"}}}
    assert prefixed.process_llm_response(json.dumps(through)) == "remote call_tool(a)"
    assert FunctionDriver([call_tool], prefix="crm", description_mode="inline").get_tool("call_tool") is not None


def test_prefixed_and_toolbox_meta_tools_win_over_a_members_tool_of_their_name() -> None:
    import json

    from mcs.functions import FunctionDriver
    from mcs.toolbox import Toolbox

    prefixed = FunctionDriver(_remote_functions(), prefix="crm", description_mode="discovery")
    assert {"crm_call_tool_op", "crm_call_tool", "crm_search_tools"} <= {t.name for t in prefixed.list_tools()}
    through = {"tool": "crm_call_tool", "arguments": {"name": "crm_call_tool_op", "arguments": {"name": "a"}}}
    assert prefixed.process_llm_response(json.dumps(through)) == "remote call_tool(a)"

    toolbox = Toolbox([FunctionDriver(_remote_functions())], description_mode="discovery")
    assert discovery.is_call_tool(toolbox.get_tool("call_tool") or Tool(name="none"))
    through = {"tool": "call_tool", "arguments": {"name": "call_tool_op", "arguments": {"name": "b"}}}
    assert toolbox.process_llm_response(json.dumps(through)) == "remote call_tool(b)"
