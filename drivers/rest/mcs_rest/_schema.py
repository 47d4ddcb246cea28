"""OpenAPI schemas to plain JSON Schema (draft 2020-12), lazily and with cycle detection.

:class:`SchemaConverter` turns one OpenAPI 2.0/3.0/3.1 schema into JSON Schema the core's
validator accepts and an LLM reads: ``nullable``/``x-nullable`` become ``null`` in the
type, ``allOf`` is merged where the parts agree, boolean ``exclusiveMinimum`` becomes
the numeric form, and what only documents (``example``, ``xml``, ``x-*``) is dropped.
``oneOf``, ``anyOf``, ``enum``, ``format``, ``default``, ``writeOnly`` stay; a ``readOnly``
property is left out (the server sets it; OpenAPI says a request SHOULD NOT carry it).

Each referenced schema is converted once and the result shared (never mutated), so
building every operation's schema costs about one pass over the schemas actually used.
A reference back into a schema still being converted (a recursive type) becomes
``{"$ref": "#/$defs/Name"}``; :meth:`SchemaConverter.defs_for` returns the ``$defs``
a tool schema must carry for the references it holds, so every schema stays finite.
A large named schema (more than ``inline_limit`` characters of JSON) is also kept in
``$defs`` rather than copied into every place that uses it: Kubernetes' Pod would
otherwise repeat ObjectMeta, Container and Probe until one tool weighs 430 kB.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from mcs.tools import visible_text
from mcs_rest._spec import Ref, Spec, SpecError

# Keys that only document a schema; dropping them saves tokens and changes no meaning.
_DROP = frozenset({
    "example", "examples", "xml", "externalDocs", "discriminator", "title", "$schema",
    "$id", "$comment", "collectionFormat", "allowEmptyValue", "x-nullable", "nullable",
    "deprecated", "$anchor", "$dynamicAnchor",
})
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "dependentSchemas"})
_SCHEMA_ONE = frozenset({
    "items", "additionalProperties", "not", "contains", "propertyNames", "if", "then",
    "else", "unevaluatedProperties", "unevaluatedItems", "additionalItems",
})
_SCHEMA_LISTS = frozenset({"allOf", "oneOf", "anyOf", "prefixItems"})
_DEFS_REF = re.compile(rb'"\$ref":"#/\$defs/([^"]+)"')


@dataclass
class _Frame:
    needs: set[str] = field(default_factory=set)


@dataclass
class SchemaConverter:
    """Converts schemas of one :class:`Spec`; results are memoised per reference."""

    spec: Spec
    inline_limit: int = 4000
    _shared: set[str] = field(default_factory=set)
    _memo: dict[tuple[str, str], tuple[Any, frozenset[str]]] = field(default_factory=dict)
    _active: set[tuple[str, str]] = field(default_factory=set)
    _recursive: set[tuple[str, str]] = field(default_factory=set)
    _names: dict[tuple[str, str], str] = field(default_factory=dict)
    _taken: set[str] = field(default_factory=set)
    _defs: dict[str, Any] = field(default_factory=dict)
    _defs_needs: dict[str, frozenset[str]] = field(default_factory=dict)
    _frames: list[_Frame] = field(default_factory=list)

    # ------------------------------------------------------------------ public

    def convert(self, schema: Any, document: str, where: str) -> tuple[Any, frozenset[str]]:
        """Convert ``schema`` (found in ``document`` at ``where``).

        Returns the JSON Schema and the names of the ``$defs`` entries it refers to.
        """
        frame = _Frame()
        self._frames.append(frame)
        try:
            result = self._node(schema, document, where)
        finally:
            self._frames.pop()
        return result, frozenset(frame.needs)

    def defs_for(self, needs: frozenset[str] | set[str]) -> dict[str, Any]:
        """The ``$defs`` a schema referring to ``needs`` must carry (closed over their own refs)."""
        out: dict[str, Any] = {}
        pending = list(needs)
        while pending:
            name = pending.pop()
            if name in out:
                continue
            out[name] = self._defs[name]
            pending.extend(self._defs_needs.get(name, ()))
        return dict(sorted(out.items()))

    def definition(self, name: str) -> Any:
        """The converted body of the ``$defs`` entry ``name`` (``None`` when there is none)."""
        return self._defs.get(name)

    def _expand_shared(self, part: Any) -> Any:
        """For merging: a large shared schema's body instead of the reference to it."""
        if isinstance(part, dict) and len(part) == 1 and isinstance(part.get("$ref"), str):
            name = part["$ref"].removeprefix("#/$defs/")
            if name in self._shared:
                return self._defs[name]
        return part

    def refs_in(self, schema: Any) -> frozenset[str]:
        """The ``$defs`` names ``schema`` refers to, closed over their own references."""
        found = set(_DEFS_REF.findall(orjson.dumps(schema, option=orjson.OPT_NON_STR_KEYS, default=str)))
        names = frozenset(m.decode() for m in found)
        closed = set(self.defs_for(names))
        return frozenset(closed)

    def unwrap(self, schema: Any, needs: frozenset[str]) -> tuple[Any, frozenset[str]]:
        """A top-level schema that is only a reference to a large (not recursive) shared
        schema, replaced by that schema, so a request body can still be flattened."""
        if isinstance(schema, dict) and len(schema) == 1 and isinstance(schema.get("$ref"), str):
            name = schema["$ref"].removeprefix("#/$defs/")
            if name in self._shared:
                return self._defs[name], (needs - {name}) | self._defs_needs.get(name, frozenset())
        return schema, needs

    # ------------------------------------------------------------------ walking

    def _node(self, node: Any, document: str, where: str) -> Any:
        if isinstance(node, bool):
            return node
        if not isinstance(node, Mapping):
            return {}
        ref = node.get("$ref")
        if isinstance(ref, str):
            converted = self._ref(ref, document, where)
            siblings = {k: v for k, v in node.items() if k in ("description", "default", "readOnly", "writeOnly")}
            if isinstance(siblings.get("description"), str):
                siblings["description"] = visible_text(siblings["description"])
            nullable = node.get("nullable") is True or node.get("x-nullable") is True
            if siblings and isinstance(converted, dict) and "$ref" not in converted:
                converted = {**converted, **siblings}
            if nullable:
                converted = _nullable(converted)
            return converted
        out: dict[str, Any] = {}
        dropped: set[str] = set()
        for key, value in node.items():
            if key in _DROP or (isinstance(key, str) and key.startswith("x-")):
                continue
            if key in _SCHEMA_MAPS:
                if isinstance(value, Mapping):
                    out[key] = {
                        str(name): self._node(sub, document, where) for name, sub in value.items()
                        if key != "properties" or not self._read_only(sub, document, where)
                    }
                    dropped |= {str(name) for name in value if str(name) not in out[key]}
            elif key in _SCHEMA_ONE:
                out[key] = self._node(value, document, where) if isinstance(value, Mapping | bool) else value
            elif key in _SCHEMA_LISTS:
                if isinstance(value, list):
                    out[key] = [self._node(sub, document, where) for sub in value]
            elif key == "type":
                if value == "file":
                    out["type"] = "string"
                    out.setdefault("format", "binary")
                else:
                    out["type"] = value
            elif key == "required":
                if isinstance(value, list) and value:
                    out["required"] = value
            elif key in ("exclusiveMinimum", "exclusiveMaximum") and isinstance(value, bool):
                bound = "minimum" if key == "exclusiveMinimum" else "maximum"
                if value and bound in node:
                    out[key] = node[bound]
            elif key in ("minimum", "maximum"):
                flag = node.get("exclusiveMinimum" if key == "minimum" else "exclusiveMaximum")
                if flag is not True:
                    out[key] = value
            elif key in ("$defs", "definitions"):
                continue  # local definitions are reached through $ref, never inlined whole
            elif key == "description":
                out[key] = visible_text(value) if isinstance(value, str) else value
            else:
                out[key] = value
        if dropped and isinstance(out.get("required"), list):
            out["required"] = [r for r in out["required"] if r not in dropped]
            if not out["required"]:
                del out["required"]
        if "allOf" in out:
            out = _merge_all_of(out, self._expand_shared)
        if node.get("nullable") is True or node.get("x-nullable") is True:
            out = _nullable(out)
        return out

    def _read_only(self, node: Any, document: str, where: str) -> bool:
        """Whether a property is ``readOnly`` (itself, or the schema it refers to): the
        server's to set, so never part of a request (OpenAPI: it SHOULD NOT be sent)."""
        if not isinstance(node, Mapping):
            return False
        if node.get("readOnly") is True:
            return True
        ref = node.get("$ref")
        if isinstance(ref, str):
            target = self.spec.resolve(ref, document, where)[1]
            return isinstance(target, Mapping) and target.get("readOnly") is True
        return False

    def _ref(self, ref: str, document: str, where: str) -> Any:
        target, node = self.spec.resolve(ref, document, where)
        key = (target.document, target.pointer)
        frame = self._frames[-1]
        memo = self._memo.get(key)
        if memo is not None:
            frame.needs.update(memo[1])
            return memo[0]
        if key in self._active:
            self._recursive.add(key)
            name = self._name(key, target)
            frame.needs.add(name)
            return {"$ref": f"#/$defs/{name}"}
        own = _Frame()
        self._frames.append(own)
        self._active.add(key)
        try:
            body = self._node(node, target.document, f"{where} -> {ref}")
        finally:
            self._active.discard(key)
            self._frames.pop()
        large = key not in self._recursive and len(orjson.dumps(body, option=orjson.OPT_NON_STR_KEYS, default=str)) > self.inline_limit
        if key in self._recursive or large:
            name = self._name(key, target)
            self._defs[name] = body
            self._defs_needs[name] = frozenset(own.needs - {name})
            own.needs.add(name)
            if large:
                self._shared.add(name)
            result: Any = {"$ref": f"#/$defs/{name}"}
        else:
            result = body
        needs = frozenset(own.needs)
        self._memo[key] = (result, needs)
        frame.needs.update(needs)
        return result

    def _name(self, key: tuple[str, str], target: Ref) -> str:
        name = self._names.get(key)
        if name is None:
            base = "".join(c if c.isalnum() or c in "._-" else "_" for c in target.name) or "schema"
            name, counter = base, 2
            while name in self._taken:
                name, counter = f"{base}_{counter}", counter + 1
            self._taken.add(name)
            self._names[key] = name
        return name


