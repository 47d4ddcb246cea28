"""Typed Python functions as tools, and FunctionDriver."""

from __future__ import annotations

import asyncio
import threading
from typing import Annotated, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, ValidationError

from mcs import AgentContext, FunctionDriver, FunctionTool, tool
from mcs.errors import (
    ConfigurationError,
    ErrorCode,
    ExecutionError,
    InvalidInputError,
    ToolTimeoutError,
)


class CustomerRequest(BaseModel):
    customer_id: int = Field(description="The customer's numeric id.")
    include_orders: bool = False


class CustomerResponse(BaseModel):
    name: str
    orders: int


@tool(name="get_customer", annotations={"readOnlyHint": True})
def get_customer(req: CustomerRequest, ctx: AgentContext) -> CustomerResponse:
    """Fetch one customer."""
    return CustomerResponse(name=f"customer {req.customer_id} for {ctx.agent_id}",
                            orders=3 if req.include_orders else 0)


@tool
def add(a: int, b: int = 1) -> int:
    """Add two integers.

    More text that stays in the description.
    """
    return a + b


@tool
async def slow_echo(text: str) -> str:
    """Echo text, asynchronously."""
    await asyncio.sleep(0)
    return text


def plain(text: str, ctx: AgentContext) -> dict[str, str]:
    return {"text": text, "agent": ctx.agent_id}


def test_a_decorated_function_stays_callable() -> None:
    assert add(2, 3) == 5
    assert isinstance(add, FunctionTool)
    assert add.func.__name__ == "add"


def test_plain_parameters_become_the_input_schema() -> None:
    schema = add.tool.input_schema
    assert schema["type"] == "object"
    assert schema["properties"]["a"]["type"] == "integer"
    assert schema["properties"]["b"]["default"] == 1
    assert schema["required"] == ["a"]
    assert "title" not in schema


def test_the_docstring_is_the_description_and_the_return_type_the_output_schema() -> None:
    assert add.tool.description.startswith("Add two integers.")
    assert "More text" in add.tool.description
    assert add.tool.output_schema == {"type": "integer"}
    assert FunctionTool(lambda: None).tool.output_schema is None


def test_a_pydantic_model_parameter_gives_its_fields_as_arguments() -> None:
    schema = get_customer.tool.input_schema
    assert set(schema["properties"]) == {"customer_id", "include_orders"}
    assert schema["properties"]["customer_id"]["description"] == "The customer's numeric id."
    assert get_customer.tool.output_schema is not None
    assert get_customer.tool.annotations == {"readOnlyHint": True}


def test_the_context_parameter_is_injected_and_never_shown() -> None:
    for function in (get_customer, FunctionTool(plain)):
        assert "ctx" not in function.tool.input_schema.get("properties", {})
    driver = FunctionDriver([get_customer, plain])
    ctx = AgentContext(agent_id="support-bot")
    result = driver.call_tool("get_customer", {"customer_id": "7", "include_orders": "true"}, context=ctx)
    assert result == CustomerResponse(name="customer 7 for support-bot", orders=3)
    assert driver.call_tool("plain", {"text": "hi"}, context=ctx) == {"text": "hi", "agent": "support-bot"}


def test_names_and_descriptions_can_be_given() -> None:
    named = tool(name="math.add", description="Sum.")(lambda a, b: a + b)
    assert named.tool.name == "math_add"
    assert named.tool.original_name == "math.add"
    assert named.tool.description == "Sum."
    assert FunctionDriver([named]).process_llm_response('{"tool": "math.add", "arguments": {"a": 1, "b": 2}}') == 3


def test_star_arguments_are_refused() -> None:
    def star(*values: int) -> int:
        return sum(values)

    def keywords(**values: int) -> int:
        return len(values)

    for function in (star, keywords):
        with pytest.raises(ConfigurationError, match=r"\*args or \*\*kwargs"):
            FunctionTool(function)


def test_a_model_parameter_must_be_the_only_argument() -> None:
    def mixed(req: CustomerRequest, extra: int) -> None:
        return None

    with pytest.raises(ConfigurationError, match="only argument"):
        FunctionTool(mixed)


def test_two_tools_with_one_name_are_refused() -> None:
    driver = FunctionDriver([add])
    with pytest.raises(ConfigurationError, match="already registered"):
        driver.add(tool(name="add")(lambda: 0))


def test_adding_a_function_later_refreshes_the_tools() -> None:
    driver = FunctionDriver([add])
    assert driver.get_tool("plain") is None
    wrapped = driver.add(plain)
    assert isinstance(wrapped, FunctionTool)
    assert driver.get_tool("plain") is not None


