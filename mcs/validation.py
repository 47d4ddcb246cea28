"""Argument repair and validation against a tool's input schema.

A validator is compiled once per tool (:func:`compile_validator`) and then checks each
call in microseconds. Before rejecting a call it repairs the damage real models do
that has one unambiguous reading: numbers and booleans sent as strings (``"10"``,
``"true"``) and arrays or objects sent as JSON text. Anything else is refused with a
message that names the argument, what was expected and what was got.

Top-level arguments the schema does not declare are refused unless the schema sets
``additionalProperties`` itself: an unknown key must never become a flag, header or
variable downstream (SECURITY.md, A4). Text that is not valid Unicode (an unpaired
surrogate from a broken ``\\ud800`` escape) is refused before it can reach a driver.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import json
import math
from collections.abc import Callable, Mapping
from typing import Any

import jsonschema_rs

from mcs._schema_refs import variants
from mcs.errors import ConfigurationError, ExecutionError, InvalidInputError
from mcs.redaction import SecretMask, scrub, secret_mask, secret_values

_MAX_REPORTED_ERRORS = 5
_MAX_PROBLEM_CHARS = 300


def _strict_top_level(schema: Mapping[str, Any]) -> dict[str, Any]:
    strict = dict(schema)
    strict.setdefault("type", "object")
    if "properties" in strict and "additionalProperties" not in strict:
        strict["additionalProperties"] = False
    return strict


def _compiled(schema: Any) -> Any:
    """A ``jsonschema_rs`` validator of ``schema`` that reads nothing outside it.

    A ``$ref`` resolves within the schema (and the bundled meta-schemas); one to a URL or
    a file is refused when compiling, not fetched: a schema often comes from a peer (an
    MCP server's tool), and its reference must not make this process read a local file
    (whose text would reach the model in an error) or reach an address of its choosing.
    """
    return jsonschema_rs.validator_for(schema, offline=True)


def _without_patterns(node: Any) -> Any:
    """Drop ``pattern`` keywords a regex engine refused (some real specs carry PCRE-only syntax)."""
    if isinstance(node, dict):
        return {k: _without_patterns(v) for k, v in node.items() if k != "pattern"}
    if isinstance(node, list):
        return [_without_patterns(v) for v in node]
    return node


def _types_of(schema: Any, root: Mapping[str, Any]) -> set[str]:
    types: set[str] = set()
    for variant in variants(schema, root):
        declared = variant.get("type")
        if isinstance(declared, str):
            types.add(declared)
        elif isinstance(declared, list):
            types |= {t for t in declared if isinstance(t, str)}
    return types


def _member(schema: Any, root: Mapping[str, Any], key: str) -> Mapping[str, Any] | None:
    """The first ``properties`` or ``items`` among the schema's variants."""
    for variant in variants(schema, root):
        found = variant.get(key)
        if isinstance(found, Mapping):
            return found
    return None


def _coerce(value: Any, schema: Any, root: Mapping[str, Any]) -> Any:
    """Repair one value toward ``schema`` where the reading is unambiguous; else return it."""
    types = _types_of(schema, root)
    if not types:
        return value
    if isinstance(value, str) and "string" not in types:
        text = value.strip()
        if types & {"integer", "number"}:
            try:
                # Python also reads "5_0" as 50 and other scripts' digits (Arabic-Indic five) as numbers;
                # a model's number is ASCII digits only, anything else is not repaired.
                if not text.isascii() or "_" in text:
                    raise ValueError(text)
                number = float(text) if types == {"number"} or "." in text or "e" in text.lower() else int(text)
            except ValueError:
                number = None
            if isinstance(number, float) and not math.isfinite(number):
                number = None  # "nan", "inf" or too many digits: no number the schema meant
            if number is not None:
                if "integer" in types and isinstance(number, float) and number.is_integer():
                    return int(number)
                return number
        if "boolean" in types and text.lower() in ("true", "false"):
            return text.lower() == "true"
        if types & {"array", "object"} and text[:1] in "[{":
            try:
                return _coerce(json.loads(text), schema, root)
            except ValueError:
                return value
        if "null" in types and text.lower() in ("null", "none"):
            return None
        if types == {"array"}:
            return _wrap_in_list(value, schema, root)
        return value
    if isinstance(value, float) and "integer" in types and "number" not in types and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        properties = _member(schema, root, "properties")
        if properties is not None:
            return {k: _coerce(v, properties.get(k), root) for k, v in value.items()}
        return value
    if isinstance(value, list):
        items = _member(schema, root, "items")
        if items is not None:
            return [_coerce(v, items, root) for v in value]
    if not isinstance(value, list) and types == {"array"}:
        return _wrap_in_list(value, schema, root)
    return value


def _wrap_in_list(value: Any, schema: Any, root: Mapping[str, Any]) -> list[Any]:
    """A single value where a list was expected (``"tags": "a"`` for ``["a"]``)."""
    return [_coerce(value, _member(schema, root, "items"), root)]


def _describe(value: Any) -> str:
    text = json.dumps(value, default=str, ensure_ascii=False)
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")  # unpaired surrogates
    return text if len(text) <= 60 else text[:57] + "..."


def _location(path: list[Any]) -> str:
    if not path:
        return "the arguments"
    parts = [str(path[0])]
    for item in path[1:]:
        parts.append(f"[{item}]" if isinstance(item, int) else f".{item}")
    return "argument '" + "".join(parts) + "'"


def _is_text(text: str) -> bool:
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # an unpaired surrogate: not Unicode text, cannot be sent on
        return False
    return True


def _all_text(value: Any) -> bool:
    """Whether every string and key in ``value`` is valid Unicode text: the check of
    :func:`_bad_text_at` for JSON-shaped data (the common case) with one call per nested
    object or array instead of one per value, and no path built. Anything else (a ``str``
    subclass, a tuple...) is left to :func:`_bad_text_at`'s full walk."""
    kind = type(value)
    if kind is dict:
        for key in value:
            if not (type(key) is str and key.isascii()) and isinstance(key, str) and not _is_text(key):
                return False
        items = value.values()
    elif kind is list:
        items = value
    elif kind is str:
        return value.isascii() or _is_text(value)
    else:
        return kind is int or kind is float or kind is bool or value is None or _walk_bad_text(value) is None
    for item in items:
        kind = type(item)
        if kind is str:
            if not item.isascii() and not _is_text(item):
                return False
        elif not (kind is int or kind is float or kind is bool or item is None or _all_text(item)):
            return False
    return True


def _bad_text_at(value: Any) -> list[Any] | None:
    """The path of the first string or key that is not valid Unicode text, else ``None``."""
    if _all_text(value):  # valid text everywhere, the common case: no path to build
        return None
    return _walk_bad_text(value)


def _walk_bad_text(value: Any) -> list[Any] | None:
    """:func:`_bad_text_at` value by value, building the path of the first bad text."""
    if isinstance(value, str):
        return None if _is_text(value) else []
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and not _is_text(key):
                return [key]
            inner = _walk_bad_text(item)
            if inner is not None:
                return [key, *inner]
    elif isinstance(value, list):
        for index, item in enumerate(value):
            inner = _walk_bad_text(item)
            if inner is not None:
                return [index, *inner]
    return None


def _at(value: Any, path: list[Any]) -> Any:
    """The value at ``path`` inside ``value`` (``None`` where the path leads nowhere)."""
    for step in path:
        try:
            value = value[step]
        except (KeyError, IndexError, TypeError):
            return None
    return value


def _printable(path: list[Any]) -> list[Any]:
    return [p.encode("utf-8", "backslashreplace").decode() if isinstance(p, str) else p for p in path]


def _bounded_message(error: Any) -> str:
    """The validator's message with the offending value quoted short (it can be megabytes)."""
    message = str(error.message)
    try:
        quoted = json.dumps(error.instance, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError):
        quoted = None
    if quoted is not None and len(quoted) > 60 and message.startswith(quoted):
        message = _describe(error.instance) + message[len(quoted):]
    return message if len(message) <= _MAX_PROBLEM_CHARS else message[: _MAX_PROBLEM_CHARS - 3] + "..."


class ArgumentValidator:
    """Checks (and repairs) the arguments of one tool; build it with :func:`compile_validator`."""

    __slots__ = (
        "_bounds", "_hints", "_properties", "_schema", "_spans", "_tool", "_unbounded", "_validator", "secret_mask",
    )

    def __init__(self, schema: Mapping[str, Any], tool: str) -> None:
        self._tool = tool
        self._schema = _strict_top_level(schema)
        properties = self._schema.get("properties")
        self._properties: Mapping[str, Any] = properties if isinstance(properties, Mapping) else {}
        #: Where the secret-typed arguments are (see :mod:`mcs.redaction`), or ``None``.
        self.secret_mask: SecretMask | None = secret_mask(self._schema)
        self._hints: dict[str, str] = {}  # a required argument's " (type)" hint, worked out once
        try:
            self._validator = _compiled(self._schema)
        except Exception:
            try:
                self._validator = _compiled(_without_patterns(self._schema))
            except Exception as exc:
                raise ConfigurationError(
                    f"the input schema of tool {tool!r} is not a valid JSON Schema: {exc}"
                ) from None
        self._bounds, self._unbounded = _bounds_plan(self._schema)
        #: :attr:`_bounds` narrowed to +-2**53, an absent bound at that limit: a plain number
        #: inside its span is inside its bounds, compared exactly (see :meth:`validate_valid_text`).
        self._spans: Bounds | None = None if self._bounds is None else tuple(
            (name, -_EXACT_INT if low is None else max(low, -_EXACT_INT),
             _EXACT_INT if high is None else min(high, _EXACT_INT))
            for name, low, high in self._bounds
        )

    @property
    def schema(self) -> Mapping[str, Any]:
        """The schema actually enforced (with the strict top level applied)."""
        return self._schema

    def validate(self, arguments: Any) -> dict[str, Any]:
        """Return the arguments, repaired if needed, or raise :class:`InvalidInputError`.

        The input is never modified; a repaired copy is returned when repairs were made.
        """
        try:
            if type(arguments) is dict and _all_text(arguments):
                # The text was walked here, so the word is given (the base class's check, whatever a subclass rewrites).
                return ArgumentValidator.validate_valid_text(self, arguments)
            return self._checked(arguments, repair=True)
        except RecursionError:  # each check walks the value: a deep enough one exhausts the stack
            raise self._too_deep() from None

    def validate_valid_text(self, arguments: Any) -> dict[str, Any]:
        """:meth:`validate` on the caller's word that every string and key in ``arguments``
        is valid Unicode text (pydantic's JSON reader's output: it refuses lone surrogates):
        arguments that fit the schema are not walked for one again. Arguments that do not
        fit get every check, that one included.

        Arguments that fit are found here, in this frame: the bounds of top-level number
        arguments that :func:`_bounds_plan` took out of the schema (jsonschema_rs takes ten
        times longer over a fractional bound than over none) are compared with one
        comparison each while the value is a plain ``float`` or ``int`` inside its span
        (:attr:`_spans`), text, or absent, then the validator of the schema without them
        decides. Any other value (out of its span, NaN, an infinity, a bool, a subclass...)
        goes to :meth:`_checked`, which judges it value by value (:meth:`_is_valid`)."""
        try:
            if type(arguments) is dict:
                spans = self._spans
                if spans is None:
                    if self._validator.is_valid(arguments):
                        return arguments
                else:
                    for name, low, high in spans:
                        value = arguments.get(name)
                        if type(value) is float or type(value) is int:
                            if low <= value <= high:  # type: ignore[operator]
                                continue
                        elif type(value) is str or value is None:  # text, or absent: no bound applies
                            continue
                        break
                    else:
                        if self._unbounded.is_valid(arguments):
                            return arguments
            return self._checked(arguments, repair=True)
        except RecursionError:
            raise self._too_deep() from None

    def validate_as_sent(self, arguments: Any) -> dict[str, Any]:
        """Return the arguments unchanged when they fit the schema exactly, else raise
        :class:`InvalidInputError`: ``"5"`` for an integer is refused, not read as 5 (the
        RFC-0001 wire's rule; the repairs :meth:`validate` makes are for what LLMs write).
        """
        try:
            return self._checked(arguments, repair=False)
        except RecursionError:
            raise self._too_deep() from None

    def _too_deep(self) -> InvalidInputError:
        return InvalidInputError(
            f"The arguments of {self._tool} are nested too deeply to be checked; send them with "
            "fewer levels of objects and arrays.",
            tool=self._tool,
        )

    def _checked(self, arguments: Any, *, repair: bool) -> dict[str, Any]:
        if not isinstance(arguments, dict):
            raise InvalidInputError(
                f"The arguments of {self._tool} must be a JSON object, got {_describe(arguments)}.",
                tool=self._tool,
            )
        bad_text = _bad_text_at(arguments)
        if bad_text is not None:
            where = _printable(bad_text)
            raise InvalidInputError(
                f"Invalid arguments for {self._tool}: {_location(where)} is not valid Unicode "
                "text (it holds an unpaired surrogate); send it as plain UTF-8 text.",
                tool=self._tool,
                details={"fields": [".".join(str(p) for p in where)]},
            )
        if self._is_valid(arguments):
            return arguments
        if not repair or not arguments:  # `{}` has nothing to repair: refused at once
            raise self._scrubbed(self._error(arguments), arguments)
        repaired = _coerce(copy.deepcopy(arguments), self._schema, self._schema)
        if self._is_valid(repaired):
            return dict(repaired)
        raise self._scrubbed(self._error(repaired), arguments, repaired)

    def _is_valid(self, arguments: dict[str, Any]) -> bool:
        """``self._validator.is_valid(arguments)``, with the bounds of the top-level number
        arguments in :attr:`_bounds` compared here and the rest checked by the validator of
        the schema without them (see :func:`_bounds_plan`). A value the comparison with its
        bounds is not exact for (NaN, infinity, an integer beyond 2**53, a bool, a subclass,
        anything but text and plain numbers) is left to the full validator, which decides."""
        bounds = self._bounds
        full: Callable[[Any], bool] = self._validator.is_valid
        if bounds is None:
            return full(arguments)
        for name, low, high in bounds:
            value: Any = arguments.get(name)
            kind = type(value)
            if kind is float:
                if value - value != 0.0:  # NaN or an infinity
                    return full(arguments)
            elif kind is int:
                if not -_EXACT_INT <= value <= _EXACT_INT:
                    return full(arguments)
            elif kind is str or value is None:  # text, or the argument is absent: no bound applies
                continue
            else:
                return full(arguments)
            if (low is not None and value < low) or (high is not None and value > high):
                return False
        unbounded: Callable[[Any], bool] = self._unbounded.is_valid
        return unbounded(arguments)

    def _scrubbed(self, error: InvalidInputError, *sent: Any) -> InvalidInputError:
        """``error`` with no secret-typed value quoted back (SECURITY.md F3)."""
        if self.secret_mask is not None:
            secrets = [value for arguments in sent for value in secret_values(arguments, self.secret_mask)]
            error.message = scrub(error.message, secrets)
            error.args = (error.message,)
        return error

    def _hint(self, name: Any) -> str:
        """`` (string)`` for a required argument named ``name``: the types it takes."""
        if not isinstance(name, str):
            return ""
        hint = self._hints.get(name)
        if hint is None:
            expected = _types_of(self._properties.get(name), self._schema)
            hint = f" ({'/'.join(sorted(expected))})" if expected else ""
            self._hints[name] = hint
        return hint

    def _error(self, arguments: dict[str, Any]) -> InvalidInputError:
        problems: list[str] = []
        fields: list[str] = []
        for error in self._validator.iter_errors(arguments):
            path = list(error.instance_path)
            kind = type(error.kind).__name__
            if kind == "AdditionalProperties" and not path:
                unexpected = sorted(set(arguments) - set(self._properties))
                allowed = ", ".join(sorted(self._properties)) or "none"
                problems.append(
                    f"unexpected argument(s) {', '.join(map(repr, unexpected))}; allowed: {allowed}"
                )
                fields.extend(unexpected)
            elif kind == "Required" and path:
                name = getattr(error.kind, "property", error.message)
                problems.append(f"{_location(path)}: missing required property {name!r}")
                fields.append(".".join(str(p) for p in [*path, name]))
            elif kind == "Required":
                name = getattr(error.kind, "property", error.message)
                problems.append(f"missing required argument {name!r}{self._hint(name)}")
                fields.append(str(name))
            elif self._holds_secret(path):  # a quote of it, even cut short, could show part of a secret
                problems.append(f"{_location(path)}: does not fit the schema ({kind}; the value is or holds "
                                "a secret and is not shown)")
                fields.append(".".join(str(p) for p in path))
            else:
                value = _at(arguments, path)
                if isinstance(value, float) and not math.isfinite(value):
                    # The validator reads NaN and the infinities as null and would say "null is not...".
                    problems.append(f"{_location(path)}: {value!r} is not a number JSON can carry (no NaN or "
                                    "Infinity)")
                else:
                    problems.append(f"{_location(path)}: {_bounded_message(error)}")
                if path:
                    fields.append(".".join(str(p) for p in path))
            if len(problems) >= _MAX_REPORTED_ERRORS:
                break
        unique = list(dict.fromkeys(problems))
        message = f"Invalid arguments for {self._tool}: " + "; ".join(unique) + "."
        return InvalidInputError(message, tool=self._tool, details={"fields": list(dict.fromkeys(fields))})


    def _holds_secret(self, path: list[Any]) -> bool:
        """Whether the value at ``path`` is, is inside or holds a secret-typed argument: an
        object or array with a secret anywhere below it counts (an error quoting it would
        quote the secret, and a quote cut short escapes :func:`~mcs.redaction.scrub`)."""
        node: Any = self.secret_mask
        for part in path:
            if node is True:
                return True
            if not isinstance(node, Mapping):
                return False
            node = node.get("*") if isinstance(part, int) else node.get(str(part), node.get("*"))
            if node is None:
                return False
        return node is True or isinstance(node, Mapping)


_EXACT_INT = 2**53  # every integer up to this converts to a float exactly
_ANNOTATIONS = frozenset({"description", "title", "default", "examples"})
_NUMBER_NODE_KEYS = _ANNOTATIONS | {"type", "minimum", "maximum"}
_NOT_NUMBER_KEYS = _ANNOTATIONS | {"type", "enum", "const", "minLength", "maxLength", "pattern", "format"}
_ROOT_KEYS = _ANNOTATIONS | {"type", "properties", "required", "additionalProperties"}

Bounds = tuple[tuple[str, float | None, float | None], ...]


def _bounds_plan(schema: Mapping[str, Any]) -> tuple[Bounds | None, Any]:
    """The numeric bounds of top-level arguments that can be compared in Python, and a
    validator of ``schema`` without them; ``(None, None)`` when there is no such bound.

    Exact by construction: JSON Schema keywords of one schema object are a conjunction and
    ``minimum``/``maximum`` constrain numbers only, so for a property whose schema is a
    number node ``{"type": "number"|"integer", "minimum", "maximum"}`` (annotations aside),
    or an ``anyOf`` with one such branch whose other branches refuse every number by their
    ``type``, the schema accepts a value exactly when the stripped schema accepts it and a
    number lies within the bounds. Only plain schemas qualify: the root holds nothing but
    ``type: object``, ``properties``, ``required``, a boolean ``additionalProperties`` and
    annotations, no key anywhere starts with ``$`` (no reference can reach a stripped node),
    and each bound is a finite float or an integer within 2**53 (compared exactly).
    """
    properties = schema.get("properties")
    if (not set(schema) <= _ROOT_KEYS or schema.get("type") != "object" or not isinstance(properties, dict)
            or not isinstance(schema.get("additionalProperties", False), bool) or _has_dollar_key(schema)):
        return None, None
    bounds: list[tuple[str, Any, Any]] = []
    stripped = dict(properties)
    for name, node in properties.items():
        number_node = _bounded_number_node(node)
        if number_node is not None:
            stripped[name] = _without_bounds(node)
        elif isinstance(node, dict) and set(node) <= _ANNOTATIONS | {"anyOf"} and isinstance(node.get("anyOf"), list):
            branches = node["anyOf"]
            numbers = [i for i, branch in enumerate(branches) if _bounded_number_node(branch) is not None]
            if len(numbers) != 1 or not all(_refuses_numbers(b) for i, b in enumerate(branches) if i != numbers[0]):
                continue
            number_node = branches[numbers[0]]
            stripped[name] = {**node, "anyOf": [
                _without_bounds(b) if i == numbers[0] else b for i, b in enumerate(branches)]}
        else:
            continue
        bounds.append((name, number_node.get("minimum"), number_node.get("maximum")))
    if not bounds:
        return None, None
    try:
        unbounded = _compiled({**schema, "properties": stripped})
    except Exception:  # the full schema compiled only without its patterns: keep the full validator
        return None, None
    return tuple(bounds), unbounded


def _exact_bound(value: Any) -> bool:
    kind = type(value)
    return (kind is float and math.isfinite(value)) or (kind is int and -_EXACT_INT <= value <= _EXACT_INT)


def _bounded_number_node(node: Any) -> dict[str, Any] | None:
    if not (isinstance(node, dict) and set(node) <= _NUMBER_NODE_KEYS and node.get("type") in ("number", "integer")):
        return None
    if "minimum" not in node and "maximum" not in node:
        return None
    if not all(_exact_bound(node[key]) for key in ("minimum", "maximum") if key in node):
        return None
    return node


def _refuses_numbers(node: Any) -> bool:
    """Whether ``node``'s ``type`` alone refuses every number (so its other keywords cannot matter)."""
    if not (isinstance(node, dict) and set(node) <= _NOT_NUMBER_KEYS):
        return False
    declared = node.get("type")
    types = [declared] if isinstance(declared, str) else declared
    return (isinstance(types, list) and bool(types) and all(isinstance(t, str) for t in types)
            and not {"number", "integer"} & set(types))


def _without_bounds(node: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in node.items() if key not in ("minimum", "maximum")}


def _has_dollar_key(node: Any) -> bool:
    if isinstance(node, dict):
        return any((isinstance(key, str) and key.startswith("$")) or _has_dollar_key(value)
                   for key, value in node.items())
    if isinstance(node, list):
        return any(_has_dollar_key(item) for item in node)
    return False


def compile_validator(schema: Mapping[str, Any], *, tool: str) -> ArgumentValidator:
    """Compile ``schema`` once; the result validates calls of ``tool``.

    Raises:
        ConfigurationError: the schema itself is not valid JSON Schema.
    """
    return ArgumentValidator(schema, tool)


class ResultValidator:
    """Checks (never repairs) what a tool returned against its output schema.

    Build it with :func:`compile_result_validator`. Any JSON value is a result (text, a
    number, a list, an object); a Pydantic model is checked as its JSON dump, and text
    is read as JSON first when the schema expects an object or an array (a server that
    answers with JSON text). Errors talk about the result, never about arguments.
    """

    __slots__ = ("_source", "_structured", "_tool", "_validator")

    def __init__(self, schema: Mapping[str, Any], tool: str, source: str) -> None:
        self._tool = tool
        self._source = source
        self._structured = bool(_types_of(schema, schema) & {"object", "array"})
        try:
            self._validator = _compiled(dict(schema))
        except Exception:
            try:
                self._validator = _compiled(_without_patterns(dict(schema)))
            except Exception as exc:
                raise ConfigurationError(
                    f"the output schema of tool {tool!r} is not a valid JSON Schema: {exc}"
                ) from None

    def validate(self, result: Any) -> None:
        """Return quietly when ``result`` fits, else raise :class:`ExecutionError` naming the fields."""
        value = _json_value(result)
        if isinstance(value, str) and self._structured and value.lstrip()[:1] in ("{", "["):
            with contextlib.suppress(ValueError):
                value = json.loads(value)
        try:
            if self._validator.is_valid(value):
                return
            errors = list(itertools.islice(self._validator.iter_errors(value), _MAX_REPORTED_ERRORS))
        except (TypeError, ValueError):
            raise ExecutionError(
                f"{self._tool} returned a {type(result).__name__}, which is not JSON, so it cannot "
                f"match {self._source}.",
                tool=self._tool,
            ) from None
        problems = [f"{_result_location(list(e.instance_path))}: {_bounded_message(e)}" for e in errors]
        raise ExecutionError(
            f"{self._tool} returned a result that does not match {self._source}: "
            + "; ".join(dict.fromkeys(problems)) + ".",
            tool=self._tool,
            details={"fields": [".".join(str(p) for p in e.instance_path) for e in errors if e.instance_path]},
        )


def _json_value(result: Any) -> Any:
    dump = getattr(result, "model_dump", None)
    if callable(dump):
        try:
            return dump(mode="json")
        except Exception:
            return result
    return result


def _result_location(path: list[Any]) -> str:
    if not path:
        return "the result"
    parts = [str(path[0])]
    for item in path[1:]:
        parts.append(f"[{item}]" if isinstance(item, int) else f".{item}")
    return "result field '" + "".join(parts) + "'"


def compile_result_validator(
    schema: Mapping[str, Any], *, tool: str, source: str = "its output schema"
) -> ResultValidator:
    """Compile an output schema once; ``source`` names it in errors (``"its output schema"``).

    Raises:
        ConfigurationError: the schema itself is not valid JSON Schema.
    """
    return ResultValidator(schema, tool, source)