def _nullable(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return schema
    kind = schema.get("type")
    if isinstance(kind, str) and "$ref" not in schema:
        out = {**schema, "type": [kind, "null"]}
        if isinstance(out.get("enum"), list) and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
        return out
    if isinstance(kind, list):
        return schema if "null" in kind else {**schema, "type": [*kind, "null"]}
    return {"anyOf": [schema, {"type": "null"}]}


def _merge_all_of(schema: dict[str, Any], expand: Any = lambda part: part) -> dict[str, Any]:
    """Merge ``allOf`` parts into one object schema when they do not disagree; else keep it."""
    parts = [expand(part) for part in schema["allOf"]]
    merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
    properties: dict[str, Any] = dict(merged.get("properties") or {})
    required: list[str] = list(merged.get("required") or [])
    for part in parts:
        if not isinstance(part, dict) or "$ref" in part or "allOf" in part:
            return schema
        for key, value in part.items():
            if key == "properties":
                if not isinstance(value, Mapping):
                    return schema
                for name, sub in value.items():
                    if name in properties and properties[name] != sub:
                        return schema
                    properties[name] = sub
            elif key == "required":
                required.extend(r for r in value if isinstance(r, str) and r not in required)
            elif key == "description":
                merged.setdefault("description", value)
            elif key in merged and merged[key] != value:
                if key != "default":  # parts that disagree (two types, two enums) stay an allOf
                    return schema
            else:
                merged[key] = value
    if properties:
        merged["properties"] = properties
    if required:
        merged["required"] = required
    return merged


__all__ = ["SchemaConverter", "SpecError"]
