"""The contract suite (mcs.testing) over the ``functions`` driver, each with a call that runs.

``test_installed_drivers`` checks the registered driver without a call; here it is loaded
through the registry and really called, and two configurations the in-memory driver
supports get the same checks: async tools with an injected context, and discovery mode.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

import mcs
from mcs import AgentContext, FunctionDriver, tool
from mcs.demo import DemoDriver
from mcs.testing import DriverContractTests


class TestRegisteredFunctionsDriverContract(DriverContractTests):
    """``load_driver("functions")``, called with an OpenAI-style structured message."""

    @pytest.fixture
    def driver(self) -> Iterator[mcs.MCSDriver]:
        driver = mcs.load_driver("functions")
        assert isinstance(driver, DemoDriver)
        with driver:
            yield driver

    @pytest.fixture
    def valid_call(self) -> dict[str, Any]:
        arguments = json.dumps({"city": "Tokyo", "unit": "fahrenheit"})
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "get_weather", "arguments": arguments}},
            ],
        }

    def test_valid_call_gives_the_tools_result(self, driver: mcs.MCSDriver, valid_call: Any) -> None:
        assert driver.process_llm_response(valid_call) == {
            "city": "Tokyo", "temperature": 75.2, "unit": "fahrenheit", "sky": "clear"
        }


@tool
async def countdown(start: int, ctx: AgentContext) -> dict[str, Any]:
    """Count down from a number (an async tool that reads the caller's context)."""
    await asyncio.sleep(0)
    return {"numbers": list(range(start, -1, -1)), "agent": ctx.agent_id}


@tool
def lower(text: str) -> str:
    """Lower-case a text."""
    return text.lower()


class TestAsyncToolsFunctionDriverContract(DriverContractTests):
    """An async tool runs on both paths: the sync one gives it its own event loop."""

    @pytest.fixture
    def driver(self) -> Iterator[FunctionDriver]:
        with FunctionDriver([countdown, lower], name="async_tools") as driver:
            yield driver

    @pytest.fixture
    def valid_call(self) -> str:
        return 'Counting down. {"tool": "countdown", "arguments": {"start": "3"}}'

    def test_valid_call_gives_the_tools_result(self, driver: mcs.MCSDriver, valid_call: str) -> None:
        assert driver.process_llm_response(valid_call) == {"numbers": [3, 2, 1, 0], "agent": "anonymous"}


class TestDiscoveryModeFunctionDriverContract(DriverContractTests):
    """In discovery mode the meta-tools are tools of the driver too, and are called like them."""

    @pytest.fixture
    def driver(self) -> Iterator[DemoDriver]:
        with DemoDriver(description_mode="discovery", prefix="demo") as driver:
            yield driver

    @pytest.fixture
    def valid_call(self) -> str:
        return '{"tool": "demo_describe_tool", "arguments": {"name": "demo_add"}}'

    def test_the_meta_tools_are_listed(self, driver: DemoDriver) -> None:
        names = {t.name for t in driver.list_tools()}
        assert {"demo_search_tools", "demo_describe_tool", "demo_add", "demo_get_weather"} <= names