def test_the_driver_meta_is_stable_per_name() -> None:
    assert FunctionDriver(name="x").meta.id == FunctionDriver(name="x").meta.id
    assert FunctionDriver(name="x").meta.id != FunctionDriver(name="y").meta.id
    meta = FunctionDriver().meta
    assert (meta.name, meta.protocol) == ("functions", "Python")
    assert set(meta.capabilities) == {"healthcheck", "prompts", "resources", "completions", "list_changed"}


def test_healthcheck_reports_the_tool_count() -> None:
    driver = FunctionDriver([add, plain])
    assert driver.supports("healthcheck")
    assert driver.healthcheck() == {"status": "ok", "tools": 2}


def test_arguments_the_function_type_refuses_are_invalid_input() -> None:
    driver = FunctionDriver([get_customer])
    with pytest.raises(InvalidInputError) as info:
        driver.call_tool("get_customer", {"customer_id": "seven"})
    assert info.value.code is ErrorCode.INVALID_INPUT
    assert "customer_id" in info.value.message


def test_a_function_that_raises_is_an_execution_error() -> None:
    def divide(a: int, b: int) -> float:
        return a / b

    with pytest.raises(ExecutionError, match=r"divide failed unexpectedly \(ZeroDivisionError\)") as info:
        FunctionDriver([divide]).call_tool("divide", {"a": 1, "b": 0})
    assert "division by zero" not in info.value.message  # the exception's text stays in the log


def test_a_function_raising_a_tool_call_error_speaks_to_the_model() -> None:
    def divide(a: int, b: int) -> float:
        if b == 0:
            raise ExecutionError("b must not be 0")
        return a / b

    with pytest.raises(ExecutionError, match="b must not be 0"):
        FunctionDriver([divide]).call_tool("divide", {"a": 1, "b": 0})


def test_a_prefixed_driver_still_finds_its_functions() -> None:
    driver = FunctionDriver([add], prefix="calc")
    assert [t.name for t in driver.list_tools()] == ["calc_add"]
    assert driver.call_tool("calc_add", {"a": 1, "b": 2}) == 3


def test_sync_tools_run_inline_on_the_callers_thread_by_default() -> None:
    seen: list[str] = []

    def where() -> None:
        seen.append(threading.current_thread().name)

    FunctionDriver([where]).call_tool("where")
    FunctionDriver([where]).process_llm_response('{"tool": "where", "arguments": {}}')
    FunctionDriver([where], timeout=None).call_tool("where")
    assert seen == [threading.current_thread().name] * 3


def test_thread_deadline_runs_sync_tools_on_a_worker_and_abandons_an_overrun() -> None:
    release = threading.Event()
    seen: list[str] = []

    def stall() -> str:
        seen.append(threading.current_thread().name)
        release.wait(5)
        return "late"

    driver = FunctionDriver([stall], timeout=0.05, thread_deadline=True)
    try:
        with pytest.raises(ToolTimeoutError, match="abandoned"):
            driver.call_tool("stall")
    finally:
        release.set()
    assert seen[0].startswith("mcs-tool")


def test_an_async_tool_on_the_sync_path_keeps_its_deadline() -> None:
    release = threading.Event()

    @tool
    async def hang() -> None:
        """Does not finish in time."""
        while not release.is_set():
            await asyncio.sleep(0.01)

    try:
        with pytest.raises(ToolTimeoutError):
            FunctionDriver([hang], timeout=0.05).call_tool("hang")
    finally:
        release.set()


def test_an_async_tool_runs_through_the_sync_api() -> None:
    assert FunctionDriver([slow_echo]).call_tool("slow_echo", {"text": "a"}) == "a"
    assert FunctionDriver([slow_echo], timeout=None).call_tool("slow_echo", {"text": "b"}) == "b"


async def test_an_async_tool_runs_through_the_sync_api_inside_a_running_loop() -> None:
    assert FunctionDriver([slow_echo], timeout=None).call_tool("slow_echo", {"text": "c"}) == "c"


async def test_an_async_tool_is_awaited_on_the_async_path() -> None:
    driver = FunctionDriver([slow_echo, add])
    assert await driver.acall_tool("slow_echo", {"text": "x"}) == "x"
    assert await driver.aprocess_llm_response('{"tool": "add", "arguments": {"a": 2}}') == 3


async def test_a_sync_tool_on_the_async_path_runs_off_the_event_loop() -> None:
    seen: list[str] = []

    def where() -> None:
        seen.append(threading.current_thread().name)

    await FunctionDriver([where]).acall_tool("where")
    assert seen[0] != threading.current_thread().name


async def test_an_async_tool_over_its_deadline_is_cancelled() -> None:
    started = asyncio.Event()

    @tool
    async def hang() -> None:
        """Never finishes."""
        started.set()
        await asyncio.Event().wait()

    from mcs.errors import ToolTimeoutError

    with pytest.raises(ToolTimeoutError):
        await FunctionDriver([hang], timeout=0.05).acall_tool("hang")
    assert started.is_set()


