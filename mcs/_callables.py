"""Calling a user's function (sync or async) with checked arguments and an injected context.

Shared by function prompts, resources and completions; tools keep their own path in
:mod:`mcs.functions` (deadlines, pipeline).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any, get_type_hints

from pydantic import BaseModel, ValidationError, create_model

from mcs.context import AgentContext, is_context_annotation
from mcs.errors import ConfigurationError, InvalidInputError

#: MCP answers at most this many completion values.
MAX_COMPLETIONS = 100


class UserFunction:
    """A function's parameters as a pydantic model; the :class:`AgentContext` parameter injected."""

    def __init__(self, func: Callable[..., Any], *, what: str) -> None:
        self.func = func
        self.what = what
        self.is_async = inspect.iscoroutinefunction(func)
        hints = get_type_hints(func, include_extras=True)
        self.context_param: str | None = None
        fields: dict[str, Any] = {}
        for param in inspect.signature(func).parameters.values():
            annotation = hints.get(param.name, str)
            if is_context_annotation(annotation):
                self.context_param = param.name
                continue
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise ConfigurationError(f"{what} function {func.__name__!r} cannot take *args or **kwargs")
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[param.name] = (annotation, default)
        self.model: type[BaseModel] = create_model(f"{func.__name__}_arguments", **fields)

    @property
    def parameters(self) -> list[str]:
        return list(self.model.model_fields)

    def schema(self) -> dict[str, Any]:
        schema = self.model.model_json_schema()
        schema.pop("title", None)
        return schema

    def kwargs(self, arguments: Mapping[str, Any], context: AgentContext, name: str) -> dict[str, Any]:
        try:
            model = self.model.model_validate(dict(arguments))
        except ValidationError as exc:
            problems = "; ".join(
                f"argument '{'.'.join(map(str, e['loc']))}': {e['msg']}" for e in exc.errors()[:5]
            )
            raise InvalidInputError(f"Invalid arguments for {self.what} {name}: {problems}.", tool=name) from None
        kwargs = {field: getattr(model, field) for field in type(model).model_fields}
        if self.context_param is not None:
            kwargs[self.context_param] = context
        return kwargs

    def call(self, kwargs: dict[str, Any]) -> Any:
        """Run it from synchronous code (an async function gets an event loop of its own)."""
        result = self.func(**kwargs)
        if not inspect.isawaitable(result):
            return result
        return run_awaitable(result)

    async def acall(self, kwargs: dict[str, Any]) -> Any:
        """Run it from async code (a sync function on a worker thread: it may do I/O)."""
        if self.is_async:
            return await self.func(**kwargs)
        result = await asyncio.to_thread(self.func, **kwargs)
        return await result if inspect.isawaitable(result) else result


def run_awaitable(awaitable: Any) -> Any:
    """The result of ``awaitable`` from synchronous code, with or without a running loop here."""

    async def wait() -> Any:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wait())
    # Called from async code: this thread's loop is busy, use another.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as runner:
        return runner.submit(asyncio.run, wait()).result()


Completer = Callable[..., Any]


def check_completers(completers: Mapping[str, Completer] | None, known: Iterable[str], owner: str) -> dict[str, Completer]:
    """``completers`` checked: each names a known argument and is callable."""
    out = dict(completers or {})
    names = set(known)
    for argument, completer in out.items():
        if argument not in names:
            raise ConfigurationError(
                f"{owner}: cannot complete {argument!r}, it is not one of its arguments ({', '.join(sorted(names))})"
            )
        if not callable(completer):
            raise ConfigurationError(f"{owner}: the completer of {argument!r} is not callable")
    return out


async def complete(completer: Completer | None, value: str, arguments: Mapping[str, str]) -> list[str]:
    """Run a completer as ``completer(value)`` or ``completer(value, arguments)``; at most 100 strings."""
    if completer is None:
        return []
    try:
        takes_arguments = len(inspect.signature(completer).parameters) >= 2
    except (TypeError, ValueError):
        takes_arguments = False
    args: tuple[Any, ...] = (value, dict(arguments)) if takes_arguments else (value,)
    result = completer(*args)
    if inspect.isawaitable(result):
        result = await result
    return [str(item) for item in list(result or ())[:MAX_COMPLETIONS]]
