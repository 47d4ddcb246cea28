"""Tool definitions in the native formats of the big LLM APIs (DESIGN.md, section 6).

For clients that use a provider's own function calling instead of a text prompt:

* ``openai``: Chat Completions, ``{"type": "function", "function": {name, description, parameters}}``;
* ``openai_responses``: the Responses API, ``{"type": "function", name, description, parameters, strict}``;
* ``anthropic``: Messages API, ``{name, description, input_schema}``;
* ``gemini``: ``functionDeclarations`` entries whose ``parameters`` use the OpenAPI subset
  Gemini accepts (no ``$ref``, no ``additionalProperties``, upper-case types, ``nullable``);
* ``mcp``: ``tools/list`` entries, ``{name, title, description, inputSchema, outputSchema, annotations}``.

Tool names already follow ``^[a-zA-Z0-9_-]{1,64}$`` (:mod:`mcs.tools`), which every one of
these APIs accepts. The input :class:`~mcs.Tool` is never modified.

Schema shaping never loses what the model needs to call correctly: what a target cannot
express (a ``format``, an exclusive bound, a free-form object) is turned into the nearest
shape it accepts and the rest is written into the field's description. Values the model
then sends in a looser shape (a number as ``"1"``, an object as JSON text) are repaired by
:mod:`mcs.validation` before validation.
"""

from __future__ import annotations

import copy
import json
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, Literal, get_args

from mcs.tools import Tool, json_type

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "FORMATS",
    "TOOL_LIMITS",
    "NativeFormat",
    "ToolLimitWarning",
    "export_tool",
    "export_tools",
    "gemini_schema",
    "inline_refs",
    "map_subschemas",
    "openai_strict_schema",
]

NativeFormat = Literal["openai", "openai_responses", "anthropic", "gemini", "mcp"]
FORMATS: tuple[str, ...] = get_args(NativeFormat)

#: The most tools one request may carry, where the API documents a limit: OpenAI refuses
#: ``tools`` longer than 128 (Chat Completions and Responses), Vertex AI documents at most
#: 128 function declarations. Anthropic documents none; MCP has none of its own.
TOOL_LIMITS: Final[Mapping[str, int]] = {"openai": 128, "openai_responses": 128, "gemini": 128}


class ToolLimitWarning(UserWarning):
    """More tools were exported than the target API accepts in one request."""


#: How many ``$ref`` expansions may nest on one path before :func:`inline_refs` stops.
DEFAULT_MAX_DEPTH = 4

# Keywords whose value is one schema, a list of schemas, or a map of name -> schema.
_SCHEMA_VALUED = ("items", "additionalProperties", "not", "if", "then", "else", "contains",
                  "propertyNames", "unevaluatedItems", "unevaluatedProperties",
                  "additionalItems")
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")


def map_subschemas(schema: Any, fn: Callable[[Any], Any]) -> Any:
    """A shallow copy of ``schema`` with ``fn`` applied to each direct subschema.

    Knows which keywords hold schemas, so a property *named* ``title`` or ``type`` is
    never mistaken for a keyword. Non-dict input is returned unchanged.
    """
    if not isinstance(schema, Mapping):
        return schema
    out = dict(schema)
    for key in _SCHEMA_VALUED:
        value = out.get(key)
        if isinstance(value, Mapping):
            out[key] = fn(value)
        elif key == "items" and isinstance(value, list):  # draft-4 tuple form
            out[key] = [fn(v) for v in value]
    for key in _SCHEMA_LISTS:
        value = out.get(key)
        if isinstance(value, list):
            out[key] = [fn(v) for v in value]
    for key in _SCHEMA_MAPS:
        value = out.get(key)
        if isinstance(value, Mapping):
            out[key] = {name: fn(v) for name, v in value.items()}
    return out


# --------------------------------------------------------------------------- $ref inlining


