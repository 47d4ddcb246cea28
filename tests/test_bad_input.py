"""Bad input end to end: each gets its error code and an actionable message; nothing
crashes, and nothing half-runs."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcs import FunctionDriver, tool
from mcs.errors import ErrorCode, ToolCallError


class Ledger:
    """Tools that record every execution, so a test can prove nothing ran."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, dict[str, Any]]] = []

        @tool
        def transfer(to: str, amount: int, memo: str = "") -> dict[str, Any]:
            """Transfer an amount to an account."""
            self.ran.append(("transfer", {"to": to, "amount": amount, "memo": memo}))
            return {"ok": True, "to": to, "amount": amount}

        @tool
        def huge() -> str:
            """Return a very large text."""
            self.ran.append(("huge", {}))
            return "x" * 5_000_000

        self.driver = FunctionDriver([transfer, huge], timeout=None)


@pytest.fixture
def ledger() -> Ledger:
    return Ledger()


def refused(ledger: Ledger, response: Any, code: ErrorCode) -> ToolCallError:
    with pytest.raises(ToolCallError) as info:
        ledger.driver.process_llm_response(response)
    error = info.value
    assert error.code is code, error.message
    assert error.message and "Traceback" not in error.message
    json.dumps(error.to_dict())  # it can be sent back to the model
    assert ledger.ran == [], "a refused call must not run"
    return error


def call(arguments: Any, name: str = "transfer") -> str:
    return json.dumps({"tool": name, "arguments": arguments})


def test_wrong_argument_types_name_the_field_expected_and_got(ledger: Ledger) -> None:
    error = refused(ledger, call({"to": "bob", "amount": "a lot"}), ErrorCode.INVALID_INPUT)
    assert "'amount'" in error.message and "integer" in error.message and '"a lot"' in error.message


def test_missing_required_arguments_are_named(ledger: Ledger) -> None:
    error = refused(ledger, call({"amount": 5}), ErrorCode.INVALID_INPUT)
    assert "missing required argument 'to' (string)" in error.message


def test_extra_arguments_are_refused_with_the_allowed_list(ledger: Ledger) -> None:
    error = refused(ledger, call({"to": "bob", "amount": 5, "exec": "rm -rf /"}), ErrorCode.INVALID_INPUT)
    assert "unexpected argument(s) 'exec'" in error.message
    assert "allowed: amount, memo, to" in error.message


def test_arguments_that_are_not_an_object_are_refused(ledger: Ledger) -> None:
    from mcs.tools import ToolCall

    with pytest.raises(ToolCallError) as info:
        ledger.driver.prepare(ToolCall("transfer", ["bob", 5]))  # type: ignore[arg-type]
    assert info.value.code is ErrorCode.INVALID_INPUT
    assert "must be a JSON object" in info.value.message


def test_unknown_tools_pass_through_or_are_refused_by_name() -> None:
    passthrough = Ledger()
    response = call({}, name="delete_everything")
    assert passthrough.driver.process_llm_response(response) is response
    strict = Ledger()
    strict.driver.on_unknown_tool = "error"
    error = refused(strict, response, ErrorCode.TOOL_NOT_FOUND)
    assert "'delete_everything'" in error.message and "Available tools: transfer, huge" in error.message


@pytest.mark.parametrize(
    "response",
    [
        '{"tool": "transfer", "arguments": {"to": "bob", "amount": 5',
        '{"tool": "transfer", "arguments": {"to": "bob" "amount": 5}}',
        '{"tool": "transfer", "arguments": }',
        "{{{{[[[[",
        '{"tool": "transfer", "arguments": "{\\"to\\": \\"bob\\", \\"amount\\":"}',
    ],
    ids=["truncated", "missing-comma", "no-value", "brackets", "broken-string-arguments"],
)
def test_malformed_json_never_crashes_and_never_runs_a_partial_call(ledger: Ledger, response: str) -> None:
    try:
        result = ledger.driver.process_llm_response(response)
    except ToolCallError as error:
        assert error.code is ErrorCode.INVALID_INPUT
        assert ledger.ran == []
        return
    if result is response:
        assert ledger.ran == []
    else:  # a repair is allowed only if it yields the complete, valid call
        assert ledger.ran == [("transfer", {"to": "bob", "amount": 5, "memo": ""})]


def test_a_huge_response_without_a_call_passes_through(ledger: Ledger) -> None:
    response = "Let me think. " * 400_000
    assert ledger.driver.process_llm_response(response) is response
    assert ledger.ran == []


def test_a_huge_argument_is_validated_like_any_other(ledger: Ledger) -> None:
    error = refused(ledger, call({"to": "bob", "amount": "9" * 100_000}), ErrorCode.INVALID_INPUT)
    assert len(error.message) < 1000, "the message quotes a bounded excerpt of the value"


def test_a_huge_result_comes_back_whole(ledger: Ledger) -> None:
    assert len(ledger.driver.process_llm_response(call({}, name="huge"))) == 5_000_000


def test_text_that_is_not_unicode_is_refused_naming_the_field(ledger: Ledger) -> None:
    error = refused(ledger, call({"to": "bob\ud800", "amount": 5}), ErrorCode.INVALID_INPUT)
    assert "argument 'to' is not valid Unicode text" in error.message


@pytest.mark.parametrize("response", [b"\xff\xfe\x00garbage", b'{"tool": "transfer"}\xff', bytearray(b"\x80")])
def test_bytes_that_are_not_utf8_never_crash(ledger: Ledger, response: Any) -> None:
    try:
        result = ledger.driver.process_llm_response(response)
    except ToolCallError as error:
        assert error.code is ErrorCode.INVALID_INPUT
    else:
        assert result is response
    assert ledger.ran == []


def test_outcomes_report_every_kind_of_bad_call_without_raising(ledger: Ledger) -> None:
    for response, code in [
        (call({"to": "bob"}), "INVALID_INPUT"),
        (call({"to": "bob", "amount": 1, "x": 1}), "INVALID_INPUT"),
        (call({"to": 1, "amount": 1}), "INVALID_INPUT"),
    ]:
        [outcome] = ledger.driver.run_llm_response(response)
        assert outcome.to_dict()["error"] == code
    assert ledger.ran == []


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=12,
)
RESPONSES = st.one_of(
    st.text(max_size=300),
    st.binary(max_size=100),
    JSON,
    st.builds(lambda args: call(args), JSON),
    st.builds(lambda args: {"tool": "transfer", "arguments": args}, JSON),
    st.builds(
        lambda args: {"role": "assistant", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "transfer", "arguments": args}}]},
        st.text(max_size=60) | JSON.map(json.dumps),
    ),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(RESPONSES)
def test_any_response_either_runs_a_valid_call_passes_through_or_is_refused(response: Any) -> None:
    ledger = Ledger()
    try:
        result = ledger.driver.process_llm_response(response)
    except ToolCallError as error:
        assert error.code in (ErrorCode.INVALID_INPUT, ErrorCode.TOOL_NOT_FOUND)
        assert ledger.ran == []
        json.dumps(error.to_dict()).encode("utf-8")
        return
    if result is response:
        assert ledger.ran == []
        return
    results = result if isinstance(result, list) else [result]
    assert len(ledger.ran) == len(results)
    for name, arguments in ledger.ran:
        assert name == "transfer"
        assert isinstance(arguments["to"], str) and isinstance(arguments["amount"], int)
