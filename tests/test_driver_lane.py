"""The lane: a driver with nothing configured around its calls runs them without the
pipeline's frames, and gives exactly what the pipeline gives; anything configured (a
policy, a hook, a limit) sends the next call through the pipeline."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from typing import Any

import pytest

from mcs.context import NO_SESSION, AgentContext, PolicyDecision, _spare_ids
from mcs.driver import ToolDriver
from mcs.errors import ToolCallError
from mcs.limits import RateLimit
from mcs.pipeline import ExecutionEvent, Invocation
from mcs.tools import Tool
from mcs.validation import ArgumentValidator

SCHEMA = {
    "type": "object",
    "properties": {
        "amount": {"type": "integer", "minimum": 0, "maximum": 100},
        "note": {"type": "string"},
        "password": {"type": "string", "format": "password"},
        "outcome": {"type": "string", "enum": ["ok", "refused", "crash", "timeout", "leak"]},
    },
    "required": ["amount"],
}


class Ledger(ToolDriver):
    """Enforces its own deadlines (so its calls may take the lane); records who ran them."""

    enforces_deadline = True
    protocol, transport, spec_format = "test", "memory", "none"

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.seen: list[tuple[str, dict[str, Any], str, str, bool]] = []

    def _list_tools(self) -> Iterable[Tool]:
        return [Tool(name="transfer", input_schema=SCHEMA)]

    def _call_tool(self, invocation: Invocation) -> Any:
        arguments = invocation.arguments
        self.seen.append((invocation.tool.name, dict(arguments), invocation.context.agent_id,
                          threading.current_thread().name, invocation.deadline is not None))
        outcome = arguments.get("outcome", "ok")
        if outcome == "refused":
            raise ToolCallError(f"refused {arguments.get('password')}", code="POLICY_DENIED")
        if outcome == "crash":
            raise RuntimeError(f"internal state {arguments.get('password')}")
        if outcome == "timeout":
            raise TimeoutError("slow")
        if outcome == "leak":
            raise ToolCallError(f"the password was {arguments.get('password')}")
        return {"moved": arguments["amount"], "remaining": invocation.remaining() is not None}


def _allow(context: AgentContext, tool: str, args: dict[str, Any]) -> PolicyDecision:
    return PolicyDecision.allow()


CALLS: list[dict[str, Any]] = [
    {"amount": 5},
    {"amount": "7"},  # repaired to 7
    {"amount": 500},  # out of bounds: INVALID_INPUT before the tool
    {"amount": 1, "extra": True},  # unknown argument: INVALID_INPUT
    {"amount": 1, "outcome": "refused", "password": "hunter2"},
    {"amount": 1, "outcome": "crash", "password": "hunter2"},
    {"amount": 1, "outcome": "timeout"},
    {"amount": 1, "outcome": "leak", "password": "hunter2"},
]


def _outcome(run: Any) -> tuple[str, Any]:
    try:
        return "result", run()
    except ToolCallError as error:
        return "error", (type(error).__name__, error.code, error.message, error.tool, type(error.__cause__).__name__)


def _both_ways(call: Any) -> tuple[list[Any], list[Any], Ledger, Ledger]:
    """Every call of CALLS on a driver with empty controls (the lane) and on one with an
    allow-everything policy (the pipeline): what each returned or raised."""
    lane, piped = Ledger(), Ledger()
    piped.add_policy(_allow)
    return ([_outcome(lambda a=a: call(lane, a)) for a in CALLS],
            [_outcome(lambda a=a: call(piped, a)) for a in CALLS], lane, piped)


@pytest.mark.parametrize("way", ["process_llm_response", "call_tool"])
def test_the_lane_gives_the_results_and_errors_the_pipeline_gives(way: str) -> None:
    def call(driver: Ledger, arguments: dict[str, Any]) -> Any:
        if way == "call_tool":
            return driver.call_tool("transfer", arguments, context=AgentContext(agent_id="a1"))
        text = json.dumps({"tool": "transfer", "arguments": arguments})
        return driver.process_llm_response(text, context=AgentContext(agent_id="a1"))

    lane, piped, lane_driver, piped_driver = _both_ways(call)
    assert lane == piped
    assert [kind for kind, _ in lane] == ["result", "result", "error", "error", "error", "error", "error", "error"]
    assert lane[1][1] == {"moved": 7, "remaining": True}
    assert lane[5][1][:2] == ("ExecutionError", "EXECUTION_ERROR") and "hunter2" not in lane[5][1][2]
    assert lane[6][1][1] == "TIMEOUT"
    assert "hunter2" not in lane[7][1][2]  # secrets scrubbed from the tool's own error
    assert lane_driver.seen == piped_driver.seen  # the same calls reached the tool, on the caller's thread
    assert {seen[3] for seen in lane_driver.seen} == {threading.current_thread().name}


def test_a_hook_added_after_calls_sees_the_next_call() -> None:
    driver = Ledger()
    call = json.dumps({"tool": "transfer", "arguments": {"amount": 3}})
    assert driver.process_llm_response(call) == {"moved": 3, "remaining": True}
    assert driver.call_tool("transfer", {"amount": 3}) == {"moved": 3, "remaining": True}
    events: list[ExecutionEvent] = []
    driver.on_execute_end(events.append)
    driver.process_llm_response(call)
    driver.call_tool("transfer", {"amount": 4})
    assert [(e.tool, e.arguments, e.result) for e in events] == [
        ("transfer", {"amount": 3}, {"moved": 3, "remaining": True}),
        ("transfer", {"amount": 4}, {"moved": 4, "remaining": True}),
    ]


def test_a_policy_or_a_limit_added_after_calls_refuses_the_next_call() -> None:
    driver = Ledger()
    call = json.dumps({"tool": "transfer", "arguments": {"amount": 3}})
    driver.process_llm_response(call)
    driver.controls.policies.append(lambda context, tool, args: PolicyDecision.deny("closed"))
    with pytest.raises(ToolCallError) as denied:
        driver.process_llm_response(call)
    assert denied.value.code == "POLICY_DENIED"
    driver.controls.policies.clear()
    assert driver.process_llm_response(call) == {"moved": 3, "remaining": True}
    driver.controls.rate_limit = RateLimit(calls=1)
    driver.call_tool("transfer", {"amount": 1})
    with pytest.raises(ToolCallError) as limited:
        driver.call_tool("transfer", {"amount": 1})
    assert limited.value.code == "POLICY_DENIED"
    assert len(driver.seen) == 3


def test_a_driver_without_its_own_deadlines_keeps_the_worker_thread_deadline() -> None:
    class Threaded(Ledger):
        enforces_deadline = False

    driver = Threaded()
    driver.call_tool("transfer", {"amount": 1})
    driver.call_tool("transfer", {"amount": 2})
    assert [seen[3].startswith("mcs-tool") for seen in driver.seen] == [True, True]


class _Rewriting(ArgumentValidator):
    """A driver's own validator that rewrites the arguments before the core's checks."""

    def validate(self, arguments: Any) -> dict[str, Any]:
        return super().validate({key.lower(): value for key, value in arguments.items()})


class RewritingLedger(Ledger):
    def _validator(self, tool: Tool) -> ArgumentValidator:
        return _Rewriting(tool.input_schema, tool.name)


@pytest.mark.parametrize("controlled", [False, True])
def test_a_drivers_own_validator_still_sees_a_canonical_call(controlled: bool) -> None:
    driver = RewritingLedger()
    if controlled:  # through the pipeline rather than the lane
        driver.controls.add_policy(lambda context, tool, args: PolicyDecision.allow())
    response = json.dumps({"tool": "transfer", "arguments": {"AMOUNT": 7}})
    assert driver.process_llm_response(response)["moved"] == 7  # "AMOUNT" alone lacks the required "amount"
    assert driver.seen[-1][1] == {"amount": 7}


class AskedLedger(Ledger):
    """Resolves names its own way (as a driver whose listing can change between calls does)."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.asked: list[str] = []

    def get_tool(self, name: str) -> Tool | None:
        self.asked.append(name)
        return super().get_tool(name)


