"""Spec validation: every problem prance's openapi-spec-validator backend sees, and what
the driver's loader does about each (``mcs rest check SPEC``, ``validate_spec=True``).

prance's :class:`~prance.BaseParser` checks that the document is a mapping with a version
its backend supports, then hands it to openapi-spec-validator, which stops at the first
error. :class:`_CollectingParser` keeps prance's checks and lets the backend report every
error instead. External references go through :meth:`Spec.external_document`, so the same
rule as the loader's holds: only the spec's own folder, unless ``allow_external_refs``
says more. A reference that does not resolve would stop the backend; it is reported from
the loader's own resolver, and validation goes on around it.

Each problem carries its JSON pointer and one of four actions of the loader:

* ``refuse``: the loader stops at this operation (or the whole spec), naming the place;
* ``skip the operation``: with ``invalid_operations="skip"``, that operation is left out;
* ``coerce``: the operation is offered, the part is read as it stands (a type, a default
  or a missing field the call does not need);
* ``ignore``: the part is not read to build tools (``info``, ``tags``, examples...).

Validation costs seconds on large specs (docs/rest.md has the figures); it is off by default.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson

from mcs.errors import MissingDependencyError
from mcs_rest._operations import METHODS, Selection, build_operations
from mcs_rest._schema import SchemaConverter
from mcs_rest._spec import Spec, SpecError

INSTALL = "pip install 'mcs-framework-rest[validation]'"
InvalidOperations = Literal["refuse", "skip"]
_MESSAGE_CHARS = 300
# Top-level parts the loader never reads to build or call tools.
_UNREAD = frozenset({"info", "tags", "externalDocs", "webhooks", "x-tagGroups"})


@dataclass(frozen=True, slots=True)
class SpecProblem:
    """One problem of a spec: where (a JSON pointer), what, and what the loader does about it."""

    pointer: str
    message: str
    action: Literal["refuse", "skip the operation", "coerce", "ignore"]
    detail: str

    def __str__(self) -> str:
        return f"{self.pointer or '/'}: {self.message}\n    mcs-rest: {self.action}: {self.detail}"


@dataclass
class SpecReport:
    """The problems of one spec, and how many operations the loader builds from it."""

    location: str
    validator: str
    problems: list[SpecProblem] = field(default_factory=list)
    operations: int = 0
    refused: bool = False

    @property
    def ok(self) -> bool:
        return not self.problems

    def render(self, limit: int | None = None) -> str:
        """The report as text: a headline, then each problem (the first ``limit`` of them)."""
        count = len(self.problems)
        head = f"{self.location}: {count or 'no'} problem{'' if count == 1 else 's'} ({self.validator})"
        shown = self.problems if limit is None else self.problems[:limit]
        lines = [head, *map(str, shown)]
        if len(shown) < count:
            lines.append(f"... and {count - len(shown)} more (mcs rest check lists them all)")
        outcome = (
            "mcs-rest refuses this spec" if self.refused
            else f"mcs-rest builds {self.operations} operation{'' if self.operations == 1 else 's'} from it"
        )
        lines.append(outcome)
        return "\n".join(lines)


def _libraries() -> tuple[Any, Any]:
    try:
        import openapi_spec_validator
        import prance  # type: ignore[import-untyped]
    except ImportError:
        raise MissingDependencyError(
            f"spec validation needs prance and openapi-spec-validator: {INSTALL}", install=INSTALL,
        ) from None
    return prance, openapi_spec_validator


def _version(name: str) -> str:
    from importlib import metadata  # costly to import; only a report needs it

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "?"


def pointer(parts: Any) -> str:
    """A JSON pointer (RFC 6901) from path parts."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _message(error: Any) -> tuple[str, list[Any]]:
    """The most telling message of a validator error and the path it is at."""
    from jsonschema.exceptions import best_match  # type: ignore[import-untyped]

    chosen = error
    if getattr(error, "context", None):
        with contextlib.suppress(Exception):
            chosen = best_match(error.context) or error
    text = str(getattr(chosen, "message", chosen)).split("\n", 1)[0].strip()
    if text[:1] in "{[":  # the validator quotes the whole offending value first: name it instead
        with contextlib.suppress(ValueError):
            value, end = json.JSONDecoder().raw_decode(text)
            text = ("this object" if isinstance(value, dict) else "this list") + text[end:]
    if len(text) > _MESSAGE_CHARS:
        text = text[: _MESSAGE_CHARS - 3] + "..."
    path = list(getattr(error, "absolute_path", None) or [])
    if chosen is not error:
        path += list(getattr(chosen, "path", None) or [])
    return text, path


