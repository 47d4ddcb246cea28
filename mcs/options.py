"""Driver options written as ``key=value`` text (``mcs ... -o key=value``), typed by the driver.

A value is converted to the type the driver's constructor declares for that keyword,
never guessed from how it looks: ``-o command=false`` stays the string ``"false"`` for a
``command: str``, ``-o timeout=5`` becomes ``5.0`` for a ``timeout: float | None``,
``-o headers='{"X-Key": "k"}'`` a dict for a ``Mapping[str, str]``. Where the annotation
also takes a string (``verify: bool | str``), the value is read as JSON for the other
types first and kept as text when it is not one of them. Keywords the driver does not
declare (it forwards ``**options`` to something unannotated) are read as JSON when they
parse, else kept as text.

The keywords come from ``__init__`` along the class's MRO, following ``**options`` to the
base class it is forwarded to (``FunctionDriver`` -> ``ToolDriver``).
"""

from __future__ import annotations

import inspect
import json
import os
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import PurePath
from typing import Any, Literal

from pydantic import ConfigDict, TypeAdapter, ValidationError

from mcs.errors import ConfigurationError

__all__ = ["check_file_values", "parse_pairs", "typed_options"]

_UNKNOWN: Any = inspect.Parameter.empty
_SKIPPED_KINDS = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.VAR_POSITIONAL)


def parse_pairs(pairs: Sequence[str]) -> dict[str, str]:
    """``["a=1", "b-c=x"]`` -> ``{"a": "1", "b_c": "x"}`` (dashes in keys become underscores)."""
    options: dict[str, str] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigurationError(f"option {pair!r} is not key=value")
        options[key.strip().replace("-", "_")] = raw
    return options


def _hints(func: Callable[..., Any]) -> dict[str, Any]:
    try:
        return typing.get_type_hints(func)
    except Exception:  # a name only imported for type checking: evaluate the others
        # Annotations are the driver's own source text, evaluated as get_type_hints does;
        # no value from the command line is ever evaluated.
        hints: dict[str, Any] = {}
        namespace = getattr(func, "__globals__", {})
        for name, annotation in getattr(func, "__annotations__", {}).items():
            try:
                hints[name] = eval(annotation, namespace) if isinstance(annotation, str) else annotation
            except Exception:
                continue
        return hints


def declared_keywords(target: Callable[..., Any]) -> tuple[dict[str, Any], bool]:
    """The keywords ``target`` takes with their annotations, and whether it takes any others.

    For a class, ``__init__`` along the MRO as long as each forwards ``**options``.
    """
    functions: list[Callable[..., Any]]
    if isinstance(target, type):
        functions = [vars(k)["__init__"] for k in target.__mro__ if "__init__" in vars(k) and k is not object]
    else:
        functions = [target]
    keywords: dict[str, Any] = {}
    for func in functions:
        try:
            parameters = list(inspect.signature(func).parameters.values())
        except (TypeError, ValueError):
            return keywords, True
        hints = _hints(func)
        open_ended = False
        for parameter in parameters:
            if parameter.kind == inspect.Parameter.VAR_KEYWORD:
                open_ended = True
            elif parameter.kind not in _SKIPPED_KINDS and parameter.name != "self":
                keywords.setdefault(parameter.name, hints.get(parameter.name, _UNKNOWN))
        if not open_ended:
            return keywords, False
    return keywords, bool(functions)  # every one forwarded **options: anything may be meant


def _takes_text(annotation: Any) -> bool:
    if annotation is str:
        return True
    if typing.get_origin(annotation) is Literal:
        return all(isinstance(arg, str) for arg in typing.get_args(annotation))
    origin = typing.get_origin(annotation) or annotation
    return isinstance(origin, type) and issubclass(origin, (os.PathLike, PurePath))


def _is_collection(annotation: Any) -> bool:
    """Whether ``annotation`` is a collection type other than text, bytes or a mapping."""
    origin = typing.get_origin(annotation) or annotation
    return (isinstance(origin, type) and issubclass(origin, Iterable)
            and not issubclass(origin, (str, bytes, bytearray, Mapping)))


def _members(annotation: Any) -> tuple[Any, ...]:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return typing.get_args(annotation)
    return (annotation,)


def _adapter(members: Sequence[Any]) -> TypeAdapter[Any]:
    target: Any = members[0] if len(members) == 1 else typing.Union[tuple(members)]  # noqa: UP007
    return TypeAdapter(target, config=ConfigDict(arbitrary_types_allowed=True))


def _describe(annotation: Any) -> str:
    text = getattr(annotation, "__name__", None) if isinstance(annotation, type) else None
    return text or str(annotation).replace("typing.", "").replace("collections.abc.", "")