def _pointer_get(root: Mapping[str, Any], ref: str) -> Any:
    """Resolve a local JSON pointer (``#/$defs/Address``); ``None`` when it does not resolve."""
    if not ref.startswith("#"):
        return None
    node: Any = root
    for raw in ref[1:].split("/")[1:] if ref != "#" else []:
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def _stub(description: str | None, note: str) -> dict[str, Any]:
    text = f"{description} ({note})" if description else note
    return {"description": text}


def inline_refs(schema: Mapping[str, Any], max_depth: int = DEFAULT_MAX_DEPTH) -> dict[str, Any]:
    """``schema`` with every local ``$ref`` replaced by a copy of its target.

    For clients that reject ``$ref`` (Gemini, some OpenAI-compatible servers). At most
    ``max_depth`` references are expanded inside one another on any path, so recursive
    schemas (a tree node whose children are nodes) end in a stub ``{"description": ...}``
    that accepts any value and says the structure was cut. A reference that does not
    resolve becomes such a stub too. Keywords beside a ``$ref`` override the target's.
    ``$defs`` and ``definitions`` are dropped from the result.
    """
    if max_depth < 0:
        raise ValueError("max_depth must be 0 or more")
    root = dict(schema)

    def walk(node: Any, depth: int) -> Any:
        if not isinstance(node, Mapping):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            target = _pointer_get(root, ref)
            if not isinstance(target, Mapping):
                return _stub(siblings.get("description"), f"unresolved reference {ref}")
            if depth >= max_depth:
                name = ref.rsplit("/", 1)[-1]
                desc = siblings.get("description", target.get("description"))
                return _stub(desc, f"a nested {name}; structure not expanded beyond {max_depth} levels")
            merged = {**target, **siblings}
            return walk(merged, depth + 1)
        out = map_subschemas(node, lambda child: walk(child, depth))
        out.pop("$defs", None)
        out.pop("definitions", None)
        return out

    result = walk(root, 0)
    assert isinstance(result, dict)
    return result


# --------------------------------------------------------------------------- Gemini

_GEMINI_TYPES = {"string": "STRING", "number": "NUMBER", "integer": "INTEGER",
                 "boolean": "BOOLEAN", "array": "ARRAY", "object": "OBJECT"}
_GEMINI_FORMATS = {"STRING": {"date-time", "enum"}, "INTEGER": {"int32", "int64"},
                   "NUMBER": {"float", "double"}}


def _infer_type(node: Mapping[str, Any]) -> str | None:
    if "properties" in node or "additionalProperties" in node:
        return "object"
    if "items" in node or "prefixItems" in node:
        return "array"
    values = node.get("enum", [node["const"]] if "const" in node else None)
    if isinstance(values, list) and values:
        kinds = {json_type(v) or "string" for v in values if v is not None}
        if not kinds:
            return "null"
        if len(kinds) == 1:
            return kinds.pop()
        return "string"
    return None


def _merge_all_of(node: dict[str, Any]) -> dict[str, Any]:
    parts = node.pop("allOf", None)
    if not isinstance(parts, list):
        return node
    merged: dict[str, Any] = {}
    for part in [*parts, node]:
        if not isinstance(part, Mapping):
            continue
        for key, value in part.items():
            if key == "properties" and isinstance(value, Mapping):
                merged.setdefault("properties", {}).update(value)
            elif key == "required" and isinstance(value, list):
                merged["required"] = list(dict.fromkeys([*merged.get("required", []), *value]))
            elif key == "description" and key in merged:
                merged[key] = value  # the outer schema's own text wins
            else:
                merged.setdefault(key, value)
    return merged


