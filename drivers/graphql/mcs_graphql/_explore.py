"""``search_schema`` and ``describe_type``: the schema, read on demand by the model.

The search index is built on the first search and kept: one entry per named type and one
per field (``Type.field``) of every object, interface and input type, scored by the words
of the name (weighted most), then of the description. ``describe_type`` answers one type
(its fields with arguments and types, enum values, union members) or one field
(``Type.field``, with every argument described), cut to stay readable.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from graphql import (
    GraphQLArgument,
    GraphQLEnumType,
    GraphQLField,
    GraphQLInputField,
    GraphQLInputObjectType,
    GraphQLInterfaceType,
    GraphQLNamedType,
    GraphQLObjectType,
    GraphQLSchema,
    GraphQLUnionType,
)

from mcs.discovery import _stem, _words  # the words and stems discovery's tool search uses
from mcs.errors import InvalidInputError
from mcs_graphql._text import plain

_SUMMARY = 140
DESCRIBE_MAX_CHARS = 24_000


@dataclass(frozen=True, slots=True)
class _Entry:
    name: str
    kind: str
    type: str
    summary: str
    name_words: frozenset[str]
    text_words: frozenset[str]
    root: bool
    owner_words: frozenset[str] = frozenset()


def _args(arguments: Mapping[str, GraphQLArgument]) -> str:
    if not arguments:
        return ""
    return "(" + ", ".join(f"{name}: {arg.type}" for name, arg in arguments.items()) + ")"


class SchemaExplorer:
    """Search and describe one schema; the index is built lazily, once."""

    def __init__(self, schema: GraphQLSchema) -> None:
        self.schema = schema
        self._entries: list[_Entry] | None = None
        roots = (schema.query_type, schema.mutation_type, schema.subscription_type)
        self._roots = {root.name for root in roots if root is not None}

    def _index(self) -> list[_Entry]:
        if self._entries is None:
            entries: list[_Entry] = []
            for name, named in self.schema.type_map.items():
                if name.startswith("__"):
                    continue
                summary = plain(named.description, _SUMMARY)
                entries.append(_Entry(name, _kind(named), name, summary, frozenset(_stem(w) for w in _words(name)),
                                      frozenset(_stem(w) for w in _words(summary)), name in self._roots))
                fields = getattr(named, "fields", None)
                if not isinstance(fields, Mapping):
                    continue
                for field_name, field_def in fields.items():
                    text = plain(field_def.description, _SUMMARY)
                    args = _args(field_def.args) if isinstance(field_def, GraphQLField) else ""
                    entries.append(_Entry(
                        f"{name}.{field_name}", "field", f"{args}: {field_def.type}", text,
                        frozenset(_stem(w) for w in _words(field_name)),
                        frozenset(_stem(w) for w in _words(text)), name in self._roots,
                        frozenset(_stem(w) for w in _words(name)),
                    ))
            self._entries = entries
        return self._entries

    def search(self, query: str, limit: int = 10) -> dict[str, Any]:
        """Types and fields matching the words of ``query``, best first."""
        words = {_stem(w) for w in _words(query)}
        if not words:
            raise InvalidInputError("search_schema needs some words to look for, e.g. 'repository issues'.")
        scored: list[tuple[float, _Entry]] = []
        for entry in self._index():
            named = len(words & entry.name_words)
            score = 3.0 * named + len(words & entry.text_words)
            if named and named == len(entry.name_words):
                score += 3.0  # every word of the name was asked for: `issues` beats `totalIssueCount`
            if entry.owner_words:
                score += 2.0 * len(words & entry.owner_words)
            if score:
                scored.append((score + (0.5 if entry.root else 0.0) + (0.25 if entry.kind != "field" else 0.0), entry))
        scored.sort(key=lambda item: (-item[0], item[1].name))
        results = []
        for _, entry in scored[:limit]:
            item = {"name": entry.name, "kind": entry.kind}
            if entry.kind == "field":
                item["signature"] = entry.name.rsplit(".", 1)[1] + entry.type
            if entry.summary:
                item["description"] = entry.summary
            results.append(item)
        out: dict[str, Any] = {"total": len(scored), "results": results}
        if not results:
            out["hint"] = "Nothing matched; try other words, or describe_type on Query."
        return out

    def describe(self, name: str) -> dict[str, Any]:
        """One type, or one field as ``Type.field``."""
        type_name, _, field_name = name.strip().partition(".")
        named = self.schema.get_type(type_name)
        if named is None or type_name.startswith("__"):
            close = difflib.get_close_matches(type_name, [n for n in self.schema.type_map if not n.startswith("__")], n=5)
            hint = f" Close names: {', '.join(close)}." if close else " Use search_schema to find one."
            raise InvalidInputError(f"The schema has no type named {type_name!r}.{hint}")
        if field_name:
            return self._field(named, field_name)
        return _cut(_type(named))

    def _field(self, named: GraphQLNamedType, field_name: str) -> dict[str, Any]:
        fields = getattr(named, "fields", None)
        if not isinstance(fields, Mapping) or field_name not in fields:
            known = list(fields) if isinstance(fields, Mapping) else []
            close = difflib.get_close_matches(field_name, known, n=5)
            hint = f" Close names: {', '.join(close)}." if close else ""
            raise InvalidInputError(f"{named.name} has no field {field_name!r}.{hint}")
        field_def = fields[field_name]
        out: dict[str, Any] = {"name": f"{named.name}.{field_name}", "type": str(field_def.type)}
        if field_def.description:
            out["description"] = plain(field_def.description)
        if isinstance(field_def, GraphQLField) and field_def.args:
            out["arguments"] = {
                arg_name: _input_value(arg) for arg_name, arg in field_def.args.items()
            }
        if field_def.deprecation_reason:
            out["deprecated"] = plain(field_def.deprecation_reason)
        return _cut(out)


def _input_value(value: GraphQLArgument | GraphQLInputField) -> str:
    text = str(value.type)
    if value.description:
        text += f" - {plain(value.description, 300)}"
    return text


def _kind(named: GraphQLNamedType) -> str:
    for cls, kind in ((GraphQLObjectType, "OBJECT"), (GraphQLInterfaceType, "INTERFACE"), (GraphQLUnionType, "UNION"),
                      (GraphQLEnumType, "ENUM"), (GraphQLInputObjectType, "INPUT_OBJECT")):
        if isinstance(named, cls):
            return kind
    return "SCALAR"


def _type(named: GraphQLNamedType) -> dict[str, Any]:
    out: dict[str, Any] = {"name": named.name, "kind": _kind(named)}
    if named.description:
        out["description"] = plain(named.description)
    if isinstance(named, GraphQLObjectType | GraphQLInterfaceType):
        if named.interfaces:
            out["implements"] = [i.name for i in named.interfaces]
        out["fields"] = [
            f"{name}{_args(f.args)}: {f.type}" + (f"  # {plain(f.description, 200)}" if f.description else "")
            for name, f in named.fields.items() if not f.deprecation_reason
        ]
    elif isinstance(named, GraphQLInputObjectType):
        out["fields"] = [f"{name}: {f.type}" + (f"  # {plain(f.description, 200)}" if f.description else "")
                         for name, f in named.fields.items()]
    elif isinstance(named, GraphQLEnumType):
        out["values"] = [name + (f"  # {plain(v.description, 200)}" if v.description else "")
                         for name, v in named.values.items() if not v.deprecation_reason]
    elif isinstance(named, GraphQLUnionType):
        out["possibleTypes"] = [t.name for t in named.types]
    return out


def _size(value: Any) -> int:
    return len(str(value))


def _cut(out: dict[str, Any], limit: int = DESCRIBE_MAX_CHARS) -> dict[str, Any]:
    """``out`` within ``limit`` characters: field comments go first, then the list is cut."""
    if _size(out) <= limit:
        return out
    for key in ("fields", "values"):
        if key in out:
            out[key] = [line.split("  # ", 1)[0] for line in out[key]]
    if _size(out) > limit:
        for key in ("fields", "values"):
            items = out.get(key)
            if items:
                kept = []
                size = _size({k: v for k, v in out.items() if k != key})
                for line in items:
                    size += len(line) + 4
                    if size > limit:
                        break
                    kept.append(line)
                out[key] = kept
                out["note"] = f"Only {len(kept)} of {len(items)} {key} are shown; ask for Type.field for one."
    else:
        out["note"] = "Field descriptions were left out to keep this short; ask for Type.field for one."
    return out
