"""@tool's rules, immutable metadata, and servers that share nothing."""

from __future__ import annotations

import copy
import json
import pickle
import threading
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

import mcs.server
from mcs.server import (
    AgentContext,
    ExecutionEvent,
    McpServer,
    PolicyDecision,
    ToolDefinitionError,
    ToolMetadata,
    tool,
)


class In(BaseModel):
    x: int


class Out(BaseModel):
    y: int


def test_public_names_are_exactly_these() -> None:
    assert sorted(mcs.server.__all__) == mcs.server.__all__
    assert {"McpServer", "tool", "AgentContext", "PolicyDecision", "ToolMetadata"} <= set(mcs.server.__all__)
    assert mcs.server.AgentContext is mcs.AgentContext
    assert mcs.server.PolicyDecision is mcs.PolicyDecision
    # what McpServer.run(limits=...) takes is public beside it
    assert mcs.server.ConnectionLimits is mcs.server.connections.ConnectionLimits


def test_a_decorated_tool_stays_callable_and_has_metadata() -> None:
    @tool(name="double", description="Twice x.", timeout_ms=250, idempotent=False)
    def double(req: In) -> Out:
        return Out(y=req.x * 2)

    assert double(In(x=2)) == Out(y=4)
    meta = double.metadata
    assert (meta.name, meta.description, meta.timeout_ms, meta.idempotent) == ("double", "Twice x.", 250, False)
    assert meta.input_schema["properties"]["x"]["type"] == "integer"
    assert meta.output_schema["required"] == ("y",)


def test_the_docstring_is_the_default_description() -> None:
    @tool(name="doc")
    def doc(req: In) -> Out:
        """From the docstring."""
        return Out(y=1)

    assert doc.metadata.description == "From the docstring."


async def _async(req: In) -> Out:
    return Out(y=1)


def _generator(req: In) -> Out:
    yield Out(y=1)  # type: ignore[misc]


def _plain_input(x: int) -> Out:
    return Out(y=x)


def _no_input() -> Out:
    return Out(y=1)


def _dict_output(req: In) -> dict[str, Any]:
    return {}


def _no_output_annotation(req: In):  # type: ignore[no-untyped-def]
    return Out(y=1)


def _varargs(req: In, *rest: Any) -> Out:
    return Out(y=1)


def _two_contexts(req: In, a: AgentContext, b: AgentContext) -> Out:
    return Out(y=1)


def _ok(req: In) -> Out:
    return Out(y=1)


@pytest.mark.parametrize(("func", "options", "rule", "fragment"), [
    (_async, {}, "synchronous", "MUST be synchronous"),
    (_generator, {}, "synchronous", "MUST be synchronous"),
    (_plain_input, {}, "input-model", "parameter 'x'"),
    (_no_input, {}, "input-model", "no parameter annotated with a BaseModel"),
    (_dict_output, {}, "output-model", "output MUST be a Pydantic BaseModel"),
    (_no_output_annotation, {}, "output-model", "annotated to return None"),
    (_varargs, {}, "signature", "*args or **kwargs"),
    (_two_contexts, {}, "signature", "AgentContext twice"),
    (_ok, {"name": "has space"}, "name", "must match"),
    (_ok, {"name": ""}, "name", "must match"),
    (_ok, {"timeout_ms": 0}, "timeout", "positive integer"),
    (_ok, {"timeout_ms": 1.5}, "timeout", "positive integer"),
    (_ok, {"timeout_ms": True}, "timeout", "positive integer"),
    (_ok, {"idempotent": "yes"}, "idempotent", "True or False"),
])
def test_a_tool_that_breaks_a_rule_is_refused_naming_the_rule(
    func: Any, options: dict[str, Any], rule: str, fragment: str
) -> None:
    with pytest.raises(ToolDefinitionError) as info:
        tool(**{"name": "t", **options})(func)
    assert info.value.rule == rule
    assert f"RFC-0001 rule '{rule}'" in str(info.value) and fragment in str(info.value)
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)