def _gemini_node(schema: Any) -> dict[str, Any]:
    """One JSON Schema node (already free of ``$ref``) as a Gemini ``Schema``."""
    if not isinstance(schema, Mapping):
        # ``true`` / ``{}``-like: anything. Gemini needs a type; text is the loosest.
        return {"type": "STRING", "description": "any JSON value, written as text"}
    node = _merge_all_of(dict(schema))
    notes: list[str] = []
    out: dict[str, Any] = {}
    nullable = False

    options = node.get("anyOf", node.get("oneOf"))
    declared = node.get("type")
    if isinstance(declared, list):
        nullable = "null" in declared
        kinds = [t for t in declared if t != "null"]
        if len(kinds) > 1 and not isinstance(options, list):
            options = [{"type": t} for t in kinds]
            declared = None
        else:
            declared = kinds[0] if kinds else None
    if isinstance(options, list):
        rest = [o for o in options if not (isinstance(o, Mapping) and o.get("type") == "null")]
        nullable = nullable or len(rest) < len(options)
        siblings = {k: v for k, v in node.items() if k not in ("anyOf", "oneOf", "type")}
        if len(rest) == 1 and isinstance(rest[0], Mapping):
            return _with_nullable(_gemini_node({**rest[0], **siblings}), nullable)
        out = {"anyOf": [_gemini_node(o) for o in rest]}
        for key in ("description", "default"):
            if key in node:
                out[key] = node[key]
        return _with_nullable(out, nullable)

    kind = declared if isinstance(declared, str) else _infer_type(node)
    if kind == "null":
        return {"type": "STRING", "nullable": True, "description": node.get("description", "always null")}
    if kind is None:
        out = {"type": "STRING"}
        notes.append("any JSON value, written as text")
    elif kind == "object":
        properties = node.get("properties")
        if isinstance(properties, Mapping) and properties:
            out = {"type": "OBJECT",
                   "properties": {name: _gemini_node(sub) for name, sub in properties.items()}}
            required = [r for r in node.get("required", []) if r in properties]
            if required:
                out["required"] = required
            for key in ("minProperties", "maxProperties"):
                if key in node:
                    out[key] = node[key]
        else:
            # Gemini refuses an OBJECT without properties; a free-form object travels as
            # JSON text, which mcs.validation decodes back into an object.
            out = {"type": "STRING"}
            values = node.get("additionalProperties")
            if isinstance(values, Mapping) and isinstance(values.get("type"), str):
                notes.append(f"a JSON object whose values are {values['type']}s, written as JSON text")
            else:
                notes.append("a JSON object, written as JSON text")
    elif kind == "array":
        items = node.get("items")
        if isinstance(items, Mapping):
            out = {"type": "ARRAY", "items": _gemini_node(items)}
        elif "prefixItems" in node or isinstance(items, list):
            out = {"type": "STRING"}
            notes.append("a JSON array (tuple), written as JSON text")
        else:
            out = {"type": "ARRAY", "items": {"type": "STRING", "description": "any JSON value, written as text"}}
        for key in ("minItems", "maxItems"):
            if key in node and out["type"] == "ARRAY":
                out[key] = node[key]
        if node.get("uniqueItems"):
            notes.append("items must be unique")
    else:
        out = {"type": _GEMINI_TYPES.get(kind, "STRING")}

    values = node.get("enum", [node["const"]] if "const" in node else None)
    if isinstance(values, list) and values and out["type"] not in ("OBJECT", "ARRAY"):
        if None in values:
            nullable = True
        present = [v for v in values if v is not None]
        if present:
            out["type"] = "STRING"
            out["enum"] = [v if isinstance(v, str) else json.dumps(v) for v in present]
            if not all(isinstance(v, str) for v in present):
                # Gemini enums are strings; the pipeline turns "2" back into 2.
                notes.append("one of these values, written as a string")

    gtype = out["type"]
    if gtype == "STRING":
        for key in ("minLength", "maxLength", "pattern"):
            if key in node and kind == "string":
                out[key] = node[key]
    if gtype in ("NUMBER", "INTEGER"):
        for key in ("minimum", "maximum"):
            if key in node:
                out[key] = node[key]
        for key, word in (("exclusiveMinimum", "greater than"), ("exclusiveMaximum", "less than")):
            bound = node.get(key)
            if isinstance(bound, int | float) and not isinstance(bound, bool):
                notes.append(f"{word} {bound}")
        if "multipleOf" in node:
            notes.append(f"a multiple of {node['multipleOf']}")
    fmt = node.get("format")
    if isinstance(fmt, str):
        if fmt in _GEMINI_FORMATS.get(gtype, ()):
            out["format"] = fmt
        else:
            notes.append(f"format: {fmt}")
    if "default" in node:
        out["default"] = node["default"]
    examples = node.get("examples")
    if "example" in node:
        out["example"] = node["example"]
    elif isinstance(examples, list) and examples:
        out["example"] = examples[0]

    description = node.get("description")
    parts = [description] if isinstance(description, str) and description else []
    if notes:
        parts.append("(" + "; ".join(notes) + ")")
    if parts:
        out["description"] = " ".join(parts)
    return _with_nullable(out, nullable)


