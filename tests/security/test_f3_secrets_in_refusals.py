"""SECURITY.md F3 from the model's side: a call refused before it runs (by a policy, by
validation) never quotes a secret-typed argument, whole or in part, to the model or to an
audit hook."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import SecretStr

from mcs.context import AgentContext, PolicyDecision
from mcs.errors import InvalidInputError, PolicyDeniedError, ToolCallError
from mcs.functions import FunctionDriver
from mcs.pipeline import ExecutionEvent
from mcs.toolbox import Toolbox
from mcs.tools import Tool

SECRET = "Sup3rSecretValue-XYZ-123456"


def _prefixes_of(secret: str) -> list[str]:
    """Every leading part of ``secret`` long enough to matter (a quote cut short shows one)."""
    return [secret[:n] for n in range(6, len(secret) + 1)]


def _leaks(text: str, secret: str = SECRET) -> bool:
    return any(part in text for part in _prefixes_of(secret))


def _login_driver(calls: list[dict[str, Any]], errors: list[ExecutionEvent]) -> FunctionDriver:
    def login(user: str, password: SecretStr) -> str:
        """Log in."""
        calls.append({"user": user})
        return "ok"

    driver = FunctionDriver([login], name="auth")
    driver.on_execute_error(errors.append)
    return driver


def _model_says(tool: str, arguments: dict[str, Any]) -> str:
    return json.dumps({"tool": tool, "arguments": arguments})


def _quoting_policy(ctx: AgentContext, tool: str, args: dict[str, Any]) -> PolicyDecision:
    return PolicyDecision.deny(f"the password {args['password']!r} is on the list of weak ones")


def test_a_policy_denial_that_quotes_a_secret_argument_reaches_the_model_scrubbed() -> None:
    calls: list[dict[str, Any]] = []
    errors: list[ExecutionEvent] = []
    driver = _login_driver(calls, errors)
    driver.add_policy(_quoting_policy)
    with pytest.raises(PolicyDeniedError) as caught:
        driver.process_llm_response(_model_says("login", {"user": "ann", "password": SECRET}))
    assert calls == []
    assert "weak ones" in caught.value.message and not _leaks(caught.value.message)
    assert len(errors) == 1 and errors[0].error is not None and not _leaks(errors[0].error.message)
    assert errors[0].arguments["password"] == "[redacted]"


def test_a_toolbox_policy_denial_that_quotes_a_secret_argument_reaches_the_model_scrubbed() -> None:
    calls: list[dict[str, Any]] = []
    errors: list[ExecutionEvent] = []
    toolbox = Toolbox({"auth": _login_driver(calls, [])})
    toolbox.add_policy(_quoting_policy)
    toolbox.on_execute_error(errors.append)
    outcomes = toolbox.run_llm_response(_model_says("login", {"user": "ann", "password": SECRET}))
    assert calls == [] and len(outcomes) == 1 and outcomes[0].error is not None
    assert outcomes[0].error.code.value == "POLICY_DENIED" and not _leaks(outcomes[0].error.message)
    assert len(errors) == 1 and errors[0].error is not None and not _leaks(errors[0].error.message)


@pytest.mark.parametrize("schema", [
    # the whole arguments object fails (oneOf at the root): the validator quotes all of it, cut at 60 characters
    {"type": "object", "properties": {"note": {"type": "string"},
                                      "password": {"type": "string", "format": "password"}},
     "oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
    # a nested object holding a secret fails as a whole (not: its one property)
    {"type": "object", "properties": {"creds": {
        "type": "object", "not": {"required": ["note"]},
        "properties": {"note": {"type": "string"}, "password": {"type": "string", "writeOnly": True}}}}},
    # a whole-object secret (every property secret): a property's own error
    {"type": "object", "properties": {"creds": {
        "type": "object", "x-mcs-secret": True, "properties": {"password": {"type": "string", "maxLength": 5}}}}},
], ids=["root-oneOf", "nested-not", "secret-object-property"])
def test_an_invalid_call_never_quotes_a_secret_even_cut_short(schema: dict[str, Any]) -> None:
    ran: list[Any] = []

    def store(**arguments: Any) -> str:
        ran.append(arguments)
        return "stored"

    class RawDriver(FunctionDriver):
        def _list_tools(self) -> list[Tool]:
            return [Tool(name="store", description="Store credentials.", input_schema=schema)]

        def _call_tool(self, invocation: Any) -> Any:
            return store(**invocation.arguments)

    driver = RawDriver(name="raw")
    errors: list[ExecutionEvent] = []
    driver.on_execute_error(errors.append)
    arguments: dict[str, Any] = (
        {"note": "n" * 20, "password": SECRET} if "oneOf" in schema
        else {"creds": {"note": "n" * 20, "password": SECRET}}
    )
    with pytest.raises(InvalidInputError) as caught:
        driver.process_llm_response(_model_says("store", arguments))
    assert ran == []
    assert "is not shown" in caught.value.message and not _leaks(caught.value.message), caught.value.message


def test_a_refused_batch_quotes_no_secret_of_any_call() -> None:
    calls: list[dict[str, Any]] = []
    driver = _login_driver(calls, [])
    driver.add_policy(_quoting_policy)
    answer = json.dumps([
        {"tool": "login", "arguments": {"user": "ann", "password": SECRET}},
        {"tool": "login", "arguments": {"user": "bob", "password": SECRET[::-1]}},
    ])
    outcomes = driver.run_llm_response(answer)
    assert calls == [] and [o.error.code.value for o in outcomes if o.error] == ["POLICY_DENIED"] * 2
    text = " ".join(o.error.message for o in outcomes if isinstance(o.error, ToolCallError))
    assert not _leaks(text) and not _leaks(text, SECRET[::-1])
