"""The shared pipeline: policies, hooks, deadlines and error mapping."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Mapping
from typing import Any

import pytest

from mcs.context import AgentContext, PolicyDecision
from mcs.errors import (
    ErrorCode,
    ExecutionError,
    InvalidInputError,
    PolicyDeniedError,
    ToolCallError,
    ToolTimeoutError,
)
from mcs.pipeline import (
    Controls,
    ExecutionEvent,
    Invocation,
    map_exception,
    run_async,
    run_bare,
    run_sync,
    stream_async,
    stream_sync,
)
from mcs.tools import Tool

TOOL = Tool(name="transfer", input_schema={"type": "object", "properties": {"amount": {"type": "integer"}}})


def invocation(timeout: float | None = None, **arguments: Any) -> Invocation:
    return Invocation(
        tool=TOOL,
        arguments=dict(arguments or {"amount": 5}),
        context=AgentContext(agent_id="agent-7"),
        deadline=time.monotonic() + timeout if timeout is not None else None,
        timeout=timeout,
    )


class Journal:
    """Records what happens, in order, across policies, hooks and the tool."""

    def __init__(self) -> None:
        self.entries: list[str] = []
        self.events: list[ExecutionEvent] = []

    def policy(self, name: str, decision: PolicyDecision) -> Any:
        def check(context: AgentContext, tool: str, args: Mapping[str, Any]) -> PolicyDecision:
            self.entries.append(f"policy:{name}")
            return decision

        return check

    def hook(self, name: str) -> Any:
        def record(event: ExecutionEvent) -> None:
            self.entries.append(f"hook:{name}")
            self.events.append(event)

        return record

    def tool(self, result: Any = "done") -> Any:
        def call(inv: Invocation) -> Any:
            self.entries.append("tool")
            return result

        return call

    def controls(self) -> Controls:
        controls = Controls()
        controls.on_execute_start(self.hook("start"))
        controls.on_execute_end(self.hook("end"))
        controls.on_execute_error(self.hook("error"))
        return controls


# ---------------------------------------------------------------------- policies


def test_every_policy_must_allow_before_the_tool_runs() -> None:
    journal = Journal()
    controls = journal.controls()
    controls.add_policy(journal.policy("a", PolicyDecision.allow()))
    controls.add_policy(journal.policy("b", PolicyDecision.allow()))
    assert run_sync(invocation(), journal.tool(), controls=controls) == "done"
    assert journal.entries == ["policy:a", "policy:b", "hook:start", "tool", "hook:end"]


def test_the_first_denial_stops_the_call_before_any_side_effect_and_only_the_error_hook_sees_it() -> None:
    journal = Journal()
    controls = journal.controls()
    controls.add_policy(journal.policy("a", PolicyDecision.allow()))
    controls.add_policy(journal.policy("b", PolicyDecision.deny("transfers above 0 need approval")))
    controls.add_policy(journal.policy("c", PolicyDecision.allow()))
    with pytest.raises(PolicyDeniedError) as info:
        run_sync(invocation(), journal.tool(), controls=controls)
    assert info.value.code is ErrorCode.POLICY_DENIED
    assert "transfers above 0 need approval" in info.value.message
    assert info.value.tool == "transfer"
    assert journal.entries == ["policy:a", "policy:b", "hook:error"]
    (refused,) = journal.events
    assert refused.error is info.value and refused.tool == "transfer" and refused.duration_ms == 0.0


def test_policies_receive_context_tool_and_a_private_dict_of_the_arguments() -> None:
    seen: list[tuple[AgentContext, str, dict[str, Any]]] = []
    controls = Controls()

    @controls.add_policy
    def check(context: AgentContext, tool: str, args: dict[str, Any]) -> PolicyDecision:
        seen.append((context, tool, json.loads(json.dumps(args))))  # RFC-0001 s.11: args is a dict
        args["amount"] = 10**9
        return PolicyDecision.allow()

    @controls.add_policy
    def second(context: AgentContext, tool: str, args: dict[str, Any]) -> PolicyDecision:
        seen.append((context, tool, dict(args)))
        return PolicyDecision.allow()

    call = invocation()
    assert run_sync(call, lambda inv: inv.arguments["amount"], controls=controls) == 5
    assert seen[0][0].agent_id == "agent-7"
    assert seen[0][1] == "transfer"
    assert seen[0][2] == seen[1][2] == {"amount": 5}


def test_a_policy_that_raises_denies_without_leaking_its_text(caplog: pytest.LogCaptureFixture) -> None:
    controls = Controls()
    controls.add_policy(lambda c, t, a: 1 / 0)
    ran: list[bool] = []
    with caplog.at_level(logging.ERROR, "mcs.pipeline"), pytest.raises(PolicyDeniedError) as info:
        run_sync(invocation(), lambda inv: ran.append(True), controls=controls)
    assert "could not decide (ZeroDivisionError)" in info.value.message
    assert "division by zero" not in info.value.message
    assert ran == []
    assert "policy" in caplog.text


def test_a_policy_that_returns_no_decision_denies() -> None:
    controls = Controls()
    controls.add_policy(lambda c, t, a: True)
    with pytest.raises(PolicyDeniedError, match="no PolicyDecision"):
        run_sync(invocation(), lambda inv: "ran", controls=controls)


async def test_policies_run_on_the_async_path_too() -> None:
    journal = Journal()
    controls = journal.controls()
    controls.add_policy(journal.policy("no", PolicyDecision.deny("closed")))

    async def call(inv: Invocation) -> str:
        journal.entries.append("tool")
        return "ran"

    with pytest.raises(PolicyDeniedError, match="closed"):
        await run_async(invocation(), call, controls=controls)
    assert journal.entries == ["policy:no", "hook:error"]


def test_outer_controls_run_before_inner_ones() -> None:
    journal = Journal()
    outer, inner = Controls(), Controls()
    outer.add_policy(journal.policy("outer", PolicyDecision.allow()))
    inner.add_policy(journal.policy("inner", PolicyDecision.allow()))
    outer.on_execute_start(journal.hook("outer-start"))
    inner.on_execute_start(journal.hook("inner-start"))
    run_sync(invocation(), journal.tool(), controls=outer + inner)
    assert journal.entries == ["policy:outer", "policy:inner", "hook:outer-start", "hook:inner-start", "tool"]


# ---------------------------------------------------------------------- hooks


def test_a_successful_call_fires_start_then_end_once() -> None:
    journal = Journal()
    run_sync(invocation(), journal.tool({"id": 1}), controls=journal.controls())
    assert journal.entries == ["hook:start", "tool", "hook:end"]
    start, end = journal.events
    assert start.result is None and start.duration_ms is None
    assert end.result == {"id": 1}
    assert end.error is None
    assert end.duration_ms is not None and end.duration_ms >= 0
    assert end.context.agent_id == "agent-7" and end.tool == "transfer"


def test_a_failing_call_fires_start_then_error_once() -> None:
    journal = Journal()

    def broken(inv: Invocation) -> None:
        journal.entries.append("tool")
        raise ConnectionError("connection refused")

    with pytest.raises(ExecutionError):
        run_sync(invocation(), broken, controls=journal.controls())
    assert journal.entries == ["hook:start", "tool", "hook:error"]
    error_event = journal.events[-1]
    assert isinstance(error_event.error, ExecutionError)
    assert error_event.result is None


async def test_async_calls_fire_exactly_one_terminal_hook() -> None:
    journal = Journal()

    async def ok(inv: Invocation) -> int:
        return 1

    async def broken(inv: Invocation) -> int:
        raise ValueError("bad")

    controls = journal.controls()
    assert await run_async(invocation(), ok, controls=controls) == 1
    with pytest.raises(ExecutionError):
        await run_async(invocation(), broken, controls=controls)
    assert journal.entries == ["hook:start", "hook:end", "hook:start", "hook:error"]


def test_hooks_cannot_change_the_result_or_the_arguments() -> None:
    controls = Controls()
    result = {"balance": 100, "items": [1, 2]}

    @controls.on_execute_end
    def tamper(event: ExecutionEvent) -> dict[str, Any]:
        event.result["balance"] = 0
        event.result["items"].append(666)
        event.arguments["amount"] = 10**9
        with pytest.raises(AttributeError):
            event.result = "other"  # type: ignore[misc]
        return {"balance": -1}

    seen: list[dict[str, Any]] = []

    def tool(inv: Invocation) -> dict[str, Any]:
        seen.append(inv.arguments)
        return result

    returned = run_sync(invocation(), tool, controls=controls)
    assert returned is result
    assert returned == {"balance": 100, "items": [1, 2]}
    assert seen == [{"amount": 5}]


def test_a_start_hook_cannot_change_the_arguments_the_tool_gets() -> None:
    controls = Controls()

    @controls.on_execute_start
    def tamper(event: ExecutionEvent) -> None:
        event.arguments["to"].append("attacker")
        event.arguments["amount"] = 0

    @controls.on_execute_start
    def audit(event: ExecutionEvent) -> None:
        seen.append(json.dumps(event.arguments))  # a plain dict: an audit hook can serialise it

    seen: list[str] = []
    call = invocation(amount=5, to=["alice"])
    assert run_sync(call, lambda inv: dict(inv.arguments), controls=controls) == {"amount": 5, "to": ["alice"]}
    assert seen == ['{"amount": 5, "to": ["alice"]}']  # the second hook gets its own copy


def test_a_failing_hook_does_not_break_the_call(caplog: pytest.LogCaptureFixture) -> None:
    journal = Journal()
    controls = Controls()

    def explode(event: ExecutionEvent) -> None:
        raise RuntimeError("hook bug")

    for register in (controls.on_execute_start, controls.on_execute_end):
        register(explode)
    controls.on_execute_end(journal.hook("end-after-broken"))
    with caplog.at_level(logging.ERROR, "mcs.pipeline"):
        assert run_sync(invocation(), journal.tool("ok"), controls=controls) == "ok"
    assert journal.entries == ["tool", "hook:end-after-broken"]
    assert caplog.text.count("hook") >= 2


def test_a_failing_error_hook_keeps_the_original_error() -> None:
    controls = Controls()
    controls.on_execute_error(lambda event: 1 / 0)

    def broken(inv: Invocation) -> None:
        raise InvalidInputError("amount must be positive")

    with pytest.raises(InvalidInputError, match="amount must be positive"):
        run_sync(invocation(), broken, controls=controls)


def test_a_result_that_cannot_be_copied_still_reaches_hooks_and_caller() -> None:
    lock = threading.Lock()
    seen: list[Any] = []
    controls = Controls()
    controls.on_execute_end(lambda event: seen.append(event.result))
    assert run_sync(invocation(), lambda inv: lock, controls=controls) is lock
    assert seen == [lock]


# ---------------------------------------------------------------------- deadlines


def test_a_sync_call_over_its_deadline_times_out_on_a_worker_thread() -> None:
    release = threading.Event()
    journal = Journal()

    def slow(inv: Invocation) -> str:
        journal.entries.append(threading.current_thread().name)
        release.wait(5)
        return "late"

    try:
        with pytest.raises(ToolTimeoutError) as info:
            run_sync(invocation(timeout=0.05), slow, controls=journal.controls())
    finally:
        release.set()
    assert info.value.code is ErrorCode.TIMEOUT
    assert "within 0.05 s" in info.value.message
    assert journal.entries[0] == "hook:start"
    assert journal.entries[1].startswith("mcs-tool")
    assert journal.entries[-1] == "hook:error"


def test_a_driver_that_enforces_deadlines_runs_on_the_calling_thread() -> None:
    threads: list[str] = []
    run_sync(
        invocation(timeout=5),
        lambda inv: threads.append(threading.current_thread().name),
        enforces_deadline=True,
    )
    assert threads == [threading.current_thread().name]


def test_a_call_without_deadline_runs_on_the_calling_thread() -> None:
    threads: list[str] = []
    run_sync(invocation(), lambda inv: threads.append(threading.current_thread().name))
    assert threads == [threading.current_thread().name]


def passed_deadline() -> Invocation:
    """A call whose 0.2 s deadline passed before it was run."""
    return Invocation(TOOL, {"amount": 5}, AgentContext(), deadline=time.monotonic() - 0.01, timeout=0.2)


@pytest.mark.parametrize("enforces_deadline", [True, False], ids=["inline", "worker-thread"])
@pytest.mark.parametrize("path", ["run_bare", "run_sync-empty-controls", "run_sync-with-a-hook"])
def test_a_call_whose_deadline_passed_is_refused_unrun_with_or_without_controls(
    path: str, enforces_deadline: bool
) -> None:
    ran: list[Invocation] = []
    journal = Journal()

    with pytest.raises(ToolTimeoutError) as info:
        if path == "run_bare":
            run_bare(passed_deadline(), ran.append, enforces_deadline)
        else:
            controls = journal.controls() if path == "run_sync-with-a-hook" else Controls()
            run_sync(passed_deadline(), ran.append, controls=controls, enforces_deadline=enforces_deadline)

    assert ran == []
    assert info.value.message == "transfer was not run: its deadline (0.2 s) passed before it could start."
    assert info.value.details == {"category": "not_started", "retryable": True}


async def test_an_async_call_whose_deadline_passed_is_refused_unrun() -> None:
    ran: list[Invocation] = []

    async def tool(inv: Invocation) -> None:
        ran.append(inv)

    with pytest.raises(ToolTimeoutError) as info:
        await run_async(passed_deadline(), tool)

    assert ran == []
    assert info.value.details == {"category": "not_started", "retryable": True}


def test_remaining_is_never_negative_and_none_without_deadline() -> None:
    assert invocation().remaining() is None
    expired = Invocation(TOOL, {}, AgentContext(), deadline=time.monotonic() - 10)
    assert expired.remaining() == 0.0
    assert 0 < invocation(timeout=30).remaining() <= 30  # type: ignore[operator]


async def test_an_async_call_over_its_deadline_is_cancelled() -> None:
    cancelled = asyncio.Event()

    async def slow(inv: Invocation) -> str:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    with pytest.raises(ToolTimeoutError, match="was cancelled"):
        await run_async(invocation(timeout=0.05), slow)
    assert cancelled.is_set()


def test_a_sync_tools_own_timeout_error_on_the_worker_thread_reaches_the_caller_as_it_gave_it() -> None:
    def gives_up(inv: Invocation) -> str:
        raise ToolTimeoutError("the broker did not answer; the message was withdrawn", details={"sent": False})

    with pytest.raises(ToolTimeoutError) as info:
        run_sync(invocation(timeout=5), gives_up)
    assert info.value.message == "the broker did not answer; the message was withdrawn"
    assert info.value.details == {"sent": False}


def test_a_sync_tools_own_os_timeout_is_not_reported_as_the_deadline() -> None:
    def socket_timeout(inv: Invocation) -> str:
        raise TimeoutError("timed out")

    with pytest.raises(ToolTimeoutError) as info:
        run_sync(invocation(timeout=5), socket_timeout)
    assert "within" not in info.value.message and "abandoned" not in info.value.message


async def test_an_async_tools_own_timeout_error_given_on_cancellation_at_the_deadline_reaches_the_caller() -> None:
    async def withdraws(inv: Invocation) -> str:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            raise ToolTimeoutError("not sent: withdrawn at the deadline", details={"may_be_delivered": False}) from None
        return "never"

    with pytest.raises(ToolTimeoutError) as info:
        await run_async(invocation(timeout=0.05), withdraws)
    assert info.value.message == "not sent: withdrawn at the deadline"
    assert info.value.details == {"may_be_delivered": False}


async def test_an_async_tools_own_timeout_before_the_deadline_is_not_reported_as_the_deadline() -> None:
    async def socket_timeout(inv: Invocation) -> str:
        raise TimeoutError("timed out")

    with pytest.raises(ToolTimeoutError) as info:
        await run_async(invocation(timeout=5), socket_timeout)
    assert "was cancelled" not in info.value.message


# ---------------------------------------------------------------------- error mapping


@pytest.mark.parametrize(
    ("raised", "code"),
    [
        (TimeoutError("socket timed out"), ErrorCode.TIMEOUT),
        (TimeoutError(), ErrorCode.TIMEOUT),
        (ConnectionError("refused"), ErrorCode.EXECUTION_ERROR),
        (KeyError("x"), ErrorCode.EXECUTION_ERROR),
        (PolicyDeniedError("no"), ErrorCode.POLICY_DENIED),
    ],
)
def test_exceptions_map_to_their_code(raised: Exception, code: ErrorCode) -> None:
    assert map_exception(raised, "transfer").code is code


def test_an_unexpected_exception_reaches_the_caller_as_its_type_only(caplog) -> None:
    with caplog.at_level("ERROR", logger="mcs.pipeline"):
        error = map_exception(ConnectionError("connection refused by 10.0.0.1"), "transfer")
    assert error.message == "transfer failed unexpectedly (ConnectionError); the details are in the server's log."
    assert "10.0.0.1" not in error.message
    assert "connection refused by 10.0.0.1" in caplog.text  # the detail goes to the server log


def test_secret_values_are_scrubbed_from_the_logged_detail(caplog) -> None:
    with caplog.at_level("ERROR", logger="mcs.pipeline"):
        map_exception(RuntimeError("login with hunter2 failed"), "t", ["hunter2"])
    assert "hunter2" not in caplog.text and "login with [redacted] failed" in caplog.text


def secret_call(timeout: float | None = None) -> Invocation:
    """A call whose ``token`` argument is secret-typed (``format: password``)."""
    return Invocation(TOOL, {"token": "tok-2718-secret"}, AgentContext(), secret_mask={"token": True},
                      deadline=time.monotonic() + timeout if timeout is not None else None, timeout=timeout)


def sends(inv: Invocation) -> str:
    """What a driver's HTTP library does: log the request with the argument in it."""
    logging.getLogger("httpx").debug("POST /login %s", inv.arguments)
    return "sent"


