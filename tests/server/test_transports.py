"""The RFC's guarantees over a real server on loopback, for HTTP, WebSocket and STDIO."""

from __future__ import annotations

from typing import Any

from rfc0001_helpers import Audit

from mcs.context import AgentContext

# The tool raises RuntimeError("the backend is down"): its text stays in the server's log.
BOOM_MESSAGE = "boom failed unexpectedly (RuntimeError); the details are in the server's log."

Wire = tuple[Any, Audit]


def ctx(**fields: Any) -> AgentContext:
    return AgentContext(**fields)


def test_capabilities_list_every_tool_with_its_metadata(wire: Wire) -> None:
    client, _ = wire
    status, body = client.capabilities()
    assert status == 200
    assert body["server"] == "sample" and body["version"] == "1.2.3"
    tools = {t["name"]: t for t in body["tools"]}
    assert set(tools) == {"echo", "stuck", "boom", "wrong_type", "wrong_value", "forbidden"}
    assert tools["stuck"]["timeout_ms"] == 100 and tools["stuck"]["idempotent"] is False
    assert tools["echo"]["input_schema"]["required"] == ["text"]
    assert set(tools["echo"]) == {"name", "description", "input_schema", "output_schema",
                                  "timeout_ms", "idempotent"}


def test_success_returns_the_result_and_fires_start_then_end(wire: Wire) -> None:
    client, audit = wire
    status, request_id, body = client.execute("echo", {"text": "ab", "times": 2},
                                              ctx(agent_id="a1", request_id="req-ok"))
    assert status == 200
    assert request_id == "req-ok"
    assert body["tool"] == "echo" and body["request_id"] == "req-ok"
    assert body["result"]["text"] == "abab"
    assert audit.for_request("req-ok") == ["start", "policy1", "policy2", "end"]


def test_hooks_cannot_change_the_result(wire: Wire) -> None:
    client, _ = wire
    _, _, body = client.execute("echo", {"text": "x"}, ctx(request_id="req-vandal"))
    assert body["result"]["text"] == "x"


def test_agent_context_is_injected_from_the_transport(wire: Wire) -> None:
    client, _ = wire
    status, _, body = client.execute(
        "echo", {"text": "x"},
        ctx(agent_id="agent-7", model="gpt-4o", request_id="req-ctx", metadata={"tenant": "acme"}))
    assert status == 200
    assert body["result"] == {"text": "x", "agent_id": "agent-7", "model": "gpt-4o",
                              "request_id": "req-ctx", "tenant": "acme"}


def test_a_request_without_identity_is_anonymous_with_a_fresh_request_id(wire: Wire) -> None:
    client, _ = wire
    _, request_id, body = client.execute("echo", {"text": "x"})
    assert body["result"]["agent_id"] == "anonymous"
    assert body["result"]["request_id"] == request_id and len(request_id) >= 16


def test_first_denial_short_circuits_and_fires_the_error_hook(wire: Wire) -> None:
    client, audit = wire
    status, _, body = client.execute("forbidden", {}, ctx(request_id="req-deny1"))
    assert status == 403
    assert body == {"error": "POLICY_DENIED",
                    "message": "The call to forbidden was denied by policy: forbidden is never allowed"}
    assert audit.for_request("req-deny1") == ["start", "policy1", "error"]
    assert audit.errors("req-deny1") == ["POLICY_DENIED"]


def test_all_policies_must_allow(wire: Wire) -> None:
    client, audit = wire
    status, _, body = client.execute("echo", {"text": "x"},
                                     ctx(request_id="req-deny2", metadata={"env": "prod"}))
    assert status == 403
    assert body["error"] == "POLICY_DENIED" and body["message"].endswith("Blocked in prod")
    assert audit.for_request("req-deny2") == ["start", "policy1", "policy2", "error"]


def test_a_tool_that_raises_is_an_execution_error(wire: Wire) -> None:
    client, audit = wire
    status, _, body = client.execute("boom", {}, ctx(request_id="req-boom"))
    assert status == 502
    assert body == {"error": "EXECUTION_ERROR", "message": BOOM_MESSAGE}
    assert audit.for_request("req-boom") == ["start", "policy1", "policy2", "error"]


