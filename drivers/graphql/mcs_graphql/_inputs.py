"""GraphQL input types as JSON Schema an LLM can fill.

* Non-null arguments and input fields are ``required``; lists are arrays; enums are strings
  with their values (deprecated ones left out) and the values' descriptions.
* Input objects are shared through ``$defs`` and referenced (``{"$ref": "#/$defs/Name"}``),
  so a recursive input type stays a finite schema. ``@oneOf`` inputs take exactly one field.
* Scalars map through :data:`SCALAR_SCHEMAS` (``Int`` is a 32-bit integer, ``DateTime`` a
  ``date-time`` string, ``URI`` a ``uri`` string...); a custom scalar it does not name is a
  string. The ``scalars`` option of the driver adds to or overrides the table.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from graphql import (
    GraphQLArgument,
    GraphQLEnumType,
    GraphQLInputField,
    GraphQLInputObjectType,
    GraphQLInputType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLScalarType,
    Undefined,
    value_from_ast_untyped,
)

from mcs_graphql._text import plain

_INT32 = {"type": "integer", "minimum": -(2**31), "maximum": 2**31 - 1}
_DATE_TIME = {"type": "string", "format": "date-time"}
_URI = {"type": "string", "format": "uri"}

#: How scalars become JSON Schema (built-in ones and common custom ones).
SCALAR_SCHEMAS: Mapping[str, Mapping[str, Any]] = {
    "String": {"type": "string"},
    "Boolean": {"type": "boolean"},
    "Int": _INT32,
    "Float": {"type": "number"},
    "ID": {"type": "string"},
    "DateTime": _DATE_TIME,
    "ISO8601DateTime": _DATE_TIME,
    "PreciseDateTime": _DATE_TIME,
    "GitTimestamp": _DATE_TIME,
    "Timestamp": _DATE_TIME,
    "Date": {"type": "string", "format": "date"},
    "Time": {"type": "string", "format": "time"},
    "URI": _URI,
    "URL": _URI,
    "Url": _URI,
    "Email": {"type": "string", "format": "email"},
    "EmailAddress": {"type": "string", "format": "email"},
    "UUID": {"type": "string", "format": "uuid"},
    "BigInt": {"type": ["integer", "string"]},
    "Long": {"type": ["integer", "string"]},
    "Decimal": {"type": ["number", "string"]},
    "Base64String": {"type": "string", "contentEncoding": "base64"},
    "JSON": {},
    "JSONObject": {"type": "object"},
}
_ENUM_TEXT = 600
_DESCRIPTION = 400


def default_of(argument: GraphQLArgument | GraphQLInputField) -> Any:
    """The argument's default as plain JSON data, or ``Undefined``."""
    default = getattr(argument, "default", None)
    if default is None:
        value = getattr(argument, "default_value", Undefined)
    else:
        literal = getattr(default, "literal", None)
        value = value_from_ast_untyped(literal) if literal is not None else getattr(default, "value", Undefined)
    if value is Undefined:
        return Undefined
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return Undefined
    return value