def test_a_server_refuses_undecorated_functions_and_duplicate_names() -> None:
    server = McpServer(name="s", version="1")
    with pytest.raises(ToolDefinitionError) as info:
        server.add_tool(_ok)  # type: ignore[arg-type]
    assert info.value.rule == "not-a-tool"
    server.add_tool(tool(name="ok")(_ok))
    with pytest.raises(ToolDefinitionError) as info:
        server.add_tool(tool(name="ok")(_ok))
    assert info.value.rule == "duplicate-name"


def test_metadata_cannot_be_changed_at_any_depth() -> None:
    server = McpServer(name="s", version="1")
    server.add_tool(tool(name="ok")(_ok))
    meta = server.tools[0]
    with pytest.raises(ValidationError):
        meta.timeout_ms = 5  # type: ignore[misc]
    with pytest.raises(TypeError):
        meta.input_schema["type"] = "array"
    with pytest.raises(TypeError):
        meta.input_schema["properties"]["x"]["type"] = "string"
    with pytest.raises(TypeError):
        meta.input_schema.update({"a": 1})
    with pytest.raises(AttributeError):
        meta.output_schema["required"].append("z")
    document = server.capabilities()
    document["tools"][0]["input_schema"]["type"] = "array"
    assert server.capabilities()["tools"][0]["input_schema"]["type"] == "object"
    assert server.execute("ok", {"x": 1}).status == 200


def test_metadata_survives_copy_and_pickle_and_is_hashable() -> None:
    meta = tool(name="ok")(_ok).metadata
    assert copy.deepcopy(meta) == meta
    assert pickle.loads(pickle.dumps(meta)) == meta
    assert hash(meta) == hash(copy.deepcopy(meta))
    assert ToolMetadata.model_validate(meta.model_dump(mode="json")) == meta


def test_two_servers_in_one_process_are_independent() -> None:
    first = McpServer(name="a", version="1")
    second = McpServer(name="b", version="2")
    shared = tool(name="ok")(_ok)
    first.add_tool(shared)
    second.add_tool(shared)
    seen: list[str] = []
    first.add_policy(lambda ctx, name, args: PolicyDecision.deny("only on a"))
    first.on_execute_start(lambda event: seen.append("a"))
    assert first.execute("ok", {"x": 1}).body()["error"] == "POLICY_DENIED"
    assert second.execute("ok", {"x": 1}).body()["result"] == {"y": 1}
    assert seen == ["a"]
    assert second.capabilities()["server"] == "b"
    first.close()
    assert second.execute("ok", {"x": 2}).ok


def test_hooks_see_a_frozen_event_with_private_copies_of_the_arguments_and_result() -> None:
    server = McpServer(name="s", version="1")
    server.add_tool(tool(name="ok")(_ok))
    events: list[ExecutionEvent] = []

    @server.on_execute_end
    def grab(event: ExecutionEvent) -> str:
        events.append(event)
        event.result["y"] = 999
        return "ignored"

    outcome = server.execute("ok", {"x": 1}, AgentContext(agent_id="me"))
    assert outcome.result == {"y": 1}
    with pytest.raises(AttributeError):
        events[0].result = None  # type: ignore[misc]
    assert events[0].arguments == {"x": 1} and json.dumps(events[0].arguments) == '{"x": 1}'
    assert events[0].context.agent_id == "me" and events[0].duration_ms is not None


@pytest.mark.parametrize("ends", ["ok", "fails"])
def test_every_terminal_hook_has_its_own_arguments_even_the_same_hook_twice(ends: str) -> None:
    server = McpServer(name="s", version="1")
    server.add_tool(tool(name="ok")(_ok))
    seen: list[ExecutionEvent] = []

    def grab(event: ExecutionEvent) -> None:
        event.arguments["x"] = len(seen)  # a hook may scribble on its own copy
        seen.append(event)

    for _ in range(3):
        server.on_execute_end(grab)
        server.on_execute_error(grab)
    outcome = server.execute("ok", {"x": 1} if ends == "ok" else {"x": "one"})
    assert outcome.ok is (ends == "ok") and len(seen) == 3
    assert len({id(event.arguments) for event in seen}) == 3 and len({id(event) for event in seen}) == 3
    assert [event.arguments["x"] for event in seen] == [0, 1, 2]  # none saw another's change


