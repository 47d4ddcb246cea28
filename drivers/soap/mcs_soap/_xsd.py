"""The XML Schema text behind a WSDL, indexed for what zeep's model leaves out.

zeep turns XSD into Python types that serialise and parse messages, but it drops the
facets (enumerations, patterns, lengths, bounds, digits) and every ``xsd:documentation``.
An LLM needs both, so this module keeps the schema documents themselves (parsed once
more, with the same hardened parser) and answers three questions:

* which global element, type, group or attribute group a QName names;
* which local element or attribute declaration a complex type holds under a name
  (through sequences, choices, groups, attribute groups and its base types);
* the documentation text of any declaration, as plain text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from lxml import etree

from mcs.tools import visible_text

XSD = "http://www.w3.org/2001/XMLSchema"
WSDL = "http://schemas.xmlsoap.org/wsdl/"
_KINDS = ("element", "complexType", "simpleType", "group", "attributeGroup", "attribute")
_SPACE = re.compile(r"\s+")
#: Descriptions longer than this are cut (the spec's prose, not the schema, is cut).
MAX_DOC_CHARS = 600


def xsd(tag: str) -> str:
    """The Clark name ``{XSD}tag``."""
    return f"{{{XSD}}}{tag}"


def resolve_qname(node: etree._Element, value: str | None) -> etree.QName | None:
    """A QName-valued attribute (``tns:Foo``) resolved against ``node``'s namespaces."""
    if not value:
        return None
    prefix, _, local = value.rpartition(":")
    namespace = node.nsmap.get(prefix or None)
    if prefix and namespace is None:
        if prefix == "xml":
            namespace = "http://www.w3.org/XML/1998/namespace"
        else:
            return etree.QName(local)
    return etree.QName(namespace, local) if namespace else etree.QName(local)


_ANNOTATION = f"{{{XSD}}}annotation"
_DOCUMENTATION = f"{{{XSD}}}documentation"
_WSDL_DOCUMENTATION = f"{{{WSDL}}}documentation"


def documentation(node: etree._Element | None) -> str:
    """The ``annotation/documentation`` text of ``node`` as one plain line (markup dropped).

    Both XSD and WSDL put documentation first among a node's children, so only the
    leading children are read.
    """
    if node is None:
        return ""
    texts: list[str] = []
    for child in node:
        tag = child.tag
        if tag == _ANNOTATION:
            texts.extend(" ".join(str(t) for t in doc.itertext()) for doc in child.iterchildren(_DOCUMENTATION))
        elif tag == _WSDL_DOCUMENTATION:
            texts.append(" ".join(str(t) for t in child.itertext()))
        elif isinstance(tag, str):
            break
    if not texts:
        return ""
    text = " ".join(texts)
    text = visible_text(text)  # no invisible format characters (Cf: zero-width, bidi, tag block): no hidden words
    text = _SPACE.sub(" ", text).strip()
    if len(text) > MAX_DOC_CHARS:
        text = text[: MAX_DOC_CHARS - 3].rstrip() + "..."
    return text


