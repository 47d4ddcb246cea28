"""Fields an answer carries that the spec does not promise (``validate_responses=True``).

An object schema that lists its ``properties`` and leaves ``additionalProperties`` unset
allows other fields, so a validator accepts them; but the spec says nothing of what they
mean, and the next answer may lack them. This walk names each such field by its JSON
pointer so the note beside the result can tell the model not to rely on it. It follows
the body, not the schema (a recursive type costs nothing more), through ``$ref``,
``allOf``, ``anyOf``, ``oneOf``, ``properties`` and ``items``. Fields are not reported:

* where a schema declares ``additionalProperties`` (a map: any key is promised) or
  ``patternProperties``, or declares no ``properties`` at all (a free-form object);
* under a field already reported (its content is the field's, unpromised as a whole).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from mcs_rest._check import pointer
from mcs_rest._spec import Spec, SpecError

_MAX_DEPTH = 32


def _variants(spec: Spec, schema: Any, document: str, depth: int = 0) -> Iterator[tuple[Mapping[str, Any], str]]:
    """``schema`` and the schemas its ``allOf``/``anyOf``/``oneOf`` hold, references followed."""
    if depth > _MAX_DEPTH:
        return
    try:
        schema, document = spec.deref(schema, document, "response")
    except SpecError:
        return
    if not isinstance(schema, Mapping):
        return
    yield schema, document
    for key in ("allOf", "anyOf", "oneOf"):
        for option in schema.get(key) or ():
            yield from _variants(spec, option, document, depth + 1)


def unpromised(spec: Spec, schema: Any, document: str, value: Any, limit: int = 5) -> list[str]:
    """JSON pointers of up to ``limit`` fields of ``value`` that ``schema`` does not declare."""
    found: list[str] = []
    _walk(spec, schema, document, value, [], found, limit, 0)
    return found


def _walk(
    spec: Spec, schema: Any, document: str, value: Any, at: list[Any], found: list[str], limit: int, depth: int,
) -> None:
    if len(found) >= limit or depth > _MAX_DEPTH or not isinstance(value, dict | list):
        return
    variants = list(_variants(spec, schema, document))
    if isinstance(value, list):
        items = next(((v["items"], d) for v, d in variants if isinstance(v.get("items"), Mapping)), None)
        if items is not None:
            for index, item in enumerate(value):
                _walk(spec, items[0], items[1], item, [*at, index], found, limit, depth + 1)
        return
    declared: dict[str, tuple[Any, str]] = {}
    open_ended = not variants
    for variant, where in variants:
        if variant.get("additionalProperties") not in (None, False) or variant.get("patternProperties"):
            open_ended = True
        for name, sub in (variant.get("properties") or {}).items():
            declared.setdefault(str(name), (sub, where))
    if not declared:
        open_ended = True
    for key, item in value.items():
        if key in declared:
            _walk(spec, declared[key][0], declared[key][1], item, [*at, key], found, limit, depth + 1)
        elif not open_ended and len(found) < limit:
            found.append(pointer([*at, key]))
        if len(found) >= limit:
            return


__all__ = ["unpromised"]