def _refs(node: Any, parts: list[Any]) -> Iterator[tuple[list[Any], str]]:
    """Every ``$ref`` string in ``node`` with the path of the object holding it."""
    if isinstance(node, Mapping):
        ref = node.get("$ref")
        if isinstance(ref, str):
            yield parts, ref
        for key, value in node.items():
            if isinstance(value, Mapping | list):
                yield from _refs(value, [*parts, key])
    elif isinstance(node, list):
        for index, value in enumerate(node):
            if isinstance(value, Mapping | list):
                yield from _refs(value, [*parts, index])


def _unresolvable(spec: Spec) -> dict[str, str]:
    """Pointer -> why, for each ``$ref`` of the root document the loader cannot follow."""
    verdicts: dict[str, str | None] = {}
    bad: dict[str, str] = {}
    for parts, ref in _refs(spec.root, []):
        if ref not in verdicts:
            try:
                spec.resolve(ref, spec.root_key, "check")
                verdicts[ref] = None
            except SpecError as exc:
                verdicts[ref] = str(exc).split(": check: ", 1)[-1]
        why = verdicts[ref]
        if why is not None:
            bad[pointer(parts)] = why
    return bad


def _without(document: Any, pointers: list[str]) -> Any:
    """``document`` (a private copy) with the objects at ``pointers`` replaced by ``{}``."""
    for where in pointers:
        parts = [p.replace("~1", "/").replace("~0", "~") for p in where.split("/")[1:]]
        if not parts:
            continue
        node = document
        for part in parts[:-1]:
            node = node[int(part)] if isinstance(node, list) else node[part]
        last = parts[-1]
        if isinstance(node, list):
            node[int(last)] = {}
        else:
            node[last] = {}
    return document


