"""JSON arguments to protobuf messages and protobuf messages back to JSON, with ``json_format``.

Before validation, arguments are normalised toward the schema the model was shown: original
field names (``point_count``) become JSON names (``pointCount``), numbers given for 64-bit
integer fields become digit strings, and enum numbers become their names. Nothing else is
changed, so a wrong argument is still refused by validation with its own name.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from mcs.errors import ExecutionError, InvalidInputError
from mcs_grpc._schema import SIXTY_FOUR_BIT, WELL_KNOWN, is_map

_T = FieldDescriptor
_WRAPPED_64 = frozenset({"google.protobuf.Int64Value", "google.protobuf.UInt64Value"})
_MAX_ERROR = 300


@dataclass(frozen=True, slots=True)
class _Field:
    json_name: str
    kind: str  # "int64", "enum", "message", "map", or "" (left as it is)
    repeated: bool
    target: Any = None  # the nested Descriptor (message, map value) or the EnumDescriptor


def _field_plan(field: FieldDescriptor) -> _Field:
    repeated = bool(field.is_repeated)
    message = field.message_type
    if message is not None and is_map(field):
        value = message.fields_by_name["value"]
        inner = _field_plan(value)
        return _Field(field.json_name, "map", False, inner)
    if field.type in SIXTY_FOUR_BIT:
        return _Field(field.json_name, "int64", repeated)
    if field.type == _T.TYPE_ENUM:
        return _Field(field.json_name, "enum", repeated, field.enum_type)
    if message is not None:
        if message.full_name in _WRAPPED_64:
            return _Field(field.json_name, "int64", repeated)
        if message.full_name in WELL_KNOWN:
            return _Field(field.json_name, "", repeated)
        return _Field(field.json_name, "message", repeated, message)
    return _Field(field.json_name, "", repeated)


class Normalizer:
    """Rewrites arguments toward the JSON names and forms; one plan per message type, memoised."""

    def __init__(self) -> None:
        self._plans: dict[str, dict[str, _Field]] = {}

    def _plan(self, message: Descriptor) -> dict[str, _Field]:
        plan = self._plans.get(message.full_name)
        if plan is None:
            plan = {}
            self._plans[message.full_name] = plan  # before filling: recursive types find it
            for field in message.fields:
                entry = _field_plan(field)
                plan[field.json_name] = entry
                plan.setdefault(field.name, entry)
        return plan

    def changes_nothing(self, message: Descriptor) -> bool:
        """Whether :meth:`message` returns every argument object of ``message`` as it is: each
        field's JSON name is its name and its value is taken in its one JSON form."""
        if message.full_name in WELL_KNOWN:
            return True
        return all(key == entry.json_name and entry.kind == "" for key, entry in self._plan(message).items())

    def message(self, value: Any, message: Descriptor) -> Any:
        if not isinstance(value, dict) or message.full_name in WELL_KNOWN:
            return value
        plan = self._plan(message)
        out: dict[str, Any] = {}
        for key, item in value.items():
            entry = plan.get(key)
            if entry is None:
                out[key] = item
                continue
            name = entry.json_name if entry.json_name not in out else key  # both names given: let validation say
            out[name] = self._field(item, entry)
        return out

    def _field(self, value: Any, entry: _Field) -> Any:
        if entry.kind == "":
            return value
        if entry.kind == "map":
            inner = entry.target
            return {k: self._one(v, inner) for k, v in value.items()} if isinstance(value, dict) else value
        if entry.repeated and isinstance(value, list):
            return [self._one(v, entry) for v in value]
        return self._one(value, entry)

    def _one(self, value: Any, entry: _Field) -> Any:
        if entry.kind == "int64":
            return str(value) if isinstance(value, int) and not isinstance(value, bool) else value
        if entry.kind == "enum":
            if isinstance(value, int) and not isinstance(value, bool):
                known = entry.target.values_by_number.get(value)
                return known.name if known is not None else value
            return value
        if entry.kind == "message":
            return self.message(value, entry.target)
        if entry.kind == "map":
            return self._field(value, entry)
        return value


def to_message(arguments: Any, cls: Any, pool: Any, tool: str) -> Any:
    """A message of ``cls`` from validated JSON arguments.

    Raises:
        InvalidInputError: ``json_format`` refused a value the schema let through (a 64-bit
            integer out of range, bad base64, a Timestamp that is not RFC 3339...).
    """
    try:
        return json_format.ParseDict(arguments, cls(), descriptor_pool=pool)
    except json_format.ParseError as exc:
        text = str(exc)
        text = text if len(text) <= _MAX_ERROR else text[:_MAX_ERROR] + "..."
        raise InvalidInputError(
            f"Invalid arguments for {tool}: {text}. Fix that value and call again.", tool=tool,
            details={"reason": text},
        ) from None