@dataclass
class SchemaIndex:
    """Global declarations of every schema document, by kind and QName."""

    globals: dict[str, dict[str, etree._Element]] = field(default_factory=lambda: {k: {} for k in _KINDS})
    by_local: dict[str, dict[str, list[etree._Element]]] = field(default_factory=lambda: {k: {} for k in _KINDS})
    #: ``wsdl:documentation`` of portType and binding operations, by (owner QName, operation).
    operation_docs: dict[tuple[str, str], str] = field(default_factory=dict)
    _locals: dict[etree._Element, dict[str, etree._Element]] = field(default_factory=dict)
    _attributes: dict[etree._Element, dict[str, etree._Element]] = field(default_factory=dict)
    _docs: dict[etree._Element, str] = field(default_factory=dict)

    def add_schema(self, schema: etree._Element, namespace: str | None = None) -> None:
        """Index the global declarations of one ``xsd:schema`` node."""
        target = schema.get("targetNamespace", namespace or "")
        for child in schema:
            if not isinstance(child.tag, str):
                continue
            kind = etree.QName(child).localname
            name = child.get("name")
            if kind in self.globals and name and child.tag == xsd(kind):
                key = etree.QName(target or None, name).text
                self.globals[kind].setdefault(key, child)
                self.by_local[kind].setdefault(name, []).append(child)

    def add_document(self, root: etree._Element) -> None:
        """Index a WSDL (its ``types/schema`` nodes) or a schema document."""
        if root.tag == xsd("schema"):
            self.add_schema(root)
            return
        for schema in root.iter(xsd("schema")):
            self.add_schema(schema)
        if root.tag != f"{{{WSDL}}}definitions":
            return
        target = root.get("targetNamespace") or None
        for owner in root.iterchildren(f"{{{WSDL}}}portType", f"{{{WSDL}}}binding"):
            owner_name = etree.QName(target, owner.get("name", "")).text
            for op in owner.iterchildren(f"{{{WSDL}}}operation"):
                text = documentation(op)
                if text:
                    self.operation_docs[(owner_name, op.get("name", ""))] = text

    def lookup(self, kind: str, qname: etree.QName | str | None) -> etree._Element | None:
        """The global ``kind`` declaration named ``qname``; by local name when that is unique."""
        if qname is None:
            return None
        text = qname if isinstance(qname, str) else qname.text
        found = self.globals[kind].get(text)
        if found is not None:
            return found
        local = text.rpartition("}")[2]
        candidates = self.by_local[kind].get(local, [])
        return candidates[0] if len(candidates) == 1 else None

    # ------------------------------------------------------------------ local declarations

    def local_element(self, complex_type: etree._Element | None, name: str) -> etree._Element | None:
        """The element declaration ``complex_type`` holds under ``name`` (a ``ref`` followed)."""
        if complex_type is None:
            return None
        table = self._locals.get(complex_type)
        if table is None:
            table = {}
            for decl in self._element_decls(complex_type, set()):
                ref = resolve_qname(decl, decl.get("ref"))
                if ref is not None:
                    target = self.lookup("element", ref)
                    if target is not None:
                        table.setdefault(ref.localname, target)
                elif decl.get("name"):
                    table.setdefault(decl.get("name", ""), decl)
            self._locals[complex_type] = table
        return table.get(name)

    def local_attribute(self, complex_type: etree._Element | None, name: str) -> etree._Element | None:
        """The attribute declaration ``complex_type`` holds under ``name`` (a ``ref`` followed)."""
        if complex_type is None:
            return None
        table = self._attributes.get(complex_type)
        if table is None:
            table = {}
            for decl in self._attribute_decls(complex_type, set()):
                ref = resolve_qname(decl, decl.get("ref"))
                if ref is not None:
                    target = self.lookup("attribute", ref)
                    table.setdefault(ref.localname, target if target is not None else decl)
                elif decl.get("name"):
                    table.setdefault(decl.get("name", ""), decl)
            self._attributes[complex_type] = table
        return table.get(name)

    def _bases(self, node: etree._Element) -> Iterator[etree._Element]:
        """The base complex type of ``node``'s complexContent derivation, if any."""
        for content in node.iterchildren(xsd("complexContent"), xsd("simpleContent")):
            for derivation in content.iterchildren(xsd("extension"), xsd("restriction")):
                base = self.lookup("complexType", resolve_qname(derivation, derivation.get("base")))
                if base is not None:
                    yield base

    def _element_decls(self, node: etree._Element, seen: set[int]) -> Iterator[etree._Element]:
        if id(node) in seen:
            return
        seen.add(id(node))
        for base in self._bases(node):
            yield from self._element_decls(base, seen)
        for child in node:
            if not isinstance(child.tag, str):
                continue
            if child.tag == xsd("element"):
                yield child
            elif child.tag == xsd("group") and child.get("ref"):
                group = self.lookup("group", resolve_qname(child, child.get("ref")))
                if group is not None:
                    yield from self._element_decls(group, seen)
            elif child.tag in _CONTAINERS:
                yield from self._element_decls(child, seen)

    def _attribute_decls(self, node: etree._Element, seen: set[int]) -> Iterator[etree._Element]:
        if id(node) in seen:
            return
        seen.add(id(node))
        for base in self._bases(node):
            yield from self._attribute_decls(base, seen)
        for child in node:
            if not isinstance(child.tag, str):
                continue
            if child.tag == xsd("attribute"):
                yield child
            elif child.tag == xsd("attributeGroup") and child.get("ref"):
                group = self.lookup("attributeGroup", resolve_qname(child, child.get("ref")))
                if group is not None:
                    yield from self._attribute_decls(group, seen)
            elif child.tag in _ATTRIBUTE_CONTAINERS:
                yield from self._attribute_decls(child, seen)

    # ------------------------------------------------------------------ types of declarations

    def type_of(self, decl: etree._Element) -> tuple[etree.QName | None, etree._Element | None]:
        """The named type (QName) or the anonymous type node of an element or attribute."""
        named = resolve_qname(decl, decl.get("type"))
        if named is not None:
            return named, None
        return None, inline_type(decl)

    def documentation_of(self, decl: etree._Element | None) -> str:
        """The declaration's own documentation, else its type's (memoised per declaration)."""
        if decl is None:
            return ""
        text = self._docs.get(decl)
        if text is not None:
            return text
        text = documentation(decl)
        if not text:
            inline = inline_type(decl)
            if inline is not None:
                text = documentation(inline)
            elif decl.get("type"):
                named = resolve_qname(decl, decl.get("type"))
                node = self.lookup("complexType", named)
                if node is None:
                    node = self.lookup("simpleType", named)
                text = documentation(node)
        self._docs[decl] = text
        return text


_INLINE_TYPES = (f"{{{XSD}}}complexType", f"{{{XSD}}}simpleType")


def inline_type(decl: etree._Element) -> etree._Element | None:
    """The anonymous ``complexType`` / ``simpleType`` declared inside ``decl``, if any."""
    for child in decl:
        if child.tag in _INLINE_TYPES:
            return child
    return None


_CONTAINERS = frozenset(
    xsd(t) for t in ("sequence", "choice", "all", "complexContent", "extension", "restriction", "group")
)
_ATTRIBUTE_CONTAINERS = frozenset(
    xsd(t) for t in ("complexContent", "simpleContent", "extension", "restriction", "attributeGroup")
)


def safe_parser() -> etree.XMLParser:
    """An lxml parser that never resolves entities, loads a DTD or touches the network."""
    return etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, dtd_validation=False,
        huge_tree=False, remove_comments=True, remove_pis=True,
    )


def build_index(documents: Mapping[str, bytes], parsed: Mapping[str, etree._Element]) -> SchemaIndex:
    """Index the schemas of ``documents`` (WSDL or XSD bytes zeep has already accepted).

    ``parsed`` holds trees zeep already parsed, by location; the rest are parsed here.
    """
    index = SchemaIndex()
    parser = safe_parser()
    for location, content in documents.items():
        root = parsed.get(location)
        if root is None:
            try:
                root = etree.fromstring(content, parser)
            except etree.XMLSyntaxError:
                continue  # not XML zeep needed as a tree; facets are a bonus
        index.add_document(root)
    return index
