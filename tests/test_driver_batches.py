"""A model output with several calls is admitted whole: every call's policies are judged
before the first one runs, and what ran is never lost to a later refusal."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterable, Mapping
from typing import Any

import pytest

from mcs.context import AgentContext, PolicyDecision
from mcs.driver import ToolDriver
from mcs.errors import PolicyDeniedError, ToolTimeoutError
from mcs.limits import RateLimit
from mcs.pipeline import ExecutionEvent, Invocation
from mcs.toolbox import Toolbox
from mcs.tools import Tool

ACCOUNT = {"type": "object", "properties": {"account": {"type": "string"}}, "required": ["account"]}


class Bank(ToolDriver):
    """An in-memory bank that records every call reaching it."""

    protocol = "Python"
    transport = "in-process"
    spec_format = "Python"

    def __init__(self, **options: Any) -> None:
        options.setdefault("timeout", None)
        super().__init__(**options)
        self.ran: list[str] = []

    def _list_tools(self) -> Iterable[Tool]:
        return [Tool(name=name, input_schema=ACCOUNT) for name in ("balance", "deposit", "close_account")]

    def _call_tool(self, invocation: Invocation) -> Any:
        self.ran.append(invocation.tool.unprefixed_name)
        return f"{invocation.tool.unprefixed_name}:{invocation.arguments['account']}"


def batch(*names: str) -> str:
    """A model output calling each tool of ``names`` on account ``a``, in order."""
    return json.dumps([{"tool": name, "arguments": {"account": "a"}} for name in names])


def never_close(context: AgentContext, tool: str, args: Mapping[str, Any]) -> PolicyDecision:
    return PolicyDecision.deny("accounts are not closed by agents") if "close" in tool else PolicyDecision.allow()


class Audit:
    """The hooks an audit log would register."""

    def __init__(self, driver: ToolDriver) -> None:
        self.started: list[str] = []
        self.errors: list[ExecutionEvent] = []
        driver.on_execute_start(lambda event: self.started.append(event.tool))
        driver.on_execute_error(self.errors.append)


@pytest.mark.parametrize("path", ["sync", "async"])
def test_a_batch_with_a_call_a_policy_refuses_runs_none_and_says_which_and_why(path: str) -> None:
    bank = Bank()
    bank.add_policy(never_close)
    audit = Audit(bank)
    reply = batch("deposit", "close_account", "balance")

    with pytest.raises(PolicyDeniedError) as raised:
        if path == "sync":
            bank.process_llm_response(reply)
        else:
            asyncio.run(bank.aprocess_llm_response(reply))

    assert bank.ran == []
    message = raised.value.message
    assert "close_account" in message and "accounts are not closed by agents" in message
    assert "call 2 of 3" in message and "none of the 3 calls ran" in message
    assert raised.value.details == {"call": 2, "calls": 3, "ran": 0}
    assert audit.started == []
    assert [(event.tool, event.error) for event in audit.errors] == [("close_account", raised.value)]


def test_each_policy_decides_once_for_the_first_call_and_again_as_each_later_call_runs() -> None:
    bank = Bank()
    asked: list[str] = []

    @bank.add_policy
    def count(context: AgentContext, tool: str, args: Mapping[str, Any]) -> PolicyDecision:
        asked.append(tool)
        return PolicyDecision.allow()

    assert bank.process_llm_response(batch("deposit", "balance")) == ["deposit:a", "balance:a"]
    assert asked == ["deposit", "balance", "balance"]  # deposit ran between balance's two judgments
    assert bank.ran == ["deposit", "balance"]


@pytest.mark.parametrize("path", ["sync", "async"])
def test_a_rate_limit_refusing_a_later_call_returns_what_ran_with_the_refusal(path: str) -> None:
    bank = Bank(rate_limit=RateLimit(calls=1, period=3600, per_tool=False))
    reply = batch("deposit", "balance", "balance")

    if path == "sync":
        answer = bank.process_llm_response(reply)
    else:
        answer = asyncio.run(bank.aprocess_llm_response(reply))

    assert bank.ran == ["deposit"]
    assert answer[0] == "deposit:a"
    refused, not_run = answer[1], answer[2]
    assert refused["tool"] == "balance" and refused["error"] == "POLICY_DENIED"
    assert "rate" in refused["message"].lower()
    assert not_run["error"] == "EXECUTION_ERROR"
    assert not_run["message"].startswith("balance was not run: call 2 (balance) failed before it")


def test_a_refusal_of_the_first_call_at_run_time_is_raised_as_for_one_call() -> None:
    bank = Bank(rate_limit=RateLimit(calls=1, period=3600, per_tool=False))
    bank.process_llm_response(batch("balance"))

    with pytest.raises(PolicyDeniedError, match="rate"):
        bank.process_llm_response(batch("deposit", "balance"))
    assert bank.ran == ["balance"]


def test_a_deadline_passing_mid_batch_returns_what_ran() -> None:
    class Slow(Bank):
        enforces_deadline = True

        def _call_tool(self, invocation: Invocation) -> Any:
            result = super()._call_tool(invocation)
            if invocation.tool.name == "deposit":
                raise ToolTimeoutError("deposit did not finish in time.")
            return result

    bank = Slow()
    answer = bank.process_llm_response(batch("balance", "deposit", "close_account"))

    assert answer[0] == "balance:a"
    assert answer[1]["error"] == "TIMEOUT" and answer[1]["tool"] == "deposit"
    assert answer[2]["tool"] == "close_account" and "was not run" in answer[2]["message"]
    assert bank.ran == ["balance", "deposit"]


@pytest.mark.parametrize("path", ["sync", "async"])
def test_a_toolbox_judges_its_members_policies_before_any_call_of_the_batch_runs(path: str) -> None:
    bank, ledger = Bank(prefix="bank"), Bank(prefix="ledger")
    ledger.add_policy(never_close)
    toolbox = Toolbox({"bank": bank, "ledger": ledger})
    reply = batch("bank_deposit", "ledger_close_account")

    with pytest.raises(PolicyDeniedError, match="call 2 of 2") as raised:
        if path == "sync":
            toolbox.process_llm_response(reply)
        else:
            asyncio.run(toolbox.aprocess_llm_response(reply))

    assert "accounts are not closed by agents" in raised.value.message
    assert bank.ran == [] and ledger.ran == []
    assert toolbox.process_llm_response(batch("bank_deposit", "ledger_balance")) == ["deposit:a", "balance:a"]


class Slow(Bank):
    """A bank whose every call takes 0.4 s; the core enforces its deadline (a worker thread)."""

    def _call_tool(self, invocation: Invocation) -> Any:
        time.sleep(0.4)
        return super()._call_tool(invocation)


@pytest.mark.parametrize("path", ["sync", "async"])
def test_each_call_of_a_batch_has_its_whole_timeout_from_when_it_starts(path: str) -> None:
    bank = Slow(timeout=1.0)  # one call needs 0.4 s; three in a row need 1.2 s
    audit = Audit(bank)
    reply = batch("deposit", "balance", "close_account")

    answer = bank.process_llm_response(reply) if path == "sync" else asyncio.run(bank.aprocess_llm_response(reply))

    assert answer == ["deposit:a", "balance:a", "close_account:a"]
    assert bank.ran == ["deposit", "balance", "close_account"]
    assert audit.errors == []


def test_a_toolbox_inside_a_toolbox_judges_the_innermost_members_policies_up_front() -> None:
    bank, ledger = Bank(prefix="bank"), Bank(prefix="ledger")
    ledger.add_policy(never_close)
    outer = Toolbox({"bank": bank, "inner": Toolbox({"ledger": ledger})})

    with pytest.raises(PolicyDeniedError, match="call 2 of 2"):
        outer.process_llm_response(batch("bank_deposit", "ledger_close_account"))
    assert bank.ran == [] and ledger.ran == []


class Vault(Bank):
    """A bank that keeps balances: ``deposit`` adds 100 to the account."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.balances: dict[str, int] = {}

    def _call_tool(self, invocation: Invocation) -> Any:
        if invocation.tool.unprefixed_name == "deposit":
            account = invocation.arguments["account"]
            self.balances[account] = self.balances.get(account, 0) + 100
        return super()._call_tool(invocation)