def _with_nullable(out: dict[str, Any], nullable: bool) -> dict[str, Any]:
    if nullable:
        out["nullable"] = True
    return out


def gemini_schema(schema: Mapping[str, Any], max_depth: int = DEFAULT_MAX_DEPTH) -> dict[str, Any] | None:
    """``schema`` as the OpenAPI-subset ``Schema`` Gemini's ``parameters`` accepts.

    References are inlined (:func:`inline_refs`, bounded by ``max_depth``), ``oneOf``
    becomes ``anyOf``, ``allOf`` is merged, ``const`` becomes a one-value ``enum``, a
    ``null`` in a type union becomes ``nullable``, and keywords Gemini lacks are dropped
    after their meaning is written into the description. Returns ``None`` for a tool
    without parameters: Gemini refuses an ``OBJECT`` with no properties, and the
    ``parameters`` field must then be left out.
    """
    converted = _gemini_node(inline_refs(schema, max_depth))
    if converted.get("type") != "OBJECT" or not converted.get("properties"):
        return None
    return converted


# --------------------------------------------------------------------------- OpenAI strict

_STRICT_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "enum", "const",
    "anyOf", "$ref", "$defs", "definitions", "description", "pattern", "format",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
    "minItems", "maxItems",
})
_STRICT_DROPPED = frozenset({"title", "$schema", "$comment", "examples"})