@pytest.mark.parametrize("path", ["bare", "worker-thread", "hooked", "async", "stream", "async-stream"])
def test_a_secret_argument_is_kept_out_of_what_the_libraries_log_during_the_call(caplog, path: str) -> None:
    caplog.set_level(logging.DEBUG, logger="httpx")

    async def asends(inv: Invocation) -> str:
        return sends(inv)

    async def astream(inv: Invocation) -> Any:
        yield sends(inv)

    async def collect() -> list[str]:
        return [item async for item in stream_async(secret_call(), astream)]

    if path == "bare":
        assert run_bare(secret_call(), sends) == "sent"
    elif path == "worker-thread":
        assert run_sync(secret_call(timeout=5), sends) == "sent"
    elif path == "hooked":
        assert run_sync(secret_call(), sends, controls=Journal().controls()) == "sent"
    elif path == "async":
        assert asyncio.run(run_async(secret_call(timeout=5), asends)) == "sent"
    elif path == "stream":
        assert list(stream_sync(secret_call(), lambda inv: iter([sends(inv)]))) == ["sent"]
    else:
        assert asyncio.run(collect()) == ["sent"]

    (record,) = [r for r in caplog.records if r.name == "httpx"]
    assert record.getMessage() == "POST /login {'token': '[redacted]'}"


