"""Operations the driver sends: generated from root fields, or persisted ``.graphql`` files.

An :class:`Operation` holds the exact document text that goes on the wire. Arguments of
the call only ever become the request's ``variables``: nothing the model supplies is
written into a document (SECURITY.md C1), so the query sent is, byte for byte, the
generated text or the persisted file.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from graphql import (
    GraphQLError,
    GraphQLField,
    GraphQLInputType,
    GraphQLObjectType,
    GraphQLSchema,
    GraphQLSyntaxError,
    OperationDefinitionNode,
    get_named_type,
    parse,
    type_from_ast,
    validate,
    value_from_ast_untyped,
)

from mcs.errors import ConfigurationError
from mcs_graphql._inputs import InputSchemas
from mcs_graphql._schema import SchemaError
from mcs_graphql._selection import SelectionRules, is_connection, selection
from mcs_graphql._text import plain

Kind = Literal["query", "mutation", "subscription"]
MutationsMode = Literal["none", "persisted", "all"]
_DESCRIPTION = 700
_READ = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": True}
_WRITE = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True}


@dataclass(frozen=True, slots=True)
class Operation:
    """One tool's GraphQL operation.

    ``text`` is the document sent, unchanged, with every call; ``operation_name`` picks the
    operation in it. ``page_size`` is set for a field returning a Relay connection: a call
    that gives neither ``first`` nor ``last`` asks for that many.
    """

    name: str
    kind: Kind
    text: str
    operation_name: str
    source: Literal["generated", "persisted"]
    title: str
    description: str
    input_schema: Mapping[str, Any]
    group: str
    page_size: int | None = None
    origin: str = ""
    variables_declared: frozenset[str] = field(default_factory=frozenset)

    @property
    def annotations(self) -> Mapping[str, Any]:
        return _WRITE if self.kind == "mutation" else _READ

    def variables(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """The request's ``variables`` for validated ``arguments``."""
        values = dict(arguments)
        if self.page_size is not None and "first" not in values and "last" not in values:
            values["first"] = self.page_size
        return values


def _pascal(name: str) -> str:
    return name[:1].upper() + name[1:]


def _variables(field_def: GraphQLField) -> tuple[str, str]:
    """``($a: Int!, $b: [ID!])`` and ``(a: $a, b: $b)`` for a field's arguments."""
    if not field_def.args:
        return "", ""
    declared = ", ".join(f"${name}: {arg.type}" for name, arg in field_def.args.items())
    passed = ", ".join(f"{name}: ${name}" for name in field_def.args)
    return f"({declared})", f"({passed})"


def generated(
    schema: GraphQLSchema,
    converter: InputSchemas,
    *,
    mutations: MutationsMode,
    rules: SelectionRules,
    page_size: int,
    selections: Mapping[str, str],
) -> list[Operation]:
    """One operation per root field of Query, Mutation (when ``mutations="all"``) and Subscription."""
    roots: list[tuple[Kind, GraphQLObjectType | None]] = [
        ("query", schema.query_type),
        ("mutation", schema.mutation_type if mutations == "all" else None),
        ("subscription", schema.subscription_type),
    ]
    unused = set(selections)
    operations: list[Operation] = []
    for kind, root in roots:
        if root is None:
            continue
        for field_name, field_def in root.fields.items():
            override = selections.get(field_name)
            unused.discard(field_name)
            operations.append(_generated_one(kind, root.name, field_name, field_def, converter, rules, page_size, override))
    if unused:
        raise ConfigurationError(
            f"selections names root fields the schema does not offer as tools: {', '.join(sorted(unused))}"
        )
    return operations


def _generated_one(
    kind: Kind, root: str, field_name: str, field_def: GraphQLField, converter: InputSchemas,
    rules: SelectionRules, page_size: int, override: str | None,
) -> Operation:
    declared, passed = _variables(field_def)
    if override is not None:
        chosen = " " + override.strip()
        if not chosen.strip().startswith("{"):
            raise ConfigurationError(f"selections[{field_name!r}] must be a selection set starting with '{{'")
    else:
        chosen = selection(field_def.type, rules)
    op_name = _pascal(field_name)
    text = f"{kind} {op_name}{declared} {{ {field_name}{passed}{chosen} }}"
    if override is not None:
        try:
            parse(text)
        except GraphQLSyntaxError as exc:
            raise ConfigurationError(f"selections[{field_name!r}] is not a valid selection set: {exc.message}") from None
    schema = converter.object_schema(field_def.args)
    returned = get_named_type(field_def.type)
    paged = is_connection(returned) and "first" in field_def.args
    description = plain(field_def.description, _DESCRIPTION)
    if field_def.deprecation_reason:
        description = f"{description} Deprecated: {plain(field_def.deprecation_reason, 200)}".strip()
    description = f"{description} Returns {field_def.type}.".strip()
    if paged:
        schema["properties"]["first"].setdefault("default", page_size)
        description += (
            f" Paged: gives {page_size} items unless `first` says otherwise; to get the next page "
            "call again with `after` set to pageInfo.endCursor while pageInfo.hasNextPage is true."
        )
    return Operation(
        name=field_name, kind=kind, text=text, operation_name=op_name, source="generated",
        title=f"{root}.{field_name}", description=description, input_schema=schema, group=kind,
        page_size=page_size if paged else None, origin=f"{root}.{field_name}",
        variables_declared=frozenset(field_def.args),
    )


