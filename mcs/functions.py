"""Typed Python functions as tools, and the in-memory driver made of them.

    @mcs.tool
    def add(a: int, b: int) -> int:
        "Add two integers."
        return a + b

    @mcs.tool(name="get_customer")
    def get_customer(req: CustomerRequest, ctx: mcs.AgentContext) -> CustomerResponse: ...

    driver = mcs.FunctionDriver([add, get_customer])

A function takes either one Pydantic model (its fields are the tool's arguments) or
plain annotated parameters, or (``@mcs.tool(input_schema={...})``) keyword arguments
described by a raw JSON Schema. A parameter annotated :class:`~mcs.AgentContext` (or
``AgentContext | None``) is injected, never shown to the LLM. The return annotation, when
present, becomes the output schema, except for typed content (:class:`mcs.Image`,
:class:`mcs.Audio`, :class:`mcs.EmbeddedResource`, bytes), which has none. The
function's return value is the raw result.

A :class:`FunctionDriver` also holds prompts (:func:`mcs.prompt`) and resources
(:func:`mcs.resource`), which ``mcs serve`` publishes as MCP prompts and resources.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import types
import typing
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Generic, ParamSpec, TypeVar, get_args, get_origin, get_type_hints, overload

from pydantic import BaseModel, TypeAdapter, ValidationError, create_model
from pydantic_core import PydanticUndefined

from mcs import prompts
from mcs.content import returns_content
from mcs.context import AgentContext, is_context_annotation
from mcs.driver import DriverMeta, ToolDriver, refuse_unknown_options
from mcs.errors import ConfigurationError, InvalidInputError, ToolNotFoundError
from mcs.function_prompts import FunctionPrompt
from mcs.function_resources import FunctionResource
from mcs.pipeline import Invocation
from mcs.tools import Tool, sanitize_tool_name

P = ParamSpec("P")
R = TypeVar("R")

_NAMESPACE = uuid.UUID("6f1f5a4e-3c1b-4f55-9a55-6d63a9f0c001")


def _schema_of(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema()
    schema.pop("title", None)
    return schema


#: Annotations whose values pydantic hands over unchanged when their type is exactly one
#: of these (lax mode converts other types: an int for a float becomes a float).
_UNCHANGED: dict[Any, tuple[type, ...]] = {str: (str,), int: (int,), float: (float,), bool: (bool,)}
_IMMUTABLE_DEFAULTS = (str, int, float, bool, type(None))
_REQUIRED = object()
_NEVER_AWAITABLE = frozenset({str, int, float, bool, dict, list, tuple, bytes})

#: One field of a :func:`_passthrough_plan`: its name, the exact types its value may have,
#: the exact types of a list's items (``None``: not a list) and its default (``_REQUIRED``).
_PlainField = tuple[str, tuple[type, ...], "tuple[type, ...] | None", Any]


def _passthrough_plan(model: type[BaseModel]) -> tuple[_PlainField, ...] | None:
    """How to build a function's keyword arguments without pydantic when its model would
    hand the (already schema-validated) values over unchanged, else ``None``.

    Only plain fields qualify: ``str``, ``int``, ``float``, ``bool``, each optionally
    ``| None`` or as ``list[...]``, with no alias, constraint or factory and an immutable
    default. For a value of exactly such a type pydantic's result equals the value itself
    (a list is copied, as pydantic does); any other value goes through pydantic as before.
    """
    if model.model_config:
        return None
    plan: list[_PlainField] = []
    for name, info in model.model_fields.items():
        if info.alias or info.validation_alias or info.metadata or info.default_factory is not None:
            return None
        default = info.default
        if default is PydanticUndefined:
            default = _REQUIRED
        elif type(default) not in _IMMUTABLE_DEFAULTS:
            return None
        annotation, items = info.annotation, None
        origin, args = get_origin(annotation), get_args(annotation)
        if annotation in _UNCHANGED:
            kinds = _UNCHANGED[annotation]
        elif origin in (types.UnionType, typing.Union) and len(args) == 2 and type(None) in args:
            inner = args[0] if args[1] is type(None) else args[1]
            if inner not in _UNCHANGED:
                return None
            kinds = (*_UNCHANGED[inner], type(None))
        elif origin is list and len(args) == 1 and args[0] in _UNCHANGED:
            kinds, items = (list,), _UNCHANGED[args[0]]
        else:
            return None
        plan.append((name, kinds, items, default))
    return tuple(plan)


def _bare(annotation: Any) -> Any:
    """``annotation`` without an ``Annotated[...]`` wrapper (its metadata dropped)."""
    return get_args(annotation)[0] if get_origin(annotation) is typing.Annotated else annotation


class FunctionTool(Generic[P, R]):
    """A function made into a tool; still callable as the plain function."""

    def __init__(
        self,
        func: Callable[P, R],
        *,
        name: str | None = None,
        description: str | None = None,
        annotations: dict[str, Any] | None = None,
        input_schema: dict[str, Any] | None = None,
    ) -> None:
        self.func = func
        self.is_async = inspect.iscoroutinefunction(func)
        # with extras: Annotated[int, Field(ge=1)] keeps its constraints (schema and checks)
        hints = get_type_hints(func, include_extras=True)
        signature = inspect.signature(func)
        self._context_param: str | None = None
        self._model_param: str | None = None
        self._raw_schema = input_schema is not None
        fields: dict[str, Any] = {}
        params = [p for p in signature.parameters.values()]
        for param in params:
            annotation = hints.get(param.name, Any)
            if is_context_annotation(_bare(annotation)):
                self._context_param = param.name
                continue
            if self._raw_schema:
                continue  # the schema describes the arguments; they arrive as keywords
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise ConfigurationError(
                    f"tool function {func.__name__!r} cannot take *args or **kwargs"
                )
            if inspect.isclass(annotation) and issubclass(annotation, BaseModel):
                if len([p for p in params if not is_context_annotation(_bare(hints.get(p.name)))]) != 1:
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
        if input_schema is not None and input_schema.get("type", "object") != "object":
            raise ConfigurationError(f"tool function {func.__name__!r}: input_schema must describe an object")
        self._fields = tuple(self.input_model.model_fields)
        self._plain = None if self._raw_schema or self._model_param else _passthrough_plan(self.input_model)
        output = _bare(hints.get("return"))
        self._output_adapter: TypeAdapter[Any] | None = (
            TypeAdapter(output) if output not in (None, type(None), Any) and not returns_content(output) else None
        )
        doc = inspect.getdoc(func) or ""
        self.tool = Tool(
            name=sanitize_tool_name(name or func.__name__),
            description=description if description is not None else doc,
            input_schema=dict(input_schema) if input_schema is not None else _schema_of(self.input_model),
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
        if self._raw_schema:  # validated against the raw schema by the pipeline
            raw = dict(arguments)
            if self._context_param is not None:
                raw[self._context_param] = context
            return raw
        if self._plain is not None:
            plain = self._plain_arguments(self._plain, arguments)
            if plain is not None:
                if self._context_param is not None:
                    plain[self._context_param] = context
                return plain
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

    @staticmethod
    def _plain_arguments(plan: tuple[_PlainField, ...], arguments: dict[str, Any]) -> dict[str, Any] | None:
        """The keyword arguments pydantic would build, when every value is of a type it
        keeps unchanged (see :func:`_passthrough_plan`), else ``None``."""
        kwargs: dict[str, Any] = {}
        for name, kinds, items, default in plan:
            value = arguments.get(name, _REQUIRED)
            if value is _REQUIRED:
                if default is _REQUIRED:
                    return None  # pydantic words the error
                value = default
            elif type(value) not in kinds:
                return None
            elif items is not None:
                for item in value:
                    if type(item) not in items:
                        return None
                value = list(value)
            kwargs[name] = value
        return kwargs

    def invoke(self, arguments: dict[str, Any], context: AgentContext) -> Any:
        """Call the function with validated ``arguments`` (and ``context`` if declared)."""
        result = self.func(**self._arguments(arguments, context))  # type: ignore[call-arg]
        if result is None or type(result) in _NEVER_AWAITABLE or not inspect.isawaitable(result):
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
    annotations: dict[str, Any] | None = None, input_schema: dict[str, Any] | None = None,
) -> Callable[[Callable[P, R]], FunctionTool[P, R]]: ...


def tool(
    func: Callable[P, R] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    annotations: dict[str, Any] | None = None,
    input_schema: dict[str, Any] | None = None,
) -> FunctionTool[P, R] | Callable[[Callable[P, R]], FunctionTool[P, R]]:
    """Make a typed function a tool (usable bare or with options).

    ``input_schema`` replaces the signature as the tool's argument schema (a JSON Schema
    object): the validated arguments are passed as keyword arguments, so the function
    takes ``**arguments`` or parameters of the same names.
    """

    def wrap(f: Callable[P, R]) -> FunctionTool[P, R]:
        return FunctionTool(f, name=name, description=description, annotations=annotations, input_schema=input_schema)

    return wrap(func) if func is not None else wrap


Offering = FunctionTool[Any, Any] | FunctionPrompt | FunctionResource | Callable[..., Any]


class FunctionDriver(ToolDriver):
    """An in-memory driver whose tools are Python functions: no network, no spec.

    Takes functions decorated with :func:`tool` (or plain typed functions, made tools),
    :func:`mcs.prompt` and :func:`mcs.resource`. Tools, prompts and resources added later
    (:meth:`add`) are announced to listeners (``mcs serve`` sends ``list_changed``);
    :meth:`resource_updated` announces new content of a resource. Accepts every
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
        functions: Iterable[Offering] = (),
        *,
        name: str = "functions",
        version: str = "0.1.0",
        thread_deadline: bool = False,
        **options: Any,
    ) -> None:
        refuse_unknown_options(FunctionDriver, options, "FunctionDriver")
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
            capabilities=("healthcheck", "prompts", "resources", "completions", "list_changed"),
            prefix=self.prefix,
        )
        self._functions: dict[str, FunctionTool[Any, Any]] = {}
        self._function_of_tool: dict[str, FunctionTool[Any, Any]] = {}
        self._prompts: dict[str, FunctionPrompt] = {}
        self._resources: dict[str, FunctionResource] = {}
        for func in functions:
            self._add(func)

    def add(self, func: Offering) -> Any:
        """Add a tool (decorating a plain function), a prompt or a resource; returns it."""
        added = self._add(func)
        if isinstance(added, FunctionPrompt):
            self.notify_changed("prompts")
        elif isinstance(added, FunctionResource):
            self.notify_changed("resources")
        else:
            self.notify_changed("tools")
        return added

    def _add(self, func: Offering) -> Any:
        if isinstance(func, FunctionPrompt):
            if func.name in self._prompts:
                raise ConfigurationError(f"a prompt named {func.name!r} is already registered")
            self._prompts[func.name] = func
            return func
        if isinstance(func, FunctionResource):
            if func.uri in self._resources:
                raise ConfigurationError(f"a resource {func.uri!r} is already registered")
            self._resources[func.uri] = func
            return func
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

    def refresh_tools(self) -> None:
        super().refresh_tools()
        self._function_of_tool.clear()

    def _function(self, invocation: Invocation) -> FunctionTool[Any, Any]:
        """The function behind the invocation's tool, by its (possibly prefixed) name: two
        calls per invocation ask, so the answer is kept until :meth:`refresh_tools`."""
        tool = invocation.tool
        function = self._function_of_tool.get(tool.name)
        if function is None:
            function = self._function_of_tool[tool.name] = self._functions[tool.unprefixed_name]
        return function

    def _runs_inline(self, invocation: Invocation) -> bool:
        return not self.thread_deadline and not self._function(invocation).is_async

    def _call_tool(self, invocation: Invocation) -> Any:
        return self._function(invocation).invoke(invocation.arguments, invocation.context)

    async def _acall_tool(self, invocation: Invocation) -> Any:
        return await self._function(invocation).ainvoke(invocation.arguments, invocation.context)

    # ----------------------------------------------------------------- prompts

    def prompts(self) -> list[dict[str, Any]]:
        """Each prompt as ``{"name", "title", "description", "arguments": [{name, description, required}]}``."""
        return [p.describe() for p in self._prompts.values()]

    def _prompt(self, name: str) -> FunctionPrompt:
        found = self._prompts.get(name)
        if found is None:
            raise ToolNotFoundError(f"There is no prompt named {name!r}.", tool=name)
        return found

    def render_prompt(self, name: str, arguments: Mapping[str, Any], context: AgentContext | None = None) -> Any:
        """The messages of prompt ``name`` for ``arguments``.

        Raises:
            ToolNotFoundError: no such prompt.
            InvalidInputError: the arguments do not fit its signature.
        """
        return self._prompt(name).render(arguments, context or AgentContext())

    async def arender_prompt(
        self, name: str, arguments: Mapping[str, Any], context: AgentContext | None = None
    ) -> Any:
        return await self._prompt(name).arender(arguments, context or AgentContext())

    # ----------------------------------------------------------------- resources

    def resources(self) -> list[dict[str, Any]]:
        """The static resources as ``{"uri", "name", "title", "description", "mime_type"}``."""
        return [r.describe() for r in self._resources.values() if not r.is_template]

    def resource_templates(self) -> list[dict[str, Any]]:
        """The resource templates as ``{"uri_template", "name", ...}``."""
        return [r.describe() for r in self._resources.values() if r.is_template]

    def _resource(self, uri: str) -> FunctionResource:
        found = self._resources.get(uri)
        if found is not None and not found.is_template:
            return found
        for candidate in self._resources.values():
            if candidate.is_template and candidate.match(uri) is not None:
                return candidate
        raise ToolNotFoundError(f"There is no resource {uri!r}.", tool=uri)

    def read_resource(self, uri: str, context: AgentContext | None = None) -> Any:
        """The content at ``uri`` (a static resource, or a URI of a template).

        Raises:
            ToolNotFoundError: no resource or template has that URI.
        """
        return self._resource(uri).read(uri, context or AgentContext())

    async def aread_resource(self, uri: str, context: AgentContext | None = None) -> Any:
        return await self._resource(uri).aread(uri, context or AgentContext())

    def resource_updated(self, uri: str) -> None:
        """Announce that the resource at ``uri`` has new content (subscribers are notified)."""
        self.notify_changed("resource", uri)

    # ----------------------------------------------------------------- completions

    async def acomplete(
        self, kind: str, name: str, argument: str, value: str, arguments: Mapping[str, str] | None = None
    ) -> list[str]:
        """Suggestions for a prompt argument (``kind="prompt"``, ``name`` the prompt) or a
        template variable (``kind="resource"``, ``name`` the URI template); empty when
        there is no completer."""
        owner: FunctionPrompt | FunctionResource | None = (
            self._prompts.get(name) if kind == "prompt" else self._resources.get(name)
        )
        if owner is None:
            return []
        return await owner.acomplete(argument, value, dict(arguments or {}))

    def complete(
        self, kind: str, name: str, argument: str, value: str, arguments: Mapping[str, str] | None = None
    ) -> list[str]:
        """Synchronous twin of :meth:`acomplete`."""
        from mcs._callables import run_awaitable

        result: list[str] = run_awaitable(self.acomplete(kind, name, argument, value, arguments))
        return result

    def has_completions(self) -> bool:
        """True when some prompt or resource template has a completer."""
        return any(p.completers for p in self._prompts.values()) or any(
            r.completers for r in self._resources.values()
        )