def test_a_driver_that_resolves_names_its_own_way_is_asked_on_every_call() -> None:
    driver = AskedLedger()
    call = json.dumps({"tool": "transfer", "arguments": {"amount": 3}})
    for _ in range(2):
        assert driver.process_llm_response(call) == {"moved": 3, "remaining": True}
        assert driver.call_tool("transfer", {"amount": 2}) == {"moved": 2, "remaining": True}
    assert driver.asked.count("transfer") >= 4
    assert len(driver.seen) == 4


class GrowingLedger(Ledger):
    """Its tool's bound is read from an attribute at listing time."""

    maximum = 10

    def _list_tools(self) -> Iterable[Tool]:
        schema = {"type": "object", "properties": {"amount": {"type": "integer", "maximum": self.maximum}},
                  "required": ["amount"]}
        return [Tool(name="transfer", input_schema=schema)]


def test_after_refresh_tools_a_call_is_checked_against_the_tool_listed_now() -> None:
    driver = GrowingLedger()
    call = json.dumps({"tool": "transfer", "arguments": {"amount": 50}})
    with pytest.raises(ToolCallError) as refused:
        driver.process_llm_response(call)
    assert refused.value.code == "INVALID_INPUT"
    assert driver.process_llm_response(json.dumps({"tool": "transfer", "arguments": {"amount": 5}}))["moved"] == 5
    driver.maximum = 100
    driver.refresh_tools()
    assert driver.process_llm_response(call) == {"moved": 50, "remaining": True}
    assert driver.call_tool("transfer", {"amount": 60})["moved"] == 60
    driver.maximum = 10
    driver.refresh_tools()
    with pytest.raises(ToolCallError) as again:
        driver.call_tool("transfer", {"amount": 60})
    assert again.value.code == "INVALID_INPUT"