def test_a_tool_returning_another_model_is_an_execution_error(wire: Wire) -> None:
    client, audit = wire
    status, _, body = client.execute("wrong_type", {}, ctx(request_id="req-shape"))
    assert status == 502
    assert body["error"] == "EXECUTION_ERROR"
    assert "returned EchoResponse, not its declared output model Count" in body["message"]
    assert audit.errors("req-shape") == ["EXECUTION_ERROR"]


def test_a_tool_returning_an_invalid_model_is_an_execution_error(wire: Wire) -> None:
    client, _ = wire
    status, _, body = client.execute("wrong_value", {}, ctx(request_id="req-value"))
    assert status == 502
    assert "field 'count'" in body["message"]


def test_a_tool_over_its_timeout_is_a_timeout(wire: Wire) -> None:
    client, audit = wire
    status, _, body = client.execute("stuck", {}, ctx(request_id="req-slow"))
    assert status == 504
    assert body["error"] == "TIMEOUT"
    assert "100 ms" in body["message"] and "not idempotent" in body["message"]
    assert audit.for_request("req-slow") == ["start", "policy1", "policy2", "error"]


def test_an_unknown_tool_is_tool_not_found_and_still_observed(wire: Wire) -> None:
    client, audit = wire
    status, _, body = client.execute("ecko", {}, ctx(request_id="req-missing"))
    assert status == 404
    assert body["error"] == "TOOL_NOT_FOUND" and "Did you mean echo?" in body["message"]
    assert audit.for_request("req-missing") == ["start", "error"]


def test_bad_arguments_are_invalid_input_before_any_policy(wire: Wire) -> None:
    client, audit = wire
    status, _, body = client.execute("echo", {"text": 5}, ctx(request_id="req-bad"))
    assert status == 400
    assert body["error"] == "INVALID_INPUT" and "'text'" in body["message"]
    assert audit.for_request("req-bad") == ["start", "error"]


def test_arguments_that_are_not_an_object_are_invalid_input(wire: Wire) -> None:
    client, _ = wire
    status, _, body = client.execute("echo", ["x"])
    assert status == 400
    assert body == {"error": "INVALID_INPUT", "message": "'arguments' must be a JSON object, got an array."}


def test_the_same_calls_give_the_same_answers_on_every_transport(wire: Wire) -> None:
    client, _ = wire
    calls: list[tuple[str, Any, dict[str, Any]]] = [
        ("echo", {"text": "hi", "times": 3}, {"agent_id": "same", "request_id": "same-1"}),
        ("echo", {"text": "hi", "extra": 1}, {"request_id": "same-2"}),
        ("forbidden", {}, {"request_id": "same-3"}),
        ("boom", {}, {"request_id": "same-4"}),
        ("nope", {}, {"request_id": "same-5"}),
        ("stuck", {}, {"request_id": "same-6"}),
    ]
    answers = [client.execute(tool, args, ctx(**fields)) for tool, args, fields in calls]
    assert answers == EXPECTED_ANSWERS


EXPECTED_ANSWERS = [
    (200, "same-1", {"tool": "echo", "request_id": "same-1", "result": {
        "text": "hihihi", "agent_id": "same", "model": None, "request_id": "same-1", "tenant": None}}),
    (400, "same-2", {"error": "INVALID_INPUT",
                     "message": "Invalid arguments for echo: unexpected argument(s) 'extra'; allowed: text, times."}),
    (403, "same-3", {"error": "POLICY_DENIED",
                     "message": "The call to forbidden was denied by policy: forbidden is never allowed"}),
    (502, "same-4", {"error": "EXECUTION_ERROR", "message": BOOM_MESSAGE}),
    (404, "same-5", {"error": "TOOL_NOT_FOUND",
                     "message": "There is no tool named 'nope'. Available tools: echo, stuck, boom, wrong_type, wrong_value, forbidden."}),
    (504, "same-6", {"error": "TIMEOUT",
                     "message": "stuck did not finish within its timeout of 100 ms; its result will be discarded. "
                                "It is not idempotent and may still complete: check its effect before retrying."}),
]
