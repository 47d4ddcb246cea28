"""Typed Python functions as prompts (MCP ``prompts/list`` and ``prompts/get``).

    @mcs.prompt
    def review(code: str, language: str = "python") -> str:
        "Ask for a code review."
        return f"Review this {language} code:\\n{code}"

    @mcs.prompt(complete={"language": lambda value: [l for l in LANGUAGES if l.startswith(value)]})
    def explain(topic: str, language: str) -> list: ...

A prompt function returns a string (one user message), a list of messages (strings,
``{"role": "user"|"assistant", "content": ...}`` dicts, or :mod:`mcs.content` objects such
as :class:`mcs.Image`), or ``{"messages": [...], "description": ...}``. Its parameters are
the prompt's arguments (the client sends strings; annotated types are converted); a
parameter annotated :class:`~mcs.AgentContext` is injected. ``complete`` maps an argument
to a function ``(value)`` or ``(value, arguments)`` returning suggestions.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any, overload

from mcs._callables import Completer, UserFunction, check_completers, complete
from mcs.context import AgentContext


class FunctionPrompt:
    """A function made into a prompt; still callable as the plain function."""

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        complete: Mapping[str, Completer] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        self.func = func
        self.name = name or func.__name__
        self.title = title
        self.description = description if description is not None else (inspect.getdoc(func) or "")
        self.meta = dict(meta or {})
        self._function = UserFunction(func, what="prompt")
        self.completers = check_completers(complete, self._function.parameters, f"prompt {self.name!r}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.func(*args, **kwargs)

    def describe(self) -> dict[str, Any]:
        """The prompt as ``driver.prompts()`` lists it: name, title, description, arguments."""
        schema = self._function.schema()
        required = set(schema.get("required") or ())
        arguments = [
            {
                "name": field,
                "description": (spec or {}).get("description"),
                "required": field in required,
            }
            for field, spec in (schema.get("properties") or {}).items()
        ]
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "arguments": arguments,
            "meta": dict(self.meta),
        }

    def render(self, arguments: Mapping[str, Any], context: AgentContext) -> Any:
        """The prompt's messages for ``arguments`` (checked against the signature).

        Raises:
            InvalidInputError: an argument is missing or has the wrong type.
        """
        return self._function.call(self._function.kwargs(arguments, context, self.name))

    async def arender(self, arguments: Mapping[str, Any], context: AgentContext) -> Any:
        """Async twin of :meth:`render`."""
        return await self._function.acall(self._function.kwargs(arguments, context, self.name))

    async def acomplete(self, argument: str, value: str, arguments: Mapping[str, str]) -> list[str]:
        """Suggestions for ``argument`` starting from ``value`` (empty without a completer)."""
        return await complete(self.completers.get(argument), value, arguments)


@overload
def prompt(func: Callable[..., Any], /) -> FunctionPrompt: ...


@overload
def prompt(
    *, name: str | None = None, title: str | None = None, description: str | None = None,
    complete: Mapping[str, Completer] | None = None, meta: Mapping[str, Any] | None = None,
) -> Callable[[Callable[..., Any]], FunctionPrompt]: ...


def prompt(
    func: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    complete: Mapping[str, Completer] | None = None,
    meta: Mapping[str, Any] | None = None,
) -> FunctionPrompt | Callable[[Callable[..., Any]], FunctionPrompt]:
    """Make a function a prompt (usable bare or with options); add it to a :class:`~mcs.FunctionDriver`."""

    def wrap(f: Callable[..., Any]) -> FunctionPrompt:
        return FunctionPrompt(f, name=name, title=title, description=description, complete=complete, meta=meta)

    return wrap(func) if func is not None else wrap
