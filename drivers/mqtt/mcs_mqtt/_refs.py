"""Documents and ``$ref`` resolution for AsyncAPI files and topic maps.

A reference is resolved lazily, when a tool needs it, against the document it appears in:
``#/components/...`` inside the same file, or ``other.yaml#/...`` relative to that file's
folder. Files outside the spec's own folder and network references are refused: the spec
is configuration, and a reference is not a way to read the rest of the disk or the web.
Every error names the file and the place in it (a JSON pointer). A document whose YAML
aliases expand it past :data:`MAX_DOCUMENT_NODES` values (a "billion laughs") is refused
as it is read, before anything walks it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import yaml

from mcs.errors import ConfigurationError

#: The name of a document given as a mapping rather than a file.
INLINE = "<spec>"
#: How many values (objects, lists and scalars) a document may hold once its YAML aliases
#: are expanded: far more than a real spec, far fewer than an alias bomb expands to.
MAX_DOCUMENT_NODES = 1_000_000


class SpecError(ConfigurationError):
    """The spec or topic map cannot be used; the message names the file and the place."""

    def __init__(self, document: str, where: str, problem: str) -> None:
        place = f" at {where}" if where else ""
        super().__init__(f"{document}{place}: {problem}")
        self.document = document
        self.where = where
        self.problem = problem


class Yaml12Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """YAML as AsyncAPI tools read it (1.2 booleans): ``on``/``off``/``yes``/``no`` stay strings."""


Yaml12Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def read_document(path: Path) -> Any:
    """Parse a YAML or JSON file (JSON is YAML); errors name the file and the line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError(str(path), "", f"cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise SpecError(str(path), "", "is not UTF-8 text") from None
    try:
        document = yaml.load(text, Loader=Yaml12Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise SpecError(str(path), where, f"is not valid YAML/JSON ({problem})") from None
    check_expansion(document, str(path))
    return document


def check_expansion(document: Any, location: str) -> None:
    """Refuse a document that holds more than :data:`MAX_DOCUMENT_NODES` values once every
    YAML alias is expanded (walked without recursion; stops as soon as it is past).

    Raises:
        SpecError: the document expands past the bound.
    """
    pending, seen = [document], 0
    while pending:
        node = pending.pop()
        seen += 1
        if seen > MAX_DOCUMENT_NODES:
            raise SpecError(location, "", f"expands to more than {MAX_DOCUMENT_NODES} values once its YAML "
                                          "aliases are expanded; write the repeated parts out or use $ref")
        if isinstance(node, Mapping):
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)


def pointer_of(parts: list[str]) -> str:
    """``["channels", "a/b"]`` -> ``#/channels/a~1b`` (RFC 6901 escaping)."""
    return "#/" + "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts) if parts else "#"


class Documents:
    """The spec's root document and the files its references reach, each parsed once."""

    def __init__(self, root: Any, location: str, folder: Path | None) -> None:
        self.location = location
        self.folder = folder.resolve() if folder is not None else None
        self._docs: dict[str, Any] = {location: root}

    @property
    def root(self) -> Any:
        return self._docs[self.location]

    @classmethod
    def load(cls, spec: str | os.PathLike[str] | Mapping[str, Any]) -> Documents:
        if isinstance(spec, Mapping):
            check_expansion(spec, INLINE)
            return cls(dict(spec), INLINE, None)
        path = Path(spec)
        return cls(read_document(path), str(path), path.parent)

    def resolve(self, ref: str, document: str, where: str) -> tuple[Any, str, str]:
        """The node ``ref`` points at, the document holding it, and its pointer there.

        Raises:
            SpecError: the reference is malformed, leaves the spec's folder, or points nowhere.
        """
        file_part, _, fragment = ref.partition("#")
        target_doc = document
        if file_part:
            target_doc = self._file(file_part, document, where)
        node = self._docs[target_doc]
        parts = [unquote(p).replace("~1", "/").replace("~0", "~") for p in fragment.split("/")[1:]]
        if fragment and not fragment.startswith("/"):
            raise SpecError(document, where, f"$ref {ref!r} is not a JSON pointer (#/...)")
        for part in parts:
            if isinstance(node, Mapping) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise SpecError(document, where, f"$ref {ref!r} points at nothing ({part!r} is missing)")
        return node, target_doc, pointer_of(parts)

    def _file(self, file_part: str, document: str, where: str) -> str:
        if "://" in file_part:
            raise SpecError(document, where, f"$ref {file_part!r} is a URL; only files beside the spec are read")
        if self.folder is None or document == INLINE:
            raise SpecError(document, where, f"$ref {file_part!r} names a file, but the spec was given as a mapping")
        base = Path(document).resolve().parent
        path = (base / file_part).resolve()
        if not path.is_relative_to(self.folder):
            raise SpecError(document, where, f"$ref {file_part!r} leaves the spec's folder")
        key = str(path)
        if key not in self._docs:
            self._docs[key] = read_document(path)
        return key

    def deref(self, node: Any, document: str, where: str, *, limit: int = 32) -> tuple[Any, str, str]:
        """Follow ``$ref`` chains (not into schemas) until a plain node; detects loops."""
        seen = 0
        while isinstance(node, Mapping) and isinstance(node.get("$ref"), str):
            seen += 1
            if seen > limit:
                raise SpecError(document, where, "$ref chain loops or is too long")
            node, document, where = self.resolve(node["$ref"], document, where)
        return node, document, where
