"""The driver through the MCS contract, and the structured prompt/resource API for servers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcpfile_support import Reply, mcp_file, tool
from mcs_mcp.mcpfile.driver import (
    MCPFileDriver,
    PromptArgumentSpec,
    ResourceContents,
    ResourceSpec,
)

import mcs
from mcs import AgentContext, PolicyDecision
from mcs.errors import ExecutionError, InvalidInputError, PolicyDeniedError, ToolNotFoundError


def full_file(url: str) -> dict:
    return mcp_file(
        tool("get_user", {"http": {"method": "GET", "url": url + "/users/{userId}"}},
             {"userId": {"type": "string"}}, ["userId"], requiredScopes=["users:read"]),
        tool("shout", {"cli": {"command": "echo {text} | tr a-z A-Z"}}, {"text": {"type": "string"}}, ["text"]),
        prompts=[{
            "name": "code_review", "title": "Review", "description": "Review code",
            "arguments": [{"name": "code", "title": "Code", "description": "The code", "required": True}],
            "inputSchema": {"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]},
            "invocation": {"http": {"method": "POST", "url": url + "/review"}},
            "requiredScopes": ["prompts"],
        }, {
            "name": "greet", "description": "Greeting",
            "inputSchema": {"type": "object", "properties": {"who": {"type": "string"}}},
            "invocation": {"cli": {"command": "echo Hello {who}"}},
        }],
        resources=[{
            "name": "access_log", "title": "Log", "description": "The log", "mimeType": "text/plain", "size": 1024,
            "uri": "http://localhost:5000/access.log",
            "invocation": {"http": {"method": "GET", "url": url + "/access.log"}},
        }],
        resourceTemplates=[{
            "name": "forecast", "description": "Weather", "mimeType": "application/json",
            "uriTemplate": "weather://forecast/{city}/{date}",
            "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}, "date": {"type": "string"}},
                            "required": ["city", "date"]},
            "invocation": {"http": {"method": "GET", "url": url + "/forecast/{city}"}},
        }],
    )


@pytest.fixture
def driver(new_driver, write_file, recorder) -> MCPFileDriver:
    return new_driver(write_file(full_file(recorder.url)))


def test_load_driver_finds_the_entry_point(write_file, recorder) -> None:
    driver = mcs.load_driver("mcpfile", path=write_file(full_file(recorder.url)))
    try:
        assert isinstance(driver, MCPFileDriver)
    finally:
        driver.close()


def test_tools_include_prompts_and_resources(driver) -> None:
    assert [t.name for t in driver.list_tools()] == [
        "get_user", "shout", "prompt_code_review", "prompt_greet", "resource_access_log", "resource_template_forecast",
    ]
    assert driver.get_tool("get_user").meta["required_scopes"] == ("users:read",)
    assert driver.get_tool("prompt_code_review").meta["mcp_kind"] == "prompt"


def test_exposure_of_prompts_and_resources_can_be_switched_off(new_driver, write_file, recorder) -> None:
    driver = new_driver(write_file(full_file(recorder.url)), expose_prompts=False, expose_resources=False)
    assert [t.name for t in driver.list_tools()] == ["get_user", "shout"]
    assert driver.render_prompt("greet", {"who": "Ann"}).messages[0].text == "Hello Ann\n"


def test_process_llm_response_runs_http_and_cli_tools(driver, recorder) -> None:
    recorder.replies["/users/7"] = Reply(body=b'{"id": "7", "name": "Ann"}')
    assert driver.process_llm_response('{"tool": "get_user", "arguments": {"userId": "7"}}') == {"id": "7", "name": "Ann"}
    assert driver.process_llm_response({"tool": "shout", "arguments": {"text": "hi"}}) == "HI\n"


def test_a_response_without_a_call_passes_through(driver) -> None:
    text = "Nothing to call here."
    assert driver.process_llm_response(text) is text


async def test_aprocess_llm_response(driver, recorder) -> None:
    result = await driver.aprocess_llm_response('{"tool": "shout", "arguments": {"text": "async"}}')
    assert result == "ASYNC\n"


def test_the_system_message_lists_the_tools(driver) -> None:
    message = driver.get_driver_system_message()
    assert "get_user" in message and "shout" in message


def test_policies_apply_to_prompts_and_resources_too(driver, recorder) -> None:
    driver.add_policy(lambda ctx, name, args: PolicyDecision.deny("no") if name.startswith("prompt") else PolicyDecision.allow())
    with pytest.raises(PolicyDeniedError):
        driver.render_prompt("greet", {"who": "x"})
    assert recorder.requests == []


def test_prompt_specs(driver) -> None:
    review, greet = driver.prompts()
    assert review.name == "code_review" and review.title == "Review" and review.required_scopes == ("prompts",)
    assert review.arguments == (PromptArgumentSpec("code", "Code", "The code", True),)
    assert greet.arguments == (PromptArgumentSpec("who", None, None, False),)
    assert review.tool_name == "prompt_code_review"


def test_render_prompt_posts_the_arguments_and_returns_an_assistant_message(driver, recorder) -> None:
    recorder.replies["/review"] = Reply(body=b"Looks fine.", content_type="text/plain")
    rendered = driver.render_prompt("code_review", {"code": "print(1)"})
    assert recorder.last.json() == {"code": "print(1)"}
    assert rendered.description == "Review code"
    assert [(m.role, m.text) for m in rendered.messages] == [("assistant", "Looks fine.")]


def test_render_prompt_validates_and_names_unknown_prompts(driver) -> None:
    with pytest.raises(InvalidInputError, match="code"):
        driver.render_prompt("code_review", {})
    with pytest.raises(ToolNotFoundError, match="code_review, greet"):
        driver.render_prompt("nope", {})


async def test_arender_prompt(driver) -> None:
    rendered = await driver.arender_prompt("greet", {"who": "$(id)"})
    assert rendered.messages[0].text == "Hello $(id)\n"


def test_resource_specs(driver) -> None:
    assert driver.resources() == [ResourceSpec(
        name="access_log", title="Log", description="The log", uri="http://localhost:5000/access.log",
        mime_type="text/plain", size=1024, required_scopes=(), tool_name="resource_access_log",
    )]
    (template,) = driver.resource_templates()
    assert template.uri_template == "weather://forecast/{city}/{date}" and template.mime_type == "application/json"


def test_read_a_static_resource(driver, recorder) -> None:
    recorder.replies["/access.log"] = Reply(body=b"GET / 200\n", content_type="text/plain")
    contents = driver.read_resource("http://localhost:5000/access.log")
    assert contents == ResourceContents("http://localhost:5000/access.log", "text/plain", "GET / 200\n")


def test_read_a_resource_template_routes_matched_variables(driver, recorder) -> None:
    recorder.replies["/forecast/Paris"] = Reply(body=b'{"t": 21}')
    contents = driver.read_resource("weather://forecast/Paris/2025-01-01")
    assert json.loads(contents.text) == {"t": 21}
    assert recorder.last.path == "/forecast/Paris" and recorder.last.query == [("date", "2025-01-01")]


async def test_aread_resource_and_unknown_uris(driver, recorder) -> None:
    recorder.replies["/forecast/Rome"] = Reply(body=b"sunny", content_type="text/plain")
    contents = await driver.aread_resource("weather://forecast/Rome/today")
    assert contents.text == "sunny"
    with pytest.raises(ToolNotFoundError):
        driver.read_resource("weather://elsewhere")


def test_resources_as_tools(driver, recorder) -> None:
    recorder.replies["/forecast/Oslo"] = Reply(body=b'{"t": -3}')
    assert driver.call_tool("resource_template_forecast", {"city": "Oslo", "date": "d"}) == '{"t": -3}'


def test_headers_arrive_through_the_context_metadata(new_driver, write_file, recorder) -> None:
    data = mcp_file(tool("whoami", {"http": {"method": "GET", "url": recorder.url + "/me",
                                             "headers": {"X-User": "{headers.X-User-Id}"}}}))
    driver = new_driver(write_file(data))
    driver.process_llm_response('{"tool": "whoami", "arguments": {}}',
                                context=AgentContext(metadata={"header:x-user-id": "ann"}))
    assert recorder.last.headers["x-user"] == "ann"
    with pytest.raises(ExecutionError, match="streamable HTTP"):
        driver.process_llm_response('{"tool": "whoami", "arguments": {}}')


def test_the_seed_extends_example_works_end_to_end(new_driver, write_file, recorder) -> None:
    data = mcp_file(
        tool("get_user", {"extends": {"from": "users", "extend": {"url": "/{userId}"}}},
             {"userId": {"type": "string"}}, ["userId"]),
        tool("delete_user", {"extends": {"from": "users", "extend": {"url": "/{userId}"},
                                         "override": {"method": "DELETE"}}},
             {"userId": {"type": "string"}}, ["userId"]),
        invocationBases={"users": {"http": {"method": "GET", "url": recorder.url + "/v1/users"}}},
    )
    driver = new_driver(write_file(data))
    driver.call_tool("get_user", {"userId": "a b"})
    assert (recorder.last.method, recorder.last.path) == ("GET", "/v1/users/a%20b")
    driver.call_tool("delete_user", {"userId": "9"})
    assert (recorder.last.method, recorder.last.path) == ("DELETE", "/v1/users/9")


def test_a_prefix_keeps_calls_working(new_driver, write_file, recorder) -> None:
    driver = new_driver(write_file(full_file(recorder.url)), prefix="files")
    assert driver.get_tool("files_shout") is not None
    assert driver.call_tool("files_shout", {"text": "x"}) == "X\n"


def test_corpus_cli_demo_runs_mkdir_safely(corpus: Path, new_driver, tmp_path) -> None:
    driver = new_driver(corpus / "testdata" / "pkg__mcpfile__testdata__full-demo.yaml", cli_cwd=tmp_path)
    driver.call_tool("ensure_dir_exists", {"path": "a b/c; touch MARKER"})
    assert (tmp_path / "a b" / "c; touch MARKER").is_dir()
    assert not (tmp_path / "MARKER").exists()


def test_a_cli_static_resource_is_read_by_running_its_command(new_driver, write_file) -> None:
    data = mcp_file(resources=[{
        "name": "motd", "description": "Message of the day", "uri": "file:///motd",
        "invocation": {"cli": {"command": "echo 'be kind'"}},
    }])
    driver = new_driver(write_file(data))
    assert driver.read_resource("file:///motd") == ResourceContents("file:///motd", "text/plain", "be kind\n")


def test_call_tool_result_keeps_text_and_structured_content(driver, recorder) -> None:
    recorder.replies["/users/7"] = Reply(body=b'{"id": "7"}')
    result = driver.call_tool_result("get_user", {"userId": "7"})
    assert (result.text, result.structured, result.truncated) == ('{"id": "7"}', {"id": "7"}, False)


async def test_acall_tool_result(driver) -> None:
    result = await driver.acall_tool_result("shout", {"text": "x"})
    assert (result.text, result.structured) == ("X\n", None)
