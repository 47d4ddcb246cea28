"""JSON Schemas for protobuf messages, following the proto3 JSON mapping.

What a caller can rely on:

* fields are named by their JSON name (``lowerCamelCase``); the original names are
  accepted too (see :mod:`mcs_grpc._messages`);
* 64-bit integers are strings of digits, bytes are base64 strings, enums are their value
  names, maps are objects, repeated fields are arrays;
* a ``oneof`` becomes ``oneOf`` branches that let at most one of its fields be set; proto3
  ``optional`` fields are plain optional properties;
* the well-known types take their JSON forms (Timestamp as RFC 3339 text, Duration as
  ``"1.5s"``, Struct/Value/ListValue as JSON, Any with ``@type``, wrappers as their scalar,
  FieldMask as text, Empty as ``{}``);
* messages that contain themselves (directly or through others) are ``$ref``\\ s into the
  tool's ``$defs``: a finite schema whatever the depth;
* leading comments of the ``.proto`` source become descriptions; ``google.api.field_behavior``
  ``REQUIRED`` fields (and proto2 ``required``) are required; ``OUTPUT_ONLY`` fields are
  left out of inputs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor

from mcs_grpc._catalog import Catalog

Schema = dict[str, Any]

_INT32 = {"type": "integer", "minimum": -(2**31), "maximum": 2**31 - 1}
_UINT32 = {"type": "integer", "minimum": 0, "maximum": 2**32 - 1}
_INT64 = {"type": "string", "pattern": "^-?[0-9]+$", "format": "int64"}
_UINT64 = {"type": "string", "pattern": "^[0-9]+$", "format": "uint64"}
#: base64, standard or URL-safe, padded or not, line breaks allowed: what protobuf's JSON
#: parser decodes. It skips anything else, so without the pattern "!!!" would go as no bytes.
_BYTES = {"type": "string", "contentEncoding": "base64", "pattern": "^[A-Za-z0-9+/_\\s-]*(=\\s*){0,2}$"}
_T = FieldDescriptor
SCALARS: dict[int, Schema] = {
    _T.TYPE_DOUBLE: {"type": "number"}, _T.TYPE_FLOAT: {"type": "number"},
    _T.TYPE_INT32: _INT32, _T.TYPE_SINT32: _INT32, _T.TYPE_SFIXED32: _INT32,
    _T.TYPE_UINT32: _UINT32, _T.TYPE_FIXED32: _UINT32,
    _T.TYPE_INT64: _INT64, _T.TYPE_SINT64: _INT64, _T.TYPE_SFIXED64: _INT64,
    _T.TYPE_UINT64: _UINT64, _T.TYPE_FIXED64: _UINT64,
    _T.TYPE_BOOL: {"type": "boolean"}, _T.TYPE_STRING: {"type": "string"}, _T.TYPE_BYTES: _BYTES,
}
#: Field types whose JSON form is a string of digits (the normaliser turns numbers into it).
SIXTY_FOUR_BIT = frozenset({
    _T.TYPE_INT64, _T.TYPE_SINT64, _T.TYPE_SFIXED64, _T.TYPE_UINT64, _T.TYPE_FIXED64,
})

_P = "google.protobuf."
WELL_KNOWN: dict[str, Schema] = {
    _P + "Timestamp": {"type": "string", "format": "date-time",
                       "description": "RFC 3339 date-time, e.g. 2024-05-01T12:00:00Z"},
    _P + "Duration": {"type": "string", "pattern": "^-?[0-9]+(\\.[0-9]{1,9})?s$",
                      "description": "seconds with an s suffix, e.g. 1.5s"},
    _P + "Struct": {"type": "object"},
    _P + "Value": {"description": "any JSON value"},
    _P + "ListValue": {"type": "array"},
    # the type URL every protobuf runtime packs; another prefix (http://...) is a URL that a
    # server's type resolver may fetch, and the model chooses it: refused
    _P + "Any": {"type": "object", "properties": {"@type": {
        "type": "string", "pattern": "^type\\.googleapis\\.com/[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*$",
        "description": "type.googleapis.com/ and the message's full name"}},
        # the packed message's fields: checked against that message at the call (mcs_grpc._any)
        "required": ["@type"], "additionalProperties": True, "description": "@type and the fields of that message"},
    _P + "FieldMask": {"type": "string", "description": "comma-separated field paths in lowerCamelCase"},
    _P + "Empty": {"type": "object", "properties": {}, "additionalProperties": False},
    _P + "DoubleValue": {"type": "number"}, _P + "FloatValue": {"type": "number"},
    _P + "Int64Value": _INT64, _P + "UInt64Value": _UINT64,
    _P + "Int32Value": _INT32, _P + "UInt32Value": _UINT32,
    _P + "BoolValue": {"type": "boolean"}, _P + "StringValue": {"type": "string"},
    _P + "BytesValue": _BYTES,
}
#: Well-known types whose JSON form is an object: usable as a tool's whole input.
OBJECT_WELL_KNOWN = frozenset({_P + "Struct", _P + "Any", _P + "Empty"})
NULL_VALUE = _P + "NullValue"


def _key_schema(field: FieldDescriptor) -> Schema | None:
    """``propertyNames`` for a map key that is not a string (JSON keys are always text)."""
    if field.type == _T.TYPE_BOOL:
        return {"enum": ["true", "false"]}
    if field.type in (_T.TYPE_UINT32, _T.TYPE_FIXED32, _T.TYPE_UINT64, _T.TYPE_FIXED64):
        return {"pattern": "^[0-9]+$"}
    if field.type != _T.TYPE_STRING:
        return {"pattern": "^-?[0-9]+$"}
    return None


def is_map(field: FieldDescriptor) -> bool:
    message = field.message_type
    return bool(field.is_repeated and message is not None and message.GetOptions().map_entry)


class SchemaBuilder:
    """Converts message descriptors to JSON Schema, once per message (memoised)."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._inline: dict[str, tuple[Schema, frozenset[str]]] = {}
        self._defs: dict[str, tuple[Schema, frozenset[str]]] = {}
        self._defining: set[str] = set()
        self._recursive: dict[str, bool] = {}
        self._enums: dict[str, Schema] = {}

    # ------------------------------------------------------------------ public

    def input_schema(self, message: Descriptor) -> Schema:
        """The object schema of a whole request, ``$defs`` included when needed."""
        schema, needs = self.message(message)
        return self.with_defs(schema, needs)

    def with_defs(self, schema: Schema, needs: Iterable[str]) -> Schema:
        defs = self.defs_for(needs)
        if not defs:
            return schema
        if "$ref" in schema:  # the root itself is recursive: inline one level, keep the defs
            schema = dict(self._defs[schema["$ref"].rsplit("/", 1)[1]][0])
        return {**schema, "$defs": defs}

    def defs_for(self, needs: Iterable[str]) -> dict[str, Schema]:
        found: dict[str, Schema] = {}
        pending = list(needs)
        while pending:
            name = pending.pop()
            if name in found:
                continue
            body, inner = self._defs[name]
            found[name] = body
            pending.extend(inner)
        return dict(sorted(found.items()))

    def message(self, message: Descriptor) -> tuple[Schema, frozenset[str]]:
        """The schema of one message (or a ``$ref`` to it) and the ``$defs`` it needs."""
        name = message.full_name
        known = WELL_KNOWN.get(name)
        if known is not None:
            return dict(known), frozenset()
        if self._is_recursive(message):
            if name not in self._defs and name not in self._defining:
                self._defining.add(name)
                try:
                    self._defs[name] = self._body(message)
                finally:
                    self._defining.discard(name)
            return {"$ref": f"#/$defs/{name}"}, frozenset({name})
        cached = self._inline.get(name)
        if cached is None:
            cached = self._body(message)
            self._inline[name] = cached
        return cached

    # ------------------------------------------------------------------ messages

    def _body(self, message: Descriptor) -> tuple[Schema, frozenset[str]]:
        properties: Schema = {}
        required: list[str] = []
        needs: set[str] = set()
        for field in message.fields:
            behavior = self.catalog.behavior(field)
            if behavior.output_only:
                continue
            schema, inner = self.field(field)
            needs |= inner
            comment = self.catalog.comment(field.full_name)
            if comment:
                # A message's own comment is its default; the field's comment says more here.
                kept = None if _is_plain_message(field) else schema.get("description")
                schema = {**schema, "description": _joined(comment, kept)}
            properties[field.json_name] = schema
            if behavior.required or field.is_required:
                required.append(field.json_name)
        body: Schema = {"type": "object"}
        comment = self.catalog.comment(message.full_name)
        if comment:
            body["description"] = comment
        body["properties"] = properties
        if required:
            body["required"] = required
        body["additionalProperties"] = False
        groups = [self._oneof(names) for names in self._oneofs(message, properties)]
        if len(groups) == 1:
            body["oneOf"] = groups[0]
        elif groups:
            body["allOf"] = [{"oneOf": group} for group in groups]
        return body, frozenset(needs)

    def _oneofs(self, message: Descriptor, properties: Schema) -> list[list[str]]:
        found = []
        for oneof in message.oneofs:
            fields = list(oneof.fields)
            if len(fields) == 1 and fields[0].full_name in self.catalog.proto3_optional:
                continue  # the synthetic oneof of a proto3 `optional` field
            names = [f.json_name for f in fields if f.json_name in properties]
            if len(names) > 1:
                found.append(names)
        return found

    @staticmethod
    def _oneof(names: list[str]) -> list[Schema]:
        """Exactly one branch holds when at most one of ``names`` is set."""
        each: list[Schema] = [{"required": [name]} for name in names]
        return [*each, {"not": {"anyOf": each}}]

    def _is_recursive(self, message: Descriptor) -> bool:
        name = message.full_name
        known = self._recursive.get(name)
        if known is None:
            known = name in self._reachable(message)
            self._recursive[name] = known
        return known

    @staticmethod
    def _reachable(message: Descriptor) -> set[str]:
        """Full names of the messages reachable from ``message``'s fields (well-known types aside)."""
        seen: set[str] = set()
        pending = [message]
        while pending:
            current = pending.pop()
            for field in current.fields:
                target = field.message_type
                if target is None:
                    continue
                if target.GetOptions().map_entry:
                    target = target.fields_by_name["value"].message_type
                    if target is None:
                        continue
                if target.full_name in WELL_KNOWN or target.full_name in seen:
                    continue
                seen.add(target.full_name)
                pending.append(target)
        return seen

    # ------------------------------------------------------------------ fields

    def field(self, field: FieldDescriptor) -> tuple[Schema, frozenset[str]]:
        entry = field.message_type
        if entry is not None and is_map(field):
            value, needs = self._single(entry.fields_by_name["value"])
            schema: Schema = {"type": "object", "additionalProperties": value}
            keys = _key_schema(entry.fields_by_name["key"])
            if keys is not None:
                schema["propertyNames"] = keys
            return schema, needs
        single, needs = self._single(field)
        if field.is_repeated:
            return {"type": "array", "items": single}, needs
        return single, needs

    def _single(self, field: FieldDescriptor) -> tuple[Schema, frozenset[str]]:
        if field.message_type is not None:
            return self.message(field.message_type)
        if field.enum_type is not None:
            return self._enum(field.enum_type), frozenset()
        return dict(SCALARS[field.type]), frozenset()

    def _enum(self, enum: EnumDescriptor) -> Schema:
        if enum.full_name == NULL_VALUE:
            return {"type": "null"}
        cached = self._enums.get(enum.full_name)
        if cached is None:
            names = [value.name for value in enum.values]
            cached = {"type": "string", "enum": names}
            notes = [
                f"{value.name}: {note}" for value in enum.values
                if (note := self.catalog.comment(f"{enum.full_name}.{value.name}"))
            ]
            summary = self.catalog.comment(enum.full_name)
            text = " ".join(part for part in (summary, "; ".join(notes)) if part)
            if text:
                cached["description"] = text
            self._enums[enum.full_name] = cached
        return dict(cached)


def _is_plain_message(field: FieldDescriptor) -> bool:
    target = field.message_type
    return target is not None and target.full_name not in WELL_KNOWN and not is_map(field)


def _joined(first: str, second: Any) -> str:
    return f"{first} ({second})" if isinstance(second, str) and second else first
