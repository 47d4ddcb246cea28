"""Selection sets generated from the schema: bounded, cycle-safe, scalars and identifiers first.

For the type a root field returns, the selection takes:

* its scalar and enum fields without required arguments, identifying ones first (``id``,
  ``name``, ``login``, ``title``, ...), at most ``max_scalars``;
* its object fields (not lists, not connections, no required arguments), recursively,
  while the nesting stays within ``depth`` and the type is not already on the path (so a
  recursive type never loops), each with the same rules;
* for an interface, ``__typename`` and its fields; for a union, ``__typename`` and the
  identifying fields of each member (``... on Member``);
* for a Relay connection (``pageInfo`` plus ``nodes`` or ``edges``): ``pageInfo { hasNextPage
  endCursor }``, ``totalCount`` when there is one, and ``nodes`` (else ``edges { cursor node }``)
  selected like an object, so the model can page with ``first``/``after``.

Deprecated fields are left out. A type with nothing selectable gets ``__typename``.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphql import (
    GraphQLArgument,
    GraphQLField,
    GraphQLInterfaceType,
    GraphQLNamedType,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLUnionType,
    Undefined,
    get_named_type,
    is_leaf_type,
    is_list_type,
)

from mcs_graphql._inputs import default_of

_IDENTIFYING = ("id", "name", "login", "nameWithOwner", "title", "slug", "key", "number", "code", "email", "url")
_USEFUL = ("description", "state", "status", "type", "kind", "createdAt", "updatedAt", "value", "text")
_RANK = {name: index for index, name in enumerate((*_IDENTIFYING, *_USEFUL))}
_UNION_MEMBERS = 8
_NESTED_OBJECTS = 6


@dataclass(frozen=True, slots=True)
class SelectionRules:
    """How far generated selections go; the driver's ``selection_depth`` sets ``depth``."""

    depth: int = 2
    max_scalars: int = 12


def is_connection(gtype: GraphQLNamedType) -> bool:
    """A Relay connection: an object type with ``pageInfo`` and ``nodes`` or ``edges``."""
    if not isinstance(gtype, GraphQLObjectType):
        return False
    fields = gtype.fields
    return "pageInfo" in fields and ("nodes" in fields or "edges" in fields)


def _callable_bare(field: GraphQLField) -> bool:
    """Selectable without arguments: no required argument, and not deprecated."""
    if field.deprecation_reason:
        return False
    return not any(is_required(argument) for argument in field.args.values())


def is_required(argument: GraphQLArgument) -> bool:
    """Whether a call must give ``argument``: it is non-null and has no default."""
    return isinstance(argument.type, GraphQLNonNull) and default_of(argument) is Undefined


def selection(gtype: GraphQLOutputType, rules: SelectionRules) -> str:
    """The selection set (``" { ... }"``) for a field of type ``gtype``; ``""`` for a leaf."""
    named = get_named_type(gtype)
    if is_leaf_type(named):
        return ""
    return _select(named, rules, rules.depth, frozenset())


def _select(named: GraphQLNamedType, rules: SelectionRules, depth: int, path: frozenset[str]) -> str:
    path = path | {named.name}
    if is_connection(named):
        return _connection(named, rules, depth, path)  # type: ignore[arg-type]
    if isinstance(named, GraphQLUnionType):
        parts = ["__typename"]
        seen: dict[str, str] = {}  # a name selected in two members must have one type, or the document is invalid
        for member in named.types[:_UNION_MEMBERS]:
            inner = _fields_of(member, rules, 1, path, seen)
            if inner:
                parts.append(f"... on {member.name} {{ {inner} }}")
        return " { " + " ".join(parts) + " }"
    if isinstance(named, GraphQLObjectType | GraphQLInterfaceType):
        inner = _fields_of(named, rules, depth, path)
        if isinstance(named, GraphQLInterfaceType):
            inner = f"__typename {inner}".strip()
        return " { " + (inner or "__typename") + " }"
    return " { __typename }"


def _fields_of(
    named: GraphQLObjectType | GraphQLInterfaceType, rules: SelectionRules, depth: int, path: frozenset[str],
    seen: dict[str, str] | None = None,
) -> str:
    leaves: list[str] = []
    objects: list[tuple[str, GraphQLNamedType]] = []
    for name, field in named.fields.items():
        if not _callable_bare(field):
            continue
        inner = get_named_type(field.type)
        if is_leaf_type(inner):
            if seen is not None and seen.setdefault(name, str(field.type)) != str(field.type):
                continue
            leaves.append(name)
        elif depth > 1 and inner.name not in path and not is_list_type(_nullable(field.type)) and not is_connection(inner):
            objects.append((name, inner))
    leaves.sort(key=lambda n: _RANK.get(n, len(_RANK)))
    parts = leaves[: rules.max_scalars]
    for name, inner in objects[:_NESTED_OBJECTS]:
        parts.append(name + _select(inner, rules, depth - 1, path))
    return " ".join(parts)


def _nullable(gtype: GraphQLOutputType) -> GraphQLOutputType:
    return gtype.of_type if isinstance(gtype, GraphQLNonNull) else gtype


def _connection(named: GraphQLObjectType, rules: SelectionRules, depth: int, path: frozenset[str]) -> str:
    fields = named.fields
    parts = []
    page_info = get_named_type(fields["pageInfo"].type)
    wanted = [n for n in ("hasNextPage", "endCursor") if isinstance(page_info, GraphQLObjectType) and n in page_info.fields]
    parts.append("pageInfo { " + (" ".join(wanted) or "__typename") + " }")
    if "totalCount" in fields and is_leaf_type(get_named_type(fields["totalCount"].type)):
        parts.append("totalCount")
    if "nodes" in fields:
        parts.append("nodes" + _select(get_named_type(fields["nodes"].type), rules, depth, path))
    else:
        edge = get_named_type(fields["edges"].type)
        node = edge.fields.get("node") if isinstance(edge, GraphQLObjectType) else None
        cursor = "cursor " if isinstance(edge, GraphQLObjectType) and "cursor" in edge.fields else ""
        inner = "node" + _select(get_named_type(node.type), rules, depth, path) if node is not None else "__typename"
        parts.append(f"edges {{ {cursor}{inner} }}")
    return " { " + " ".join(parts) + " }"
