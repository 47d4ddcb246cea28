"""Whatever JSON Schema a spec carries, the Gemini export stays inside Gemini's subset
and every description style renders it."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcs.native import gemini_schema, inline_refs
from mcs.prompts import DESCRIPTION_STYLES, render_function_description
from mcs.tools import Tool

GEMINI_KEYS = {"type", "format", "description", "nullable", "enum", "maxItems", "minItems",
               "properties", "required", "minProperties", "maxProperties", "minLength",
               "maxLength", "pattern", "example", "anyOf", "default", "items", "minimum", "maximum"}
GEMINI_TYPES = {"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT"}

names = st.sampled_from(["a", "b", "title", "type", "$ref", "x-y"])
scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=3))
leaf = st.one_of(
    st.fixed_dictionaries({"type": st.sampled_from(["string", "integer", "number", "boolean", "null"])},
                          optional={"description": st.text(max_size=5), "format": st.sampled_from(["email", "date-time", "int64"]),
                                    "minimum": st.integers(), "exclusiveMinimum": st.integers(),
                                    "title": st.text(max_size=3), "default": scalars}),
    st.fixed_dictionaries({"enum": st.lists(scalars, min_size=1, max_size=3)}),
    st.fixed_dictionaries({"const": scalars}),
    st.fixed_dictionaries({"type": st.lists(st.sampled_from(["string", "integer", "null"]), min_size=1, max_size=3, unique=True)}),
    st.sampled_from([{"$ref": "#/$defs/Node"}, {"$ref": "#/$defs/Missing"}, {}]),
)


def _extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.builds(lambda p, r: {"type": "object", "properties": p, "required": r},
                  st.dictionaries(names, children, max_size=3), st.lists(names, max_size=2)),
        st.builds(lambda i: {"type": "array", "items": i}, children),
        st.builds(lambda o: {"anyOf": o}, st.lists(children, min_size=1, max_size=3)),
        st.builds(lambda o: {"oneOf": o}, st.lists(children, min_size=1, max_size=3)),
        st.builds(lambda o: {"allOf": o}, st.lists(children, min_size=1, max_size=2)),
        st.builds(lambda v: {"type": "object", "additionalProperties": v}, children),
    )


schemas = st.recursive(leaf, _extend, max_leaves=8)


def _root(properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}, "v": {"type": "integer"}}}},
    }


def _check(node: Any) -> None:
    assert isinstance(node, dict)
    assert set(node) <= GEMINI_KEYS, set(node) - GEMINI_KEYS
    if "type" in node:
        assert node["type"] in GEMINI_TYPES
    if node.get("type") == "OBJECT":
        assert node["properties"], "Gemini refuses an OBJECT without properties"
        assert set(node.get("required", [])) <= set(node["properties"])
    if "enum" in node:
        assert node["type"] == "STRING" and node["enum"]
        assert all(isinstance(v, str) for v in node["enum"])
    for child in node.get("properties", {}).values():
        _check(child)
    if "items" in node:
        _check(node["items"])
    for option in node.get("anyOf", []):
        _check(option)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(names, schemas, min_size=1, max_size=3))
def test_gemini_export_of_any_schema_stays_in_the_subset(properties: dict[str, Any]) -> None:
    converted = gemini_schema(_root(properties), max_depth=3)
    if converted is not None:
        _check(converted)
    assert not _has_ref(inline_refs(_root(properties), max_depth=3))


def _has_ref(node: Any) -> bool:
    """A ``$ref`` keyword anywhere (a property *named* ``$ref`` holds a schema, not a string)."""
    if isinstance(node, dict):
        return isinstance(node.get("$ref"), str) or any(_has_ref(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_ref(v) for v in node)
    return False


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(names, schemas, min_size=1, max_size=3))
def test_every_description_style_renders_any_schema(properties: dict[str, Any]) -> None:
    tool = Tool(name="t", description="d", input_schema=_root(properties))
    for style in DESCRIPTION_STYLES:
        text = render_function_description([tool], style=style)  # type: ignore[arg-type]
        assert "t" in text
        for name in properties:
            assert name in text
