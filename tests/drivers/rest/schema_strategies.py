"""Hypothesis strategies for argument sets from a tool's input schema (the JSON Schema the
REST driver offers), for property tests. Values are plain and printable, so they can go in
a path, a header or a query; nesting is cut at a depth (then only required fields)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

_PREFIX = "#/$defs/"
_MAX_DEPTH = 3
_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789", min_size=1, max_size=8)
_FORMATS: dict[str, st.SearchStrategy[Any]] = {
    "date-time": st.just("2024-05-06T07:08:09Z"),
    "date": st.just("2024-05-06"),
    "email": st.just("someone@example.com"),
    "uri": st.just("https://example.com/x"),
    "url": st.just("https://example.com/x"),
    "uuid": st.just("6f1c2a52-8d1e-4b4e-9d0a-0c3f3b7f8a11"),
    "ipv4": st.just("192.0.2.1"),
    "binary": st.just("raw bytes"),
    "byte": st.just("cmF3"),
}


def _string(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    fmt = schema.get("format")
    if fmt in _FORMATS:
        return _FORMATS[fmt]
    low, high = int(schema.get("minLength", 1) or 0), schema.get("maxLength")
    high = max(low, min(int(high), low + 12)) if isinstance(high, int) else low + 12  # short: fast to draw
    if isinstance(schema.get("pattern"), str):
        try:
            return st.from_regex(schema["pattern"], fullmatch=True).filter(lambda s: s.isprintable() and low <= len(s) <= high)
        except Exception:
            return _WORD
    return st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=max(low, 1), max_size=max(high, 1)) if low or high else _WORD


def _number(schema: dict[str, Any], integer: bool) -> st.SearchStrategy[Any]:
    low = schema.get("minimum")
    high = schema.get("maximum")
    if isinstance(schema.get("exclusiveMinimum"), int | float):
        low = schema["exclusiveMinimum"] + (1 if integer else 0.5)
    if isinstance(schema.get("exclusiveMaximum"), int | float):
        high = schema["exclusiveMaximum"] - (1 if integer else 0.5)
    low = 0 if low is None else low
    high = low + 100 if high is None else high
    if integer:
        return st.integers(int(low), max(int(low), int(high)))
    return st.floats(float(low), max(float(low), float(high)), allow_nan=False, allow_infinity=False)


def strategy(schema: Any, defs: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    """Values for ``schema`` (references into ``defs`` followed)."""
    if schema is True or not isinstance(schema, dict):
        return _WORD
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith(_PREFIX):
        return strategy(defs.get(ref[len(_PREFIX):], {}), defs, depth + 1)
    if "const" in schema:
        return st.just(schema["const"])
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return st.sampled_from([v for v in schema["enum"] if v is not None] or schema["enum"])
    for key in ("oneOf", "anyOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return st.one_of([strategy(option, defs, depth + 1) for option in schema[key][:4]])
    if isinstance(schema.get("allOf"), list):
        merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema["allOf"]:
            while isinstance(part, dict) and isinstance(part.get("$ref"), str):
                part = defs.get(part["$ref"][len(_PREFIX):], {})
            if isinstance(part, dict):
                merged.setdefault("properties", {}).update(part.get("properties") or {})
                merged["required"] = [*merged.get("required", []), *(part.get("required") or [])]
                for key, value in part.items():
                    merged.setdefault(key, value)
        return strategy(merged, defs, depth)
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"] or ["null"]
        return st.one_of([strategy({**schema, "type": k}, defs, depth) for k in kinds])
    if kind == "string":
        return _string(schema)
    if kind in ("integer", "number"):
        return _number(schema, kind == "integer")
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        low = int(schema.get("minItems", 0) or 0)
        high = schema.get("maxItems")
        high = min(int(high), low + 2) if isinstance(high, int) else low + 2
        items = strategy(schema.get("items", {}), defs, depth + 1)
        unique = bool(schema.get("uniqueItems"))
        return st.lists(items, min_size=low, max_size=max(low, high), unique_by=(lambda v: repr(v)) if unique else None)
    if kind == "object" or "properties" in schema:
        return _object(schema, defs, depth)
    return _WORD


def _object(
    schema: dict[str, Any], defs: dict[str, Any], depth: int, omit: frozenset[str] = frozenset(),
) -> st.SearchStrategy[Any]:
    properties = dict(schema.get("properties") or {})
    required = [r for r in schema.get("required") or [] if r in properties]
    optional = [k for k in properties if k not in required and k not in omit] if depth < _MAX_DEPTH else []
    fixed = {name: strategy(properties[name], defs, depth + 1) for name in required}

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        value = draw(st.fixed_dictionaries(fixed))
        for name in draw(st.lists(st.sampled_from(optional), unique=True, max_size=4)) if optional else []:
            value[name] = draw(strategy(properties[name], defs, depth + 1))
        return value

    return build()


def arguments(input_schema: dict[str, Any], omit: frozenset[str] = frozenset()) -> st.SearchStrategy[dict[str, Any]]:
    """Argument sets for a tool's input schema; optional arguments named in ``omit`` are never drawn."""
    return _object(input_schema, input_schema.get("$defs") or {}, 0, omit)