class Reader(ToolDriver):
    """A tool that reads its call's context twice, or (``note: "quiet"``) never."""

    enforces_deadline = True
    protocol, transport, spec_format = "test", "memory", "none"

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.contexts: list[tuple[AgentContext, bool]] = []

    def _list_tools(self) -> Iterable[Tool]:
        return [Tool(name="look", input_schema={"type": "object", "properties": {"note": {"type": "string"}}})]

    def _call_tool(self, invocation: Invocation) -> Any:
        assert isinstance(invocation, Invocation)
        if invocation.arguments.get("note") != "quiet":
            self.contexts.append((invocation.context, invocation.context is invocation.context))
        return "looked"


@pytest.mark.parametrize("way", ["process_llm_response", "call_tool"])
def test_a_lane_call_without_a_context_gets_its_own_when_the_tool_reads_it(way: str) -> None:
    driver = Reader()
    for _ in range(2):
        if way == "call_tool":
            assert driver.call_tool("look", {}) == "looked"
        else:
            assert driver.process_llm_response('{"tool": "look", "arguments": {}}') == "looked"
    (first, same_first), (second, same_second) = driver.contexts
    assert same_first and same_second  # one context per call, however often it is read
    assert first.agent_id == second.agent_id == "anonymous" and first.session is NO_SESSION
    assert len(first.request_id) == 32 and int(first.request_id, 16) >= 0
    assert first.request_id != second.request_id
    given = AgentContext(agent_id="a1")
    driver.call_tool("look", {}, context=given)
    assert driver.contexts[-1][0] is given


def test_a_lane_call_whose_context_nobody_reads_draws_no_request_id() -> None:
    driver = Reader()
    while len(_spare_ids) < 2:  # request ids drawn ahead, enough for the last call
        AgentContext()
    before = len(_spare_ids)
    assert driver.call_tool("look", {"note": "quiet"}) == "looked"
    assert driver.process_llm_response('{"tool": "look", "arguments": {"note": "quiet"}}') == "looked"
    assert len(_spare_ids) == before
    driver.on_execute_end(lambda event: None)  # the pipeline reads the context: each call has one
    driver.call_tool("look", {"note": "quiet"})
    assert len(_spare_ids) == before - 1