def test_a_tool_call_error_keeps_its_identity_and_gains_the_tool_name() -> None:
    original = InvalidInputError("amount must be positive")
    mapped = map_exception(original, "transfer")
    assert mapped is original and mapped.tool == "transfer"
    named = InvalidInputError("x", tool="other")
    assert map_exception(named, "transfer").tool == "other"


def test_the_raised_error_chains_the_original_exception() -> None:
    def broken(inv: Invocation) -> None:
        raise ConnectionError("refused")

    with pytest.raises(ExecutionError) as info:
        run_sync(invocation(), broken)
    assert isinstance(info.value.__cause__, ConnectionError)


def test_keyboard_interrupt_fires_the_error_hook_and_is_not_swallowed() -> None:
    journal = Journal()

    def interrupted(inv: Invocation) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_sync(invocation(), interrupted, controls=journal.controls())
    assert journal.entries == ["hook:start", "hook:error"]
    assert journal.events[-1].error is not None
    assert "interrupted (KeyboardInterrupt)" in journal.events[-1].error.message


async def test_a_cancelled_async_call_fires_the_error_hook_and_stays_cancelled() -> None:
    journal = Journal()
    started = asyncio.Event()

    async def hang(inv: Invocation) -> None:
        started.set()
        await asyncio.Event().wait()

    task = asyncio.create_task(run_async(invocation(), hang, controls=journal.controls()))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert journal.entries == ["hook:start", "hook:error"]
    assert "interrupted (CancelledError)" in journal.events[-1].error.message  # type: ignore[union-attr]


