"""Does an answer keep the API's own contract? Response validation with openapi-core.

With ``validate_responses=True`` each 2xx answer is checked against the operation's
response in the spec: a documented status, a declared media type, the headers (required,
typed), and the body against its schema, formats included, after openapi-core has
deserialised it as the media type says. Fields the spec does not describe are allowed
(real APIs add fields faster than their specs), as the schemas say unless they forbid them;
but the note names them (:mod:`mcs_rest._promised`), since the spec promises nothing of
them. Only the parts that break the spec make ``strict_responses=True`` refuse the answer.

openapi-core reads the spec lazily through jsonschema-path: only the answered operation's
response is resolved, once per (operation, status). The operation is known, so it is
looked up directly (:class:`_KnownOperation`) rather than by matching the URL against
every path, and the spec itself is not validated again (``mcs rest check`` does that).

openapi-core reads OpenAPI 3.x only; a Swagger 2.0 spec's JSON bodies are checked against
the converted response schema instead (:meth:`SwaggerBodies.violations`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from mcs.errors import MissingDependencyError
from mcs_rest._check import INSTALL, pointer
from mcs_rest._operations import Operation
from mcs_rest._promised import unpromised
from mcs_rest._schema import SchemaConverter
from mcs_rest._spec import Spec

if TYPE_CHECKING:
    from mcs_rest._transport import Response

_MAX_VIOLATIONS = 5
_MAX_CHARS = 200


@dataclass(slots=True)
class _Asked:
    """What openapi-core needs of the request to find the operation: its path template."""

    path_pattern: str
    method: str
    host_url: str = ""
    content_type: str = ""
    body: bytes | None = None
    parameters: Any = None

    @property
    def path(self) -> str:
        return self.path_pattern


@dataclass(frozen=True, slots=True)
class _Answer:
    """A decoded :class:`~mcs_rest._transport.Response` as openapi-core's Response protocol."""

    status_code: int
    content_type: str
    headers: Mapping[str, str]
    data: bytes | None


def _body_bytes(value: Any) -> bytes | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    except orjson.JSONEncodeError:  # an integer beyond 64 bits, which orjson does not write
        return json.dumps(value).encode("utf-8")


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_CHARS else text[: _MAX_CHARS - 3] + "..."


def _schema_errors(exc: BaseException) -> Iterator[str]:
    """The schema errors under an openapi-core error, each with the JSON pointer it is at."""
    seen: set[int] = set()
    node: BaseException | None = exc
    while node is not None and id(node) not in seen:
        seen.add(id(node))
        errors = getattr(node, "schema_errors", None)
        if errors:
            for error in errors:
                where = pointer(getattr(error, "absolute_path", None) or getattr(error, "path", None) or [])
                yield f"{where or '/'}: {_short(str(getattr(error, 'message', error)))}"
            return
        node = node.__cause__ or node.__context__
    yield _short(str(exc.__cause__ or exc))


def describe(exc: BaseException) -> list[str]:
    """Readable lines for one openapi-core error (a status, a media type, a header, the body)."""
    from openapi_core.templating.media_types.exceptions import MediaTypeNotFound
    from openapi_core.templating.responses.exceptions import ResponseNotFound
    from openapi_core.validation.response.exceptions import HeaderValidationError, MissingData

    cause = exc.__cause__
    if isinstance(cause, MediaTypeNotFound):
        exc = cause
    if isinstance(exc, ResponseNotFound):
        return [f"status {exc.http_status} is not one the spec documents for this operation"]
    if isinstance(exc, MissingData):
        return ["the body is empty, but the spec promises one"]
    if isinstance(exc, MediaTypeNotFound):
        declared = ", ".join(exc.availableMimetypes)
        return [f"media type {exc.mimetype.split(';')[0]!r} is not one the spec declares ({declared})"]
    if isinstance(exc, HeaderValidationError):
        return [f"header {exc.name}: {line}" for line in _schema_errors(exc)]
    return [f"body {line}" for line in _schema_errors(exc)]


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a check of one answer found: where it breaks the spec, and fields it does not promise."""

    violations: list[str]
    unpromised: list[str]


def _response_of(op: Operation, status: int) -> Any:
    """The operation's response object for ``status`` (exact, ``2XX``, then ``default``)."""
    responses = op.raw.get("responses") or {}
    for key in (str(status), f"{str(status)[0]}XX", f"{str(status)[0]}xx", "default"):
        picked = next((responses[c] for c in responses if str(c) == key), None)
        if picked is not None:
            return picked
    return None


def _unpromised_fields(spec: Spec, op: Operation, response: Response) -> list[str]:
    """Pointers of the fields of a JSON answer that the operation's response schema does not declare."""
    if not isinstance(response.value, dict | list):
        return []
    picked = _response_of(op, response.status)
    if picked is None:
        return []
    try:
        picked, document = spec.deref(picked, op.document, f"{op.where}.responses")
    except Exception:
        return []
    if not isinstance(picked, Mapping):
        return []
    if spec.is_swagger:
        schema = picked.get("schema")
    else:
        content = picked.get("content") or {}
        media = response.content_type.split(";", 1)[0].strip().lower()
        chosen = content.get(media) if isinstance(content, Mapping) else None
        if chosen is None and isinstance(content, Mapping):
            chosen = next((v for k, v in content.items() if "json" in str(k).lower() or str(k) == "*/*"), None)
        schema = chosen.get("schema") if isinstance(chosen, Mapping) else None
    if schema is None:
        return []
    return unpromised(spec, schema, document, response.value, _MAX_VIOLATIONS)


