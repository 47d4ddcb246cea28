"""The public API: ``mcs.__all__`` is sorted, importable, and holds what the project promises."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys

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


# What ``import mcs`` (and ``mcs.driver``, which every driver imports) must not load: each
# is loaded on first use instead (pydantic by DriverMeta, YAML by the prompt templates,
# tantivy by a discovery search, jsonschema_rs by the first call, asyncio by an async call).
DEFERRED = ("pydantic", "pydantic_core", "yaml", "tantivy", "jsonschema_rs", "asyncio", "importlib.metadata")


def _fresh_python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("module", ["mcs", "mcs.driver"])
def test_importing_the_core_loads_no_heavy_dependency(module: str) -> None:
    out = _fresh_python(f"import sys, json, {module}; print(json.dumps(sorted(sys.modules)))")
    loaded = set(json.loads(out))
    assert [name for name in DEFERRED if name in loaded] == []


def test_every_public_name_resolves_in_a_fresh_process() -> None:
    code = (
        "import mcs\n"
        "missing = [n for n in mcs.__all__ if getattr(mcs, n, None) is None]\n"
        "namespace = {}\n"
        "exec('from mcs import ' + ', '.join(mcs.__all__), namespace)\n"
        "assert all(namespace[n] is getattr(mcs, n) for n in mcs.__all__)\n"
        "assert set(mcs.__all__) <= set(dir(mcs))\n"
        "print(missing)\n"
    )
    assert _fresh_python(code).strip() == "[]"


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'NoSuchThing'"):
        mcs.NoSuchThing  # noqa: B018
    assert not hasattr(mcs.driver, "NoSuchThing")


def test_a_submodule_is_reachable_as_an_attribute_of_mcs_in_a_fresh_process() -> None:
    code = "import mcs; print(mcs.parsing.parse_tool_calls.__name__, mcs.prompts.__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["parse_tool_calls", "mcs.prompts"]
