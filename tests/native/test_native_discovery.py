"""Discovery mode where tools leave the driver: a driver above its token budget exports its
meta-tools only, and a found tool is called through ``call_tool`` as that tool itself."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from support.recording import RecordingDriver

import mcs
from mcs.context import PolicyDecision
from mcs.errors import InvalidInputError, PolicyDeniedError, ToolNotFoundError
from mcs.native import FORMATS, TOOL_LIMITS, ToolLimitWarning, export_tools
from mcs.tools import Tool

STRIPE = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "openapi" / "stripe_spec3_2022-04-12.json"
META = ["search_tools", "describe_tool", "call_tool"]
TOOLS = [
    {"name": "create_customer", "description": "Create a customer.",
     "input_schema": {"type": "object", "properties": {"email": {"type": "string"}}, "required": ["email"]}},
    {"name": "delete_customer", "description": "Delete a customer.",
     "input_schema": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}},
]


def _names(exported: list[dict[str, Any]], fmt: str) -> list[str]:
    return [entry["function"]["name"] if fmt == "openai" else entry["name"] for entry in exported]


def _native(name: str, arguments: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]}


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_driver_in_discovery_mode_exports_its_meta_tools_only(fmt: Any) -> None:
    driver = RecordingDriver(TOOLS, description_mode="discovery")
    assert _names(export_tools(driver.list_tools(), fmt), fmt) == META
    assert _names(export_tools(driver.list_tools(), fmt, all_tools=True), fmt) == ["create_customer", "delete_customer"]
    inline = RecordingDriver(TOOLS)
    assert _names(export_tools(inline.list_tools(), fmt), fmt) == ["create_customer", "delete_customer"]


def test_call_tool_runs_the_named_tool_through_its_own_validation_and_policies() -> None:
    driver = RecordingDriver(TOOLS, description_mode="discovery")
    seen: list[str] = []
    driver.add_policy(lambda ctx, tool, args: seen.append(tool) or (
        PolicyDecision.deny("deleting needs a human") if tool == "delete_customer" else PolicyDecision.allow()))
    driver.process_llm_response(_native("call_tool", {"name": "create_customer", "arguments": {"email": "a@b.c"}}))
    assert driver.calls == [("create_customer", {"email": "a@b.c"})]
    with pytest.raises(PolicyDeniedError):
        driver.process_llm_response(_native("call_tool", {"name": "delete_customer", "arguments": {"id": "cus_1"}}))
    with pytest.raises(InvalidInputError):
        driver.call_tool("call_tool", {"name": "create_customer", "arguments": {"email": 3}})
    assert seen == ["create_customer", "delete_customer"]
    assert driver.calls == [("create_customer", {"email": "a@b.c"})]


def test_call_tool_takes_arguments_written_as_json_text_and_refuses_what_names_no_tool() -> None:
    driver = RecordingDriver(TOOLS, description_mode="discovery")
    driver.call_tool("call_tool", {"name": "create_customer", "arguments": '{"email": "a@b.c"}'})
    assert driver.calls == [("create_customer", {"email": "a@b.c"})]
    with pytest.raises(ToolNotFoundError, match="refund"):
        driver.call_tool("call_tool", {"name": "refund", "arguments": {}})
    with pytest.raises(ToolNotFoundError):
        driver.call_tool("call_tool", {"name": "call_tool", "arguments": {"name": "create_customer"}})
    with pytest.raises(InvalidInputError, match="arguments"):
        driver.call_tool("call_tool", {"name": "create_customer", "arguments": [1, 2]})
    found = driver.call_tool("call_tool", {"name": "search_tools", "arguments": {"query": "remove a customer"}})
    assert found["tools"][0]["name"] == "delete_customer"


def test_the_text_description_does_not_offer_call_tool() -> None:
    driver = RecordingDriver(TOOLS, description_mode="discovery")
    description = driver.get_function_description()
    assert "search_tools" in description and "call_tool" not in description


def test_more_tools_than_the_api_accepts_warn() -> None:
    many = [Tool(name=f"tool_{number}", input_schema={"type": "object"}) for number in range(130)]
    for fmt, limit in TOOL_LIMITS.items():
        with pytest.warns(ToolLimitWarning, match=f"130 tools exceed the {limit}"):
            export_tools(many, fmt)  # type: ignore[arg-type]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        export_tools(many, "anthropic")
        export_tools(many[:128], "openai")


@pytest.mark.skipif(not STRIPE.exists(), reason="the shared OpenAPI corpus is not here")
def test_stripe_leaves_the_driver_as_three_tools_instead_of_a_megabyte() -> None:
    driver = mcs.load_driver("rest", spec=str(STRIPE))
    exported = export_tools(driver.list_tools(), "openai")
    assert _names(exported, "openai") == META
    assert len(json.dumps(exported)) < 3000
    with pytest.warns(ToolLimitWarning, match="417 tools exceed the 128"):
        everything = export_tools(driver.list_tools(), "openai", all_tools=True)
    assert len(everything) == 417 and len(json.dumps(everything)) > 500_000