def test_a_policy_that_raises_or_answers_nonsense_denies() -> None:
    server = McpServer(name="s", version="1")
    server.add_tool(tool(name="ok")(_ok))
    server.add_policy(lambda ctx, name, args: "yes")
    assert server.execute("ok", {"x": 1}).body()["error"] == "POLICY_DENIED"
    other = McpServer(name="t", version="1")
    other.add_tool(tool(name="ok")(_ok))

    @other.add_policy
    def broken(ctx: AgentContext, name: str, args: Any) -> PolicyDecision:
        raise KeyError("oops")

    body = other.execute("ok", {"x": 1}).body()
    assert body["error"] == "POLICY_DENIED" and "could not decide (KeyError)" in body["message"]


def test_policies_receive_the_validated_arguments_as_a_dict_copy() -> None:
    server = McpServer(name="s", version="1")
    server.add_tool(tool(name="ok")(_ok))
    seen: list[Any] = []

    @server.add_policy
    def look(ctx: AgentContext, name: str, args: dict[str, Any]) -> PolicyDecision:
        seen.append((name, type(args), json.dumps(args)))
        args["x"] = "changed"
        return PolicyDecision.allow()

    assert server.execute("ok", {"x": 7}).result == {"y": 1}
    assert seen == [("ok", dict, '{"x": 7}')]


def test_server_options_are_checked() -> None:
    with pytest.raises(ValueError, match="transport must be one of"):
        McpServer(name="s", version="1", transport="carrier-pigeon")
    with pytest.raises(ValueError, match="non-empty name"):
        McpServer(name="", version="1")


def test_overrun_work_is_abandoned_not_stopped_and_its_result_discarded() -> None:
    release = threading.Event()
    finished = threading.Event()
    effects: list[str] = []

    @tool(name="slow", timeout_ms=50, idempotent=False)
    def slow(req: In) -> Out:
        release.wait(5)
        effects.append("side effect")
        finished.set()
        return Out(y=req.x)

    server = McpServer(name="s", version="1")
    server.add_tool(slow)
    hooks: list[str] = []
    server.on_execute_start(lambda e: hooks.append("start"))
    server.on_execute_end(lambda e: hooks.append("end"))
    server.on_execute_error(lambda e: hooks.append(f"error:{e.error.code.value}"))

    outcome = server.execute("slow", {"x": 1})
    assert outcome.status == 504 and outcome.body()["error"] == "TIMEOUT"
    assert "not idempotent and may still complete" in outcome.body()["message"]
    assert hooks == ["start", "error:TIMEOUT"] and effects == []
    release.set()
    assert finished.wait(5)
    assert effects == ["side effect"]  # the work went on after the caller saw TIMEOUT
    assert hooks == ["start", "error:TIMEOUT"]  # ...and its result reached no one
    server.close()


def test_a_result_json_cannot_carry_is_an_execution_error_seen_by_the_error_hook() -> None:
    class Ratio(BaseModel):
        values: list[float]

    @tool(name="ratio")
    def ratio(req: In) -> Ratio:
        return Ratio(values=[1.0, float("nan")])

    server = McpServer(name="s", version="1")
    server.add_tool(ratio)
    errors: list[str] = []
    server.on_execute_error(lambda e: errors.append(e.error.code.value))
    body = server.execute("ratio", {"x": 1}).body()
    assert body == {"error": "EXECUTION_ERROR", "message": "ratio returned NaN or Infinity, which JSON cannot carry."}
    assert errors == ["EXECUTION_ERROR"]