# ---------------------------------------------------------------------- persisted


def operation_files(source: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[Path]:
    """The ``.graphql``/``.gql`` files a folder holds (sorted, recursively), or the files listed."""
    entries = [source] if isinstance(source, str | os.PathLike) else list(source)
    files: list[Path] = []
    for entry in entries:
        path = Path(entry)
        if path.is_dir():
            files.extend(sorted(p for p in path.rglob("*") if p.suffix in (".graphql", ".gql") and p.is_file()))
        elif path.is_file():
            files.append(path)
        else:
            raise ConfigurationError(f"{path}: no such operation file or folder")
    return files


def _leading_comment(text: str, line: int) -> str:
    """The ``#`` comment lines right above line ``line`` (1-based), as one text."""
    lines = text.splitlines()
    found: list[str] = []
    index = line - 2
    while index >= 0 and lines[index].strip().startswith("#"):
        found.append(lines[index].strip().lstrip("#").strip())
        index -= 1
    return " ".join(reversed(found)).strip()


def _where(error: GraphQLError) -> str:
    if error.locations:
        return f"line {error.locations[0].line}, column {error.locations[0].column}: "
    return ""


def persisted(
    files: Iterable[Path], schema: GraphQLSchema, converter: InputSchemas, *, mutations: MutationsMode,
) -> list[Operation]:
    """One operation per named operation of each file, validated against ``schema``.

    Raises:
        SchemaError: a file does not parse, does not validate, or holds an unnamed operation
            (the message names the file, line and column).
    """
    operations: list[Operation] = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise SchemaError(f"{path}: cannot be read ({exc})") from None
        try:
            document = parse(text)
        except GraphQLSyntaxError as exc:
            raise SchemaError(f"{path}: {_where(exc)}{exc.message}") from None
        errors = validate(schema, document, max_errors=5)
        if errors:
            raise SchemaError(f"{path}: does not match the schema: " + "; ".join(f"{_where(e)}{e.message}" for e in errors))
        for definition in document.definitions:
            if not isinstance(definition, OperationDefinitionNode):
                continue
            line = definition.loc.start_token.line if definition.loc else 1
            if definition.name is None:
                raise SchemaError(f"{path}: line {line}: a persisted operation needs a name (it becomes the tool's name)")
            kind: Kind = definition.operation.value
            if kind == "mutation" and mutations == "none":
                continue
            operations.append(_persisted_one(path, text, definition, line, kind, schema, converter))
    return operations


def _persisted_one(
    path: Path, text: str, definition: OperationDefinitionNode, line: int, kind: Kind,
    schema: GraphQLSchema, converter: InputSchemas,
) -> Operation:
    assert definition.name is not None
    name = definition.name.value
    properties: dict[str, Any] = {}
    required: list[str] = []
    for variable in definition.variable_definitions or ():
        var_name = variable.variable.name.value
        var_type = type_from_ast(schema, variable.type)
        if var_type is None:  # pragma: no cover - validation refused unknown types already
            raise SchemaError(f"{path}: variable ${var_name} has an unknown type")
        prop, _ = converter.type_schema(cast(GraphQLInputType, var_type))
        if variable.default_value is not None:
            prop = {**prop, "default": value_from_ast_untyped(variable.default_value)}
        elif variable.type.kind == "non_null_type":
            required.append(var_name)
        properties[var_name] = prop
    input_schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        input_schema["required"] = required
    input_schema["additionalProperties"] = False
    refs = _refs(properties)
    if refs:
        input_schema["$defs"] = converter.defs_for(refs)
    description = _leading_comment(text, line) or f"The persisted {kind} {name} from {path.name}."
    return Operation(
        name=name, kind=kind, text=text, operation_name=name, source="persisted",
        title=f"{kind} {name}", description=description, input_schema=input_schema, group="persisted",
        origin=str(path), variables_declared=frozenset(properties),
    )


def _refs(node: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(node, Mapping):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            found.add(ref[len("#/$defs/"):])
        for value in node.values():
            found |= _refs(value)
    elif isinstance(node, list):
        for value in node:
            found |= _refs(value)
    return found
