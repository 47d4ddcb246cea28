"""The MCP SDK's check of a tool's structured result, with a compiled pass first.

The SDK's ``ClientSession`` checks every structured tool result against the tool's output
schema with the ``jsonschema`` package (a validator compiled once per tool, kept in the
session). Walking even a small schema in Python costs more per call than the rest of
the bridge's own work, so :func:`speed_up_output_check` puts a ``jsonschema_rs``
validator of the same schema in front of the SDK's: a result it finds valid is valid,
and anything else still goes to the SDK's own validator, which decides and words the
error exactly as before.

Only schemas on which the two libraries provably agree get the pass (:func:`agreeing`):
the structural keywords below, local ``$ref`` only, the 2019-09 and 2020-12 dialects
(MCP's default is 2020-12; older drafts read ``$ref`` and ``items`` differently). ``pattern`` (Python ``re`` vs Rust
regex dialects), ``format`` and ``multipleOf`` (float arithmetic) and any keyword not
listed keep the SDK's validator alone, so no result the SDK would refuse is let through.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import jsonschema_rs

# Keywords whose value is one subschema, a list of them, or a name -> subschema map.
_ONE = frozenset({"items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames"})
_LIST = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_DIALECTS = frozenset({"https://json-schema.org/draft/2020-12/schema", "https://json-schema.org/draft/2019-09/schema"})
_MAP = frozenset({"properties", "$defs", "definitions", "dependentSchemas"})
# Assertions both libraries implement alike on JSON data, and annotations neither checks.
# Left out on purpose: $id/$anchor/$dynamicRef (other bases for references), the
# unevaluated* keywords (they depend on annotations collected across references).
_PLAIN = frozenset({
    "type", "enum", "const", "required", "minLength", "maxLength", "minimum", "maximum",
    "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems", "uniqueItems", "minProperties",
    "maxProperties", "minContains", "maxContains", "dependentRequired",
    "$comment", "title", "description", "default", "examples", "deprecated",
    "readOnly", "writeOnly", "contentMediaType", "contentEncoding",
})


def agreeing(schema: Any) -> bool:
    """Whether ``jsonschema`` and ``jsonschema_rs`` give every JSON value the same verdict
    under ``schema`` (only the keywords this module lists, ``$ref`` within the document)."""
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, Mapping):
        return False
    for key, value in schema.items():
        if key in _PLAIN:
            continue
        if key == "$schema":
            if value not in _DIALECTS:
                return False
        elif key == "$ref":
            if not (isinstance(value, str) and value.startswith("#")):
                return False
        elif key in _ONE:
            if not agreeing(value):
                return False
        elif key in _LIST:
            if not (isinstance(value, list) and all(agreeing(part) for part in value)):
                return False
        elif key in _MAP:
            if not (isinstance(value, Mapping) and all(agreeing(part) for part in value.values())):
                return False
        else:
            return False
    return True


class _CompiledFirst:
    """The SDK's validator, asked only about values the compiled validator refuses
    (``fast`` is ``None`` for a schema outside :func:`agreeing`: the SDK's alone, and the
    schema is not looked at again on every call)."""

    def __init__(self, exact: Any, fast: Any | None) -> None:
        self.exact = exact
        self._fast = fast

    def iter_errors(self, instance: Any) -> Iterator[Any]:
        if self._fast is None:
            return iter(self.exact.iter_errors(instance))
        try:
            if self._fast.is_valid(instance):
                return iter(())
        except Exception:  # a value the compiled check cannot read: the SDK decides
            pass
        return iter(self.exact.iter_errors(instance))

    def __getattr__(self, name: str) -> Any:  # anything else the SDK may ask its validator
        return getattr(self.exact, name)


def speed_up_output_check(session: Any, tool: str) -> None:
    """Put the compiled pass in front of the validator the SDK ``session`` keeps for ``tool``.

    Does nothing until the SDK has compiled its validator (the tool's first result), or
    when the session keeps no such cache (another SDK version); a schema outside
    :func:`agreeing` keeps the SDK's validator alone. The SDK drops the entry itself when a
    new listing changes the schema; the next call then wraps the validator it compiles for
    the new one.
    """
    validators = getattr(session, "_tool_output_validators", None)
    if not isinstance(validators, dict):
        return
    exact = validators.get(tool)
    if exact is None or type(exact) is _CompiledFirst:
        return
    schema = getattr(exact, "schema", None)
    fast = None
    if isinstance(schema, dict | bool) and agreeing(schema):
        try:
            fast = jsonschema_rs.validator_for(schema, validate_formats=False, offline=True)
        except Exception:  # not compilable here: the SDK's validator keeps working alone
            fast = None
    validators[tool] = _CompiledFirst(exact, fast)
