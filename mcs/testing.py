"""A contract test suite every MCS driver's tests can subclass (STYLE.md, point 11).

    # tests/test_my_driver.py
    import pytest
    from mcs.testing import DriverContractTests

    class TestMyDriverContract(DriverContractTests):
        @pytest.fixture
        def driver(self):
            with MyDriver(base_url=...) as driver:
                yield driver

        @pytest.fixture
        def valid_call(self):
            return '{"tool": "get_user", "arguments": {"id": 1}}'

The subclass provides the fixture ``driver`` (an :class:`~mcs.MCSDriver`) and, optionally,
``valid_call``: an LLM response that should execute successfully against that driver.
Checks that need what a driver did not give are skipped with the reason.

What is checked: the meta is valid (UUID id, non-empty fields); the function description
and the system message are non-empty strings and the message contains the description
(unless a custom message is set); a response without a call is returned as the same
object (the chaining rule), and so is a call to a tool the driver does not have; tool
names follow the provider alphabet and are unique; invalid arguments raise
``INVALID_INPUT`` and execute nothing; ``valid_call`` runs, and the async twin gives the
same result; ``supports()`` agrees with ``meta.capabilities``.

Needs ``pytest``, which is imported only by this module.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from mcs import prompts
from mcs.driver import KNOWN_CAPABILITIES, DriverMeta, MCSDriver, ToolDriver
from mcs.errors import ErrorCode, InvalidInputError, ToolCallError, ToolNotFoundError
from mcs.pipeline import ExecutionEvent
from mcs.tools import TOOL_NAME_PATTERN, Tool

#: Model names the description and system message are rendered for.
MODEL_NAMES: tuple[str | None, ...] = (None, "gpt-4o", "claude-3-5-sonnet", "llama-3.1-8b-instruct")

#: Responses that hold no tool call: a driver must hand each back unchanged.
PROSE_RESPONSES: tuple[Any, ...] = (
    "The capital of France is Paris. No tool is needed for that.",
    "",
    {"role": "assistant", "content": "Here is my answer, without calling anything."},
)

UNKNOWN_TOOL = "mcs_contract_no_such_tool"
_EXTRA_ARGUMENT = "mcs_contract_unexpected_argument"


def _bad_arguments(tool: Tool) -> tuple[dict[str, Any], str] | None:
    """Arguments the tool's schema must refuse, and the field the error should name."""
    schema = tool.input_schema
    required = [name for name in schema.get("required", ()) if isinstance(name, str)]
    if required:
        return {}, required[0]
    if "properties" in schema and "additionalProperties" not in schema:
        return {_EXTRA_ARGUMENT: 1}, _EXTRA_ARGUMENT
    return None


class _Recorder:
    """Counts what the pipeline's hooks see while a check runs."""

    def __init__(self) -> None:
        self.started: list[ExecutionEvent] = []
        self.ended: list[ExecutionEvent] = []
        self.failed: list[ExecutionEvent] = []


