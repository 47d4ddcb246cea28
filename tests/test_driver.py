"""The driver contract as ToolDriver implements it: chaining, several calls, resolution,
descriptions, outcomes, async twins and capabilities."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from typing import Any

import pytest

from mcs.context import AgentContext, PolicyDecision
from mcs.driver import CallOutcome, DriverMeta, MCSDriver, ToolDriver
from mcs.errors import (
    ErrorCode,
    ExecutionError,
    InvalidInputError,
    PolicyDeniedError,
    ToolNotFoundError,
    ToolTimeoutError,
)
from mcs.parsing import parse_tool_calls
from mcs.pipeline import Invocation
from mcs.tools import Tool

CREDIT = Tool(
    name="credit",
    description="Credit an account.",
    input_schema={
        "type": "object",
        "properties": {"account": {"type": "string"}, "amount": {"type": "integer", "minimum": 1}},
        "required": ["account", "amount"],
    },
)
BALANCE = Tool(name="balance", description="Read an account's balance.",
               input_schema={"type": "object", "properties": {"account": {"type": "string"}},
                             "required": ["account"]})
PLAY = Tool(name="spotify_play", description="Play a track.", meta={"original_name": "spotify.play"})


class Ledger(ToolDriver):
    """An in-memory bank: records every call that reaches the driver."""

    def __init__(self, **options: Any) -> None:
        options.setdefault("timeout", None)
        super().__init__(**options)
        self.meta = DriverMeta(
            id="5b0c8a9e-3e2f-4b7a-9c1d-2f6e8a7b9c0d", name="ledger", version="1.0",
            protocol="Python", transport="in-process", spec_format="Python",
            capabilities=("healthcheck", "status"),
        )
        self.accounts: dict[str, int] = {"alice": 10}
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.threads: list[str] = []
        self.release = threading.Event()

    def _list_tools(self) -> Iterable[Tool]:
        return [CREDIT, BALANCE, PLAY, Tool(name="stall", description="Never returns in time.")]

    def _call_tool(self, invocation: Invocation) -> Any:
        name = invocation.tool.unprefixed_name
        self.calls.append((name, invocation.arguments))
        self.threads.append(threading.current_thread().name)
        args = invocation.arguments
        if name == "credit":
            self.accounts[args["account"]] = self.accounts.get(args["account"], 0) + args["amount"]
            return self.accounts[args["account"]]
        if name == "balance":
            if args["account"] not in self.accounts:
                raise KeyError(args["account"])
            return self.accounts[args["account"]]
        if name == "stall":
            self.release.wait(5)
            return "late"
        return "playing"

    def healthcheck(self) -> dict[str, str]:
        return {"status": "ok"}


def call(tool_name: str, /, **arguments: Any) -> str:
    return json.dumps({"tool": tool_name, "arguments": arguments})


TWO_CALLS = json.dumps([
    {"tool": "credit", "arguments": {"account": "bob", "amount": 5}},
    {"tool": "balance", "arguments": {"account": "alice"}},
])
TWO_CALLS_ONE_BAD = json.dumps([
    {"tool": "credit", "arguments": {"account": "bob", "amount": 5}},
    {"tool": "credit", "arguments": {"account": "bob", "amount": "lots"}},
])
OPENAI_MESSAGE = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "credit", "arguments": '{"account": "bob", "amount": 2}'}},
        {"id": "call_2", "type": "function",
         "function": {"name": "balance", "arguments": '{"account": "bob"}'}},
    ],
}
needs_several_calls = pytest.mark.skipif(
    len(parse_tool_calls(TWO_CALLS)) != 2 or len(parse_tool_calls(OPENAI_MESSAGE)) != 2,
    reason="the parser in this tree does not read several calls in one response yet",
)


@pytest.fixture
def ledger() -> Ledger:
    return Ledger()


# ---------------------------------------------------------------------- chaining


@pytest.mark.parametrize(
    "response",
    ["Alice has 10 coins.", "", {"role": "assistant", "content": "done"}, call("unknown_tool", x=1)],
    ids=["prose", "empty", "message", "unknown-tool"],
)
def test_a_response_without_a_call_for_this_driver_is_the_same_object(
    ledger: Ledger, response: Any
) -> None:
    assert ledger.process_llm_response(response) is response
    assert ledger.run_llm_response(response) == []
    assert ledger.calls == []


async def test_the_async_twin_keeps_the_chaining_rule(ledger: Ledger) -> None:
    response = "no call here"
    assert await ledger.aprocess_llm_response(response) is response


def test_drivers_chain_on_the_same_object() -> None:
    first, second = Ledger(prefix="a"), Ledger(prefix="b")
    response = call("b_credit", account="carol", amount=3)
    passed = first.process_llm_response(response)
    assert passed is response
    assert second.process_llm_response(passed) == 3
    assert first.calls == [] and second.calls == [("credit", {"account": "carol", "amount": 3})]


def test_on_unknown_tool_error_raises_tool_not_found_with_suggestions() -> None:
    ledger = Ledger(on_unknown_tool="error")
    with pytest.raises(ToolNotFoundError) as info:
        ledger.process_llm_response(call("credt", account="a", amount=1))
    assert info.value.code is ErrorCode.TOOL_NOT_FOUND
    assert "Did you mean credit?" in info.value.message
    assert "Available tools: credit, balance, spotify_play, stall" in info.value.message
    prose = "no call"
    assert ledger.process_llm_response(prose) is prose


def test_a_call_to_a_driver_without_tools_says_there_are_none() -> None:
    from mcs import FunctionDriver

    with pytest.raises(ToolNotFoundError, match=r"Available tools: none\.$"):
        FunctionDriver([]).call_tool("credit", {})


def test_bad_option_values_are_refused() -> None:
    for options in ({"timeout": 0}, {"description_mode": "all"}, {"on_unknown_tool": "ignore"}):
        with pytest.raises(ValueError):
            Ledger(**options)


# ---------------------------------------------------------------------- one call


def test_a_canonical_call_returns_the_raw_result(ledger: Ledger) -> None:
    assert ledger.process_llm_response(call("credit", account="alice", amount=5)) == 15
    assert ledger.calls == [("credit", {"account": "alice", "amount": 5})]


def test_a_structured_call_with_parameters_alias_runs(ledger: Ledger) -> None:
    assert ledger.process_llm_response({"name": "balance", "parameters": {"account": "alice"}}) == 10


def test_repaired_arguments_reach_the_driver(ledger: Ledger) -> None:
    ledger.process_llm_response(call("credit", account="alice", amount="7"))
    assert ledger.calls == [("credit", {"account": "alice", "amount": 7})]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"account": "alice"}, "missing required argument 'amount'"),
        ({"account": "alice", "amount": "seven"}, "argument 'amount'"),
        ({"account": "alice", "amount": 0}, "argument 'amount'"),
        ({"account": "alice", "amount": 1, "memo": "x"}, "unexpected argument(s) 'memo'"),
    ],
)
def test_invalid_arguments_raise_invalid_input_and_run_nothing(
    ledger: Ledger, arguments: dict[str, Any], expected: str
) -> None:
    with pytest.raises(InvalidInputError) as info:
        ledger.process_llm_response(call("credit", **arguments))
    assert expected in info.value.message
    assert info.value.tool == "credit"
    assert ledger.calls == []


def test_a_failing_tool_raises_execution_error_naming_the_exception_type_only(ledger: Ledger) -> None:
    with pytest.raises(ExecutionError, match=r"balance failed unexpectedly \(KeyError\)") as info:
        ledger.call_tool("balance", {"account": "nobody"})
    assert "nobody" not in info.value.message


def test_a_sync_driver_call_over_its_timeout_raises_timeout() -> None:
    ledger = Ledger(timeout=0.05)
    try:
        with pytest.raises(ToolTimeoutError):
            ledger.call_tool("stall")
    finally:
        ledger.release.set()
    assert ledger.threads[0].startswith("mcs-tool")


def test_call_tool_runs_one_tool_by_name_with_context(ledger: Ledger) -> None:
    seen: list[AgentContext] = []
    ledger.add_policy(lambda ctx, tool, args: seen.append(ctx) or PolicyDecision.allow())
    context = AgentContext(agent_id="teller")
    assert ledger.call_tool("credit", {"account": "alice", "amount": 1}, context=context) == 11
    assert seen == [context]


def test_prepare_resolves_and_validates_without_running(ledger: Ledger) -> None:
    from mcs.tools import ToolCall

    invocation = ledger.prepare(ToolCall("credit", {"account": "a", "amount": "2"}))
    assert invocation.tool is ledger.get_tool("credit")
    assert invocation.arguments == {"account": "a", "amount": 2}
    assert invocation.deadline is None
    assert ledger.calls == []
    with pytest.raises(ToolNotFoundError):
        ledger.prepare(ToolCall("nope", {}))


def test_a_subclass_that_prepares_calls_itself_prepares_a_single_call_from_the_model_too() -> None:
    from mcs.tools import ToolCall

    class Tagged(Ledger):
        def prepare(self, call: ToolCall, context: AgentContext | None = None) -> Invocation:
            if call.arguments.get("account") == "mallory":
                raise InvalidInputError("mallory is not served here", tool=call.name)
            return super().prepare(call, AgentContext(agent_id="tagged"))

    seen: list[str] = []
    tagged = Tagged()
    tagged.add_policy(lambda ctx, tool, args: seen.append(ctx.agent_id) or PolicyDecision.allow())
    assert tagged.process_llm_response(call("credit", account="alice", amount=1)) == 11
    with pytest.raises(InvalidInputError, match="mallory"):
        tagged.process_llm_response(call("credit", account="mallory", amount=1))
    assert seen == ["tagged"] and tagged.calls == [("credit", {"account": "alice", "amount": 1})]


def test_a_policy_on_the_driver_denies_before_the_driver_runs(ledger: Ledger) -> None:
    @ledger.add_policy
    def no_credit(ctx: AgentContext, tool: str, args: Any) -> PolicyDecision:
        return PolicyDecision.deny("credits are frozen") if tool == "credit" else PolicyDecision.allow()

    with pytest.raises(PolicyDeniedError, match="credits are frozen"):
        ledger.process_llm_response(call("credit", account="alice", amount=1))
    assert ledger.process_llm_response(call("balance", account="alice")) == 10
    assert ledger.calls == [("balance", {"account": "alice"})]


def test_hooks_registered_on_the_driver_see_each_call(ledger: Ledger) -> None:
    started: list[str] = []
    ended: list[Any] = []
    ledger.on_execute_start(lambda event: started.append(event.tool))
    ledger.on_execute_end(lambda event: ended.append(event.result))
    ledger.on_execute_error(lambda event: ended.append(event.error))
    ledger.process_llm_response(call("balance", account="alice"))
    with pytest.raises(ExecutionError):
        ledger.process_llm_response(call("balance", account="nobody"))
    assert started == ["balance", "balance"]
    assert ended[0] == 10 and isinstance(ended[1], ExecutionError)


# ---------------------------------------------------------------------- several calls


@needs_several_calls
def test_several_calls_return_a_list_in_order(ledger: Ledger) -> None:
    assert ledger.process_llm_response(TWO_CALLS) == [5, 10]
    assert [name for name, _ in ledger.calls] == ["credit", "balance"]


@needs_several_calls
def test_openai_tool_calls_run_in_order(ledger: Ledger) -> None:
    assert ledger.process_llm_response(OPENAI_MESSAGE) == [2, 2]


@needs_several_calls
def test_one_bad_call_in_a_response_runs_none(ledger: Ledger) -> None:
    with pytest.raises(InvalidInputError, match="amount"):
        ledger.process_llm_response(TWO_CALLS_ONE_BAD)
    assert ledger.calls == []
    assert ledger.accounts == {"alice": 10}


@needs_several_calls
def test_outcomes_report_each_call_and_still_run_the_good_ones(ledger: Ledger) -> None:
    outcomes = ledger.run_llm_response(TWO_CALLS_ONE_BAD)
    assert [o.ok for o in outcomes] == [True, False]
    assert outcomes[0].result == 5
    assert outcomes[1].error is not None and outcomes[1].error.code is ErrorCode.INVALID_INPUT
    assert outcomes[1].to_dict()["error"] == "INVALID_INPUT"


@needs_several_calls
def test_outcomes_carry_provider_call_ids(ledger: Ledger) -> None:
    outcomes = ledger.run_llm_response(OPENAI_MESSAGE)
    assert [o.call.id for o in outcomes] == ["call_1", "call_2"]
    assert outcomes[0].to_dict() == {"tool": "credit", "id": "call_1", "result": 2}


@needs_several_calls
def test_each_call_of_a_response_gets_its_own_request_id(ledger: Ledger) -> None:
    seen: list[str] = []
    ledger.on_execute_start(lambda event: seen.append(event.context.request_id))
    ledger.process_llm_response(TWO_CALLS, context=AgentContext(request_id="r1"))
    assert seen == ["r1", "r1.1"]


# ---------------------------------------------------------------------- outcomes


def test_outcomes_never_raise(ledger: Ledger) -> None:
    [denied] = ledger.run_llm_response(call("balance", account="nobody"))
    assert not denied.ok and denied.error is not None
    assert denied.to_dict() == {
        "tool": "balance", "id": None, "error": "EXECUTION_ERROR",
        "message": "balance failed unexpectedly (KeyError); the details are in the server's log.",
    }
    [good] = ledger.run_llm_response(call("balance", account="alice"))
    assert good == CallOutcome(good.call, result=10)


def test_outcomes_report_unknown_tools_in_error_mode() -> None:
    ledger = Ledger(on_unknown_tool="error")
    [outcome] = ledger.run_llm_response(call("withdraw", amount=1))
    assert outcome.error is not None and outcome.error.code is ErrorCode.TOOL_NOT_FOUND


# ---------------------------------------------------------------------- names


def test_a_prefix_is_applied_to_every_tool_name() -> None:
    ledger = Ledger(prefix="bank")
    assert [t.name for t in ledger.list_tools()] == ["bank_credit", "bank_balance", "bank_spotify_play", "bank_stall"]


def test_a_prefixed_tool_keeps_the_name_its_driver_routes_by() -> None:
    tools = {t.name: t for t in Ledger(prefix="bank").list_tools()}
    assert tools["bank_credit"].unprefixed_name == "credit"
    assert {t.unprefixed_name for t in Ledger().list_tools()} == {t.name for t in Ledger().list_tools()}


@pytest.mark.parametrize(
    "name", ["bank_balance", "balance", "BANK_BALANCE".lower(), "bank\\_balance"]
)
def test_prefixed_tools_resolve_through_aliases(name: str) -> None:
    ledger = Ledger(prefix="bank")
    assert ledger.process_llm_response(call(name, account="alice")) == 10


@pytest.mark.parametrize("name", ["spotify_play", "spotify.play", "spotify\\_play"])
def test_original_spec_names_are_aliases(ledger: Ledger, name: str) -> None:
    assert ledger.process_llm_response(call(name)) == "playing"


@pytest.mark.parametrize("name", ["Balance", "balanc", "balance2", "spotify play"])
def test_no_fuzzy_matching(ledger: Ledger, name: str) -> None:
    assert ledger.get_tool(name) is None


def test_a_driver_listing_a_name_twice_is_refused() -> None:
    class Twice(Ledger):
        def _list_tools(self) -> Iterable[Tool]:
            return [BALANCE, BALANCE]

    with pytest.raises(ValueError, match="twice"):
        Twice().list_tools()


def test_upstream_of_is_asked_once_per_tool_until_the_tools_are_refreshed() -> None:
    asked: list[str] = []

    class Routed(Ledger):
        def upstream_of(self, tool: Tool) -> str:
            asked.append(tool.name)
            return f"bank-{len(asked)}"

    driver = Routed()
    first = driver.prepare(parse_tool_calls('{"tool": "balance", "arguments": {"account": "alice"}}')[0])
    again = driver.prepare(parse_tool_calls('{"tool": "balance", "arguments": {"account": "bob"}}')[0])
    assert (first.upstream, again.upstream, asked) == ("bank-1", "bank-1", ["balance"])
    driver.refresh_tools()
    fresh = driver.prepare(parse_tool_calls('{"tool": "balance", "arguments": {"account": "alice"}}')[0])
    assert (fresh.upstream, asked) == ("bank-2", ["balance", "balance"])


def test_refresh_tools_reads_the_list_again() -> None:
    class Growing(Ledger):
        extra: tuple[Tool, ...] = ()

        def _list_tools(self) -> Iterable[Tool]:
            return [BALANCE, *self.extra]

    driver = Growing()
    assert driver.get_tool("credit") is None
    driver.extra = (CREDIT,)
    assert driver.get_tool("credit") is None, "tools are cached"
    driver.refresh_tools()
    assert driver.get_tool("credit") is not None


# ---------------------------------------------------------------------- descriptions


def test_the_description_lists_every_tool(ledger: Ledger) -> None:
    description = ledger.get_function_description("gpt-4o")
    for name in ("credit", "balance", "spotify_play"):
        assert name in description
    assert ledger.get_function_description("gpt-4o") in ledger.get_driver_system_message("gpt-4o")


def test_custom_description_and_system_message_win() -> None:
    ledger = Ledger(custom_tool_description="TOOLS HERE", custom_system_message="SYSTEM HERE")
    assert ledger.get_function_description("gpt-4o") == "TOOLS HERE"
    assert ledger.get_driver_system_message("claude-3-5-sonnet") == "SYSTEM HERE"
    only_description = Ledger(custom_tool_description="TOOLS HERE")
    assert "TOOLS HERE" in only_description.get_driver_system_message()


def test_discovery_mode_offers_meta_tools_and_keeps_every_tool_callable() -> None:
    ledger = Ledger(description_mode="discovery")
    names = [t.name for t in ledger.list_tools()]
    assert "search_tools" in names and "describe_tool" in names
    description = ledger.get_function_description()
    assert "credit" in description and "search_tools" in description
    assert '"account"' not in description, "schemas are read on demand"
    found = ledger.process_llm_response(call("search_tools", query="credit account"))
    assert found["tools"][0]["name"] == "credit"
    schema = ledger.process_llm_response(call("describe_tool", name="credit"))
    assert schema["input_schema"]["required"] == ["account", "amount"]
    assert ledger.process_llm_response(call("credit", account="alice", amount=1)) == 11
    with pytest.raises(ToolNotFoundError):
        ledger.process_llm_response(call("describe_tool", name="search_tools"))


def test_auto_mode_switches_to_discovery_above_the_token_budget() -> None:
    assert "search_tools" not in [t.name for t in Ledger().list_tools()]
    assert "search_tools" in [t.name for t in Ledger(token_budget=10).list_tools()]


def test_validate_output_turns_a_bad_result_into_execution_error() -> None:
    class Typed(Ledger):
        def _list_tools(self) -> Iterable[Tool]:
            return [Tool(name="balance", input_schema=BALANCE.input_schema,
                         output_schema={"type": "string"})]

    assert Typed().call_tool("balance", {"account": "alice"}) == 10
    with pytest.raises(ExecutionError, match="output schema"):
        Typed(validate_output=True).call_tool("balance", {"account": "alice"})


# ---------------------------------------------------------------------- async


async def test_the_async_twin_gives_the_same_results(ledger: Ledger) -> None:
    response = call("credit", account="alice", amount=2)
    sync_result = ledger.process_llm_response(response)
    async_result = await ledger.aprocess_llm_response(response)
    assert (sync_result, async_result) == (12, 14)
    assert await ledger.acall_tool("balance", {"account": "alice"}) == 14


async def test_the_async_twin_raises_the_same_errors(ledger: Ledger) -> None:
    with pytest.raises(InvalidInputError):
        await ledger.aprocess_llm_response(call("credit", account="alice"))
    with pytest.raises(ExecutionError):
        await ledger.acall_tool("balance", {"account": "nobody"})
    assert [name for name, _ in ledger.calls] == ["balance"]


async def test_the_default_async_path_does_not_block_the_event_loop(ledger: Ledger) -> None:
    import asyncio

    await ledger.acall_tool("balance", {"account": "alice"})
    assert ledger.threads[-1] != threading.current_thread().name
    assert asyncio.get_running_loop().is_running()


async def test_the_bare_contract_async_default_runs_the_sync_path() -> None:
    class Echo(MCSDriver):
        meta = Ledger().meta

        def get_function_description(self, model_name: str | None = None) -> str:
            return "echo"

        def get_driver_system_message(self, model_name: str | None = None) -> str:
            return "echo"

        def process_llm_response(self, llm_response: Any, *, context: Any = None) -> Any:
            return f"echo:{llm_response}"

    assert await Echo().aprocess_llm_response("x") == "echo:x"


# ---------------------------------------------------------------------- capabilities and meta


def test_supports_needs_the_declaration_and_the_method(ledger: Ledger) -> None:
    assert ledger.supports("healthcheck")
    assert not ledger.supports("status"), "declared, but get_status() is missing"
    assert not ledger.supports("cache")
    assert not ledger.supports("stream")
    assert ledger.healthcheck() == {"status": "ok"}


def test_driver_meta_is_validated_and_frozen() -> None:
    fields = dict(name="x", version="1", protocol="REST", transport="HTTP", spec_format="OpenAPI")
    with pytest.raises(ValueError):
        DriverMeta(id="not-a-uuid", **fields)
    with pytest.raises(ValueError):
        DriverMeta(id="5b0c8a9e-3e2f-4b7a-9c1d-2f6e8a7b9c0d", **{**fields, "name": ""})
    with pytest.raises(ValueError):
        DriverMeta(id="5b0c8a9e-3e2f-4b7a-9c1d-2f6e8a7b9c0d", unknown_field=1, **fields)  # type: ignore[call-arg]
    meta = DriverMeta(id="5b0c8a9e-3e2f-4b7a-9c1d-2f6e8a7b9c0d", **fields)
    assert meta.target_llms == ("*",) and meta.spec_version == "0.1"
    with pytest.raises(ValueError):
        meta.name = "y"  # type: ignore[misc]


def test_a_driver_is_a_context_manager_that_closes() -> None:
    closed: list[bool] = []

    class Closing(Ledger):
        def close(self) -> None:
            closed.append(True)

    with Closing() as driver:
        assert isinstance(driver, Closing)
    assert closed == [True]


async def test_async_with_closes_a_driver_on_a_worker_thread_by_default() -> None:
    closed_on: list[threading.Thread] = []

    class Closing(Ledger):
        def close(self) -> None:
            closed_on.append(threading.current_thread())

    async with Closing() as driver:
        assert isinstance(driver, Closing)
        assert await driver.acall_tool("balance", {"account": "alice"}) == 10
    assert len(closed_on) == 1 and closed_on[0] is not threading.current_thread()


async def test_async_with_uses_a_driver_s_own_aclose_and_closes_even_after_an_error() -> None:
    events: list[str] = []

    class AsyncClosing(Ledger):
        def close(self) -> None:
            events.append("close")

        async def aclose(self) -> None:
            events.append("aclose")

    with pytest.raises(RuntimeError):
        async with AsyncClosing():
            raise RuntimeError("boom")
    assert events == ["aclose"]


async def test_async_outcomes_match_the_sync_ones() -> None:
    response = call("balance", account="nobody")
    sync_outcomes = Ledger().run_llm_response(response)
    async_outcomes = await Ledger().arun_llm_response(response)
    assert [o.to_dict() for o in async_outcomes] == [o.to_dict() for o in sync_outcomes]
    assert await Ledger().arun_llm_response("no call") == []
    [good] = await Ledger().arun_llm_response(call("credit", account="alice", amount="2"))
    assert good.result == 12


async def test_async_outcomes_report_unknown_tools_in_error_mode() -> None:
    [outcome] = await Ledger(on_unknown_tool="error").arun_llm_response(call("withdraw"))
    assert outcome.error is not None and outcome.error.code is ErrorCode.TOOL_NOT_FOUND


@needs_several_calls
async def test_async_outcomes_run_the_good_calls_and_report_the_bad(ledger: Ledger) -> None:
    outcomes = await ledger.arun_llm_response(TWO_CALLS_ONE_BAD)
    assert [o.ok for o in outcomes] == [True, False]
    assert ledger.accounts["bob"] == 5


def test_mcs_spec_s3_target_llms_are_the_globs_of_the_templates_a_driver_has() -> None:
    from mcs import FunctionDriver, prompts

    shipped = FunctionDriver([]).meta.target_llms
    assert shipped[0] == "*" and "claude-*" in shipped and "gemini-*" in shipped
    assert len(shipped) == len(set(shipped))
    assert set(shipped) == {g for t in prompts.default_registry() for g in t.globs}
    own = prompts.PromptRegistry([prompts.default_registry().get("default"),  # type: ignore[list-item]
                                  prompts.PromptTemplate.from_text(
                                      "---\nname: tiny\nglobs: [\"t5-small\"]\ncall_format: mcs_json\n---\n"
                                      "Tools of {driver_name}: {function_description}\n")])
    assert FunctionDriver([], prompt_templates=own).meta.target_llms == ("*", "t5-small")


def test_the_cores_own_drivers_refuse_an_unknown_option_by_name_and_list_theirs() -> None:
    from mcs import FunctionDriver, Toolbox
    from mcs.errors import ConfigurationError
    from mcs.reference_sdk import ReferenceToolDriver

    for build in (lambda: FunctionDriver([], colour_of_the_sky="blue"),
                  lambda: Toolbox([], colour_of_the_sky="blue"),
                  lambda: ReferenceToolDriver(object(), colour_of_the_sky="blue")):
        with pytest.raises(ConfigurationError, match=r"has no option 'colour_of_the_sky'; options: .*\btimeout\b"):
            build()


class Registry(ToolDriver):
    """A driver whose tool definitions come from its operator, as they are."""

    protocol = "Python"
    transport = "in-process"
    spec_format = "Python"

    def __init__(self, tools: list[Tool], **options: Any) -> None:
        super().__init__(timeout=None, **options)
        self.tools = tools
        self.ran: list[str] = []

    def _list_tools(self) -> Iterable[Tool]:
        return self.tools

    def _call_tool(self, invocation: Invocation) -> Any:
        self.ran.append(invocation.tool.name)
        return f"{invocation.tool.name} ran"


BROKEN_SCHEMAS = {
    "unknown $ref": {"type": "object", "properties": {"q": {"$ref": "#/$defs/missing"}}},
    "unknown type": {"type": "object", "properties": {"q": {"type": "strin"}}},
}


@pytest.mark.parametrize("fault", sorted(BROKEN_SCHEMAS))
def test_a_tool_whose_schema_does_not_compile_answers_the_model_and_the_others_keep_working(fault: str) -> None:
    driver = Registry([Tool(name="lookup", input_schema=BROKEN_SCHEMAS[fault]),
                       Tool(name="ping", input_schema={"type": "object"})])

    with pytest.raises(ExecutionError) as raised:
        driver.process_llm_response('{"tool": "lookup", "arguments": {"q": "x"}}')

    message = raised.value.message
    assert message.startswith("lookup cannot be called: its input schema is not a valid JSON Schema (")
    assert ("missing" in message) if fault == "unknown $ref" else ("strin" in message)
    assert "not in your call" in message and "operator" in message
    assert raised.value.details == {"category": "invalid_tool_schema", "retryable": False}
    assert driver.process_llm_response('{"tool": "ping", "arguments": {}}') == "ping ran"
    assert driver.ran == ["ping"]


def test_a_broken_schema_is_answered_on_the_async_path_and_in_outcomes_too() -> None:
    import asyncio

    driver = Registry([Tool(name="lookup", input_schema=BROKEN_SCHEMAS["unknown $ref"])])
    reply = '{"tool": "lookup", "arguments": {"q": "x"}}'

    with pytest.raises(ExecutionError, match="lookup cannot be called"):
        asyncio.run(driver.aprocess_llm_response(reply))
    [outcome] = driver.run_llm_response(reply)
    assert outcome.error is not None and "not a valid JSON Schema" in outcome.error.message
    assert driver.secret_mask_of("lookup") is None
    assert driver.ran == []


def test_a_tool_whose_output_schema_does_not_compile_is_not_run() -> None:
    driver = Registry([Tool(name="report", output_schema={"type": "object", "properties": {"n": {"$ref": "#/x"}}})],
                      validate_output=True)

    with pytest.raises(ExecutionError, match="report cannot be called: its output schema is not a valid JSON Schema"):
        driver.process_llm_response('{"tool": "report", "arguments": {}}')
    assert driver.ran == []


@pytest.mark.parametrize("timeout", [0, -1, float("nan"), float("inf")])
def test_a_timeout_that_is_not_a_positive_finite_number_is_refused(timeout: float) -> None:
    from mcs import FunctionDriver

    with pytest.raises(ValueError, match="positive, finite number of seconds"):
        FunctionDriver([], timeout=timeout)
