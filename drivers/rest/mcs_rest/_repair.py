"""The REST driver's own repair step: a request body given in the other shape.

A body that stays one ``body`` argument (a ``oneOf`` of objects, a body whose name
clashes) is often written by a model as its fields, flat beside the other arguments;
and a flattened body is sometimes wrapped in ``{"body": {...}}``. Either is accepted
when it has exactly one reading:

* flat fields are folded into ``body`` only when ``body`` was not given, every
  argument the tool does not declare is a field of the body's schema, and the folded
  call then passes validation;
* ``{"body": {...}}`` is unfolded only when the tool has no ``body`` argument, every key
  inside is a flattened body field, and none of them was also given at the top level.

Anything else is left to the core's validator, whose error names what was unexpected.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcs.errors import InvalidInputError
from mcs.validation import ArgumentValidator

_PREFIX = "#/$defs/"


def _fields(schema: Any, defs: Mapping[str, Any], depth: int = 0) -> set[str]:
    """The property names an object body may have, through references and its variants."""
    if depth > 8 or not isinstance(schema, Mapping):
        return set()
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith(_PREFIX):
        return _fields(defs.get(ref[len(_PREFIX):]), defs, depth + 1)
    names = {str(k) for k in schema.get("properties") or {}}
    for key in ("oneOf", "anyOf", "allOf"):
        for option in schema.get(key) or ():
            names |= _fields(option, defs, depth + 1)
    return names


class BodyShapeValidator(ArgumentValidator):
    """An :class:`ArgumentValidator` that also accepts a body given in the other shape."""

    __slots__ = ("_body_arg", "_body_fields", "_flat_fields")

    def __init__(
        self, schema: Mapping[str, Any], tool: str, *, body_arg: str | None, flat_fields: frozenset[str],
    ) -> None:
        super().__init__(schema, tool)
        self._body_arg = body_arg
        self._flat_fields = flat_fields
        defs = schema.get("$defs") or {}
        body_schema = (schema.get("properties") or {}).get(body_arg) if body_arg else None
        self._body_fields = frozenset(_fields(body_schema, defs)) if body_schema is not None else frozenset()

    def validate(self, arguments: Any) -> dict[str, Any]:
        try:
            return super().validate(arguments)
        except InvalidInputError as error:
            reshaped = self._reshaped(arguments)
            if reshaped is None:
                raise
            try:
                return super().validate(reshaped)
            except InvalidInputError:
                raise error from None

    def _reshaped(self, arguments: Any) -> dict[str, Any] | None:
        if not isinstance(arguments, dict):
            return None
        declared = self.schema.get("properties") or {}
        unknown = [k for k in arguments if k not in declared]
        if self._body_arg is not None and self._body_arg not in arguments:
            if unknown and set(unknown) <= self._body_fields:
                kept = {k: v for k, v in arguments.items() if k in declared}
                return {**kept, self._body_arg: {k: arguments[k] for k in unknown}}
            return None
        wrapped = arguments.get("body")
        if (
            self._flat_fields and unknown == ["body"] and isinstance(wrapped, dict) and wrapped
            and set(wrapped) <= self._flat_fields and not set(wrapped) & set(arguments)
        ):
            return {**{k: v for k, v in arguments.items() if k != "body"}, **wrapped}
        return None


__all__ = ["BodyShapeValidator"]