def keeps_funded_accounts_open(vault: Vault) -> Any:
    """A policy reading the bank's state: an account that holds money is not closed."""

    def policy(context: AgentContext, tool: str, args: Mapping[str, Any]) -> PolicyDecision:
        if "close" in tool and vault.balances.get(args["account"], 0) > 0:
            return PolicyDecision.deny("the account still holds money")
        return PolicyDecision.allow()

    return policy


@pytest.mark.parametrize("path", ["sync", "async"])
def test_a_later_call_is_judged_again_on_what_the_earlier_calls_of_the_batch_changed(path: str) -> None:
    vault = Vault()
    vault.add_policy(keeps_funded_accounts_open(vault))
    reply = batch("deposit", "close_account", "balance")

    answer = vault.process_llm_response(reply) if path == "sync" else asyncio.run(vault.aprocess_llm_response(reply))

    assert vault.ran == ["deposit"]
    assert answer[0] == "deposit:a"
    assert answer[1]["tool"] == "close_account" and answer[1]["error"] == "POLICY_DENIED"
    assert "still holds money" in answer[1]["message"]
    assert "was not run" in answer[2]["message"]


def test_a_toolbox_judges_its_own_policies_again_for_a_later_call_of_the_batch() -> None:
    vault = Vault(prefix="vault")
    toolbox = Toolbox({"vault": vault})
    toolbox.add_policy(keeps_funded_accounts_open(vault))

    answer = toolbox.process_llm_response(batch("vault_deposit", "vault_close_account"))

    assert vault.ran == ["deposit"]
    assert answer[1]["tool"] == "vault_close_account" and answer[1]["error"] == "POLICY_DENIED"