class InputSchemas:
    """Converts argument lists to JSON Schema; input-object definitions are built once."""

    def __init__(self, scalars: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        self._scalars = {**SCALAR_SCHEMAS, **(scalars or {})}
        self._defs: dict[str, dict[str, Any]] = {}
        self._uses: dict[str, frozenset[str]] = {}
        self._pending: list[GraphQLInputObjectType] = []  # referenced, not yet defined

    def object_schema(self, arguments: Mapping[str, GraphQLArgument | GraphQLInputField]) -> dict[str, Any]:
        """``{"type": "object", ...}`` for ``arguments``, with the ``$defs`` it references."""
        schema, refs = self._fields(arguments)
        if refs:
            schema["$defs"] = self.defs_for(refs)
        return schema

    def defs_for(self, refs: set[str]) -> dict[str, Any]:
        """The ``$defs`` entries that schemas referencing ``refs`` need (transitively)."""
        self._define_pending()
        return {name: self._defs[name] for name in sorted(self._closure(refs))}

    def _fields(
        self, fields: Mapping[str, GraphQLArgument | GraphQLInputField], description: str = ""
    ) -> tuple[dict[str, Any], set[str]]:
        properties: dict[str, Any] = {}
        required: list[str] = []
        refs: set[str] = set()
        for name, field in fields.items():
            prop, used = self.type_schema(field.type)
            prop = dict(prop)
            text = plain(field.description, _DESCRIPTION)
            if field.deprecation_reason:
                text = f"{text} (deprecated: {plain(field.deprecation_reason, 120)})".strip()
            if text:
                prop["description"] = f"{text} {prop['description']}" if "description" in prop else text
            default = default_of(field)
            if default is not Undefined:
                prop["default"] = default
            elif isinstance(field.type, GraphQLNonNull):
                required.append(name)
            properties[name] = prop
            refs |= used
        schema: dict[str, Any] = {"type": "object"}
        if description:
            schema["description"] = description
        schema["properties"] = properties
        if required:
            schema["required"] = required
        schema["additionalProperties"] = False
        return schema, refs

    def type_schema(self, gtype: GraphQLInputType) -> tuple[dict[str, Any], set[str]]:
        """The schema of one input type (nullability is the caller's ``required``)."""
        if isinstance(gtype, GraphQLNonNull):
            return self.type_schema(gtype.of_type)
        if isinstance(gtype, GraphQLList):
            items, refs = self.type_schema(gtype.of_type)
            return {"type": "array", "items": items}, refs
        if isinstance(gtype, GraphQLEnumType):
            return _enum(gtype), set()
        if isinstance(gtype, GraphQLInputObjectType):
            if gtype.name not in self._defs:
                self._pending.append(gtype)
            return {"$ref": f"#/$defs/{gtype.name}"}, {gtype.name}
        if isinstance(gtype, GraphQLScalarType):
            known = self._scalars.get(gtype.name)
            if known is not None:
                return dict(known), set()
            text = plain(gtype.description, 200)
            return {"type": "string", "description": f"GraphQL scalar {gtype.name}" + (f": {text}" if text else "")}, set()
        raise TypeError(f"{gtype} is not an input type")  # pragma: no cover - the schema guarantees it

    def _define_pending(self) -> None:
        """Define every input object referenced so far, and those their fields reference: in
        a loop, not by recursion, so inputs nested thousands deep cannot exhaust the stack."""
        while self._pending:
            gtype = self._pending.pop()
            if gtype.name in self._defs:
                continue
            self._defs[gtype.name] = {}  # a placeholder while its fields refer back to it
            schema, refs = self._fields(gtype.fields, plain(gtype.description, _DESCRIPTION))
            if getattr(gtype, "is_one_of", False):
                schema["minProperties"] = schema["maxProperties"] = 1
                schema["description"] = (schema.get("description", "") + " Give exactly one of the fields.").strip()
            self._defs[gtype.name] = schema
            self._uses[gtype.name] = frozenset(refs)

    def _closure(self, refs: set[str]) -> set[str]:
        found: set[str] = set()
        stack = list(refs)
        while stack:
            name = stack.pop()
            if name not in found:
                found.add(name)
                stack.extend(self._uses.get(name, ()))
        return found


def _enum(gtype: GraphQLEnumType) -> dict[str, Any]:
    values = {name: value for name, value in gtype.values.items() if not value.deprecation_reason}
    schema: dict[str, Any] = {"type": "string", "enum": list(values)}
    described = [f"{name}: {plain(value.description, 120)}" for name, value in values.items() if value.description]
    text = plain(gtype.description, 200)
    if described:
        text = f"{text} Values: {'; '.join(described)}".strip()
    if text:
        schema["description"] = text if len(text) <= _ENUM_TEXT else text[: _ENUM_TEXT - 3] + "..."
    return schema