def _backend_errors(spec: Spec, document: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(pointer, message) for each error prance's openapi-spec-validator backend finds."""
    prance, _ = _libraries()
    from openapi_spec_validator.shortcuts import get_validator_cls

    def handler(uri: str) -> Any:
        return orjson.loads(orjson.dumps(spec.external_document(uri), option=orjson.OPT_NON_STR_KEYS))

    handlers = {"file": handler, "http": handler, "https": handler, "<all_urls>": handler}
    found: list[tuple[str, str]] = []
    located: set[int] = set()

    def locating(keyword: type[Any]) -> type[Any]:
        """A keyword validator whose errors carry the place it was checking, and that reports
        a part it cannot read (a parameter without ``in``) instead of stopping the walk."""

        def call(self: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
            from jsonschema.exceptions import ValidationError
            from jsonschema_path import SchemaPath

            place = next((a for a in args if isinstance(a, SchemaPath)), None)
            parts = [str(p) for p in place.parts] if place is not None else []
            try:
                for error in keyword.__call__(self, *args, **kwargs):
                    if id(error) not in located:
                        located.add(id(error))
                        error.path.extendleft(reversed(parts))
                    yield error
            except Exception as exc:
                error = ValidationError(f"the validator could not read this part ({type(exc).__name__}: {exc})")
                error.path.extend(parts)
                located.add(id(error))
                yield error

        return type(keyword.__name__, (keyword,), {"__call__": call})

    base_parser: Any = prance.BaseParser

    class _CollectingParser(base_parser):  # type: ignore[misc]
        """prance's validating parser, its backend reporting every error rather than the first."""

        def _validate_openapi_spec_validator(self, spec_version: Any) -> None:
            base = get_validator_cls(self.specification)
            keywords = {name: locating(kind) for name, kind in base.keyword_validators.items()}
            restricted = type(base.__name__, (base,), {"resolver_handlers": handlers, "keyword_validators": keywords})
            url = self.url.geturl() if hasattr(self.url, "geturl") else str(self.url)
            uri = "" if url == prance._PLACEHOLDER_URL else url
            try:
                for error in restricted(self.specification, base_uri=uri).iter_errors():
                    text, path = _message(error)
                    found.append((pointer(path), text))
            except Exception as exc:  # a reference inside another document broke the walk
                found.append(("", f"validation stopped: {type(exc).__name__}: {str(exc)[:_MESSAGE_CHARS]}"))

    url = spec.root_key if spec.location != "<dict>" else None
    parser = _CollectingParser(url=url, spec_string=None if url else "{}", lazy=True,
                               backend="openapi-spec-validator", strict=False)
    parser.specification = document
    try:
        parser._validate()  # prance's own checks, then the backend (above)
    except prance.ValidationError as exc:
        found.append(("", str(exc).split("\n", 1)[0]))
    yield from found


def _operation_of(parts: list[str]) -> tuple[str, str | None] | None:
    """``(path, method)`` (method ``None`` for path-level parts) when ``parts`` lie in ``paths``."""
    if len(parts) < 2 or parts[0] != "paths":
        return None
    method = parts[2] if len(parts) > 2 and parts[2] in METHODS else None
    return parts[1], method


# What the loader does with an operation that is offered despite a problem, by the problem's words.
_COERCIONS = (
    ("is not unique", "both operations are offered; the later tool name gets a stable hash suffix"),
    ('"responses" is a required property', "the operation is offered; responses matter only to validate_responses"),
    ("for not nullable", "null is accepted where the spec says nullable or x-nullable"),
)


def _classify(
    where: str, text: str, failed: Mapping[tuple[str, str], str], refused: str | None, skip: bool,
) -> tuple[Literal["refuse", "skip the operation", "coerce", "ignore"], str]:
    parts = [p.replace("~1", "/").replace("~0", "~") for p in where.split("/")[1:]]
    located = _operation_of(parts)
    if located is not None:
        path, method = located
        reasons = [why for (p, m), why in failed.items() if p == path and (method is None or m == method)]
        if reasons:
            if skip:
                return "skip the operation", f"left out: {reasons[0]}"
            return "refuse", f"{reasons[0]} (invalid_operations='skip' would leave the operation out)"
        specific = next((detail for words, detail in _COERCIONS if words in text), None)
        return "coerce", specific or "the operation is offered; this part is read as it stands"
    if refused is not None:
        return "refuse", refused
    if parts and (parts[0] in _UNREAD or parts[0].startswith("x-")):
        return "ignore", "not read to build or call tools"
    return "coerce", "read as it stands where an operation uses it"


def check_spec(spec: Spec, invalid_operations: InvalidOperations = "refuse") -> SpecReport:
    """Validate ``spec`` with prance (openapi-spec-validator) and say what the loader does.

    Raises:
        MissingDependencyError: prance or openapi-spec-validator is not installed.
    """
    _libraries()
    report = SpecReport(
        spec.location,
        f"prance {_version('prance')}, openapi-spec-validator {_version('openapi-spec-validator')}",
    )
    failed: dict[tuple[str, str], str] = {}
    refused: str | None = None
    try:
        report.operations = len(build_operations(spec, SchemaConverter(spec), Selection(), Selection(), failed))
    except SpecError as exc:
        refused = str(exc)
    prefix = f"{spec.location}: "
    failed = {key: why.removeprefix(prefix) for key, why in failed.items()}
    refused = refused.removeprefix(prefix) if refused is not None else None
    skip = invalid_operations == "skip"
    report.refused = refused is not None or (bool(failed) and not skip)
    bad = _unresolvable(spec)
    document = _without(orjson.loads(orjson.dumps(spec.root, option=orjson.OPT_NON_STR_KEYS)), list(bad))
    seen: set[tuple[str, str]] = set()
    entries = [(where, f"$ref does not resolve: {why}") for where, why in bad.items()]
    entries += [
        (where, text) for where, text in _backend_errors(spec, document)
        if not any(where == b or where.startswith(b + "/") for b in bad)
    ]
    for where, text in entries:
        # one unreadable part is reported where it was met, not again by each enclosing check
        if (where, text) in seen or any(text == t and w.startswith(where + "/") for w, t in seen):
            continue
        seen.add((where, text))
        action, detail = _classify(where, text, failed, refused, skip)
        report.problems.append(SpecProblem(where, text, action, detail))
    if refused is not None and not any(p.action == "refuse" for p in report.problems):
        report.problems.append(SpecProblem("", "the loader cannot read the spec", "refuse", refused))
    return report


__all__ = ["INSTALL", "SpecProblem", "SpecReport", "check_spec"]
