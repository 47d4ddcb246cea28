"""gen-mcp's placeholder grammar, and how values are formatted for people.

A template is literal text with placeholders (gen-mcp ``pkg/template``):

* ``{name}`` or ``{a.b}``: an argument (``a.b`` is property ``b`` of object ``a``);
* ``{env.NAME}`` and ``${NAME}``: an environment variable of the server;
* ``{headers.Name}``: a header of the incoming MCP request (streamable HTTP only).

An unterminated ``{`` or a lone ``}`` is an error, as in gen-mcp. Templates are parsed
once, at load; each argument placeholder is checked against the input schema there, so a
placeholder with no property is a load error naming the tool and the placeholder.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from mcs.errors import ConfigurationError

Source = Literal["param", "env", "header"]

_ENV_NAME = re.compile(r"^\w+$", re.UNICODE)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class Placeholder:
    """One ``{...}`` in a template: where its value comes from and its name there."""

    source: Source
    name: str  # argument path ("a.b"), environment variable or header name
    start: int  # offsets of the whole placeholder in the template text
    end: int

    @property
    def text(self) -> str:
        if self.source == "env":
            return "{env." + self.name + "}"
        if self.source == "header":
            return "{headers." + self.name + "}"
        return "{" + self.name + "}"


@dataclass(frozen=True, slots=True)
class Template:
    """A parsed template: ``parts`` alternates literal strings and placeholders."""

    text: str
    parts: tuple[str | Placeholder, ...]

    @property
    def placeholders(self) -> tuple[Placeholder, ...]:
        return tuple(p for p in self.parts if isinstance(p, Placeholder))

    def params(self) -> tuple[str, ...]:
        """Argument paths used, in order, without repeats."""
        return tuple(dict.fromkeys(p.name for p in self.placeholders if p.source == "param"))


def parse_template(text: str, *, where: str) -> Template:
    """Split ``text`` into literals and placeholders.

    Raises:
        ConfigurationError: an unterminated ``{``, a lone ``}``, or an empty or invalid name;
            the message starts with ``where`` (e.g. ``tool 'x': url``).
    """
    parts: list[str | Placeholder] = []
    literal: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "$" and i + 1 < n and text[i + 1] == "{":
            close = text.find("}", i + 2)
            if close == -1:
                raise ConfigurationError(f"{where}: unterminated environment variable at position {i} in {text!r}")
            name = text[i + 2 : close]
            _check_env_name(name, where)
            parts.append("".join(literal))
            literal.clear()
            parts.append(Placeholder("env", name, i, close + 1))
            i = close + 1
            continue
        if ch == "{":
            close = text.find("}", i + 1)
            if close == -1:
                raise ConfigurationError(f"{where}: unterminated placeholder at position {i} in {text!r}")
            name = text[i + 1 : close]
            parts.append("".join(literal))
            literal.clear()
            parts.append(_placeholder(name, i, close + 1, where))
            i = close + 1
            continue
        if ch == "}":
            raise ConfigurationError(f"{where}: unmatched '}}' at position {i} in {text!r}")
        literal.append(ch)
        i += 1
    parts.append("".join(literal))
    return Template(text, tuple(parts))


def _check_env_name(name: str, where: str) -> None:
    if not name:
        raise ConfigurationError(f"{where}: an environment variable name cannot be empty")
    if not _ENV_NAME.match(name):
        raise ConfigurationError(f"{where}: invalid environment variable name {name!r}")


def _placeholder(name: str, start: int, end: int, where: str) -> Placeholder:
    if name.startswith("env."):
        env = name[4:]
        _check_env_name(env, where)
        return Placeholder("env", env, start, end)
    if name.startswith("headers."):
        header = name[8:]
        if not header or not re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", header):
            raise ConfigurationError(f"{where}: invalid header name in placeholder {{{name}}}")
        return Placeholder("header", header, start, end)
    if not name or not name.strip():
        raise ConfigurationError(f"{where}: a placeholder name cannot be empty")
    if _CONTROL.search(name):
        raise ConfigurationError(f"{where}: placeholder {name!r} contains control characters")
    return Placeholder("param", name, start, end)


# ----------------------------------------------------------------------------- schema lookups


def property_schema(schema: Mapping[str, Any] | None, path: str) -> Mapping[str, Any] | None:
    """The schema of the property at dotted ``path``, or ``None`` when there is none."""
    current: Any = schema
    for part in path.split("."):
        if not isinstance(current, Mapping):
            return None
        properties = current.get("properties")
        if not isinstance(properties, Mapping) or part not in properties:
            return None
        current = properties[part]
    return current if isinstance(current, Mapping) else {}


def schema_types(schema: Mapping[str, Any] | None) -> set[str]:
    """The JSON types a schema allows (``type`` as a string or a list)."""
    if not schema:
        return set()
    declared = schema.get("type")
    if isinstance(declared, str):
        return {declared}
    if isinstance(declared, list):
        return {t for t in declared if isinstance(t, str)}
    return set()


def check_params(
    template: Template, schema: Mapping[str, Any] | None, *, where: str, allowed: frozenset[str] = frozenset()
) -> None:
    """Every argument placeholder must name a property of ``schema`` (or be in ``allowed``)."""
    for placeholder in template.placeholders:
        if placeholder.source != "param" or placeholder.name in allowed:
            continue
        if property_schema(schema, placeholder.name) is None:
            raise ConfigurationError(
                f"{where}: placeholder {placeholder.text} has no matching property in the input schema"
            )


# ----------------------------------------------------------------------------- values


_MISSING = object()


def lookup(arguments: Mapping[str, Any], path: str) -> Any:
    """The argument at dotted ``path``; :data:`MISSING` when absent (or ``null``)."""
    current: Any = arguments
    for part in path.split("."):
        if not isinstance(current, Mapping) or part not in current:
            return MISSING
        current = current[part]
    return MISSING if current is None else current


MISSING: Any = _MISSING


def format_scalar(value: Any) -> str:
    """A value as a person writes it: ``true``, ``1.5``, ``3``, the string itself, JSON otherwise."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) < 1e16:
            return str(int(value))
        return repr(value)
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
