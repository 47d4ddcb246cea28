"""The driver contract suite (mcs.testing), run over the in-memory drivers the core ships."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from mcs import FunctionDriver, Toolbox, tool
from mcs.demo import DemoDriver
from mcs.testing import DriverContractTests, _bad_arguments


class TestDemoDriverContract(DriverContractTests):
    @pytest.fixture
    def driver(self) -> Iterator[DemoDriver]:
        with DemoDriver() as driver:
            yield driver

    @pytest.fixture
    def valid_call(self) -> str:
        return '{"tool": "get_weather", "arguments": {"city": "Paris"}}'


@tool
def shout(text: str, times: int = 1) -> str:
    """Repeat a text in capitals."""
    return " ".join([text.upper()] * times)


class TestPrefixedFunctionDriverContract(DriverContractTests):
    """The same checks hold with a prefix, a custom system message and no worker thread."""

    @pytest.fixture
    def driver(self) -> FunctionDriver:
        return FunctionDriver([shout], prefix="fx", timeout=None, custom_system_message="Be brief.")

    @pytest.fixture
    def valid_call(self) -> dict[str, Any]:
        return {"tool": "fx_shout", "arguments": {"text": "hi", "times": "2"}}


class TestErrorModeFunctionDriverContract(DriverContractTests):
    """With on_unknown_tool='error', an unknown tool raises TOOL_NOT_FOUND instead."""

    @pytest.fixture
    def driver(self) -> FunctionDriver:
        return FunctionDriver([shout], on_unknown_tool="error")


def test_bad_arguments_prefers_a_missing_required_field() -> None:
    assert _bad_arguments(shout.tool) == ({}, "text")


INI = "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"

BROKEN_DRIVERS = """
import json
import pytest
from mcs import FunctionDriver, Toolbox, tool
from mcs.testing import DriverContractTests


@tool
def shout(text: str) -> str:
    "Shout."
    return text.upper()


class Careless(FunctionDriver):
    \"\"\"Runs calls without validating their arguments.\"\"\"

    def prepare(self, call, context=None):
        from mcs.pipeline import Invocation

        invocation = super().prepare(type(call)(call.name, {"text": "x"}), context)
        return Invocation(invocation.tool, dict(call.arguments), invocation.context)


class Copying(FunctionDriver):
    \"\"\"Returns a copy of a response without a call (breaks chaining).\"\"\"

    def process_llm_response(self, llm_response, *, context=None):
        result = super().process_llm_response(llm_response, context=context)
        return json.loads(json.dumps(result)) if result is llm_response else result


class TestCareless(DriverContractTests):
    @pytest.fixture
    def driver(self):
        return Careless([shout], timeout=None)


class TestCopying(DriverContractTests):
    @pytest.fixture
    def driver(self):
        return Copying([shout], timeout=None)
"""


def test_the_suite_fails_drivers_that_break_the_contract(pytester: pytest.Pytester) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(test_broken=BROKEN_DRIVERS)
    result = pytester.runpytest("-q", "-p", "no:cacheprovider")
    failed = {report.nodeid.split("::", 1)[1] for report in result.reprec.getfailures()}  # type: ignore[attr-defined]
    assert "TestCareless::test_invalid_arguments_are_refused_and_nothing_runs" in failed
    assert "TestCopying::test_a_response_without_a_call_is_returned_unchanged[message]" in failed
    assert "TestCopying::test_a_response_without_a_call_is_returned_unchanged[prose]" in failed
    assert not any(name.startswith("TestCareless::test_meta") for name in failed)


def test_a_suite_without_a_driver_fixture_fails_with_a_clear_message(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeini(INI)
    pytester.makepyfile(
        test_missing="""
from mcs.testing import DriverContractTests

class TestNothing(DriverContractTests):
    pass
"""
    )
    result = pytester.runpytest("-q", "-p", "no:cacheprovider", "-k", "test_meta_is")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*must define a `driver` fixture*"])


class TestToolboxContract(DriverContractTests):
    """A toolbox is a driver too: the same contract holds for the combination."""

    @pytest.fixture
    def driver(self) -> Toolbox:
        return Toolbox({"demo": DemoDriver(), "text": FunctionDriver([shout], name="text")})

    @pytest.fixture
    def valid_call(self) -> str:
        return '{"tool": "shout", "arguments": {"text": "hey"}}'