class DriverContractTests:
    """Subclass with a ``driver`` fixture (and optionally ``valid_call``); pytest runs the checks.

    Override :meth:`assert_same_result` when a driver's results legitimately differ
    between two runs (timestamps, generated ids).
    """

    @pytest.fixture
    def driver(self) -> MCSDriver:
        pytest.fail(f"{type(self).__name__} must define a `driver` fixture returning an MCSDriver")

    @pytest.fixture
    def valid_call(self) -> Any:
        """An LLM response that runs successfully; ``None`` skips the checks that need one."""
        return None

    def assert_same_result(self, first: Any, second: Any) -> None:
        """How two runs of ``valid_call`` are compared (sync against async)."""
        assert first == second, f"sync gave {first!r}, async gave {second!r}"

    # ------------------------------------------------------------------ helpers

    @staticmethod
    def exposed_name(driver: MCSDriver, name: str) -> str:
        """The name the LLM sees for the tool the driver lists as ``name`` (its ``prefix`` applied).

        Use it to write a ``valid_call`` that works with and without a prefix. Fails the test
        when the driver lists no such tool.
        """
        tools = DriverContractTests._tool_driver(driver).list_tools()
        exposed = next((tool.name for tool in tools if tool.unprefixed_name == name), None)
        if exposed is None:
            pytest.fail(f"{type(driver).__name__} lists no tool named {name!r}")
        return exposed

    @staticmethod
    def _tool_driver(driver: MCSDriver) -> ToolDriver:
        if not isinstance(driver, ToolDriver):
            pytest.skip(f"{type(driver).__name__} is not a ToolDriver: it does not list tools")
        return driver

    @pytest.fixture
    def mcs_contract_recorder(self, driver: MCSDriver) -> Iterator[_Recorder]:
        """Hooks on the driver that record every call the pipeline starts and finishes."""
        recorder = _Recorder()
        if not isinstance(driver, ToolDriver):
            yield recorder
            return
        controls = driver.controls
        hooks = [
            (controls.start_hooks, recorder.started.append),
            (controls.end_hooks, recorder.ended.append),
            (controls.error_hooks, recorder.failed.append),
        ]
        for hooks_list, hook in hooks:
            hooks_list.append(hook)
        try:
            yield recorder
        finally:
            for hooks_list, hook in hooks:
                hooks_list.remove(hook)

    # ------------------------------------------------------------------ identity

    def test_meta_is_a_valid_driver_meta(self, driver: MCSDriver) -> None:
        meta = driver.meta
        assert isinstance(meta, DriverMeta)
        assert str(uuid.UUID(meta.id)) == meta.id.lower(), "meta.id must be a UUID string"
        for field in ("name", "version", "protocol", "transport", "spec_format"):
            value = getattr(meta, field)
            assert isinstance(value, str) and value.strip(), f"meta.{field} must be a non-empty string"
        assert meta.target_llms, "meta.target_llms must name at least one glob ('*' for all)"
        assert all(isinstance(c, str) and c for c in meta.capabilities)
        assert len(set(meta.capabilities)) == len(meta.capabilities), "capabilities repeat"

    def test_meta_tells_the_prefix_and_the_models_this_driver_has_prompts_for(self, driver: MCSDriver) -> None:
        if not isinstance(driver, ToolDriver):
            pytest.skip("not a ToolDriver: its prefix and templates are its own business")
        if driver.prefix:
            assert driver.meta.prefix == driver.prefix, (
                f"meta.prefix is {driver.meta.prefix!r} but tool names carry the prefix {driver.prefix!r}"
            )
        expected = prompts.target_llms(driver.prompt_templates)
        assert set(expected) <= set(driver.meta.target_llms), (
            f"meta.target_llms is {driver.meta.target_llms!r}; the driver has prompts for {expected!r}"
        )

    # ------------------------------------------------------------------ descriptions

    @pytest.mark.parametrize("model", MODEL_NAMES)
    def test_function_description_is_a_non_empty_string(
        self, driver: MCSDriver, model: str | None
    ) -> None:
        description = driver.get_function_description(model)
        assert isinstance(description, str) and description.strip()

    @pytest.mark.parametrize("model", MODEL_NAMES)
    def test_system_message_is_a_non_empty_string(self, driver: MCSDriver, model: str | None) -> None:
        message = driver.get_driver_system_message(model)
        assert isinstance(message, str) and message.strip()

    @pytest.mark.parametrize("model", MODEL_NAMES)
    def test_system_message_contains_the_function_description(
        self, driver: MCSDriver, model: str | None
    ) -> None:
        if getattr(driver, "custom_system_message", None) is not None:
            pytest.skip("a custom system message replaces the generated one")
        description = driver.get_function_description(model)
        assert description in driver.get_driver_system_message(model)

    # ------------------------------------------------------------------ chaining

    @pytest.mark.parametrize("response", PROSE_RESPONSES, ids=["prose", "empty", "message"])
    def test_a_response_without_a_call_is_returned_unchanged(
        self, driver: MCSDriver, response: Any, mcs_contract_recorder: _Recorder
    ) -> None:
        recorder = mcs_contract_recorder
        assert driver.process_llm_response(response) is response
        assert recorder.started == []

    def test_async_twin_returns_a_response_without_a_call_unchanged(self, driver: MCSDriver) -> None:
        response = PROSE_RESPONSES[0]
        assert asyncio.run(driver.aprocess_llm_response(response)) is response

    def test_a_call_to_an_unknown_tool_is_passed_through(
        self, driver: MCSDriver, mcs_contract_recorder: _Recorder
    ) -> None:
        recorder = mcs_contract_recorder
        response = json.dumps({"tool": UNKNOWN_TOOL, "arguments": {"x": 1}})
        if getattr(driver, "on_unknown_tool", "passthrough") == "error":
            with pytest.raises(ToolNotFoundError) as info:
                driver.process_llm_response(response)
            assert info.value.code is ErrorCode.TOOL_NOT_FOUND
            assert UNKNOWN_TOOL in info.value.message
        else:
            assert driver.process_llm_response(response) is response
        assert recorder.started == []

    # ------------------------------------------------------------------ tools

    def test_tool_names_follow_the_provider_alphabet_and_are_unique(self, driver: MCSDriver) -> None:
        tools = self._tool_driver(driver).list_tools()
        names = [tool.name for tool in tools]
        assert names, "a driver lists at least one tool"
        bad = [name for name in names if not TOOL_NAME_PATTERN.match(name)]
        assert not bad, f"names outside {TOOL_NAME_PATTERN.pattern}: {bad}"
        assert len(set(names)) == len(names), f"repeated tool names: {names}"

    def test_every_listed_tool_resolves_to_itself(self, driver: MCSDriver) -> None:
        tool_driver = self._tool_driver(driver)
        for tool in tool_driver.list_tools():
            assert tool_driver.get_tool(tool.name) is tool

    def test_every_input_schema_is_an_object_schema(self, driver: MCSDriver) -> None:
        for tool in self._tool_driver(driver).list_tools():
            schema = tool.input_schema
            assert schema.get("type", "object") == "object", f"{tool.name}: {schema}"
            json.dumps(dict(schema))  # the LLM and native exports need it as JSON

    def test_invalid_arguments_are_refused_and_nothing_runs(
        self, driver: MCSDriver, mcs_contract_recorder: _Recorder
    ) -> None:
        recorder = mcs_contract_recorder
        tool_driver = self._tool_driver(driver)
        for tool in tool_driver.list_tools():
            bad = _bad_arguments(tool)
            if bad is not None:
                break
        else:
            pytest.skip("no tool has required or closed arguments to get wrong")
        arguments, field = bad
        response = json.dumps({"tool": tool.name, "arguments": arguments})
        with pytest.raises(InvalidInputError) as info:
            driver.process_llm_response(response)
        error = info.value
        assert error.code is ErrorCode.INVALID_INPUT
        assert field in error.message, f"the message should name {field!r}: {error.message}"
        assert "Traceback" not in error.message
        assert recorder.started == [], "an invalid call must not reach the driver"

    # ------------------------------------------------------------------ a real call

    def test_valid_call_executes(
        self, driver: MCSDriver, valid_call: Any, mcs_contract_recorder: _Recorder
    ) -> None:
        recorder = mcs_contract_recorder
        if valid_call is None:
            pytest.skip("no `valid_call` fixture: give one to check a real call")
        try:
            result = driver.process_llm_response(valid_call)
        except ToolCallError as error:
            pytest.fail(f"valid_call failed with {error.code.value}: {error.message}")
        assert result is not valid_call, "valid_call holds no call this driver recognises"
        if isinstance(driver, ToolDriver):
            assert recorder.started, "the call did not go through the pipeline's hooks"
            assert len(recorder.ended) == len(recorder.started)
            assert recorder.failed == []

    def test_async_twin_gives_the_same_result(self, driver: MCSDriver, valid_call: Any) -> None:
        if valid_call is None:
            pytest.skip("no `valid_call` fixture: give one to compare sync and async")
        first = driver.process_llm_response(valid_call)
        second = asyncio.run(driver.aprocess_llm_response(valid_call))
        self.assert_same_result(first, second)

    # ------------------------------------------------------------------ capabilities

    def test_supports_agrees_with_meta_capabilities(self, driver: MCSDriver) -> None:
        declared = set(driver.meta.capabilities)
        for capability in KNOWN_CAPABILITIES:
            if capability in declared:
                assert driver.supports(capability), (
                    f"meta declares {capability!r} but the driver lacks its method"
                )
            else:
                assert not driver.supports(capability), f"{capability!r} is not declared"
        assert not driver.supports("mcs-contract-no-such-capability")
