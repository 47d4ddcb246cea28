"""Typed Python functions as resources and resource templates (MCP ``resources/*``).

    @mcs.resource("config://app", mime_type="application/json")
    def app_config() -> dict:
        return {"theme": "dark"}

    @mcs.resource("users://{user_id}/profile", complete={"user_id": lambda value: [...]})
    def profile(user_id: str) -> str:
        return f"profile of {user_id}"

A URI with ``{name}`` variables makes a resource template: each variable is a parameter of
the function (``{name}`` matches one path segment, ``{+name}`` anything, as RFC 6570 level
2 expands them). The function returns ``str`` (text), ``bytes`` (a blob), an
:class:`mcs.Image`/:class:`mcs.Audio` (a blob with its type), a mapping with ``text`` or
``blob``, or any JSON value. A parameter annotated :class:`~mcs.AgentContext` is injected.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import unquote

from mcs._callables import Completer, UserFunction, check_completers, complete
from mcs.context import AgentContext
from mcs.errors import ConfigurationError

_VARIABLE = re.compile(r"\{([^{}]*)\}")


def uri_template_pattern(template: str) -> tuple[re.Pattern[str], list[str]]:
    """A regex matching the URIs ``template`` expands to, and its variable names in order."""
    parts: list[str] = []
    names: list[str] = []
    position = 0
    for match in _VARIABLE.finditer(template):
        parts.append(re.escape(template[position : match.start()]))
        expression = match.group(1)
        reserved = expression.startswith("+")
        name = expression[1:] if reserved else expression
        if not name.isidentifier():
            raise ConfigurationError(
                f"resource template {template!r}: only {{name}} and {{+name}} variables are supported, "
                f"not {{{expression}}}"
            )
        names.append(name)
        parts.append(f"(?P<{name}>.+)" if reserved else f"(?P<{name}>[^/?#]+)")
        position = match.end()
    parts.append(re.escape(template[position:]))
    return re.compile("".join(parts)), names


class FunctionResource:
    """A function serving one resource, or every URI of a template; still callable as the function."""

    def __init__(
        self,
        func: Callable[..., Any],
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        complete: Mapping[str, Completer] | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        if not uri or ("://" not in uri and not uri.startswith(("urn:", "data:"))):
            raise ConfigurationError(f"resource URI {uri!r} needs a scheme (like 'config://app')")
        self.func = func
        self.uri = uri
        self.name = name or func.__name__
        self.title = title
        self.description = description if description is not None else (inspect.getdoc(func) or "")
        self.mime_type = mime_type
        self.meta = dict(meta or {})
        self._function = UserFunction(func, what="resource")
        self._pattern, self.variables = uri_template_pattern(uri)
        parameters = set(self._function.parameters)
        if set(self.variables) != parameters:
            raise ConfigurationError(
                f"resource {uri!r}: the function {func.__name__!r} must take exactly the URI's variables "
                f"({', '.join(self.variables) or 'none'}), besides an AgentContext; it takes "
                f"{', '.join(sorted(parameters)) or 'none'}"
            )
        self.completers = check_completers(complete, self.variables, f"resource {uri!r}")

    @property
    def is_template(self) -> bool:
        return bool(self.variables)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.func(*args, **kwargs)

    def describe(self) -> dict[str, Any]:
        """As ``driver.resources()`` (``uri``) or ``driver.resource_templates()`` (``uri_template``) list it."""
        key = "uri_template" if self.is_template else "uri"
        return {
            key: self.uri,
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "mime_type": self.mime_type,
            "meta": dict(self.meta),
        }

    def match(self, uri: str) -> dict[str, str] | None:
        """The variables ``uri`` gives this resource, or ``None`` when it is not one of its URIs."""
        found = self._pattern.fullmatch(uri)
        if found is None:
            return None
        return {name: unquote(value) for name, value in found.groupdict().items()}

    def read(self, uri: str, context: AgentContext) -> Any:
        """The content at ``uri`` (which :meth:`match` accepted)."""
        return self._function.call(self._kwargs(uri, context))

    async def aread(self, uri: str, context: AgentContext) -> Any:
        return await self._function.acall(self._kwargs(uri, context))

    def _kwargs(self, uri: str, context: AgentContext) -> dict[str, Any]:
        variables = self.match(uri)
        if variables is None:
            raise ConfigurationError(f"{uri!r} is not a URI of resource {self.uri!r}")
        return self._function.kwargs(variables, context, uri)

    async def acomplete(self, argument: str, value: str, arguments: Mapping[str, str]) -> list[str]:
        """Suggestions for the template variable ``argument`` (empty without a completer)."""
        return await complete(self.completers.get(argument), value, arguments)


def resource(
    uri: str,
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    complete: Mapping[str, Completer] | None = None,
    meta: Mapping[str, Any] | None = None,
) -> Callable[[Callable[..., Any]], FunctionResource]:
    """Make a function the resource at ``uri`` (a template when it has ``{variables}``)."""

    def wrap(f: Callable[..., Any]) -> FunctionResource:
        return FunctionResource(
            f, uri, name=name, title=title, description=description, mime_type=mime_type,
            complete=complete, meta=meta,
        )

    return wrap
