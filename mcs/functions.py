"""Typed Python functions as tools, and the in-memory driver made of them.

    @mcs.tool
    def add(a: int, b: int) -> int:
        "Add two integers."
        return a + b

    @mcs.tool(name="get_customer")
    def get_customer(req: CustomerRequest, ctx: mcs.AgentContext) -> CustomerResponse: ...

    driver = mcs.FunctionDriver([add, get_customer])

A function takes either one Pydantic model (its fields are the tool's arguments) or
plain annotated parameters. A parameter annotated :class:`~mcs.AgentContext` (or
``AgentContext | None``) is injected, never shown to the LLM. The return annotation,
when present, becomes the output schema.
The function's return value is the raw result.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import uuid
from collections.abc import Callable, Iterable
from typing import Any, Generic, ParamSpec, TypeVar, get_type_hints, overload

from pydantic import BaseModel, TypeAdapter, ValidationError, create_model

from mcs import prompts
from mcs.context import AgentContext, is_context_annotation
from mcs.driver import DriverMeta, ToolDriver
from mcs.errors import ConfigurationError, InvalidInputError
from mcs.pipeline import Invocation
from mcs.tools import Tool, sanitize_tool_name

P = ParamSpec("P")
R = TypeVar("R")

_NAMESPACE = uuid.UUID("6f1f5a4e-3c1b-4f55-9a55-6d63a9f0c001")


def _schema_of(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema()
    schema.pop("title", None)
    return schema


class FunctionTool(Generic[P, R]):
    """A function made into a tool; still callable as the plain function."""

    def __init__(
        self,
        func: Callable[P, R],
        *,
        name: str | None = None,
        description: str | None = None,
        annotations: dict[str, Any] | None = None,
    ) -> None:
        self.func = func
        self.is_async = inspect.iscoroutinefunction(func)
        hints = get_type_hints(func)
        signature = inspect.signature(func)
        self._context_param: str | None = None
        self._model_param: str | None = None
        fields: dict[str, Any] = {}
        params = [p for p in signature.parameters.values()]
        for param in params:
            annotation = hints.get(param.name, Any)
            if is_context_annotation(annotation):
                self._context_param = param.name
                continue
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise ConfigurationError(
                    f"tool function {func.__name__!r} cannot take *args or **kwargs"
                )
            if inspect.isclass(annotation) and issubclass(annotation, BaseModel):
                if len([p for p in params if not is_context_annotation(hints.get(p.name))]) != 1:
                    raise ConfigurationError(
                        f"tool function {func.__name__!r}: a Pydantic input model must be its only argument"
                    )
                self._model_param = param.name
                self.input_model: type[BaseModel] = annotation
                continue  # the context parameter may come after the model
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[param.name] = (annotation, default)
        if self._model_param is None:
            self.input_model = create_model(f"{func.__name__}_arguments", **fields)
        self._fields = tuple(self.input_model.model_fields)
        output = hints.get("return")
        self._output_adapter: TypeAdapter[Any] | None = (
            TypeAdapter(output) if output not in (None, type(None), Any) else None
        )
        doc = inspect.getdoc(func) or ""
        self.tool = Tool(
            name=sanitize_tool_name(name or func.__name__),
            description=description if description is not None else doc,
            input_schema=_schema_of(self.input_model),
            output_schema=self._output_schema(),
            annotations=dict(annotations or {}),
            meta={"original_name": name or func.__name__},
        )

    def _output_schema(self) -> dict[str, Any] | None:
        if self._output_adapter is None:
            return None
        try:
            schema = self._output_adapter.json_schema()
        except Exception:
            return None
        schema.pop("title", None)
        return schema

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.func(*args, **kwargs)

    def _arguments(self, arguments: dict[str, Any], context: AgentContext) -> dict[str, Any]:
        try:
            model = self.input_model.model_validate(arguments)
        except ValidationError as exc:
            problems = "; ".join(
                f"argument '{'.'.join(map(str, e['loc']))}': {e['msg']}" for e in exc.errors()[:5]
            )
            raise InvalidInputError(f"Invalid arguments for {self.tool.name}: {problems}.", tool=self.tool.name) from None
        if self._model_param is not None:
            kwargs: dict[str, Any] = {self._model_param: model}
        else:
            kwargs = {field: getattr(model, field) for field in self._fields}
        if self._context_param is not None:
            kwargs[self._context_param] = context
        return kwargs

    def invoke(self, arguments: dict[str, Any], context: AgentContext) -> Any:
        """Call the function with validated ``arguments`` (and ``context`` if declared)."""
        result = self.func(**self._arguments(arguments, context))  # type: ignore[call-arg]
        if not inspect.isawaitable(result):
            return result
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(_await(result))
        # The sync API was called from async code: this thread's loop is busy, use another.
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as runner:
            return runner.submit(asyncio.run, _await(result)).result()

    async def ainvoke(self, arguments: dict[str, Any], context: AgentContext) -> Any:
        kwargs = self._arguments(arguments, context)
        if self.is_async:
            return await self.func(**kwargs)  # type: ignore[call-arg,misc]
        return await asyncio.to_thread(self.func, **kwargs)  # type: ignore[call-arg]


async def _await(awaitable: Any) -> Any:
    return await awaitable


@overload
def tool(func: Callable[P, R], /) -> FunctionTool[P, R]: ...


@overload
def tool(
    *, name: str | None = None, description: str | None = None,
    annotations: dict[str, Any] | None = None,
) -> Callable[[Callable[P, R]], FunctionTool[P, R]]: ...


def tool(
    func: Callable[P, R] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    annotations: dict[str, Any] | None = None,
) -> FunctionTool[P, R] | Callable[[Callable[P, R]], FunctionTool[P, R]]:
    """Make a typed function a tool (usable bare or with options)."""

    def wrap(f: Callable[P, R]) -> FunctionTool[P, R]:
        return FunctionTool(f, name=name, description=description, annotations=annotations)

    return wrap(func) if func is not None else wrap


class FunctionDriver(ToolDriver):
    """An in-memory driver whose tools are Python functions: no network, no spec.

    Takes functions decorated with :func:`tool` or plain typed functions. Accepts every
    :class:`~mcs.ToolDriver` option.

    Synchronous functions run inline, on the caller's thread, by default: a deadline on
    a worker thread cannot stop a Python function, only abandon it while it runs on.
    ``timeout`` bounds async tools (they are cancelled). ``thread_deadline=True`` opts in
    to running each sync tool on a worker thread so that the caller gets ``TIMEOUT`` once
    ``timeout`` passes; the trade-off: the function still runs to its end (its side
    effects happen after the model was told it timed out), and every call pays for the
    hand-off to the thread (``make bench`` prints what it costs).
    """

    def __init__(
        self,
        functions: Iterable[FunctionTool[Any, Any] | Callable[..., Any]] = (),
        *,
        name: str = "functions",
        version: str = "0.1.0",
        thread_deadline: bool = False,
        **options: Any,
    ) -> None:
        super().__init__(**options)
        self.thread_deadline = thread_deadline
        self.meta = DriverMeta(
            id=str(uuid.uuid5(_NAMESPACE, name)),
            name=name,
            version=version,
            protocol="Python",
            transport="in-process",
            spec_format="Python type hints",
            target_llms=prompts.target_llms(self.prompt_templates),
            capabilities=("healthcheck",),
            prefix=self.prefix,
        )
        self._functions: dict[str, FunctionTool[Any, Any]] = {}
        for func in functions:
            self.add(func)

    def add(self, func: FunctionTool[Any, Any] | Callable[..., Any]) -> FunctionTool[Any, Any]:
        """Add one function (decorating it if needed); returns the :class:`FunctionTool`."""
        wrapped = func if isinstance(func, FunctionTool) else FunctionTool(func)
        if wrapped.tool.name in self._functions:
            raise ConfigurationError(f"a tool named {wrapped.tool.name!r} is already registered")
        self._functions[wrapped.tool.name] = wrapped
        self.refresh_tools()
        return wrapped

    def healthcheck(self) -> dict[str, Any]:
        return {"status": "ok", "tools": len(self._functions)}

    def _list_tools(self) -> Iterable[Tool]:
        return [f.tool for f in self._functions.values()]

    def _function(self, invocation: Invocation) -> FunctionTool[Any, Any]:
        return self._functions[invocation.tool.unprefixed_name]

    def _runs_inline(self, invocation: Invocation) -> bool:
        return not self.thread_deadline and not self._function(invocation).is_async

    def _call_tool(self, invocation: Invocation) -> Any:
        return self._function(invocation).invoke(invocation.arguments, invocation.context)

    async def _acall_tool(self, invocation: Invocation) -> Any:
        return await self._function(invocation).ainvoke(invocation.arguments, invocation.context)
