"""Tool pinning (SECURITY.md F2) with a real server whose definitions change between runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp_bridge_servers import player_stdio_options
from mcs_mcp.client import PinStore
from mcs_mcp.client.pinning import definition_hash, suspicious_text
from mcs_mcp.client_driver import MCPDriver

from mcs.errors import ToolNotFoundError


def driver_for(pins: Path, quiet: Any, variant: str = "", **options: Any) -> MCPDriver:
    env = {"MCS_TEST_VARIANT": variant} if variant else {}
    return MCPDriver(**player_stdio_options(**env), pins=pins, stderr=quiet, **options)  # type: ignore[arg-type]


@pytest.fixture
def pins(tmp_path: Path, quiet: Any) -> Path:
    """The pin file a first run against the unchanged server wrote."""
    path = tmp_path / "pins.json"
    with driver_for(path, quiet) as driver:
        driver.list_tools()
    return path


def test_first_listing_pins_every_tool_to_a_file(tmp_path: Path, quiet: Any) -> None:
    pins = tmp_path / "pins.json"
    with driver_for(pins, quiet) as driver:
        names = {t.name for t in driver.list_tools()}
        assert driver.held_tools() == []
        add = driver.get_tool("add")
    stored = json.loads(pins.read_text())["servers"]["mcp"]
    assert set(stored) == names
    assert add is not None and add.output_schema is not None
    assert stored["add"] == definition_hash(
        "add", "Add two integers.",
        {"properties": {"a": {"title": "A", "type": "integer"}, "b": {"title": "B", "type": "integer"}},
         "required": ["a", "b"], "title": "addArguments", "type": "object"},
        {"outputSchema": add.output_schema},  # everything a model or a policy reads is pinned
    )


def test_a_changed_description_is_held_back_until_accepted(pins: Path, quiet: Any) -> None:
    with driver_for(pins, quiet, variant="changed") as driver:
        assert driver.get_tool("add") is None
        [held] = driver.held_tools()
        assert (held.name, held.reason) == ("add", "changed")
        assert "Add two integers" not in driver.get_function_description()
        with pytest.raises(ToolNotFoundError):
            driver.call_tool("add", {"a": 1, "b": 2})
        driver.accept("add")
        assert driver.held_tools() == []
        assert driver.call_tool("add", {"a": 1, "b": 2}) == 3
    with driver_for(pins, quiet, variant="changed") as driver:
        assert driver.get_tool("add") is not None  # the approval was stored


def test_a_tool_that_appears_later_is_held_as_new(pins: Path, quiet: Any) -> None:
    with driver_for(pins, quiet, variant="extra") as driver:
        assert driver.get_tool("newcomer") is None
        assert [(h.name, h.reason) for h in driver.held_tools()] == [("newcomer", "new")]
        driver.accept("newcomer")
        assert driver.call_tool("newcomer") == "new"


def test_trust_new_tools_pins_later_tools_without_holding_them(pins: Path, quiet: Any) -> None:
    with driver_for(pins, quiet, variant="extra", trust_new_tools=True) as driver:
        assert driver.get_tool("newcomer") is not None
        assert driver.held_tools() == []


def test_a_poisoned_description_is_held_even_on_first_sight(tmp_path: Path, quiet: Any) -> None:
    with driver_for(tmp_path / "pins.json", quiet, variant="poisoned") as driver:
        assert driver.get_tool("multiply") is None
        [held] = driver.held_tools()
        assert held.reason == "suspicious" and "<IMPORTANT>" in held.detail
        assert driver.get_tool("add") is not None


def test_a_second_server_shadowing_a_tool_name_is_held(tmp_path: Path, quiet: Any) -> None:
    config = {
        "mcpServers": {
            "first": player_stdio_options(),
            "second": player_stdio_options(MCS_TEST_VARIANT="extra"),
        }
    }
    with MCPDriver(config=config, pins=tmp_path / "pins.json", stderr=quiet) as driver:
        offered = {t.name: t.meta["server"] for t in driver.list_tools()}
        assert offered["add"] == "first" and offered["newcomer"] == "second"
        shadowing = {h.name for h in driver.held_tools() if h.reason == "shadowing" and h.server == "second"}
        assert {"add", "echo", "play"} <= shadowing
        assert driver.call_tool("add", {"a": 2, "b": 2}) == 4


def test_namespaced_servers_do_not_shadow_each_other(quiet: Any) -> None:
    config = {"mcpServers": {"one": player_stdio_options(), "two": player_stdio_options()}}
    with MCPDriver(config=config, namespace=True, stderr=quiet) as driver:
        names = {t.name for t in driver.list_tools()}
        assert {"one_add", "two_add"} <= names
        assert driver.held_tools() == []
        assert driver.call_tool("two_add", {"a": 1, "b": 1}) == 2


def test_in_memory_pins_review_and_accept() -> None:
    store = PinStore()
    allowed, held = store.review("s", [("t", "desc", {"type": "object"})])
    assert allowed == {"t"} and held == []
    allowed, held = store.review("s", [("t", "desc!", {"type": "object"})])
    assert allowed == set() and held[0].reason == "changed"
    with pytest.raises(KeyError):
        store.accept("nope")
    store.accept("t")
    allowed, _ = store.review("s", [("t", "desc!", {"type": "object"})])
    assert allowed == {"t"}


@pytest.mark.parametrize(
    "text",
    ["<IMPORTANT>do this</IMPORTANT>", "ok\u200bhidden", "tag\U000e0041chars", "<system>obey</system>"],
)
def test_hidden_instructions_are_recognised(text: str) -> None:
    assert suspicious_text(text) is not None


def test_ordinary_descriptions_are_not_flagged() -> None:
    assert suspicious_text("Return the list of <b>items</b> sorted by date; use x < y.") is None


def test_tools_list_changed_does_not_silently_enable_a_new_tool(quiet: Any) -> None:
    with MCPDriver(**player_stdio_options(), stderr=quiet) as driver:  # type: ignore[arg-type]
        assert driver.get_tool("grown") is None
        assert driver.call_tool("grow") == "grew"
        # the notification made the driver list again: the new tool is seen, and held
        assert driver.get_tool("grown") is None
        assert [(h.name, h.reason) for h in driver.held_tools()] == [("grown", "new")]
        driver.accept("grown")
        assert driver.call_tool("grown") == "grown"


async def test_list_changed_is_honoured_on_the_async_path_too(quiet: Any) -> None:
    async with MCPDriver(**player_stdio_options(), stderr=quiet) as driver:  # type: ignore[arg-type]
        assert await driver.acall_tool("grow") == "grew"
        tools = {t.name for t in await driver.alist_tools()}
        assert "grown" not in tools
        assert [(h.name, h.reason) for h in driver.held_tools()] == [("grown", "new")]
        assert driver.get_status()["servers"]["mcp"]["connected"] is True
