"""Prompts, resources, completions, raw input schemas and typed content on FunctionDriver."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import pytest
from pydantic import Field

import mcs
from mcs.errors import ConfigurationError, InvalidInputError, ToolNotFoundError


@mcs.prompt(complete={"language": lambda value: [x for x in ("python", "perl", "rust") if x.startswith(value)]})
def review(code: Annotated[str, Field(description="the code")], language: str = "python") -> str:
    """Ask for a code review."""
    return f"Review this {language} code:\n{code}"


@mcs.prompt
async def pair(topic: str, ctx: mcs.AgentContext) -> list[Any]:
    """A two-message prompt that knows who asks."""
    return [f"Explain {topic} to {ctx.agent_id}", {"role": "assistant", "content": "Sure."}]


@mcs.resource("config://app", mime_type="application/json")
def app_config() -> dict[str, str]:
    """The app's settings."""
    return {"theme": "dark"}


@mcs.resource("users://{user_id}/profile", complete={"user_id": lambda value, arguments: ["u1", "u2"]})
def profile(user_id: str) -> str:
    """A user's profile."""
    return f"profile of {user_id}"


@mcs.resource("files://{+path}")
async def file(path: str) -> bytes:
    """A file under the root."""
    return path.encode()


@pytest.fixture
def driver() -> mcs.FunctionDriver:
    return mcs.FunctionDriver([review, pair, app_config, profile, file])


def test_prompts_list_their_arguments_from_the_signature(driver: mcs.FunctionDriver) -> None:
    listed = {p["name"]: p for p in driver.prompts()}
    assert listed["review"]["description"] == "Ask for a code review."
    assert listed["review"]["arguments"] == [
        {"name": "code", "description": "the code", "required": True},
        {"name": "language", "description": None, "required": False},
    ]
    assert [a["name"] for a in listed["pair"]["arguments"]] == ["topic"]  # the context is injected, not listed


def test_a_prompt_renders_with_its_arguments_and_context(driver: mcs.FunctionDriver) -> None:
    assert driver.render_prompt("review", {"code": "x = 1"}) == "Review this python code:\nx = 1"
    rendered = asyncio.run(driver.arender_prompt("pair", {"topic": "MCP"}, mcs.AgentContext(agent_id="ada")))
    assert rendered[0] == "Explain MCP to ada"


def test_a_prompt_refuses_missing_arguments_and_unknown_names(driver: mcs.FunctionDriver) -> None:
    with pytest.raises(InvalidInputError, match="code"):
        driver.render_prompt("review", {})
    with pytest.raises(ToolNotFoundError):
        driver.render_prompt("nope", {})


def test_static_resources_and_templates_are_listed_apart(driver: mcs.FunctionDriver) -> None:
    assert [r["uri"] for r in driver.resources()] == ["config://app"]
    assert [t["uri_template"] for t in driver.resource_templates()] == ["users://{user_id}/profile", "files://{+path}"]
    assert driver.resources()[0]["mime_type"] == "application/json"


def test_a_template_reads_with_its_variables_taken_from_the_uri(driver: mcs.FunctionDriver) -> None:
    assert driver.read_resource("config://app") == {"theme": "dark"}
    assert driver.read_resource("users://42/profile") == "profile of 42"
    assert asyncio.run(driver.aread_resource("files://a/b/c.txt")) == b"a/b/c.txt"
    with pytest.raises(ToolNotFoundError):
        driver.read_resource("users://42/other")  # one segment per {var}: no match


def test_completions_come_from_the_completer_of_each_argument(driver: mcs.FunctionDriver) -> None:
    assert driver.complete("prompt", "review", "language", "p") == ["python", "perl"]
    assert driver.complete("prompt", "review", "code", "x") == []  # no completer
    assert asyncio.run(driver.acomplete("resource", "users://{user_id}/profile", "user_id", "")) == ["u1", "u2"]
    assert driver.complete("prompt", "unknown", "a", "b") == []
    assert driver.has_completions()