def convert(key: str, raw: str, annotation: Any, owner: str) -> Any:
    """``raw`` as the type ``annotation`` names; see the module docstring for the rules."""
    if annotation is _UNKNOWN or annotation is Any:
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    members = _members(annotation)
    others = [m for m in members if not _takes_text(m)]
    if len(others) < len(members):  # the annotation takes text
        if others:
            try:
                return _adapter(others).validate_json(raw)
            except (ValidationError, ValueError, TypeError):
                pass
        return raw
    try:
        adapter = _adapter(others)
    except Exception:
        raise ConfigurationError(
            f"option {key} of {owner} takes a {_describe(annotation)}, which cannot be written on "
            "the command line; set it in a toolbox file or from Python"
        ) from None
    # Text is never read as a collection of its characters (pydantic iterates a str given
    # for an ``Iterable[str]``): a list or a set is written as JSON.
    reads = (adapter.validate_json,) if any(map(_is_collection, others)) else \
        (adapter.validate_json, adapter.validate_python)
    for validate in reads:
        try:
            value = validate(raw)
            # pydantic checks an Iterable's items lazily, as it is consumed: check them now.
            return list(value) if isinstance(value, Iterator) else value
        except (ValidationError, ValueError, TypeError):
            continue
    raise ConfigurationError(
        f"option {key}={raw!r}: {owner} expects {_describe(annotation)} "
        "(write lists and mappings as JSON)"
    )


def _refuses_text(annotation: Any) -> bool:
    """Whether ``annotation`` takes only numbers, booleans, collections or mappings (besides ``None``)."""
    members = [m for m in _members(annotation) if m is not type(None)]

    def plain(member: Any) -> bool:
        origin = typing.get_origin(member) or member
        return member in (bool, int, float) or _is_collection(member) or (
            isinstance(origin, type) and issubclass(origin, Mapping))

    return bool(members) and all(map(plain, members))


def _is_file_data(member: Any) -> bool:
    """Whether a value read from YAML, JSON or TOML can be a ``member``: text, a number, a
    boolean, a list or a mapping (not an object such as a ``RateLimit``)."""
    if member is Any or member is object or isinstance(member, typing.TypeVar):
        return True
    if typing.get_origin(member) is Literal or _takes_text(member) or member in (bool, int, float):
        return True
    origin = typing.get_origin(member) or member
    return not isinstance(origin, type) or _is_collection(member) or issubclass(origin, Mapping)


def check_file_values(target: Callable[..., Any], values: Mapping[str, Any], *, owner: str) -> None:
    """Refuse option values read from a file (YAML, JSON, TOML: already typed) that are text
    where ``target`` declares a number, a boolean, a list or a mapping, and any value where
    it declares only objects a file cannot write (a ``RateLimit``, ``Controls``, a function).

    Such a value is never read as what it spells: ``"false"`` is not a boolean, and
    ``"../schemas"`` is not a list of folders (a driver iterating it would get ``"."``,
    the current folder, among its characters).

    Raises:
        ConfigurationError: naming the option, the type it takes and the value given.
    """
    keywords, _ = declared_keywords(target)
    for key, value in values.items():
        annotation = keywords.get(key, _UNKNOWN)
        if annotation is _UNKNOWN or value is None:
            continue
        if not any(_is_file_data(m) for m in _members(annotation) if m is not type(None)):
            raise ConfigurationError(
                f"{owner}: option {key} takes {_describe(annotation)}, which a file cannot write; "
                "set it from Python"
            )
        if isinstance(value, str) and _refuses_text(annotation):
            raise ConfigurationError(
                f"{owner}: option {key} takes {_describe(annotation)}, not the text {value!r} "
                "(write a list as a list, a number or a boolean without quotes)"
            )


def typed_options(target: Callable[..., Any], pairs: Sequence[str], *, owner: str | None = None) -> dict[str, Any]:
    """``-o key=value`` pairs converted for ``target`` (a driver class or any callable).

    Raises:
        ConfigurationError: a pair is not ``key=value``, a value does not fit the declared
            type, or ``target`` takes no such keyword (the message lists the ones it takes).
    """
    who: str = owner or getattr(target, "__name__", None) or "the driver"
    keywords, open_ended = declared_keywords(target)
    options: dict[str, Any] = {}
    for key, raw in parse_pairs(pairs).items():
        if key not in keywords and not open_ended:
            raise ConfigurationError(
                f"{who} takes no option {key!r}; it takes: {', '.join(sorted(keywords)) or 'none'}"
            )
        options[key] = convert(key, raw, keywords.get(key, _UNKNOWN), who)
    return options
