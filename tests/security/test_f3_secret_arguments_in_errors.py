"""SECURITY.md F3 from the model's side: no error of a call (a policy's refusal, a
validation error, a peer's answer quoting the request) hands a secret-typed argument, whole
or in part, to the model or to an audit hook."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn
from mcs_rest import RestDriver
from pydantic import SecretStr
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from support.servers import uvicorn_on_loopback

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


@pytest.fixture(scope="module")
def echoing_api() -> Iterator[str]:
    """An API on loopback whose ``POST /login`` refuses with a 400 quoting the request body,
    after ``pad`` characters of text (so the driver's excerpt is cut where the test wants)."""

    async def login(request: Request) -> PlainTextResponse:
        pad = "x" * int(request.query_params.get("pad", "0"))
        return PlainTextResponse(f"{pad} bad login: {(await request.body()).decode()}", status_code=400)

    app = Starlette(routes=[Route("/login", login, methods=["POST"])])
    with uvicorn_on_loopback(uvicorn.Config(app, log_level="critical", lifespan="off")) as url:
        yield url


def _login_spec() -> dict[str, Any]:
    body = {"type": "object", "properties": {"pad": {"type": "integer"}, "user": {"type": "string"},
                                             "password": {"type": "string", "format": "password"}}}
    return {"openapi": "3.0.3", "info": {"title": "echo", "version": "1"}, "paths": {"/login": {"post": {
        "operationId": "login", "responses": {"200": {"description": "ok"}},
        "parameters": [{"name": "pad", "in": "query", "schema": {"type": "integer"}}],
        "requestBody": {"required": True, "content": {"application/json": {"schema": {
            "type": "object", "properties": {k: v for k, v in body["properties"].items() if k != "pad"}}}}}}}}}


@pytest.mark.parametrize("pad", [0, 550], ids=["whole", "cut-in-the-secret"])
def test_a_rest_answer_echoing_a_secret_argument_reaches_neither_model_nor_audit(echoing_api: str, pad: int) -> None:
    errors: list[ExecutionEvent] = []
    with RestDriver(_login_spec(), base_url=echoing_api, retries=0, timeout=5) as driver:
        driver.on_execute_error(errors.append)
        arguments = {"pad": pad, "user": "ann", "password": SECRET}
        outcomes = driver.run_llm_response(_model_says("login", arguments))
    error = outcomes[0].error
    assert error is not None and "HTTP 400" in error.message and "bad login" in error.message
    assert not _leaks(error.message), error.message[-80:]
    assert not _leaks(json.dumps(error.details)), str(error.details)[-80:]
    assert len(errors) == 1 and errors[0].error is not None
    assert not _leaks(errors[0].error.message + json.dumps(errors[0].error.details))


def test_the_details_of_a_tool_error_quoting_a_secret_argument_are_scrubbed() -> None:
    from mcs.errors import ExecutionError

    def login(user: str, password: SecretStr) -> str:
        """Log in upstream; its refusal is quoted in the error's details."""
        answer = {"user": user, "password": password.get_secret_value()}
        raise ExecutionError("the upstream refused the login", details={"status": 400, "body": json.dumps(answer),
                                                                         "echo": [answer]})

    driver = FunctionDriver([login], name="auth")
    errors: list[ExecutionEvent] = []
    driver.on_execute_error(errors.append)
    for run in (driver.run_llm_response, _async_outcomes(driver)):
        outcomes = run(_model_says("login", {"user": "ann", "password": SECRET}))
        error = outcomes[0].error
        assert error is not None and error.details["status"] == 400 and "[redacted]" in error.details["body"]
        assert not _leaks(json.dumps(error.details))
    assert len(errors) == 2 and not any(_leaks(json.dumps(e.error.details)) for e in errors if e.error)


def _async_outcomes(driver: FunctionDriver) -> Any:
    import asyncio

    return lambda answer: asyncio.run(driver.arun_llm_response(answer))


def test_secrets_in_a_map_or_a_tuple_are_redacted_for_hooks_and_scrubbed_from_errors() -> None:
    from mcs.errors import ExecutionError

    def connect(url: str, headers: dict[str, SecretStr], login: tuple[str, SecretStr]) -> str:
        """Connect with extra headers and a user/password pair; the peer refuses, quoting them."""
        sent = [v.get_secret_value() for v in headers.values()] + [login[1].get_secret_value()]
        raise ExecutionError(f"the peer at {url} refused: {sent}")

    driver = FunctionDriver([connect], name="net")
    started: list[ExecutionEvent] = []
    errors: list[ExecutionEvent] = []
    driver.on_execute_start(started.append)
    driver.on_execute_error(errors.append)
    token, password = "tok-" + SECRET, SECRET[::-1]
    arguments = {"url": "http://peer", "headers": {"X-Api-Key": token}, "login": ["ann", password]}
    with pytest.raises(ExecutionError) as caught:
        driver.process_llm_response(_model_says("connect", arguments))
    assert "the peer at http://peer refused" in caught.value.message
    records = json.dumps([e.arguments for e in started + errors]) + errors[0].error.message  # type: ignore[union-attr]
    for text in (caught.value.message, records):
        assert not _leaks(text, token) and not _leaks(text, password), text
    assert started[0].arguments["url"] == "http://peer"


@pytest.fixture(scope="module")
def refusing_api() -> Iterator[str]:
    """An API on loopback that answers every GET with 401."""

    async def refuse(request: Request) -> PlainTextResponse:
        return PlainTextResponse("no", status_code=401)

    app = Starlette(routes=[Route("/items", refuse)])
    with uvicorn_on_loopback(uvicorn.Config(app, log_level="critical", lifespan="off")) as url:
        yield url


@pytest.mark.parametrize("secret", ["pass word/with+signs=1", "tok&en?x#y%z"])
def test_a_crash_quoting_a_secret_url_encoded_keeps_it_out_of_the_log(
        refusing_api: str, secret: str, caplog: pytest.LogCaptureFixture) -> None:
    import httpx

    def fetch(token: SecretStr) -> str:
        """Fetch the items with a token in the query (the exception quotes the URL, encoded)."""
        answer = httpx.get(refusing_api + "/items", params={"token": token.get_secret_value()}, timeout=5)
        answer.raise_for_status()
        return answer.text

    driver = FunctionDriver([fetch], name="items")
    with caplog.at_level("DEBUG"), pytest.raises(ToolCallError) as caught:
        driver.process_llm_response(_model_says("fetch", {"token": secret}))
    ours = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("mcs"))  # (httpx logs URLs itself)
    assert "HTTPStatusError" in caught.value.message and "HTTPStatusError" in ours  # logged, for the operator
    from urllib.parse import quote, quote_plus

    for form in (secret, quote(secret, safe=""), quote_plus(secret), quote(secret)):
        assert form not in ours + caught.value.message, form