def test_bad_declarations_are_refused_at_once() -> None:
    with pytest.raises(ConfigurationError, match="variables"):
        mcs.resource("users://{user_id}")(lambda other: other)
    with pytest.raises(ConfigurationError, match="scheme"):
        mcs.resource("no-scheme")(lambda: "x")
    with pytest.raises(ConfigurationError, match="not one of its arguments"):
        mcs.prompt(complete={"missing": lambda v: []})(lambda code: code)
    with pytest.raises(ConfigurationError, match="already registered"):
        mcs.FunctionDriver([review, review])


def test_a_raw_input_schema_replaces_the_signature_and_is_enforced() -> None:
    @mcs.tool(input_schema={"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}},
                            "required": ["n"], "additionalProperties": False})
    def repeat(**arguments: Any) -> str:
        """Repeat a letter."""
        return "x" * arguments["n"]

    driver = mcs.FunctionDriver([repeat])
    assert driver.list_tools()[0].input_schema["properties"]["n"]["minimum"] == 1
    assert driver.call_tool("repeat", {"n": 3}) == "xxx"
    with pytest.raises(InvalidInputError):
        driver.call_tool("repeat", {"n": 0})


def test_tools_returning_typed_content_publish_no_output_schema() -> None:
    @mcs.tool
    def chart() -> mcs.Image:
        return mcs.Image(b"png", "image/png")

    @mcs.tool
    def mixed() -> list[str | mcs.Audio]:
        return ["hi", mcs.Audio(b"wav")]

    @mcs.tool
    def raw() -> bytes:
        return b"x"

    @mcs.tool
    def count() -> dict[str, int]:
        return {"n": 1}

    tools = {t.name: t for t in mcs.FunctionDriver([chart, mixed, raw, count]).list_tools()}
    assert tools["chart"].output_schema is None and tools["mixed"].output_schema is None
    assert tools["raw"].output_schema is None
    assert tools["count"].output_schema is not None  # a plain value keeps its schema
    with pytest.raises(ValueError, match="exactly one"):
        mcs.EmbeddedResource("x://y")


def test_adding_offerings_tells_the_change_listeners() -> None:
    driver = mcs.FunctionDriver([])
    heard: list[tuple[str, str | None]] = []
    remove = driver.add_change_listener(lambda kind, uri: heard.append((kind, uri)))
    driver.add(review)
    driver.add(app_config)
    driver.add(mcs.tool(lambda: "ok"))
    driver.resource_updated("config://app")
    assert heard == [("prompts", None), ("resources", None), ("tools", None), ("resource", "config://app")]
    remove()
    driver.resource_updated("config://app")
    assert len(heard) == 4
    assert len(driver.list_tools()) == 1  # the added tool is listed (the cache was dropped)


def test_a_toolbox_passes_prompts_resources_and_completions_through(driver: mcs.FunctionDriver) -> None:
    other = mcs.FunctionDriver([mcs.prompt(name="review")(lambda code: f"other {code}")], name="other")
    box = mcs.Toolbox({"main": driver, "alt": other})
    names = [p["name"] for p in box.prompts()]
    assert names == ["main_review", "pair", "alt_review"]  # a shared name is prefixed
    assert box.render_prompt("alt_review", {"code": "c"}) == "other c"
    assert box.read_resource("users://7/profile") == "profile of 7"
    assert box.complete("prompt", "main_review", "language", "r") == ["rust"]
    with pytest.raises(ToolNotFoundError):
        box.read_resource("nothing://here")
    assert {"prompts", "resources", "completions", "list_changed"} <= set(box.meta.capabilities)


def test_a_toolbox_announces_its_members_changes_and_new_members() -> None:
    member = mcs.FunctionDriver([])
    box = mcs.Toolbox({"m": member})
    heard: list[str] = []
    box.add_change_listener(lambda kind, uri: heard.append(kind))
    member.add(mcs.tool(lambda: 1))
    box.add("n", mcs.FunctionDriver([review], name="n"))
    assert heard == ["tools", "tools", "prompts", "resources"]
    assert [p["name"] for p in box.prompts()] == ["review"]
    with pytest.raises(ConfigurationError):
        box.add("n", member)