class ResponseContract:
    """openapi-core's response validator for one OpenAPI 3.x spec."""

    def __init__(self, spec: Spec) -> None:
        try:
            from jsonschema_path import SchemaPath
            from openapi_core import V30ResponseValidator, V31ResponseValidator
            from openapi_core.templating.datatypes import TemplateResult
            from openapi_core.templating.paths.datatypes import Path
            from openapi_core.templating.paths.finders import APICallPathFinder
            from openapi_core.templating.paths.iterators import SimpleServersIterator
        except ImportError:
            raise MissingDependencyError(
                f"validate_responses on an OpenAPI 3 spec needs openapi-core: {INSTALL}", install=INSTALL,
            ) from None

        def known_path(name: str, spec: SchemaPath, base_url: str | None = None) -> Iterator[Path]:
            yield Path(spec / "paths" / name, TemplateResult(name, {}))

        class _KnownOperation(APICallPathFinder):
            """The operation is known: look its path up by name, accept any server."""

            paths_iterator = staticmethod(known_path)
            servers_iterator = SimpleServersIterator()

        def handler(uri: str) -> Any:
            return orjson.loads(orjson.dumps(spec.external_document(uri), option=orjson.OPT_NON_STR_KEYS))

        handlers = {"file": handler, "http": handler, "https": handler, "<all_urls>": handler}
        document = orjson.loads(orjson.dumps(spec.root, option=orjson.OPT_NON_STR_KEYS))
        base_uri = "" if spec.location == "<dict>" else _uri(spec)
        schema = SchemaPath.from_dict(document, base_uri=base_uri, handlers=handlers)
        kind = V31ResponseValidator if spec.version == "3.1" else V30ResponseValidator
        self._validator = kind(schema, path_finder_cls=_KnownOperation)
        self._spec = spec

    def check(self, op: Operation, response: Response) -> Verdict:
        """What ``response`` breaks of the spec for ``op``, and the fields it does not promise."""
        return Verdict(self.violations(op, response), _unpromised_fields(self._spec, op, response))

    def violations(self, op: Operation, response: Response) -> list[str]:
        """Where ``response`` breaks what the spec promises for ``op`` (empty: it keeps it)."""
        answer = _Answer(
            response.status, response.content_type.lower(), response.headers, _body_bytes(response.value),
        )
        found: list[str] = []
        for error in self._validator.iter_errors(_Asked(op.path, op.method.lower()), answer):
            found.extend(describe(error))
            if len(found) >= _MAX_VIOLATIONS:
                break
        return found[:_MAX_VIOLATIONS]


def _uri(spec: Spec) -> str:
    from pathlib import Path

    if spec.root_key.startswith(("http://", "https://")):
        return spec.root_key
    return Path(spec.root_key).as_uri()


@dataclass
class SwaggerBodies:
    """Swagger 2.0 (which openapi-core does not read): JSON bodies against the converted schema."""

    spec: Spec
    converter: SchemaConverter
    _validators: dict[tuple[str, int], Any] = field(default_factory=dict)

    def check(self, op: Operation, response: Response) -> Verdict:
        """What ``response`` breaks of the spec for ``op``, and the fields it does not promise."""
        return Verdict(self.violations(op, response), _unpromised_fields(self.spec, op, response))

    def violations(self, op: Operation, response: Response) -> list[str]:
        if isinstance(response.value, bytes | str) or response.value is None:
            return []
        key = (op.name, response.status)
        if key not in self._validators:
            self._validators[key] = self._compile(op, response.status)
        validator = self._validators[key]
        if validator is None:
            return []
        return [
            f"body {pointer(list(e.instance_path)) or '/'}: {_short(e.message)}"
            for _, e in zip(range(_MAX_VIOLATIONS), validator.iter_errors(response.value), strict=False)
        ]

    def _compile(self, op: Operation, status: int) -> Any:
        import jsonschema_rs

        picked = _response_of(op, status)
        if picked is None:
            return None
        where = f"{op.where}.responses.{status}"
        picked, document = self.spec.deref(picked, op.document, where)
        raw = picked.get("schema") if isinstance(picked, Mapping) else None
        if raw is None:
            return None
        schema, needs = self.converter.convert(raw, document, where)
        if not isinstance(schema, dict):
            return None
        if needs:
            schema = {**schema, "$defs": self.converter.defs_for(needs)}
        try:
            return jsonschema_rs.validator_for(schema)
        except Exception:
            return None


def note(violations: Sequence[str], unpromised_fields: Sequence[str] = ()) -> str:
    """The note a model reads beside a result whose answer broke the API's contract, or
    carried fields the spec does not promise."""
    parts: list[str] = []
    if violations:
        parts.append(
            "The API's answer does not match its own spec, so do not rely on the parts named here "
            "(a field the spec does not promise may be missing or mean something else next time): "
            + "; ".join(violations)
        )
    if unpromised_fields:
        parts.append(
            "The answer has fields its spec does not promise; do not rely on them (they may be "
            "missing or mean something else next time): " + ", ".join(unpromised_fields)
        )
    return " ".join(parts)


__all__ = ["ResponseContract", "SwaggerBodies", "Verdict", "describe", "note"]