def test_result_objects_are_returned_raw() -> None:
    result: Any = FunctionDriver([get_customer]).call_tool("get_customer", {"customer_id": 1})
    assert isinstance(result, CustomerResponse)


def test_the_model_cannot_supply_the_context_itself() -> None:
    driver = FunctionDriver([plain, get_customer])
    with pytest.raises(InvalidInputError, match="unexpected argument\\(s\\) 'ctx'"):
        driver.call_tool("plain", {"text": "hi", "ctx": {"agent_id": "admin"}})
    with pytest.raises(InvalidInputError, match="'ctx'"):
        driver.call_tool("get_customer", {"customer_id": 1, "ctx": "admin"})


class Inner(BaseModel):
    n: int


class Outer(BaseModel):
    inner: Inner
    maybe: Inner | None = None


@tool
def total(req: Outer) -> int:
    """Sum the numbers."""
    return req.inner.n + (req.maybe.n if req.maybe else 0)


def test_nested_models_get_the_same_repairs_as_top_level_arguments() -> None:
    assert FunctionDriver([total]).call_tool("total", {"inner": {"n": "2"}, "maybe": '{"n": "3"}'}) == 5


@pytest.mark.parametrize("model", [None, "gpt-4o", "claude-3-5-sonnet", "llama-3.1-8b-instruct"])
def test_a_driver_without_tools_tells_the_model_not_to_call(model: str | None) -> None:
    with FunctionDriver([], name="empty") as driver:
        assert driver.get_function_description(model) == "No tools are available."
        message = driver.get_driver_system_message(model)
        assert "empty" in message and "without calling any tool" in message
        assert '{"tool":' not in message
        call = '{"tool": "lower", "arguments": {"text": "A"}}'
        assert driver.process_llm_response(call) is call


def test_known_names_are_computed_once_and_renewed_when_a_function_is_added() -> None:
    driver = FunctionDriver([add])
    names = driver._known_names()
    assert driver._known_names() is names

    def double(x: int) -> int:
        return 2 * x

    driver.add(double)
    assert "double" in driver._known_names()
    assert driver.process_llm_response('double\n{"x": 4}') == 8  # a guessed name: only known names count


def _plain(name: str, count: int, ratio: float, tags: list[str], flag: bool | None = None, unit: str = "m") -> None:
    """Plain fields: handed over without pydantic when their values already fit exactly."""


_ANY_JSON = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4) | st.lists(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3), max_size=3
)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.sampled_from(["name", "count", "ratio", "tags", "flag", "unit"]), _ANY_JSON))
def test_plain_arguments_reach_the_function_exactly_as_pydantic_hands_them(arguments: dict[str, Any]) -> None:
    function = FunctionTool(_plain)
    assert function._plain is not None  # the fast path is the one under test
    context = AgentContext()
    try:
        model = function.input_model.model_validate(arguments)
    except ValidationError:
        with pytest.raises(InvalidInputError):
            function._arguments(arguments, context)
        return
    expected = {field: getattr(model, field) for field in function.input_model.model_fields}
    given_to_function = function._arguments(arguments, context)
    assert repr(given_to_function) == repr(expected)  # repr tells 3 from 3.0 and True from 1


def test_a_list_argument_reaches_the_function_as_its_own_copy() -> None:
    sent = ["a", "b"]

    @tool
    def append(tags: list[str]) -> list[str]:
        tags.append("c")
        return tags

    assert FunctionDriver([append]).call_tool("append", {"tags": sent}) == ["a", "b", "c"]
    assert sent == ["a", "b"]


def test_annotated_field_constraints_of_plain_parameters_are_in_the_schema_and_enforced() -> None:
    ran: list[tuple[int, str]] = []

    @tool
    def pick(slot: Annotated[int, Field(ge=1, le=5)],
             code: Annotated[str, Field(pattern="^[a-z]{4}$", json_schema_extra={"format": "password"})]) -> str:
        """Pick a slot with an access code."""
        ran.append((slot, code))
        return "picked"

    driver = FunctionDriver([pick])
    schema = driver.get_tool("pick").input_schema
    assert schema["properties"]["slot"]["maximum"] == 5 and schema["properties"]["code"]["format"] == "password"
    with pytest.raises(InvalidInputError) as refused:
        driver.call_tool("pick", {"slot": 99, "code": "S3CRET!"})
    assert "'slot'" in refused.value.message and "S3CRET" not in refused.value.message
    assert ran == []
    assert driver.call_tool("pick", {"slot": 2, "code": "abcd"}) == "picked" and ran == [(2, "abcd")]