def test_results_are_revalidated_and_dumped_as_their_models_own_methods_would() -> None:
    """The output check calls pydantic's validator and serializer directly only for a model
    that keeps pydantic's model_validate and model_dump; an override is still honoured."""
    from datetime import date

    class Dated(BaseModel):
        day: date
        tags: tuple[str, ...] = ()

    class Shouting(BaseModel):
        text: str

        def model_dump(self, **kwargs: Any) -> dict[str, Any]:
            data = super().model_dump(**kwargs)
            return {**data, "text": data["text"].upper()}

    class Wider(Dated):
        note: str = "extra"

    @tool(name="plain")
    def plain(req: In) -> Dated:
        return Dated(day=date(2026, 1, 2), tags=("a",))

    @tool(name="subclass")
    def subclass(req: In) -> Dated:
        return Wider(day=date(2026, 1, 2))

    @tool(name="constructed")
    def constructed(req: In) -> Dated:
        return Dated.model_construct(day="not a date")  # type: ignore[arg-type]

    server = McpServer(name="s", version="1")
    for made in (plain, subclass, constructed):
        server.add_tool(made)
    assert server.execute("plain", {"x": 1}).result == {"day": "2026-01-02", "tags": ["a"]}
    assert server.execute("subclass", {"x": 1}).result == {"day": "2026-01-02", "tags": []}
    refused = server.execute("constructed", {"x": 1}).body()
    assert refused["error"] == "EXECUTION_ERROR" and "does not match its output schema: field 'day'" in refused["message"]

    @tool(name="shout")
    def shout(req: In) -> Shouting:
        return Shouting(text="hi")

    server.add_tool(shout)
    assert server.execute("shout", {"x": 1}).result == {"text": "HI"}  # its model_dump was used


def test_server_tool_declares_and_registers_with_models_defined_locally() -> None:
    class Name(BaseModel):
        name: str

    class Greeting(BaseModel):
        text: str

    server = McpServer(name="s", version="1")

    @server.tool(name="greet", timeout_ms=300)
    def greet(req: Name, ctx: AgentContext) -> Greeting:
        return Greeting(text=f"hello {req.name} from {ctx.agent_id}")

    assert server.tools[0].timeout_ms == 300
    outcome = server.execute("greet", {"name": "ada"}, AgentContext(agent_id="bot"))
    assert outcome.result == {"text": "hello ada from bot"}


def test_importing_the_sdk_does_not_import_the_http_stack() -> None:
    import subprocess
    import sys

    code = ("import sys, mcs.server; "
            "print(sorted(m for m in ('starlette', 'uvicorn', 'websockets') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[]"


async def test_aexecute_runs_the_whole_lifecycle_with_one_thread_hand_off() -> None:
    threads: list[str] = []

    @tool(name="where", timeout_ms=1000)
    def where(req: In) -> Out:
        threads.append(threading.current_thread().name)
        return Out(y=req.x)

    server = McpServer(name="s", version="1")
    server.add_tool(where)
    hooks: list[str] = []
    server.on_execute_start(lambda e: hooks.append(f"start:{threading.current_thread().name}"))
    server.on_execute_end(lambda e: hooks.append("end"))
    outcome = await server.aexecute("where", {"x": 4})
    assert outcome.result == {"y": 4}
    assert threads[0].startswith("mcs-server-s")
    assert hooks == [f"start:{threading.current_thread().name}", "end"]  # on the event loop's thread
    refused = await server.aexecute("where", {"x": "four"})
    assert refused.status == 400 and refused.body()["error"] == "INVALID_INPUT"
    missing = await server.aexecute("nowhere", {})
    assert missing.body()["error"] == "TOOL_NOT_FOUND"
    server.close()


async def test_aexecute_enforces_timeout_ms_and_abandons_the_overrun() -> None:
    release = threading.Event()

    @tool(name="slow", timeout_ms=50, idempotent=True)
    def slow(req: In) -> Out:
        release.wait(5)
        return Out(y=req.x)

    server = McpServer(name="s", version="1")
    server.add_tool(slow)
    errors: list[str] = []
    server.on_execute_error(lambda e: errors.append(e.error.code.value))
    try:
        outcome = await server.aexecute("slow", {"x": 1})
    finally:
        release.set()
    assert outcome.status == 504 and "within its timeout of 50 ms" in outcome.body()["message"]
    assert "retrying is safe" in outcome.body()["message"]
    assert errors == ["TIMEOUT"]
    server.close()


async def test_a_tool_that_raises_timeout_error_itself_is_not_reported_as_over_its_deadline() -> None:
    @tool(name="gives_up", timeout_ms=5000)
    def gives_up(req: In) -> Out:
        raise TimeoutError("the upstream did not answer")

    server = McpServer(name="s", version="1")
    server.add_tool(gives_up)
    outcome = await server.aexecute("gives_up", {"x": 1})
    assert outcome.body()["error"] == "TIMEOUT"
    assert "within its timeout" not in outcome.body()["message"]
    server.close()
