"""Checks on a document the model wrote, all before anything is sent.

In order, each cheap check before the costlier ones:

1. parsed with a token cap (``max_tokens``), so a huge document costs little to refuse;
2. one operation (several only when allowed, then ``operationName`` picks one); no
   mutation unless mutations are allowed, no subscription unless allowed;
3. its shape, fragments expanded (memoised, so a fragment "bomb" costs linear time) and
   fragment cycles and fragment chains over ``MAX_FRAGMENT_NESTING`` refused: nesting ``max_depth``, aliased fields ``max_aliases``, fields
   ``max_fields``; introspection fields (``__schema``, ``__type``) unless allowed;
4. validated against the schema (graphql-core's rules: fields, arguments, types);
5. estimated complexity: each field costs 1 times the size of the lists it sits in; a list
   field's size is the largest of its size arguments given (``size_arguments``:
   :data:`SIZE_ARGUMENTS` by default, ``first``, ``last``, ``limit``...; a variable's
   coerced value, its default included), else ``list_size``;
6. the variables: only those the operation declares (others are refused, not sent),
   coerced against their declared types.

An anonymous operation is sent without an ``operationName``, whatever the model gave.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLInterfaceType,
    GraphQLNamedType,
    GraphQLObjectType,
    GraphQLSchema,
    GraphQLSyntaxError,
    InlineFragmentNode,
    IntValueNode,
    OperationDefinitionNode,
    SelectionSetNode,
    ValueNode,
    VariableNode,
    get_named_type,
    is_list_type,
    parse,
    validate,
)
from graphql.execution.values import get_variable_values
from graphql.type.definition import get_nullable_type

from mcs.errors import ConfigurationError, InvalidInputError
from mcs_graphql._selection import is_connection

_INTROSPECTION = frozenset({"__schema", "__type"})
#: How deep fragments may spread fragments that spread fragments: far beyond what documents
#: use, and below where walking them (here, and in graphql-core's validation) runs out of stack.
MAX_FRAGMENT_NESTING = 100
#: The arguments that size a list field, as APIs commonly name them (Relay's, then others').
SIZE_ARGUMENTS = ("first", "last", "limit", "pageSize", "perPage", "per_page", "top", "take", "count")


@dataclass(frozen=True, slots=True)
class Limits:
    """What a free-form document may be; every field is a driver option (``limits={...}``)."""

    max_depth: int = 10
    max_aliases: int = 20
    max_fields: int = 300
    max_complexity: int = 5000
    max_tokens: int = 5000
    list_size: int = 10
    introspection: bool = True
    several_operations: bool = False
    subscriptions: bool = False
    size_arguments: tuple[str, ...] = SIZE_ARGUMENTS

    def __post_init__(self) -> None:
        names = self.size_arguments
        if isinstance(names, str) or not all(isinstance(n, str) and n for n in names):
            raise ConfigurationError(
                f"limits size_arguments must be a list of argument names, such as ['first', 'limit'], not {names!r}"
            )
        object.__setattr__(self, "size_arguments", tuple(names))

    @classmethod
    def from_option(cls, value: Limits | Mapping[str, Any] | None) -> Limits:
        if value is None:
            return cls()
        if isinstance(value, Limits):
            return value
        unknown = set(value) - set(cls.__dataclass_fields__)
        if unknown:
            raise ConfigurationError(
                f"limits has no key {', '.join(sorted(unknown))}; keys: {', '.join(cls.__dataclass_fields__)}"
            )
        return cls(**value)


@dataclass(frozen=True, slots=True)
class Checked:
    """A document that passed every check: what to send and what it is."""

    text: str
    operation_name: str | None
    kind: str
    variables: dict[str, Any]
    complexity: int


@dataclass
class _Shape:
    depth: int = 0
    fields: int = 0
    aliases: int = 0
    introspection: bool = False


@dataclass
class _Walker:
    fragments: Mapping[str, FragmentDefinitionNode]
    shapes: dict[str, _Shape] = field(default_factory=dict)
    stack: list[str] = field(default_factory=list)

    def measure(self, node: SelectionSetNode | None) -> _Shape:
        shape = _Shape()
        if node is None:
            return shape
        for selection in node.selections:
            if isinstance(selection, FieldNode):
                inner = self.measure(selection.selection_set)
                shape.fields += 1 + inner.fields
                shape.aliases += (1 if selection.alias is not None else 0) + inner.aliases
                shape.depth = max(shape.depth, 1 + inner.depth)
                shape.introspection |= inner.introspection or selection.name.value in _INTROSPECTION
                continue
            if isinstance(selection, InlineFragmentNode):
                inner = self.measure(selection.selection_set)
            elif isinstance(selection, FragmentSpreadNode):
                inner = self.fragment(selection.name.value)
            else:  # pragma: no cover - no other selection kinds exist
                continue
            shape.fields += inner.fields
            shape.aliases += inner.aliases
            shape.depth = max(shape.depth, inner.depth)
            shape.introspection |= inner.introspection
        return shape

    def fragment(self, name: str) -> _Shape:
        known = self.shapes.get(name)
        if known is not None:
            return known
        if name in self.stack:
            cycle = " -> ".join([*self.stack[self.stack.index(name):], name])
            raise InvalidInputError(f"The document's fragments spread each other in a cycle ({cycle}); remove the cycle.")
        definition = self.fragments.get(name)
        if definition is None:
            return _Shape()  # validation reports the unknown fragment
        if len(self.stack) >= MAX_FRAGMENT_NESTING:
            raise InvalidInputError(
                f"The document's fragments spread each other more than {MAX_FRAGMENT_NESTING} deep "
                f"({self.stack[0]} -> {self.stack[1]} -> ...); spread fewer fragments inside fragments."
            )
        self.stack.append(name)
        try:
            shape = self.measure(definition.selection_set)
        finally:
            self.stack.pop()
        self.shapes[name] = shape
        return shape


def check(
    text: str, schema: GraphQLSchema, limits: Limits, *, mutations: bool,
    variables: Mapping[str, Any] | None = None, operation_name: str | None = None,
) -> Checked:
    """Every check of the module docstring, in order.

    Raises:
        InvalidInputError: the first check that fails, with what to change.
    """
    try:
        document = parse(text, max_tokens=limits.max_tokens)
    except GraphQLSyntaxError as exc:
        where = f" at line {exc.locations[0].line}, column {exc.locations[0].column}" if exc.locations else ""
        raise InvalidInputError(f"The document is not valid GraphQL{where}: {exc.message}") from None
    operation = _operation(document, limits, mutations, operation_name)
    fragments = {d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)}
    walker = _Walker(fragments)
    shape = walker.measure(operation.selection_set)
    for name in fragments:  # unused fragments are refused by validation, but never walked unbounded
        walker.fragment(name)
    _within(shape, limits)
    errors = validate(schema, document, max_errors=5)
    if errors:
        raise InvalidInputError(
            "The document does not match the schema: " + "; ".join(_located(e) for e in errors)
            + ". Use describe_type to see the fields and arguments a type offers."
        )
    given = _declared(operation, variables or {})
    coerced = get_variable_values(schema, operation.variable_definitions or (), given, max_errors=5)
    if isinstance(coerced, list):
        raise InvalidInputError("The variables do not fit the document: " + "; ".join(e.message for e in coerced))
    root = schema.get_root_type(operation.operation)
    # sized by the values the server will use: defaults applied, `1000.0` read as the Int 1000
    complexity = _Cost(schema, fragments, coerced.coerced, limits.list_size, frozenset(limits.size_arguments)).selection(operation.selection_set, root, 1)
    if complexity > limits.max_complexity:
        raise InvalidInputError(
            f"The document's estimated complexity is {complexity}, over the limit of {limits.max_complexity} "
            "(each field counts once per item of the lists it is in). Ask for fewer fields or smaller pages "
            "(first, last, limit...)."
        )
    return Checked(
        # an anonymous operation is sent without a name: a server may refuse one, or run another
        text=text, operation_name=operation.name.value if operation.name else None,
        kind=operation.operation.value, variables=given, complexity=complexity,
    )


def _declared(operation: OperationDefinitionNode, variables: Mapping[str, Any]) -> dict[str, Any]:
    """``variables`` if the operation declares every one of them.

    Raises:
        InvalidInputError: naming the variables the operation does not declare.
    """
    declared = [d.variable.name.value for d in operation.variable_definitions or ()]
    extra = sorted(set(variables) - set(declared))
    if extra:
        which = ", ".join(f"${name}" for name in extra)
        offered = ", ".join(f"${name}" for name in declared) or "none"
        raise InvalidInputError(
            f"The operation does not declare the variables {which} (it declares: {offered}); "
            "declare each in the document, e.g. query($name: String), or leave it out."
        )
    return dict(variables)


def _located(error: GraphQLError) -> str:
    if error.locations:
        return f"{error.message} (line {error.locations[0].line}, column {error.locations[0].column})"
    return error.message


def _operation(
    document: DocumentNode, limits: Limits, mutations: bool, operation_name: str | None
) -> OperationDefinitionNode:
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    if not operations:
        raise InvalidInputError("The document holds no operation; write one query such as `query { ... }`.")
    if len(operations) > 1 and not limits.several_operations:
        raise InvalidInputError(f"The document holds {len(operations)} operations; send exactly one.")
    for op in operations:
        kind = op.operation.value
        if kind == "mutation" and not mutations:
            raise InvalidInputError(
                "The document holds a mutation; this driver does not run free-form mutations. Only queries are allowed."
            )
        if kind == "subscription" and not limits.subscriptions:
            raise InvalidInputError("The document holds a subscription; free-form subscriptions are not allowed here.")
    if len(operations) == 1:
        return operations[0]
    chosen = [op for op in operations if op.name is not None and op.name.value == operation_name]
    if not chosen:
        names = ", ".join(op.name.value for op in operations if op.name is not None)
        raise InvalidInputError(f"The document holds several operations; set operationName to one of: {names}.")
    return chosen[0]


def _within(shape: _Shape, limits: Limits) -> None:
    if shape.depth > limits.max_depth:
        raise InvalidInputError(f"The document nests {shape.depth} levels deep; the limit is {limits.max_depth}.")
    if shape.aliases > limits.max_aliases:
        raise InvalidInputError(f"The document uses {shape.aliases} aliases; the limit is {limits.max_aliases}.")
    if shape.fields > limits.max_fields:
        raise InvalidInputError(
            f"The document selects {shape.fields} fields (fragments expanded); the limit is {limits.max_fields}."
        )
    if shape.introspection and not limits.introspection:
        raise InvalidInputError(
            "Introspection (__schema, __type) is turned off here; use search_schema and describe_type instead."
        )


@dataclass
class _Cost:
    schema: GraphQLSchema
    fragments: Mapping[str, FragmentDefinitionNode]
    variables: Mapping[str, Any]
    list_size: int
    size_arguments: frozenset[str]
    memo: dict[tuple[str, str], int] = field(default_factory=dict)

    def selection(self, node: SelectionSetNode | None, parent: GraphQLNamedType | None, multiplier: int) -> int:
        """Cost of ``node`` in ``parent``; linear in ``multiplier``, so fragments are memoised at 1."""
        if node is None or parent is None:
            return 0
        total = 0
        for selection in node.selections:
            if isinstance(selection, FieldNode):
                total += self._field(selection, parent, multiplier)
            elif isinstance(selection, InlineFragmentNode):
                condition = self.schema.get_type(selection.type_condition.name.value) if selection.type_condition else parent
                total += self.selection(selection.selection_set, condition, multiplier)
            elif isinstance(selection, FragmentSpreadNode):
                total += multiplier * self._fragment(selection.name.value)
        return total

    def _fragment(self, name: str) -> int:
        definition = self.fragments[name]
        key = (name, definition.type_condition.name.value)
        if key not in self.memo:
            self.memo[key] = self.selection(definition.selection_set, self.schema.get_type(key[1]), 1)
        return self.memo[key]

    def _field(self, node: FieldNode, parent: GraphQLNamedType, multiplier: int) -> int:
        if not isinstance(parent, GraphQLObjectType | GraphQLInterfaceType) or node.name.value not in parent.fields:
            return 0  # __typename, or a field of a union member reached through a fragment
        definition = parent.fields[node.name.value]
        if node.selection_set is None:
            return multiplier
        named = get_named_type(definition.type)
        inner = multiplier
        if is_connection(parent) and node.name.value in ("nodes", "edges"):
            pass  # sized by the connection's own first/last already
        elif is_connection(named) or is_list_type(get_nullable_type(definition.type)):
            inner *= self._size(node)
        return multiplier + self.selection(node.selection_set, named, inner)

    def _size(self, node: FieldNode) -> int:
        """The largest size argument given (at least 1), else ``list_size``."""
        sizes = [self._value(a.value) for a in node.arguments or () if a.name.value in self.size_arguments]
        known = [size for size in sizes if size is not None]
        return max(known) if known else self.list_size

    def _value(self, value: ValueNode) -> int | None:
        if isinstance(value, IntValueNode):
            return max(1, int(value.value))
        if isinstance(value, VariableNode):
            given = self.variables.get(value.name.value)
            if isinstance(given, int) and not isinstance(given, bool):
                return max(1, given)
        return None