def to_json_function(pool: Any, include_defaults: bool, tool: str) -> Callable[[Any], Any]:
    """``message -> JSON-safe dict`` (64-bit integers as strings, bytes as base64, enums by name)."""

    def convert(message: Any) -> Any:
        try:
            return json_format.MessageToDict(
                message, always_print_fields_with_no_presence=include_defaults, descriptor_pool=pool,
            )
        except (TypeError, ValueError, KeyError) as exc:  # an Any of a type the files do not define
            raise ExecutionError(
                f"{tool} answered, but its result cannot be shown as JSON: {exc}", tool=tool,
            ) from None

    return convert


# ---------------------------------------------------------------------- flat messages, directly
#
# ``json_format`` is general and pure Python: for a small message it costs far more than the
# message itself, and the cost grows when it runs cold between network calls. A message
# whose fields are all plain scalars is built by its constructor and read by attribute, with
# exactly the result ``json_format`` gives; anything else (or any value the direct path does
# not take as it is) goes through ``json_format`` as before, so its errors are unchanged.

#: Field types taken directly, with the Python types their JSON value may have.
_DIRECT_IN: dict[int, tuple[type, ...]] = {
    _T.TYPE_STRING: (str,), _T.TYPE_BOOL: (bool,), _T.TYPE_DOUBLE: (int, float),
    _T.TYPE_INT32: (int,), _T.TYPE_SINT32: (int,), _T.TYPE_SFIXED32: (int,),
    _T.TYPE_UINT32: (int,), _T.TYPE_FIXED32: (int,),
}
#: Field types read directly: their JSON form is the Python value (not doubles: NaN, -0.0).
_DIRECT_OUT = frozenset(_DIRECT_IN) - {_T.TYPE_DOUBLE}


def _flat_fields(message: Descriptor, kinds: Any) -> list[FieldDescriptor] | None:
    """The fields of ``message`` when every one is a singular scalar of ``kinds`` outside any
    real ``oneof``, and the message is neither well-known nor extendable; else ``None``."""
    if message.full_name in WELL_KNOWN or message.extension_ranges:
        return None
    fields = list(message.fields)
    for field in fields:
        oneof = field.containing_oneof
        if field.is_repeated or field.type not in kinds or (oneof is not None and len(oneof.fields) > 1):
            return None
    return fields


def direct_builder(cls: Any) -> Callable[[Any], Any] | None:
    """``arguments -> message`` for a flat message of ``cls`` (``None`` when it is not flat).

    The function returns ``None`` for arguments it does not take as they are (an unknown or
    repeated name, a value of another type, a non-finite number, one out of range); the
    caller then uses :func:`to_message`, which gives ``json_format``'s result or error.
    """
    fields = _flat_fields(cls.DESCRIPTOR, _DIRECT_IN)
    if fields is None:
        return None
    plan: dict[str, tuple[str, tuple[type, ...]]] = {}
    for field in fields:
        plan[field.json_name] = (field.name, _DIRECT_IN[field.type])
        plan.setdefault(field.name, plan[field.json_name])

    def build(arguments: Any) -> Any:
        if type(arguments) is not dict:
            return None
        values: dict[str, Any] = {}
        for key, value in arguments.items():
            entry = plan.get(key)
            if entry is None or type(value) not in entry[1] or entry[0] in values:
                return None
            if type(value) is float and not math.isfinite(value):
                return None
            values[entry[0]] = value
        try:
            return cls(**values)
        except (TypeError, ValueError, OverflowError):
            return None

    return build


def direct_reader(cls: Any, include_defaults: bool) -> Callable[[Any], dict[str, Any]] | None:
    """``message -> dict`` equal to ``json_format.MessageToDict`` (same keys, values and order)
    for a flat message of ``cls``; ``None`` when it is not flat."""
    fields = _flat_fields(cls.DESCRIPTOR, _DIRECT_OUT)
    if fields is None:
        return None
    # MessageToDict: the set fields by number, then (with defaults) the others as declared.
    by_number = [(f.name, f.json_name, f.has_presence, f.default_value)
                 for f in sorted(fields, key=lambda f: f.number)]
    declared = [(f.name, f.json_name) for f in fields if not f.has_presence] if include_defaults else []

    def read(message: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, json_name, presence, default in by_number:
            if presence:
                if message.HasField(name):
                    out[json_name] = getattr(message, name)
            else:
                value = getattr(message, name)
                if value != default:
                    out[json_name] = value
        for name, json_name in declared:
            if json_name not in out:
                out[json_name] = getattr(message, name)
        return out

    return read
