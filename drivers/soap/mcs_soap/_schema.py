"""JSON Schemas for operation inputs, from zeep's model of a WSDL and the XSD text behind it.

zeep's model is the source of truth for *shape and names*: the schema has exactly the
keyword arguments zeep accepts (element and attribute names, ``_value_N`` for repeated
choices and sequences, ``any`` content and simple content). The XSD text
(:mod:`mcs_soap._xsd`) adds what zeep drops: facets and documentation.

Mapping (XSD -> JSON Schema):

* ``sequence`` / ``all`` -> the properties of one object; ``minOccurs >= 1`` -> required.
* ``choice`` -> its alternatives side by side plus ``oneOf`` of their required names
  (exactly one alternative; none as well when the choice is optional).
* ``maxOccurs > 1`` -> ``array`` with ``minItems`` / ``maxItems``; ``nillable`` -> ``null`` allowed.
* attributes -> properties (``use="required"`` -> required); ``anyAttribute`` -> a map.
* ``enumeration`` -> ``enum``; ``pattern`` (anchored, XSD classes translated) -> ``pattern``;
  ``length`` / ``minLength`` / ``maxLength``; ``min/maxInclusive`` / ``min/maxExclusive`` ->
  ``minimum`` / ``maximum`` / ``exclusive*``; ``totalDigits`` / ``fractionDigits`` -> bounds
  and a description.
* built-in types: integers with their ranges, ``decimal`` as a string or number,
  ``dateTime`` / ``date`` / ``time`` / ``duration`` with ``format``, ``base64Binary`` with
  ``contentEncoding``, ``hexBinary`` and the ``g*`` types with patterns.
* complex-type extension and restriction -> the derived type's full content (zeep merges it).
* ``any`` -> one XML element as a string (parsed with a hardened parser before sending).
* recursive types -> ``{"$ref": "#/$defs/Name"}`` with the definition in the tool's ``$defs``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from lxml import etree
from zeep.xsd import (
    All,
    AnyAttribute,
    AnySimpleType,
    AnyType,
    Choice,
    ComplexType,
    Element,
    Group,
    ListType,
    Sequence,
    UnionType,
)
from zeep.xsd import (
    Any as AnyElement,
)

from mcs_soap._xsd import XSD, SchemaIndex, documentation, inline_type, resolve_qname, xsd

Schema = dict[str, Any]
_MAX_SIMPLE_DEPTH = 24

_INTEGERS: dict[str, tuple[int | None, int | None]] = {
    "integer": (None, None), "long": (-(2**63), 2**63 - 1), "int": (-(2**31), 2**31 - 1),
    "short": (-(2**15), 2**15 - 1), "byte": (-128, 127), "nonNegativeInteger": (0, None),
    "positiveInteger": (1, None), "nonPositiveInteger": (None, 0), "negativeInteger": (None, -1),
    "unsignedLong": (0, 2**64 - 1), "unsignedInt": (0, 2**32 - 1), "unsignedShort": (0, 65535),
    "unsignedByte": (0, 255),
}
_TZ = r"(Z|[+-]\d{2}:\d{2})?"
DECIMAL_PATTERN = r"^[+-]?(\d+(\.\d*)?|\.\d+)$"
_BUILTIN_STRINGS: dict[str, Schema] = {
    "dateTime": {"type": "string", "format": "date-time"},
    "date": {"type": "string", "format": "date"},
    "time": {"type": "string", "format": "time"},
    "duration": {"type": "string", "format": "duration",
                 "pattern": r"^-?P(?=\d|T\d)(\d+Y)?(\d+M)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$"},
    "gYear": {"type": "string", "pattern": rf"^-?\d{{4,}}{_TZ}$"},
    "gYearMonth": {"type": "string", "pattern": rf"^-?\d{{4,}}-\d{{2}}{_TZ}$"},
    "gMonth": {"type": "string", "pattern": rf"^--\d{{2}}{_TZ}$"},
    "gMonthDay": {"type": "string", "pattern": rf"^--\d{{2}}-\d{{2}}{_TZ}$"},
    "gDay": {"type": "string", "pattern": rf"^---\d{{2}}{_TZ}$"},
    "base64Binary": {"type": "string", "contentEncoding": "base64",
                     "pattern": r"^[A-Za-z0-9+/\s]*={0,2}\s*$"},
    "hexBinary": {"type": "string", "pattern": r"^([0-9a-fA-F]{2})*$"},
    "anyURI": {"type": "string", "format": "uri-reference"},
    "decimal": {"type": ["string", "number"], "pattern": DECIMAL_PATTERN,
                "description": "xsd:decimal: a number, or a string to keep every digit"},
}
_NUMERIC = frozenset({"integer", "number"})


def builtin_schema(local: str) -> Schema:
    """The JSON Schema of the XSD built-in type ``local`` (``int``, ``dateTime``...)."""
    if local in _INTEGERS:
        low, high = _INTEGERS[local]
        schema: Schema = {"type": "integer"}
        if low is not None:
            schema["minimum"] = low
        if high is not None:
            schema["maximum"] = high
        return schema
    if local in ("float", "double"):
        return {"type": "number"}
    if local == "boolean":
        return {"type": "boolean"}
    if local in _BUILTIN_STRINGS:
        return dict(_BUILTIN_STRINGS[local])
    return {"type": "string"}


def _zeep_builtin(xsd_type: Any) -> Schema:
    """The built-in a zeep simple type derives from (for types without XSD text)."""
    for cls in type(xsd_type).__mro__:
        qname = getattr(cls, "_default_qname", None)
        if qname is not None and etree.QName(qname).namespace == XSD:
            return builtin_schema(etree.QName(qname).localname)
    return {"type": "string"}


# ---------------------------------------------------------------------- XSD regular expressions

_NAME_START = r"A-Za-z_:\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u02FF\u0370-\u037D\u037F-\u1FFF\u200C-\u200D\u2070-\u218F\u2C00-\u2FEF\u3001-\uD7FF\uF900-\uFDCF\uFDF0-\uFFFD"
_NAME_CHAR = _NAME_START + r"\-.0-9\u00B7\u0300-\u036F\u203F-\u2040"
_XSD_CLASSES = {
    r"\i": f"[{_NAME_START}]", r"\I": f"[^{_NAME_START}]",
    r"\c": f"[{_NAME_CHAR}]", r"\C": f"[^{_NAME_CHAR}]",
}


def translate_pattern(pattern: str) -> str | None:
    """An XSD pattern as an anchored ECMA-262 regex, or ``None`` when it cannot be kept.

    XSD patterns match the whole value (no anchors); ``\\i``/``\\c`` name classes are
    expanded; character-class subtraction (``[a-z-[aeiou]]``) and Unicode block escapes
    (``\\p{IsBasicLatin}``) have no ECMA form and drop the pattern.
    """
    if "-[" in pattern or r"\p{Is" in pattern or r"\P{Is" in pattern:
        return None
    out = []
    i = 0
    while i < len(pattern):
        pair = pattern[i:i + 2]
        if pair in _XSD_CLASSES:
            out.append(_XSD_CLASSES[pair])
            i += 2
            continue
        if pattern[i] == "\\" and i + 1 < len(pattern):
            out.append(pair)
            i += 2
            continue
        if pattern[i] in "^$":  # literal characters in XSD
            out.append("\\" + pattern[i])
        else:
            out.append(pattern[i])
        i += 1
    return "^(?:" + "".join(out) + ")$"


# ---------------------------------------------------------------------- the converter


def simple_body_name(body: Any) -> str | None:
    """The argument name of a message body of simple type (zeep takes it positionally);
    ``None`` for a complex body (keyword arguments) or no body. The same name
    :meth:`SchemaConverter.body_schema` gives, without building the schema."""
    if body is None or isinstance(body.type, ComplexType):
        return None
    return str(body.name or "value")


class SchemaConverter:
    """Converts zeep types to JSON Schema; one per loaded WSDL.

    Recursive types become ``$defs`` entries of the tool that needs them. A tool's schema
    depends on the WSDL and that tool only, never on which tools were converted before
    (schemas are built lazily, in whatever order tools are described): types whose
    conversion met no cycle are memoised for every tool; the rest, and the ``$defs``
    names, are worked out again for each tool. Not thread-safe: callers convert under a lock.
    """

    def __init__(self, index: SchemaIndex) -> None:
        self.index = index
        self.defs: dict[str, Schema] = {}
        #: Converted types without cycles, for every tool (by ``id`` of the zeep type).
        self._shared: dict[int, Schema] = {}
        #: The current tool's converted types that reference a definition, and their references.
        self._memo: dict[int, tuple[Schema, frozenset[str]]] = {}
        self._simple_memo: dict[str, Schema] = {}
        self._stack: list[int] = []
        self._recursive: set[int] = set()
        self._def_names: dict[int, str] = {}
        self._deps: list[set[str]] = []
        self._def_deps: dict[str, frozenset[str]] = {}
        self._keep: list[Any] = []  # zeep types whose id() keys the memo stay alive

    # ------------------------------------------------------------------ entry points

    def tool_schema(self, properties: Schema, required: list[str], extra: Schema | None = None) -> Schema:
        """An object schema with the ``$defs`` its properties reference."""
        schema: Schema = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        if extra:
            schema.update(extra)
        return schema

    def body_schema(self, body: Any) -> tuple[Schema, str | None]:
        """The input schema for a message body element; the name of a simple body's argument.

        ``body`` is zeep's body element (``None`` for an operation without input). A body of
        simple type is one argument named after the element, passed to zeep positionally.
        """
        self.defs, self._memo, self._recursive, self._def_names, self._def_deps = {}, {}, set(), {}, {}
        self._deps.append(set())
        try:
            if body is None:
                return {"type": "object", "properties": {}, "additionalProperties": False}, None
            body_type = body.type
            if isinstance(body_type, ComplexType):
                decl = self.index.lookup("element", body.qname)
                named, raw = self._raw_type(decl, body_type)
                schema = self._complex(body_type, raw, named)
                ref = schema.get("$ref")
                schema = dict(self.defs[ref.rsplit("/", 1)[-1]] if isinstance(ref, str) else schema)
                schema.setdefault("type", "object")
                simple_name = None
            else:
                decl = self.index.lookup("element", body.qname)
                inner = self._element_schema(body, decl)
                name = simple_body_name(body) or "value"
                schema = {"type": "object", "properties": {name: inner}, "required": [name]}
                simple_name = name
            schema["additionalProperties"] = schema.get("additionalProperties", False)
            needed = self._closure(self._deps[-1])
            if needed:
                schema["$defs"] = {name: self.defs[name] for name in sorted(needed)}
            return schema, simple_name
        finally:
            self._deps.pop()

    def _closure(self, names: set[str]) -> set[str]:
        """``names`` and every definition they reference, transitively."""
        seen: set[str] = set()
        todo = list(names)
        while todo:
            name = todo.pop()
            if name in seen or name not in self.defs:
                continue
            seen.add(name)
            todo.extend(self._def_deps.get(name, ()))
        return seen

    # ------------------------------------------------------------------ raw (XSD text) lookups

    def _named(self, decl: etree._Element | None, zeep_type: Any) -> etree.QName | None:
        """The QName of the named type of ``decl``: zeep resolved it already, else the text is read."""
        declared = decl is not None and decl.get("type") is not None
        qname = getattr(zeep_type, "qname", None)
        if qname is not None and (declared or (decl is None and getattr(zeep_type, "is_global", False))):
            return qname if isinstance(qname, etree.QName) else etree.QName(qname)
        if declared and decl is not None:
            return resolve_qname(decl, decl.get("type"))
        return None

    def _raw_type(self, decl: etree._Element | None, zeep_type: Any) -> tuple[etree.QName | None, etree._Element | None]:
        """The named type QName and the raw type node for a declaration (or a zeep type)."""
        if decl is not None:
            inline = inline_type(decl)
            if inline is not None:
                return None, inline
        named = self._named(decl, zeep_type)
        if named is None or named.namespace == XSD:
            return named, None
        kind = "complexType" if isinstance(zeep_type, ComplexType) else "simpleType"
        return named, self.index.lookup(kind, named.text)

    # ------------------------------------------------------------------ elements

    def _element_schema(self, element: Any, decl: etree._Element | None) -> Schema:
        xsd_type = element.type
        if isinstance(xsd_type, ComplexType):
            named, raw = self._raw_type(decl, xsd_type)
            schema = self._complex(xsd_type, raw, named)
        else:
            schema = self._simple(xsd_type, decl)
        description = _merged(self.index.documentation_of(decl) if decl is not None else "",
                              str(schema.get("description", "")))
        if element.default is not None and "$ref" not in schema:
            schema = {**schema, "default": _typed(element.default, schema)}
        if getattr(element, "nillable", False):
            schema = _nullable(schema)
        if description:
            schema = {**schema, "description": description}
        return schema

    def _occurs(self, schema: Schema, min_occurs: int, max_occurs: Any) -> Schema:
        if max_occurs == "unbounded" or (isinstance(max_occurs, int) and max_occurs > 1):
            array: Schema = {"type": "array", "items": schema}
            if min_occurs > 1:
                array["minItems"] = min_occurs
            if isinstance(max_occurs, int):
                array["maxItems"] = max_occurs
            return array
        return schema

    # ------------------------------------------------------------------ complex types

    def _complex(self, xsd_type: Any, raw: etree._Element | None, named: etree.QName | None) -> Schema:
        key = id(xsd_type)
        shared = self._shared.get(key)
        if shared is not None:
            return shared
        if key in self._stack:
            self._recursive.add(key)
            name = self._def_name(xsd_type, named)
            self._deps[-1].add(name)
            return {"$ref": f"#/$defs/{name}"}
        memo = self._memo.get(key)
        if memo is not None:
            self._deps[-1].update(memo[1])
            return memo[0]
        self._stack.append(key)
        self._deps.append(set())
        try:
            schema = self._complex_object(xsd_type, raw)
            if raw is not None and "description" not in schema:
                doc = documentation(raw)
                if doc:
                    schema["description"] = doc
        finally:
            self._stack.pop()
            deps = self._deps.pop()
        if key in self._recursive:
            name = self._def_name(xsd_type, named)
            self.defs[name] = schema
            self._def_deps[name] = frozenset(deps)
            deps.add(name)
            result: Schema = {"$ref": f"#/$defs/{name}"}
        else:
            result = schema
        if not deps:  # no cycle met: the same for every tool
            self._shared[key] = result
            self._keep.append(xsd_type)
            return result
        frozen = frozenset(deps)
        self._memo[key] = (result, frozen)
        self._deps[-1].update(frozen)
        return result

    def _def_name(self, xsd_type: Any, named: etree.QName | None) -> str:
        key = id(xsd_type)
        if key in self._def_names:
            return self._def_names[key]
        qname = getattr(xsd_type, "qname", None)
        base = (named.localname if named is not None else None) or (etree.QName(qname).localname if qname is not None else "Type")
        base = re.sub(r"[^A-Za-z0-9_.-]", "_", base) or "Type"
        name, counter = base, 2
        taken = set(self._def_names.values())
        while name in taken:
            name, counter = f"{base}_{counter}", counter + 1
        self._def_names[key] = name
        return name

    def _complex_object(self, xsd_type: Any, raw: etree._Element | None) -> Schema:
        shape = _Shape()
        for name, particle in xsd_type.elements_nested:
            self._particle(shape, particle, name, raw, required=True)
        for name, attribute in xsd_type.attributes:
            if isinstance(attribute, AnyAttribute):
                shape.properties[name] = {
                    "type": "object", "additionalProperties": {"type": "string"},
                    "description": "Any further XML attributes, by name.",
                }
                continue
            decl = self.index.local_attribute(raw, attribute.name) if attribute.name else None
            schema = self._simple(attribute.type, decl)
            doc = self.index.documentation_of(decl) if decl is not None else ""
            if attribute.default is not None:
                schema = {**schema, "default": _typed(attribute.default, schema)}
            if doc:
                schema = {**schema, "description": doc}
            shape.properties[name] = schema
            if attribute.required:
                shape.required.append(name)
        return shape.schema()

    def _particle(self, shape: _Shape, particle: Any, name: str | None, raw: etree._Element | None, *,
                  required: bool, alternative: bool = False) -> None:
        if isinstance(particle, Element):
            prop = name or particle.attr_name
            decl = self._local_decl(raw, particle)
            min_occurs = particle.min_occurs
            if alternative:  # zeep zeroes minOccurs inside a choice; the XSD text keeps it
                text = decl.get("minOccurs", "1") if decl is not None else "1"
                min_occurs = int(text) if text.isdigit() else 1
            schema = self._occurs(self._element_schema(particle, decl), min_occurs, particle.max_occurs)
            if prop == "_value_1" and not isinstance(particle.type, ComplexType) and raw is not None and decl is None:
                schema = {**self._simple_content(particle.type, raw),
                          "description": "The element's own text value."}
            shape.properties[prop] = schema
            if required and min_occurs >= 1:
                shape.required.append(prop)
            return
        if isinstance(particle, AnyElement):
            item: Schema = {
                "type": "string",
                "description": "Any XML content: one XML element as text, e.g. <Item>1</Item>.",
            }
            shape.properties[name or "_value_1"] = self._occurs(item, particle.min_occurs, particle.max_occurs)
            if required and particle.min_occurs >= 1:
                shape.required.append(name or "_value_1")
            return
        if isinstance(particle, Group):
            self._particle(shape, particle.child, name if particle.accepts_multiple else None, raw,
                           required=required and particle.min_occurs >= 1)
            return
        multiple = bool(getattr(particle, "accepts_multiple", False))
        if multiple and name:
            inner = _Shape()
            self._indicator(inner, particle, raw, required=True, as_items=True)
            item = inner.schema()
            shape.properties[name] = self._occurs(item, particle.min_occurs, particle.max_occurs)
            if required and particle.min_occurs >= 1:
                shape.required.append(name)
            return
        self._indicator(shape, particle, raw, required=required and particle.min_occurs >= 1)

    def _indicator(self, shape: _Shape, indicator: Any, raw: etree._Element | None, *, required: bool, as_items: bool = False) -> None:
        if isinstance(indicator, Choice):
            branches: list[tuple[list[str], list[str]]] = []
            optional = not required or indicator.min_occurs == 0
            for sub_name, sub in indicator.elements_nested:
                branch = _Shape()
                self._particle(branch, sub, sub_name, raw, required=True, alternative=True)
                shape.properties.update(branch.properties)
                shape.constraints.extend(branch.constraints)
                names = list(branch.properties)
                if not branch.required:
                    optional = True
                branches.append((names, branch.required))
            if branches:
                shape.constraints.append(_choice(branches, optional))
            return
        if isinstance(indicator, Sequence | All):
            for sub_name, sub in indicator.elements_nested:
                self._particle(shape, sub, sub_name, raw, required=required)
            return
        if isinstance(indicator, Group):
            self._particle(shape, indicator, None, raw, required=required)

    def _local_decl(self, raw: etree._Element | None, particle: Any) -> etree._Element | None:
        if raw is not None:
            found = self.index.local_element(raw, particle.name)
            if found is not None:
                return found
        if getattr(particle, "is_global", False) or raw is None:
            return self.index.lookup("element", particle.qname)
        return None

    def _simple_content(self, xsd_type: Any, raw: etree._Element) -> Schema:
        for content in raw.iterchildren(xsd("simpleContent")):
            for derivation in content.iterchildren(xsd("extension"), xsd("restriction")):
                base = resolve_qname(derivation, derivation.get("base"))
                if base is not None:
                    return self._simple_named(base, xsd_type)
        return _zeep_builtin(xsd_type)

    # ------------------------------------------------------------------ simple types

    def _simple(self, xsd_type: Any, decl: etree._Element | None) -> Schema:
        if decl is not None:
            inline = inline_type(decl)
            if inline is not None and inline.tag == xsd("simpleType"):
                return self._simple_node(inline, 0)
            named = self._named(decl, xsd_type)
            if named is not None:
                return self._simple_named(named, xsd_type)
        qname = getattr(xsd_type, "qname", None)
        if qname is not None and getattr(xsd_type, "is_global", False) and not isinstance(xsd_type, AnyType | AnySimpleType | ListType | UnionType):
            return self._simple_named(etree.QName(qname), xsd_type)
        return self._zeep_simple(xsd_type)

    def _zeep_simple(self, xsd_type: Any) -> Schema:
        if isinstance(xsd_type, ListType):
            return {"type": "array", "items": self._zeep_simple(xsd_type.item_type)}
        if isinstance(xsd_type, UnionType):
            return {"anyOf": [self._zeep_simple(t) for t in xsd_type.item_types]} if xsd_type.item_types else {"type": "string"}
        qname = getattr(xsd_type, "qname", None)
        if qname is not None and getattr(xsd_type, "is_global", False):
            q = etree.QName(qname)
            if q.namespace != XSD:
                node = self.index.lookup("simpleType", q)
                if node is not None:
                    return self._simple_node(node, 0)
        if type(xsd_type) is AnyType or isinstance(xsd_type, ComplexType):
            return {"type": "string", "description": "Any value, sent as the element's text."}
        return _zeep_builtin(xsd_type)

    def _simple_named(self, qname: etree.QName, xsd_type: Any, depth: int = 0) -> Schema:
        if qname.namespace == XSD:
            if qname.localname in ("anyType", "anySimpleType"):
                return {"type": "string"}
            return builtin_schema(qname.localname)
        cached = self._simple_memo.get(qname.text)
        if cached is not None:
            return cached
        node = self.index.lookup("simpleType", qname)
        schema = self._simple_node(node, depth + 1) if node is not None else self._zeep_simple(xsd_type) if xsd_type is not None else {"type": "string"}
        self._simple_memo[qname.text] = schema
        return schema

    def _simple_node(self, node: etree._Element, depth: int) -> Schema:
        if depth > _MAX_SIMPLE_DEPTH:
            return {"type": "string"}
        doc = documentation(node)
        schema = self._simple_content_of(node, depth)
        merged = _merged(doc, str(schema.get("description", "")))
        if merged:
            schema = {**schema, "description": merged}
        return schema

    def _simple_content_of(self, node: etree._Element, depth: int) -> Schema:
        for child in node:
            if child.tag == xsd("restriction"):
                return self._restriction(child, depth)
            if child.tag == xsd("list"):
                item_type = resolve_qname(child, child.get("itemType"))
                if item_type is not None:
                    items = self._simple_named(item_type, None, depth)
                else:
                    inner = next(child.iterchildren(xsd("simpleType")), None)
                    items = self._simple_node(inner, depth + 1) if inner is not None else {"type": "string"}
                return {"type": "array", "items": items}
            if child.tag == xsd("union"):
                members: list[Schema] = []
                for token in (child.get("memberTypes") or "").split():
                    member = resolve_qname(child, token)
                    if member is not None:
                        members.append(self._simple_named(member, None, depth))
                for inner in child.iterchildren(xsd("simpleType")):
                    members.append(self._simple_node(inner, depth + 1))
                return {"anyOf": members} if members else {"type": "string"}
        return {"type": "string"}

    def _restriction(self, node: etree._Element, depth: int) -> Schema:
        base_name = resolve_qname(node, node.get("base"))
        if base_name is not None:
            base = dict(self._simple_named(base_name, None, depth))
        else:
            inner = next(node.iterchildren(xsd("simpleType")), None)
            base = dict(self._simple_node(inner, depth + 1)) if inner is not None else {"type": "string"}
        base.pop("description", None)
        return apply_facets(base, node)


class _Shape:
    """The object being built for one complex type: properties, required names, choices."""

    def __init__(self) -> None:
        self.properties: Schema = {}
        self.required: list[str] = []
        self.constraints: list[Schema] = []

    def schema(self) -> Schema:
        schema: Schema = {"type": "object", "properties": self.properties}
        required = list(dict.fromkeys(self.required))
        if required:
            schema["required"] = required
        if len(self.constraints) == 1:
            schema.update(self.constraints[0])
        elif self.constraints:
            schema["allOf"] = self.constraints
        schema["additionalProperties"] = False
        return schema


def _choice(branches: list[tuple[list[str], list[str]]], optional: bool) -> Schema:
    """``oneOf``: exactly one alternative present (or none, for an optional choice)."""
    options: list[Schema] = []
    present_any: list[Schema] = []
    for names, required in branches:
        # Optional fields of other alternatives must be absent too (their required
        # ones already fail oneOf when present together with this alternative).
        others = [n for other, needed in branches if other is not names for n in other
                  if n not in names and n not in needed]
        option: Schema = {"required": required} if required else {"anyOf": [{"required": [n]} for n in names]}
        if others:
            option = {**option, "not": {"anyOf": [{"required": [n]} for n in others]}}
        options.append(option)
        present_any.extend({"required": [n]} for n in names)
    if optional and present_any:
        options.append({"not": {"anyOf": present_any}})
    return {"oneOf": options}


def _merged(doc: str, notes: str) -> str:
    """The documentation, followed by the facet notes it does not already say."""
    if not notes or notes in doc:
        return doc
    return f"{doc} ({notes})" if doc else notes


def _nullable(schema: Schema) -> Schema:
    kind = schema.get("type")
    if isinstance(kind, str) and "enum" not in schema:
        return {**schema, "type": [kind, "null"]}
    if isinstance(kind, list) and "enum" not in schema:
        return {**schema, "type": [*kind, "null"]} if "null" not in kind else schema
    return {"anyOf": [schema, {"type": "null"}]}


def _types(schema: Schema) -> set[str]:
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)}
    return set()


def _typed(text: str, schema: Schema) -> Any:
    """An XSD literal (an enumeration value, a default) as the JSON type of ``schema``."""
    kinds = _types(schema)
    text = text.strip() if kinds & {"integer", "number", "boolean"} else text
    try:
        if "integer" in kinds and re.fullmatch(r"[+-]?\d+", text):
            return int(text)
        if kinds == {"number"}:
            return float(text)
        if kinds == {"boolean"}:
            return text in ("true", "1")
    except ValueError:
        pass
    return text


def _number(text: str) -> int | float | None:
    try:
        return int(text) if re.fullmatch(r"[+-]?\d+", text.strip()) else float(text)
    except ValueError:
        return None


def apply_facets(base: Schema, restriction: etree._Element) -> Schema:
    """``base`` narrowed by the facets of one ``xsd:restriction`` node."""
    schema = dict(base)
    kinds = _types(schema)
    numeric = bool(kinds & _NUMERIC)
    notes: list[str] = []
    enum: list[Any] = []
    patterns: list[str] = []
    total = fraction = None
    for facet in restriction:
        if not isinstance(facet.tag, str) or etree.QName(facet).namespace != XSD:
            continue
        kind = etree.QName(facet).localname
        value = facet.get("value")
        if value is None:
            continue
        if kind == "enumeration":
            enum.append(_typed(value, schema))
        elif kind == "pattern":
            patterns.append(value)
        elif kind in ("length", "minLength", "maxLength") and value.strip().isdigit():
            size = int(value)
            target = ("minItems", "maxItems") if "array" in kinds else ("minLength", "maxLength")
            if "string" in kinds or "array" in kinds:
                if kind in ("length", "minLength"):
                    schema[target[0]] = size
                if kind in ("length", "maxLength"):
                    schema[target[1]] = size
        elif kind in ("minInclusive", "maxInclusive", "minExclusive", "maxExclusive"):
            number = _number(value)
            keyword = {"minInclusive": "minimum", "maxInclusive": "maximum",
                       "minExclusive": "exclusiveMinimum", "maxExclusive": "exclusiveMaximum"}[kind]
            if numeric and number is not None:
                schema[keyword] = number
            else:
                notes.append(f"{keyword} {value}")
        elif kind == "totalDigits" and value.strip().isdigit():
            total = int(value)
        elif kind == "fractionDigits" and value.strip().isdigit():
            fraction = int(value)
    if enum:
        schema["enum"] = list(dict.fromkeys(enum))
        schema.pop("pattern", None)
        schema.pop("format", None)
    if patterns and not enum:
        translated = [translate_pattern(p) for p in patterns]
        if all(t is not None for t in translated):
            combined = translated[0] if len(translated) == 1 else "^(?:" + "|".join(f"(?:{t})" for t in translated) + ")$"
            if "pattern" in schema and schema["pattern"] != combined:
                schema.setdefault("allOf", []).append({"pattern": schema.pop("pattern")})
            schema["pattern"] = combined
        else:
            notes.append("pattern " + " | ".join(patterns))
    if total is not None or fraction is not None:
        digits = []
        if total is not None:
            digits.append(f"at most {total} digits")
            integer_digits = total - (fraction or 0)
            if numeric or "number" in kinds:
                schema.setdefault("exclusiveMaximum", 10 ** integer_digits)
                schema.setdefault("exclusiveMinimum", -(10 ** integer_digits))
        if fraction is not None:
            digits.append(f"at most {fraction} after the decimal point")
        notes.append(", ".join(digits))
        if "string" in kinds and total is not None:
            if fraction == 0:
                schema["pattern"] = rf"^[+-]?\d{{1,{total}}}$"
            else:
                places = fraction if fraction is not None else total
                schema["pattern"] = rf"^[+-]?(?=(\D*\d){{1,{total}}}\D*$)\d*(\.\d{{0,{places}}})?$"
    if notes:
        existing = str(schema.get("description", ""))
        schema["description"] = (existing + "; " if existing else "") + "; ".join(notes)
    return schema


def walk(schema: Any) -> Iterator[Schema]:
    """Every sub-schema (dict) of ``schema``, depth first (for tests and sizing)."""
    if isinstance(schema, dict):
        yield schema
        for value in schema.values():
            yield from walk(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from walk(value)
