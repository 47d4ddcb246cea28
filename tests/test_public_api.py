"""The public API: ``mcs.__all__`` is sorted, importable, and holds what the project promises."""

from __future__ import annotations

import inspect

import pytest

import mcs

REQUIRED = [
    "AgentContext", "DriverMeta", "FunctionDriver", "MCSDriver", "PolicyDecision", "Tool",
    "ToolCall", "ToolCallError", "Toolbox", "available_drivers", "load_driver",
    "parse_tool_calls", "tool",
]


def test_all_is_sorted_and_unique() -> None:
    assert mcs.__all__ == sorted(mcs.__all__)
    assert len(set(mcs.__all__)) == len(mcs.__all__)


@pytest.mark.parametrize("name", mcs.__all__)
def test_every_public_name_is_importable(name: str) -> None:
    assert getattr(mcs, name) is not None
    namespace: dict[str, object] = {}
    exec(f"from mcs import {name}", namespace)
    assert namespace[name] is getattr(mcs, name)


@pytest.mark.parametrize("name", REQUIRED)
def test_the_names_the_project_requires_are_public(name: str) -> None:
    assert name in mcs.__all__


def test_no_private_or_module_names_leak_into_all() -> None:
    for name in mcs.__all__:
        assert not name.startswith("_")
        assert not inspect.ismodule(getattr(mcs, name))


def test_tool_call_has_name_arguments_dict_and_id() -> None:
    call = mcs.ToolCall(name="add", arguments={"a": 1}, id="call_1")
    assert (call.name, call.arguments, call.id) == ("add", {"a": 1}, "call_1")
    assert isinstance(mcs.parse_tool_calls('{"tool": "add", "arguments": {"a": 1}}')[0].arguments, dict)


def test_tool_call_error_has_a_code() -> None:
    assert mcs.ToolCallError("x").code == "EXECUTION_ERROR"
    assert issubclass(mcs.InvalidInputError, mcs.ToolCallError)


def test_the_contract_methods_exist_on_mcs_driver() -> None:
    for method in ("get_function_description", "get_driver_system_message",
                   "process_llm_response", "aprocess_llm_response", "supports"):
        assert callable(getattr(mcs.MCSDriver, method))
    assert inspect.iscoroutinefunction(mcs.MCSDriver.aprocess_llm_response)
    assert issubclass(mcs.FunctionDriver, mcs.MCSDriver)
    assert issubclass(mcs.Toolbox, mcs.MCSDriver)


def test_the_policy_api_decides() -> None:
    assert mcs.PolicyDecision.allow().allowed
    assert not mcs.PolicyDecision.deny("no").allowed
    assert mcs.AgentContext(agent_id="a").agent_id == "a"


def test_a_version_is_exposed() -> None:
    assert isinstance(mcs.__version__, str) and mcs.__version__.count(".") >= 1
