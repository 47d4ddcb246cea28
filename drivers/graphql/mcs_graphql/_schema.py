"""Loading a GraphQL schema: SDL text or file, an introspection result, or a built schema.

Every failure is a :class:`SchemaError` (a :class:`mcs.ConfigurationError`) that names the
file (or ``<sdl>``) and the line and column of the problem. A schema that defines one
field twice (GitHub's 2025 public schema does) fails with the list of the repeated fields;
``lenient=True`` loads it with every repeated definition dropped (the first is kept) and
reports what was dropped in :attr:`LoadedSchema.dropped`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

from graphql import (
    DocumentNode,
    GraphQLError,
    GraphQLSchema,
    GraphQLSyntaxError,
    build_ast_schema,
    build_client_schema,
    parse,
)
from graphql.language import (
    DefinitionNode,
    InputObjectTypeDefinitionNode,
    InputObjectTypeExtensionNode,
    InterfaceTypeDefinitionNode,
    InterfaceTypeExtensionNode,
    Node,
    ObjectTypeDefinitionNode,
    ObjectTypeExtensionNode,
)
from graphql.validation.validate import validate_sdl

from mcs.errors import ConfigurationError

_WITH_FIELDS = (
    ObjectTypeDefinitionNode, ObjectTypeExtensionNode, InterfaceTypeDefinitionNode,
    InterfaceTypeExtensionNode, InputObjectTypeDefinitionNode, InputObjectTypeExtensionNode,
)
_REPORTED = 5
SchemaSource = str | os.PathLike[str] | Mapping[str, Any] | GraphQLSchema


class SchemaError(ConfigurationError):
    """The schema cannot be loaded; the message names the file and the place in it."""


@dataclass(frozen=True, slots=True)
class LoadedSchema:
    """A built schema, where it came from, its format, and what a lenient load dropped."""

    schema: GraphQLSchema
    origin: str
    spec_format: str
    dropped: tuple[str, ...] = ()


def _line(node: Node | None) -> int | None:
    return node.loc.start_token.line if node is not None and node.loc is not None else None


def _where(error: GraphQLError) -> str:
    if not error.locations:
        return ""
    return " and ".join(f"line {at.line}, column {at.column}" for at in error.locations[:3]) + ": "


def _without_repeated_fields(document: DocumentNode) -> tuple[DocumentNode, list[str]]:
    """``document`` with each field defined again on the same type removed, and what went."""
    seen: dict[str, dict[str, int | None]] = {}
    repeated: list[str] = []
    definitions: list[DefinitionNode] = []
    for definition in document.definitions:
        if not isinstance(definition, _WITH_FIELDS) or not definition.fields:
            definitions.append(definition)
            continue
        fields = seen.setdefault(definition.name.value, {})
        kept = []
        for field in definition.fields:
            name = field.name.value
            if name in fields:
                first, again = fields[name], _line(field)
                lines = f" (lines {first} and {again})" if first and again else ""
                repeated.append(f"{definition.name.value}.{name}{lines}")
                continue
            fields[name] = _line(field)
            kept.append(field)
        definitions.append(replace(cast(Any, definition), fields=tuple(kept)) if len(kept) != len(definition.fields) else definition)
    if not repeated:
        return document, []
    return replace(document, definitions=tuple(definitions)), repeated


def from_sdl(text: str, origin: str = "<sdl>", *, lenient: bool = False) -> LoadedSchema:
    """Build the schema an SDL text defines (validated as graphql-core's ``build_schema`` does)."""
    try:
        document = parse(text)
    except GraphQLSyntaxError as exc:
        raise SchemaError(f"{origin}: {_where(exc)}{exc.message}") from None
    cleaned, repeated = _without_repeated_fields(document)
    if repeated and not lenient:
        listing = ", ".join(repeated[:20]) + (", ..." if len(repeated) > 20 else "")
        raise SchemaError(
            f"{origin}: {len(repeated)} field(s) are defined more than once on the same type, which "
            f"GraphQL forbids: {listing}. Pass lenient=True to load the schema with the repeated "
            "definitions dropped (the first definition of each field is kept)."
        )
    errors = validate_sdl(cleaned)
    if errors:
        shown = "; ".join(f"{_where(e)}{e.message}" for e in errors[:_REPORTED])
        more = f" (and {len(errors) - _REPORTED} more)" if len(errors) > _REPORTED else ""
        raise SchemaError(f"{origin}: the schema is not valid: {shown}{more}")
    schema = build_ast_schema(cleaned, assume_valid_sdl=True, assume_valid=True)
    return LoadedSchema(schema, origin, "GraphQL SDL", tuple(repeated))


def from_introspection(data: Mapping[str, Any], origin: str = "<introspection>") -> LoadedSchema:
    """Build the schema an introspection result describes (``{"data": {"__schema": ...}}`` or
    ``{"__schema": ...}``)."""
    body = data.get("data", data) if isinstance(data.get("data"), Mapping) else data
    if not isinstance(body, Mapping) or not isinstance(body.get("__schema"), Mapping):
        raise SchemaError(f"{origin}: not an introspection result (no __schema object)")
    try:
        schema = build_client_schema(body)  # type: ignore[arg-type]
        _resolve_lazy_parts(schema)
    except (GraphQLError, TypeError, KeyError, ValueError) as exc:
        raise SchemaError(f"{origin}: the introspection result cannot be built: {exc}") from None
    return LoadedSchema(schema, origin, "GraphQL introspection")


def _resolve_lazy_parts(schema: GraphQLSchema) -> None:
    """Build every part graphql-core builds on first use (fields, arguments, interfaces, union
    members, enum values), so a name that is not a GraphQL name, or a reference to a type the
    answer lacks, fails here, at load, and not later in whatever first reads it."""
    for named in schema.type_map.values():
        for part in ("fields", "interfaces", "types", "values"):
            getattr(named, part, None)


def from_file(path: str | os.PathLike[str], *, lenient: bool = False) -> LoadedSchema:
    """An SDL file (``.graphql``, ``.graphqls``, ``.gql``...) or an introspection ``.json`` file."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise SchemaError(f"{file}: cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise SchemaError(f"{file}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    if file.suffix.lower() == ".json" or text.lstrip().startswith("{\""):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SchemaError(f"{file}: not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
        if not isinstance(data, Mapping):
            raise SchemaError(f"{file}: not an introspection result (a JSON object is expected)")
        return from_introspection(data, str(file))
    return from_sdl(text, str(file), lenient=lenient)


def load(source: SchemaSource, *, lenient: bool = False) -> LoadedSchema:
    """A schema from a path, SDL text (a string holding ``{``), an introspection mapping, or a
    :class:`graphql.GraphQLSchema` used as it is."""
    if isinstance(source, GraphQLSchema):
        return LoadedSchema(source, "<schema>", "GraphQL SDL")
    if isinstance(source, Mapping):
        return from_introspection(source)
    if isinstance(source, str) and "{" in source:
        return from_sdl(source, lenient=lenient)
    return from_file(source, lenient=lenient)