def openai_strict_schema(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """``schema`` made fit for OpenAI's ``strict: true``, or ``None`` when that would change it.

    Strict mode needs every object closed (``additionalProperties: false``, which is
    added) and every property required. A schema with optional properties is *not*
    rewritten with nullable fields, because the model would then send ``null`` where the
    tool expects the key to be absent; such tools are exported non-strict. Keywords
    strict mode does not support (``allOf``, ``oneOf``, ``minLength``, ``patternProperties``...)
    also make it ``None``; ``title`` and ``examples`` are dropped.
    """
    ok = True

    def walk(node: Any) -> Any:
        nonlocal ok
        if not isinstance(node, Mapping):
            ok = False
            return node
        out = {k: v for k, v in node.items() if k not in _STRICT_DROPPED}
        if set(out) - _STRICT_KEYWORDS:
            ok = False
        types = out.get("type")
        is_object = types == "object" or (isinstance(types, list) and "object" in types) or "properties" in out
        if is_object:
            props = out.get("properties", {})
            if not isinstance(props, Mapping):
                ok = False
                props = {}
            if set(out.get("required", [])) != set(props):
                ok = False
            extra = out.get("additionalProperties", False)
            if extra is not False:
                ok = False
            out["additionalProperties"] = False
            out.setdefault("properties", {})
            out.setdefault("required", list(props))
        return map_subschemas(out, walk)

    root = walk(dict(schema))
    if not ok or root.get("type") != "object":
        return None
    assert isinstance(root, dict)
    return root


# --------------------------------------------------------------------------- export


def _object_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``schema`` with an explicit ``type: object`` and ``properties`` at the top."""
    out = copy.deepcopy(dict(schema))
    out.setdefault("type", "object")
    if out["type"] == "object" and "properties" not in out and "additionalProperties" not in out:
        out["properties"] = {}
    return out


def export_tool(
    tool: Tool, fmt: NativeFormat, *, strict: bool = False, max_depth: int = DEFAULT_MAX_DEPTH
) -> dict[str, Any]:
    """One tool in ``fmt``; see :func:`export_tools`."""
    parameters = _object_schema(tool.input_schema)
    if fmt in ("openai", "openai_responses"):
        function: dict[str, Any] = {"name": tool.name}
        if tool.description:
            function["description"] = tool.description
        strict_schema = openai_strict_schema(parameters) if strict else None
        function["parameters"] = strict_schema if strict_schema is not None else parameters
        if strict:
            function["strict"] = strict_schema is not None
        if fmt == "openai":
            return {"type": "function", "function": function}
        return {"type": "function", **function}
    if fmt == "anthropic":
        out: dict[str, Any] = {"name": tool.name}
        if tool.description:
            out["description"] = tool.description
        out["input_schema"] = parameters
        return out
    if fmt == "gemini":
        declaration: dict[str, Any] = {"name": tool.name, "description": tool.description}
        converted = gemini_schema(parameters, max_depth)
        if converted is not None:
            declaration["parameters"] = converted
        return declaration
    if fmt == "mcp":
        entry: dict[str, Any] = {"name": tool.name}
        title = tool.title or tool.annotations.get("title")
        if title:
            entry["title"] = title
        entry["description"] = tool.description
        entry["inputSchema"] = parameters
        output = tool.output_schema
        # MCP requires an object outputSchema; other result shapes are left undeclared.
        if output is not None and output.get("type") == "object":
            entry["outputSchema"] = copy.deepcopy(dict(output))
        if tool.annotations:
            entry["annotations"] = dict(tool.annotations)
        return entry
    raise ValueError(f"unknown tool format {fmt!r}; expected one of {', '.join(FORMATS)}")


def export_tools(
    tools: Iterable[Tool],
    fmt: NativeFormat,
    *,
    strict: bool = False,
    max_depth: int = DEFAULT_MAX_DEPTH,
    all_tools: bool = False,
) -> list[dict[str, Any]]:
    """``tools`` as the tool definitions of one API, in order, ready for ``json.dumps``.

    ``fmt`` is ``"openai"`` (Chat Completions ``tools``), ``"openai_responses"``,
    ``"anthropic"``, ``"gemini"`` (the entries of one ``functionDeclarations`` list) or
    ``"mcp"``. With ``strict=True`` the OpenAI formats set ``strict`` per tool: ``true``
    with a closed schema where :func:`openai_strict_schema` allows it, else ``false``.
    ``max_depth`` bounds ``$ref`` inlining for Gemini.

    Discovery mode carries over: when ``tools`` hold discovery's meta-tools (a driver's
    ``list_tools()`` above its token budget), only the meta-tools are exported
    (``search_tools``, ``describe_tool`` and ``call_tool``, which calls a found tool by
    name through the driver), unless ``all_tools`` asks for every tool. More tools than
    the API accepts (:data:`TOOL_LIMITS`) warn with :class:`ToolLimitWarning`.

    Raises:
        ValueError: ``fmt`` is not one of the formats above.
    """
    from mcs.discovery import exported

    if fmt not in FORMATS:
        raise ValueError(f"unknown tool format {fmt!r}; expected one of {', '.join(FORMATS)}")
    chosen = exported(tools, all_tools=all_tools)
    limit = TOOL_LIMITS.get(fmt)
    if limit is not None and len(chosen) > limit:
        warnings.warn(
            f"{len(chosen)} tools exceed the {limit} that {fmt} accepts in one request; export "
            "a driver's list_tools() in discovery mode (its meta-tools only) or fewer tools",
            ToolLimitWarning,
            stacklevel=2,
        )
    return [export_tool(tool, fmt, strict=strict, max_depth=max_depth) for tool in chosen]