def test_output_checks_turn_a_bad_result_into_an_error_after_the_call() -> None:
    journal = Journal()

    def check(result: Any) -> None:
        if not isinstance(result, int):
            raise ExecutionError("transfer returned a result that does not match its output schema")

    with pytest.raises(ExecutionError, match="output schema"):
        run_sync(invocation(), journal.tool("not an int"), controls=journal.controls(), check_output=check)
    assert journal.entries == ["hook:start", "tool", "hook:error"]


def test_every_error_is_a_tool_call_error_with_a_message() -> None:
    for exc in (OSError("disk"), ValueError(""), TimeoutError()):
        mapped = map_exception(exc, "t")
        assert isinstance(mapped, ToolCallError) and mapped.message


def test_new_invocation_builds_the_same_frozen_invocation_as_its_constructor() -> None:
    import dataclasses

    from mcs.pipeline import new_invocation

    values = (Tool(name="t", description="", input_schema={"type": "object"}), {"a": 1},
              AgentContext(agent_id="x"), 12.5, 3.0, {"a": True}, "upstream")
    built = new_invocation(*values)  # type: ignore[arg-type]
    assert type(built) is Invocation and built == Invocation(*values)  # type: ignore[arg-type]
    assert repr(built) == repr(Invocation(*values))  # type: ignore[arg-type]
    assert [getattr(built, f.name) for f in dataclasses.fields(Invocation)] == list(values)  # every field set
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.deadline = 0.0  # type: ignore[misc]


