"""AsyncAPI schema objects as JSON Schemas an LLM can fill.

An AsyncAPI schema is JSON Schema draft 07 plus a few fields (``discriminator``,
``externalDocs``, ``x-*``). The converter inlines ``$ref``\\ s, turns a reference that
comes back to itself (a recursive type) into a ``$defs`` entry referenced by name, keeps
validation keywords (enums, formats, ranges, lengths, patterns, nested objects, arrays,
maps), drops what a JSON Schema validator does not know, and makes descriptions plain
text. A property *named* ``$ref`` stays a property: only schema positions are followed.

Inlining is bounded: a spec's schemas may expand to at most :data:`MAX_SCHEMA_NODES`
schema objects in all, so references (or YAML aliases) that each name the next one twice
cannot make a small file expand exponentially when it loads.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mcs.tools import visible_text
from mcs_mqtt._refs import Documents, SpecError

#: Keywords whose value is one schema.
_ONE = ("additionalProperties", "items", "additionalItems", "contains", "not", "if", "then", "else",
        "propertyNames", "unevaluatedProperties", "unevaluatedItems")
#: Keywords whose value is a list of schemas.
_MANY = ("allOf", "anyOf", "oneOf", "prefixItems")
#: Keywords whose value maps names to schemas.
_NAMED = ("properties", "patternProperties", "definitions", "$defs", "dependentSchemas")
#: Keywords copied as data.
_DATA = ("type", "enum", "const", "format", "default", "examples", "title", "description",
         "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
         "minLength", "maxLength", "pattern", "minItems", "maxItems", "uniqueItems",
         "minProperties", "maxProperties", "required", "contentEncoding", "contentMediaType",
         "readOnly", "writeOnly", "deprecated", "dependentRequired")

#: How many schema objects all of a spec's converted schemas may hold together.
MAX_SCHEMA_NODES = 100_000

_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_TAG = re.compile(r"<[^>]+>")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s*", re.MULTILINE)
_BULLET = re.compile(r"^(\s*)[*+]\s+", re.MULTILINE)
_EMPHASIS = re.compile(r"(\*\*|__|\*|`)(?=\S)(.+?)(?<=\S)\1")


def plain_text(text: Any) -> str:
    """Markdown/HTML from a spec as plain text: links keep their words, markers go, and so do
    invisible format characters (:func:`mcs.tools.visible_text`: no words a reader cannot see)."""
    if not isinstance(text, str):
        return ""
    out = _LINK.sub(r"\1", visible_text(text))
    out = _TAG.sub("", out)
    out = _HEADING.sub("", out)
    out = _BULLET.sub(r"\1- ", out)
    out = _EMPHASIS.sub(r"\2", out)
    out = re.sub(r"\n{3,}", "\n\n", out)
    return out.strip()


def _visible(key: str, value: Any) -> Any:
    """A schema's ``title`` without invisible format characters; other values as they are."""
    return visible_text(value) if key == "title" and isinstance(value, str) else value


class SchemaConverter:
    """Converts the schemas of one spec; ``defs`` collects the recursive types it met."""

    def __init__(self, documents: Documents) -> None:
        self.documents = documents
        self.defs: dict[str, Any] = {}
        self._names: dict[tuple[str, str], str] = {}
        self._stack: list[tuple[str, str]] = []
        self._recursive: set[tuple[str, str]] = set()
        self._nodes = 0

    def convert(self, node: Any, document: str, where: str) -> Any:
        """``node`` (a schema found at ``where`` in ``document``) as a plain JSON Schema.

        Raises:
            SpecError: not a schema, a reference that points nowhere, or the spec's schemas
                expand past :data:`MAX_SCHEMA_NODES` objects or Python's nesting limit.
        """
        if isinstance(node, bool):
            return node
        if not isinstance(node, Mapping):
            raise SpecError(document, where, f"a schema must be an object, got {type(node).__name__}")
        self._nodes += 1
        if self._nodes > MAX_SCHEMA_NODES:
            raise SpecError(document, where, f"the spec's schemas expand to more than {MAX_SCHEMA_NODES} schema "
                                             "objects once their $refs are inlined (references or YAML aliases "
                                             "that fan out)")
        try:
            return self._convert(node, document, where)
        except RecursionError:
            raise SpecError(document, where, "schemas nested too deeply to convert") from None

    def _convert(self, node: Mapping[str, Any], document: str, where: str) -> Any:
        ref = node.get("$ref")
        if isinstance(ref, str):
            return self._reference(ref, document, where)
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _DATA:
                out[key] = plain_text(value) if key == "description" else _visible(key, value)
            elif key == "example":
                out.setdefault("examples", [value])
            elif key in _ONE:
                out[key] = self.convert(value, document, f"{where}/{key}")
            elif key in _MANY and isinstance(value, list):
                out[key] = [self.convert(v, document, f"{where}/{key}/{i}") for i, v in enumerate(value)]
            elif key in _NAMED and isinstance(value, Mapping):
                target = "$defs" if key == "definitions" else key
                out[target] = {
                    str(name): self.convert(sub, document, f"{where}/{key}/{name}") for name, sub in value.items()
                }
            elif key == "items" and isinstance(value, list):  # draft-07 tuple form
                out["prefixItems"] = [self.convert(v, document, f"{where}/items/{i}") for i, v in enumerate(value)]
        if out.get("type") == "string" and out.get("format") == "binary":
            out.pop("format")
            out["contentEncoding"] = "base64"
        return out

    def _reference(self, ref: str, document: str, where: str) -> Any:
        target, target_doc, pointer = self.documents.resolve(ref, document, where)
        key = (target_doc, pointer)
        if key in self._stack:
            self._recursive.add(key)
            return {"$ref": f"#/$defs/{self._name(key)}"}
        if key in self._names and key in self._recursive:
            return {"$ref": f"#/$defs/{self._name(key)}"}
        self._stack.append(key)
        try:
            converted = self.convert(target, target_doc, pointer)
        finally:
            self._stack.pop()
        if key in self._recursive:
            self.defs[self._name(key)] = converted
            return {"$ref": f"#/$defs/{self._name(key)}"}
        return converted

    def _name(self, key: tuple[str, str]) -> str:
        name = self._names.get(key)
        if name is None:
            tail = key[1].rsplit("/", 1)[-1] or "schema"
            base = re.sub(r"[^A-Za-z0-9_.-]+", "_", tail) or "schema"
            name, n = base, 2
            while name in self._names.values():
                name, n = f"{base}_{n}", n + 1
            self._names[key] = name
        return name


def attach_defs(schema: dict[str, Any], defs: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` with the ``$defs`` entries it (transitively) references."""
    needed: dict[str, Any] = {}
    pending: list[Any] = [schema]
    while pending:
        for name in _refs_in(pending.pop()):
            if name not in needed and name in defs:
                needed[name] = defs[name]
                pending.append(defs[name])
    return {**schema, "$defs": needed} if needed else schema


def _refs_in(node: Any) -> list[str]:
    found: list[str] = []
    if isinstance(node, Mapping):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            found.append(ref[len("#/$defs/"):])
        for value in node.values():
            found.extend(_refs_in(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(_refs_in(value))
    return found
