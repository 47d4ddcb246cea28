"""The inspector's JSON API against real drivers on loopback: what the model sees, calls through
the pipeline with their events, confirmation of writes, and pasted replies."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import httpx
import pytest
from mcs_rest import RestDriver
from mcs_rest.demo import SPEC

import mcs
from mcs import discovery, native, prompts
from mcs.inspector import InspectorServer
from mcs.limits import RateLimit


@mcs.tool(annotations={"readOnlyHint": True})
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcs.tool
def delete_note(title: str) -> str:
    """Delete a note by its title."""
    return f"deleted {title}"


def _math() -> mcs.FunctionDriver:
    driver = mcs.FunctionDriver([add, delete_note], name="notes")

    @driver.add_policy
    def no_secret_notes(ctx: mcs.AgentContext, tool: str, args: Mapping[str, Any]) -> mcs.PolicyDecision:
        if str(args.get("title", "")).startswith("secret"):
            return mcs.PolicyDecision.deny("secret notes stay")
        return mcs.PolicyDecision.allow()

    @driver.on_execute_end
    def audit(event: mcs.ExecutionEvent) -> None:
        pass

    return driver


def _confirmed(client: httpx.Client, path: str, body: dict[str, Any]) -> httpx.Response:
    """POST ``body``; when the answer asks for a confirmation, send it again with the one given
    (what the page does once the person agreed to the preview)."""
    first = client.post(path, json=body)
    if first.status_code != 409 or first.json()["error"] != "CONFIRMATION_REQUIRED":
        return first
    return client.post(path, json={**body, "confirmation": first.json()["confirmation"]})


@pytest.fixture
def notes() -> Iterator[httpx.Client]:
    with InspectorServer(_math()) as server, httpx.Client(base_url=server.url, timeout=30) as client:
        yield client


@pytest.fixture
def petstore(shop: str) -> Iterator[tuple[RestDriver, httpx.Client]]:
    with RestDriver(SPEC, base_url=shop) as driver, InspectorServer(driver) as server, \
            httpx.Client(base_url=server.url, timeout=30) as client:
        yield driver, client


def test_each_tool_is_shown_exactly_as_rendered_for_the_chosen_model_with_its_native_exports(
    petstore: tuple[RestDriver, httpx.Client],
) -> None:
    driver, client = petstore
    tool = driver.get_tool("addPet")
    assert tool is not None
    for model in ("gpt-4o", "claude-sonnet-4", "llama-3.1-70b-instruct"):
        shown = client.get("api/tool", params={"name": "addPet", "model": model}).json()
        assert shown["rendered"] == prompts.render_function_description([tool], model_name=model)
        assert shown["template"] == prompts.default_registry().select(model).name
    assert shown["native"] == {fmt: native.export_tool(tool, fmt) for fmt in ("openai", "anthropic", "gemini", "mcp")}
    assert shown["input_schema"]["required"] == ["name", "species"]
    assert shown["writes"] is True
    assert client.get("api/tool", params={"name": "listPets"}).json()["annotations"] == {"readOnlyHint": True, "idempotentHint": True}


def test_the_system_prompt_is_the_drivers_own_for_the_model_with_a_token_count(
    petstore: tuple[RestDriver, httpx.Client],
) -> None:
    driver, client = petstore
    prompt = client.get("api/prompt", params={"model": "gemini-2.0-flash"}).json()
    assert prompt["system_prompt"] == driver.get_driver_system_message("gemini-2.0-flash")
    assert prompt["template"] == "gemini"
    tiktoken = pytest.importorskip("tiktoken")
    if "problem" in client.get("api/overview").json()["tokens"]:
        pytest.skip("tiktoken's o200k_base is not available offline here")
    assert prompt["tokens"] == len(tiktoken.get_encoding("o200k_base").encode(prompt["system_prompt"]))


def test_search_answers_with_the_discovery_search_ranking(petstore: tuple[RestDriver, httpx.Client]) -> None:
    driver, client = petstore
    found = client.get("api/search", params={"q": "add a pet"}).json()
    expected = discovery.search(driver.list_tools(), "add a pet", limit=10)
    assert found["names"] == [row["name"] for row in expected["tools"]]
    assert found["names"][0] == "addPet"


def test_a_write_runs_only_once_confirmed_and_reaches_the_real_server(petstore: tuple[RestDriver, httpx.Client]) -> None:
    driver, client = petstore
    body = {"tool": "addPet", "arguments": {"name": "Rex", "species": "dog"}}
    refused = client.post("api/call", json=body)
    assert refused.status_code == 409 and refused.json()["tools"] == ["addPet"]
    assert [p["name"] for p in driver.call_tool("listPets", {})] == ["Tom"]
    assert refused.json()["preview"] == body
    done = client.post("api/call", json={**body, "confirmation": refused.json()["confirmation"]}).json()
    assert done["ok"] and done["result"] == {"id": 2, "name": "Rex", "species": "dog"}
    assert [p["name"] for p in driver.call_tool("listPets", {})] == ["Tom", "Rex"]


def test_call_tool_asks_first_when_the_tool_it_names_may_write() -> None:
    driver = mcs.FunctionDriver([add, delete_note], name="notes", description_mode="discovery")
    with InspectorServer(driver) as server, httpx.Client(base_url=server.url, timeout=30) as client:
        assert {"search_tools", "describe_tool", "call_tool"} <= {r["name"] for r in client.get("api/tools").json()["tools"]}
        read = client.post("api/call", json={"tool": "call_tool", "arguments": {"name": "add", "arguments": {"a": 2, "b": 5}}})
        assert read.json()["result"] == 7
        write = {"tool": "call_tool", "arguments": {"name": "delete_note", "arguments": {"title": "old"}}}
        refused = client.post("api/call", json=write)
        assert refused.status_code == 409 and refused.json()["tools"] == ["delete_note"]
        confirmation = refused.json()["confirmation"]
        assert client.post("api/call", json={**write, "confirmation": confirmation}).json()["result"] == "deleted old"


def test_a_secret_argument_never_comes_back_in_the_error_the_page_shows() -> None:
    @mcs.tool(annotations={"readOnlyHint": True},
              input_schema={"type": "object", "properties": {"token": {"type": "string", "format": "password"}},
                            "required": ["token"]})
    def sign_in(token: str) -> str:
        raise mcs.ExecutionError(f"the server refused token {token}")  # a peer echoing the value

    with InspectorServer(mcs.FunctionDriver([sign_in], name="auth")) as server, \
            httpx.Client(base_url=server.url, timeout=30) as client:
        failed = client.post("api/call", json={"tool": "sign_in", "arguments": {"token": "hunter2-very-secret"}}).json()
        assert (failed["ok"], failed["error"]) == (False, "EXECUTION_ERROR")
        assert "refused token [redacted]" in failed["message"] and "hunter2-very-secret" not in json.dumps(failed)


def test_the_pipelines_limits_answer_the_pages_calls_as_they_answer_a_model() -> None:
    driver = mcs.FunctionDriver([add], name="notes", rate_limit=RateLimit(calls=1, period=3600))
    with InspectorServer(driver) as server, httpx.Client(base_url=server.url, timeout=30) as client:
        assert client.post("api/call", json={"tool": "add", "arguments": {"a": 1, "b": 1}}).json()["result"] == 2
        limited = client.post("api/call", json={"tool": "add", "arguments": {"a": 1, "b": 1}}).json()
        assert (limited["ok"], limited["error"]) == (False, "POLICY_DENIED")
        assert "rate limit: 'mcs-inspect' made 1 calls" in limited["message"]
        # the refusal reaches the error hooks (an audit log records it), never the start hooks
        assert [(e["kind"], e["name"], e["outcome"]) for e in limited["events"]] == [
            ("hook", "on_execute_error", "POLICY_DENIED")]


def test_a_call_shows_the_error_the_model_reads_and_the_policy_and_hook_events(notes: httpx.Client) -> None:
    denied = _confirmed(notes, "api/call", {"tool": "delete_note", "arguments": {"title": "secret plan"}}).json()
    assert (denied["ok"], denied["error"]) == (False, "POLICY_DENIED")
    assert "secret notes stay" in denied["message"]
    assert [(e["kind"], e["name"], e["outcome"]) for e in denied["events"]] == [
        ("policy", "_math.<locals>.no_secret_notes", "deny"), ("hook", "on_execute_error", "POLICY_DENIED")]
    done = _confirmed(notes, "api/call", {"tool": "delete_note", "arguments": {"title": "groceries"}}).json()
    assert done["result"] == "deleted groceries" and done["duration_ms"] >= 0
    kinds = [(e["kind"], e["name"]) for e in done["events"]]
    assert kinds == [("policy", "_math.<locals>.no_secret_notes"), ("hook", "on_execute_start"), ("hook", "on_execute_end")]
    assert done["events"][2]["hooks"] == ["_math.<locals>.audit"]
    invalid = notes.post("api/call", json={"tool": "add", "arguments": {"a": "one", "b": 2}}).json()
    assert invalid["error"] == "INVALID_INPUT" and "'a'" in invalid["message"] and invalid["events"] == []


def test_a_pasted_reply_shows_each_call_its_kind_and_what_would_run_or_be_refused(notes: httpx.Client) -> None:
    reply = (
        '{"tool": "add", "arguments": {"a": 1, "b": 2}}\n'
        "Let me tidy up too.\n"
        "delete_note(title='secret plan')\n"
        '{"tool": "weather", "arguments": {"city": "Paris"}}'
    )
    analysis = notes.post("api/reply/analyse", json={"reply": reply}).json()
    rows = [(c["tool"], c["kind"], c["verdict"], c.get("error")) for c in analysis["calls"]]
    assert rows == [
        ("add", "explicit", "runs", None),
        ("delete_note", "weak", "refused", "POLICY_DENIED"),
        ("weather", "explicit", "passed through", None),
    ]
    assert analysis["needs_confirmation"] == ["delete_note"]
    glm = notes.post("api/reply/analyse", json={"reply": 'add\n{"a": 2, "b": 3}'}).json()  # GLM-4: a bare name, then JSON
    assert [(c["tool"], c["kind"], c["verdict"]) for c in glm["calls"]] == [("add", "guessed", "runs")]


def test_a_mentioned_call_is_no_call_and_a_cut_off_call_is_shown_as_an_attempt(notes: httpx.Client) -> None:
    mentioned = notes.post("api/reply/analyse", json={"reply": "I would not call delete_note(title='x') here."}).json()
    assert (mentioned["calls"], mentioned["damaged"], mentioned["runs"]) == ([], [], False)
    cut = notes.post("api/reply/analyse", json={"reply": '{"tool": "add", "arguments": {"a": 1, '}).json()
    assert cut["calls"] == [] and cut["runs"] is False
    assert [(d["tool"], d["damage"]) for d in cut["damaged"]] == [("add", "cut_off")]
    assert "cut off" in cut["damaged"][0]["message"] and "nothing runs" in cut["note"]


def test_a_reply_over_the_calls_per_response_cap_runs_nothing() -> None:
    driver = _math()
    driver.max_calls_per_response = 2
    reply = "\n".join(json.dumps({"tool": "add", "arguments": {"a": n, "b": 1}}) for n in range(3))
    with InspectorServer(driver) as server, httpx.Client(base_url=server.url, timeout=30) as client:
        analysis = client.post("api/reply/analyse", json={"reply": reply}).json()
        assert analysis["runs"] is False and "at most 2" in analysis["note"]
        ran = client.post("api/reply/run", json={"reply": reply}).json()
        assert (ran["ok"], ran["error"], ran["events"]) == (False, "INVALID_INPUT", [])


def test_a_pasted_reply_runs_as_process_llm_response_with_its_events(notes: httpx.Client) -> None:
    reply = '{"tool": "add", "arguments": {"a": 1, "b": 2}}\n{"tool": "add", "arguments": {"a": 3, "b": 4}}'
    ran = notes.post("api/reply/run", json={"reply": reply}).json()
    assert ran["ok"] and ran["result"] == [3, 7]
    assert [e["name"] for e in ran["events"] if e["kind"] == "hook"] == ["on_execute_start", "on_execute_end"] * 2
    assert len({e["request_id"] for e in ran["events"]}) == 2
    needs = notes.post("api/reply/run", json={"reply": '{"tool": "delete_note", "arguments": {"title": "x"}}'})
    assert needs.status_code == 409
    bad = notes.post("api/reply/run", json={"reply": '{"tool": "add", "arguments": {"a": 1}}'}).json()
    assert bad["error"] == "INVALID_INPUT"
    plain = notes.post("api/reply/run", json={"reply": "The answer is 3."}).json()
    assert plain == {"ok": True, "passed_through": True, "duration_ms": plain["duration_ms"], "events": []}


def test_a_json_provider_message_is_read_as_structured_calls(notes: httpx.Client) -> None:
    message = '{"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{\\"a\\": 2, \\"b\\": 2}"}}]}'
    analysis = notes.post("api/reply/analyse", json={"reply": message}).json()
    assert analysis["input"] == "json"
    assert [(c["tool"], c["id"], c["arguments"]) for c in analysis["calls"]] == [("add", "c1", {"a": 2, "b": 2})]


def test_bad_requests_get_a_clear_answer_and_nothing_runs(notes: httpx.Client) -> None:
    assert notes.post("api/call", content=b"{}", headers={"Content-Type": "text/plain"}).status_code == 415
    assert notes.post("api/call", content=b"{not json", headers={"Content-Type": "application/json"}).status_code == 400
    assert notes.post("api/call", json={"tool": "add", "arguments": [1, 2]}).status_code == 400
    missing = notes.post("api/call", json={"tool": "nope", "arguments": {}})
    assert missing.status_code == 404 and missing.json()["error"] == "UNKNOWN_TOOL"
    assert notes.post("api/call", content=b"x" * (3 * 1024 * 1024), headers={"Content-Type": "application/json"}).status_code == 413


def test_json_nested_too_deeply_is_400_and_the_page_keeps_working(notes: httpx.Client) -> None:
    deep = b'{"tool": "add", "arguments": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    for path in ("api/call", "api/reply/analyse", "api/reply/run"):
        answer = notes.post(path, content=deep, headers={"Content-Type": "application/json"})
        assert answer.status_code == 400 and answer.json()["error"] == "BAD_REQUEST", path
        assert "nested too deeply" in answer.json()["message"]
    assert notes.post("api/call", json={"tool": "add", "arguments": {"a": 1, "b": 2}}).json()["result"] == 3


def test_a_large_spec_is_listed_grouped_in_discovery_mode(corpus: Any) -> None:
    spec = corpus / "openapi" / "github_api.github.com_2020-08.json"
    with RestDriver(str(spec), base_url="http://127.0.0.1:9") as driver, InspectorServer(driver) as server, \
            httpx.Client(base_url=server.url, timeout=60) as client:
        overview = client.get("api/overview").json()
        assert (overview["mode"], overview["tools"]) == ("discovery", 623)
        rows = client.get("api/tools").json()["tools"]
        assert len(rows) == 623 + 3 and {r["group"] for r in rows} >= {"issues", "repos", "discovery meta-tools"}
        found = client.get("api/search", params={"q": "create a comment on an issue"}).json()
        model_sees = driver.call_tool("search_tools", {"query": "create a comment on an issue"})
        assert found["names"][:10] == [row["name"] for row in model_sees["tools"]]
        assert found["total"] == model_sees["total"] == len(found["names"]) > 10
        shown = client.get("api/tool", params={"name": "issues_create"}).json()
        assert shown["describe_tool"] == discovery.describe(driver.get_tool("issues_create"))  # type: ignore[arg-type]


class _Legacy(mcs.MCSDriver):
    """A driver that speaks only the bare MCS contract: the inspector cannot read its tools."""

    meta = mcs.DriverMeta(id="00000000-0000-4000-8000-0000000000aa", name="legacy", version="1.0",
                          protocol="custom", transport="none", spec_format="none")

    def __init__(self) -> None:
        self.ran: list[str] = []

    def get_function_description(self, model_name: str | None = None) -> str:
        return "wipe_disk(): erase everything"

    def get_driver_system_message(self, model_name: str | None = None) -> str:
        return self.get_function_description(model_name)

    def process_llm_response(self, llm_response: Any, *, context: mcs.AgentContext | None = None) -> Any:
        if "wipe_disk()" in str(llm_response):
            self.ran.append("wipe_disk")
            return "wiped"
        return llm_response


def test_a_toolbox_with_a_policy_refuses_to_chain_and_the_inspector_says_why() -> None:
    legacy = _Legacy()
    box = mcs.Toolbox({"notes": mcs.FunctionDriver([add], name="notes"), "legacy": legacy})
    box.controls.add_policy(lambda context, tool, arguments: mcs.PolicyDecision.allow())
    with InspectorServer(box) as server, httpx.Client(base_url=server.url, timeout=30) as client:
        refused = _confirmed(client, "api/reply/run", {"reply": "wipe_disk()"})
        assert refused.status_code == 409
        assert refused.json()["error"] == "CONFIGURATION" and "bare-contract" in refused.json()["message"]
    assert legacy.ran == []


def test_a_reply_left_to_a_chained_bare_driver_asks_first() -> None:
    legacy = _Legacy()
    box = mcs.Toolbox({"notes": mcs.FunctionDriver([add], name="notes"), "legacy": legacy})
    with InspectorServer(box) as server, httpx.Client(base_url=server.url, timeout=30) as client:
        analysis = client.post("api/reply/analyse", json={"reply": "wipe_disk()"}).json()
        assert analysis["needs_confirmation"] == ["legacy"]
        refused = client.post("api/reply/run", json={"reply": "wipe_disk()"})
        assert refused.status_code == 409 and refused.json()["tools"] == ["legacy"]
        assert legacy.ran == []
        assert _confirmed(client, "api/reply/run", {"reply": "wipe_disk()"}).json()["result"] == "wiped"
        assert legacy.ran == ["wipe_disk"]
        # A reply the toolbox's own tools claim never reaches the chained driver: nothing to ask.
        read = json.dumps({"tool": "add", "arguments": {"a": 1, "b": 2}})
        assert client.post("api/reply/analyse", json={"reply": read}).json()["needs_confirmation"] == []
        assert client.post("api/reply/run", json={"reply": read}).json()["result"] == 3