def test_an_invocation_built_without_a_context_makes_one_when_first_read() -> None:
    import copy
    import dataclasses

    from mcs.pipeline import new_invocation

    built = new_invocation(Tool(name="t", description="", input_schema={"type": "object"}), {"a": 1}, None,
                           12.5, 3.0, None, "upstream")
    assert isinstance(built, Invocation)
    seen: list[AgentContext] = []
    readers = [threading.Thread(target=lambda: seen.append(built.context)) for _ in range(8)]
    for reader in readers:
        reader.start()
    for reader in readers:
        reader.join()
    context = built.context
    assert all(other is context for other in seen)  # one context, whoever read it first
    assert context == AgentContext(request_id=context.request_id) and len(context.request_id) == 32
    moved = dataclasses.replace(built, deadline=20.0)
    assert (moved.context, moved.deadline, moved.arguments) == (context, 20.0, {"a": 1})
    assert copy.copy(built).context is context
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.context = AgentContext()  # type: ignore[misc]
    assert [getattr(built, f.name) for f in dataclasses.fields(Invocation)][2:] == [context, 12.5, 3.0, None, "upstream"]


def test_a_hooks_copy_of_an_event_differs_from_it_in_the_arguments_only() -> None:
    import dataclasses

    from mcs.pipeline import _event_with

    error = ExecutionError("boom", tool="t")
    event = ExecutionEvent("t", {"a": 1}, AgentContext(agent_id="x"), 1.5, 2.5, {"r": 1}, error)
    copied = _event_with(event, {"a": 2})
    assert copied == dataclasses.replace(event, arguments={"a": 2})
    assert [getattr(copied, f.name) for f in dataclasses.fields(ExecutionEvent)] == [
        "t", {"a": 2}, event.context, 1.5, 2.5, {"r": 1}, error,
    ]  # every field set, so a field added later cannot be left out unnoticed


def test_new_event_builds_the_same_frozen_event_as_its_constructor() -> None:
    import dataclasses

    from mcs.pipeline import new_event

    error = ExecutionError("boom", tool="t")
    values = ("t", {"a": 1}, AgentContext(agent_id="x"), 1.5, 2.5, {"r": 1}, error)
    built = new_event(*values)
    assert built == ExecutionEvent(*values)
    assert [getattr(built, f.name) for f in dataclasses.fields(ExecutionEvent)] == list(values)  # every field set
    assert new_event("t", {}, values[2], 1.0) == ExecutionEvent("t", {}, values[2], 1.0)  # the defaults
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.tool = "u"  # type: ignore[misc]
