"""The operation model: every OpenAPI operation as one LLM tool with a flat input schema.

:func:`build_operations` walks ``paths`` once and returns one :class:`Operation` per
(kept) operation. An operation knows where each argument goes (:class:`Param`: path,
query, header, cookie, or a body field) and how its body is encoded
(:class:`Body`), so the tool the LLM sees can be one flat object while the request keeps
the spec's locations. Names that clash across locations get a location suffix
(``id_query``); the wire name is kept.
"""

from __future__ import annotations

import fnmatch
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from mcs.tools import Tool, unique_tool_names, visible_text
from mcs_rest._schema import SchemaConverter, _merge_all_of
from mcs_rest._spec import Spec, SpecError
from mcs_rest._text import bounded, plain_text

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"})
_READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
Location = Literal["path", "query", "header", "cookie", "body"]
BodyKind = Literal["json", "form", "multipart", "text", "binary"]
# Headers the spec may not declare as parameters (OpenAPI 3.0, 4.7.12.1), and those the
# HTTP layer owns: the ones that frame the message or the connection (RFC 9110, 7.6.1;
# Transfer-Encoding beside the Content-Length sent would desync the connection, request
# smuggling) and Host, which picks the virtual host. The model never sets them.
_IGNORED_HEADERS = frozenset({
    "accept", "content-type", "authorization",
    "host", "content-length", "transfer-encoding", "te", "trailer", "connection", "keep-alive", "upgrade",
    "proxy-connection", "proxy-authorization",
})
_VERSION_SEGMENT = re.compile(r"^(v\d+[a-z0-9.]*|api|rest)$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Param:
    """One argument of a tool and where it goes on the wire.

    ``arg`` is the name in the input schema; ``name`` the wire name (header, query key,
    path variable, or body field). For ``location == "body"`` and a flattened body,
    ``name`` is the body field; for a whole body it is ``""``.
    """

    arg: str
    name: str
    location: Location
    style: str = ""
    explode: bool = True
    json_content: bool = False
    binary: bool = False


@dataclass(frozen=True, slots=True)
class Body:
    """How a request body is sent: ``media_type``, ``kind`` and whether fields are flattened."""

    media_type: str
    kind: BodyKind
    flattened: bool
    required: bool
    deep_fields: frozenset[str] = frozenset()  # form fields with `style: deepObject` (a[]=, a[b]=)


@dataclass(slots=True)
class Operation:
    """One operation of the spec, ready to become a tool and to be called."""

    name: str
    method: str
    path: str
    operation_id: str | None
    summary: str
    description: str
    tags: tuple[str, ...]
    group: str
    params: tuple[Param, ...]
    body: Body | None
    security: list[Mapping[str, Any]] | None
    servers: list[Mapping[str, Any]] | None
    raw: Mapping[str, Any]
    document: str
    where: str
    input_schema: dict[str, Any] = field(default_factory=dict)

    @property
    def idempotent(self) -> bool:
        return self.method in IDEMPOTENT

    def tool(self, max_description_chars: int | None = None) -> Tool:
        """The tool the LLM sees. Its description is plain text (CommonMark and HTML
        stripped), cut at ``max_description_chars`` with the whole text kept in
        ``meta["full_description"]`` (what ``describe_tool`` answers)."""
        # Every other method writes, and nothing in a spec proves a write only adds: said
        # explicitly, so a client reading the hints never has to know MCP's defaults.
        reads = self.method in _READ_METHODS
        annotations: dict[str, Any] = {"readOnlyHint": reads}
        if not reads:
            annotations["destructiveHint"] = True
        if self.method in IDEMPOTENT:
            annotations["idempotentHint"] = True
        summary = plain_text(self.summary)
        full = plain_text(self.description) or summary or f"{self.method} {self.path}"
        description = full if max_description_chars is None else bounded(full, max_description_chars)
        title = summary if self.description and summary and summary != full else None
        meta: dict[str, Any] = {
            "original_name": self.operation_id or self.name,
            "method": self.method,
            "path": self.path,
            "group": self.group,
            "tags": self.tags,
        }
        if description != full:
            meta["full_description"] = full
        return Tool(
            name=self.name,
            title=title,
            description=description,
            input_schema=self.input_schema,
            annotations=annotations,
            meta=meta,
        )


@dataclass(frozen=True)
class Selection:
    """Which operations to keep. Each field is a list; empty means "no constraint".

    An operation is kept when it matches every non-empty ``include`` field (any entry of
    a field) and no entry of any ``exclude`` field. Paths are glob patterns
    (``/repos/*``); methods are case-insensitive; operations are operationIds.
    """

    tags: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()
    operations: tuple[str, ...] = ()

    @classmethod
    def from_option(cls, value: Mapping[str, Any] | None, option: str) -> Selection:
        if value is None:
            return cls()
        if not isinstance(value, Mapping):
            raise SpecError(f"{option} must be a mapping of tags/paths/methods/operations to lists")
        unknown = set(value) - {"tags", "paths", "methods", "operations"}
        if unknown:
            raise SpecError(f"{option} has unknown key(s) {sorted(unknown)}; use tags, paths, methods, operations")

        def items(key: str) -> tuple[str, ...]:
            raw = value.get(key) or ()
            return (raw,) if isinstance(raw, str) else tuple(str(v) for v in raw)

        return cls(items("tags"), items("paths"), tuple(m.upper() for m in items("methods")), items("operations"))

    @property
    def empty(self) -> bool:
        return not (self.tags or self.paths or self.methods or self.operations)

    def matched_entries(self, method: str, path: str, tags: Sequence[str], op_id: str | None) -> set[str]:
        """The entries (``"tags: pets"``...) that this operation matches."""
        hits = {f"tags: {t}" for t in self.tags if t in tags}
        hits |= {f"paths: {p}" for p in self.paths if fnmatch.fnmatchcase(path, p)}
        hits |= {f"methods: {m}" for m in self.methods if m == method}
        hits |= {f"operations: {o}" for o in self.operations if o == op_id}
        return hits

    def entries(self) -> list[str]:
        """Every entry, as :meth:`matched_entries` names them."""
        return [
            *(f"tags: {t}" for t in self.tags), *(f"paths: {p}" for p in self.paths),
            *(f"methods: {m}" for m in self.methods), *(f"operations: {o}" for o in self.operations),
        ]

    def checks(self, method: str, path: str, tags: Sequence[str], op_id: str | None) -> list[bool]:
        out: list[bool] = []
        if self.tags:
            out.append(any(t in self.tags for t in tags))
        if self.paths:
            out.append(any(fnmatch.fnmatchcase(path, p) for p in self.paths))
        if self.methods:
            out.append(method in self.methods)
        if self.operations:
            out.append(op_id in self.operations if op_id else False)
        return out


def _keep(include: Selection, exclude: Selection, method: str, path: str, tags: Sequence[str], op_id: str | None) -> bool:
    if not include.empty and not all(include.checks(method, path, tags, op_id)):
        return False
    return exclude.empty or not any(exclude.checks(method, path, tags, op_id))


def _group(tags: Sequence[str], path: str) -> str:
    if tags:
        return str(tags[0])
    for segment in path.strip("/").split("/"):
        if segment and not segment.startswith("{") and not _VERSION_SEGMENT.match(segment):
            return segment
    return "default"


def _text(value: Any) -> str:
    """A spec's text field, stripped and without invisible format characters."""
    return visible_text(value).strip() if isinstance(value, str) else ""


class _Builder:
    """Builds the operations of one spec; holds the converter shared by all of them."""

    def __init__(self, spec: Spec, converter: SchemaConverter) -> None:
        self.spec = spec
        self.convert = converter
        root = spec.root
        self.global_security = root.get("security")
        self.global_consumes: list[str] = list(root.get("consumes") or []) if spec.is_swagger else []

    def operations(
        self, include: Selection, exclude: Selection, failed: dict[tuple[str, str], str] | None = None,
    ) -> list[Operation]:
        spec = self.spec
        found: list[tuple[str, str, Mapping[str, Any], Mapping[str, Any], str, str]] = []
        matched: set[str] = set()
        paths = spec.root.get("paths") or {}
        for path, item in paths.items():
            path = str(path)
            where = f"paths.{path}"
            item, document = spec.deref(item, spec.root_key, where)
            if not isinstance(item, Mapping):
                raise SpecError(f"{spec.location}: {where}: a path item must be a mapping")
            for method in METHODS:
                op = item.get(method)
                if op is None:
                    continue
                if not isinstance(op, Mapping):
                    raise SpecError(f"{spec.location}: {where}.{method}: an operation must be a mapping")
                tags = [str(t) for t in (op.get("tags") or ())]
                op_id = op.get("operationId")
                op_id = str(op_id) if op_id not in (None, "") else None
                matched |= include.matched_entries(method.upper(), path, tags, op_id)
                if not _keep(include, exclude, method.upper(), path, tags, op_id):
                    continue
                found.append((path, method, item, op, document, f"{where}.{method}"))
        unmatched = [entry for entry in include.entries() if entry not in matched]
        if unmatched:  # a misspelt operation or tag: say so rather than silently drop it
            warnings.warn(
                f"{spec.location}: the include filter's {'; '.join(unmatched)} "
                f"{'matches' if len(unmatched) == 1 else 'match'} no operation of the spec",
                UserWarning,
                stacklevel=4,
            )
        names = unique_tool_names(
            (str(op.get("operationId")) if op.get("operationId") else f"{method}{path}")
            for path, method, _, op, _, _ in found
        )
        built: list[Operation] = []
        for name, (path, method, item, op, document, where) in zip(names, found, strict=True):
            try:
                built.append(self._operation(name, path, method, item, op, document, where))
            except SpecError as exc:
                if failed is None:
                    raise
                failed[(path, method)] = str(exc)
        return built

    # ------------------------------------------------------------------ one operation

    def _operation(
        self, name: str, path: str, method: str, item: Mapping[str, Any], op: Mapping[str, Any],
        document: str, where: str,
    ) -> Operation:
        if not path.startswith("/"):
            # Joined to the server URL, the rest of such a path (and the values in it)
            # would continue the URL's host or port: "{id}" after "https://api.example.com".
            raise SpecError(
                f"{self.spec.location}: {where}: the path must begin with '/', as OpenAPI requires; "
                "without it a path value would continue the server URL's host or port"
            )
        raw_params = self._parameters(item, op, document, where)
        tags = tuple(str(t) for t in (op.get("tags") or ()))
        properties: dict[str, Any] = {}
        required: list[str] = []
        entries: list[tuple[str, str, dict[str, Any], bool, dict[str, Any]]] = []  # loc, name, schema, required, extra
        swagger_form: list[tuple[Mapping[str, Any], str, str]] = []
        body: Body | None = None
        body_schema: Any = None
        body_needs: frozenset[str] = frozenset()
        needs: set[str] = set()
        for param, pdoc, pwhere in raw_params:
            location = param.get("in")
            pname = str(param.get("name", ""))
            if location == "body":
                body_schema, body_needs = self.convert.unwrap(*self.convert.convert(param.get("schema", {}), pdoc, f"{pwhere}.schema"))
                consumes = list(op.get("consumes") or self.global_consumes or ["application/json"])
                media = next((c for c in consumes if _is_json(c)), consumes[0])
                body = Body(media, _kind(media), False, bool(param.get("required")))
                continue
            if location == "formData":
                swagger_form.append((param, pdoc, pwhere))
                continue
            if location not in ("path", "query", "header", "cookie"):
                raise SpecError(f"{self.spec.location}: {pwhere}: parameter 'in' must be path, query, header, cookie, body or formData, got {location!r}")
            if location == "header" and pname.lower() in _IGNORED_HEADERS:
                continue
            schema, json_content, pneeds = self._param_schema(param, pdoc, pwhere)
            needs |= pneeds
            extra = {
                "style": str(param.get("style") or _default_style(location, param)),
                "explode": _explode(param, location),
                "json_content": json_content,
            }
            entries.append((location, pname, schema, bool(param.get("required")) or location == "path", extra))
        if swagger_form:
            consumes = list(op.get("consumes") or self.global_consumes or [])
            has_file = any(p.get("type") == "file" for p, _, _ in swagger_form)
            media = "multipart/form-data" if has_file or "multipart/form-data" in consumes else "application/x-www-form-urlencoded"
            props: dict[str, Any] = {}
            req: list[str] = []
            for param, pdoc, pwhere in swagger_form:
                schema, _, pneeds = self._param_schema(param, pdoc, pwhere)
                needs |= pneeds
                props[str(param.get("name"))] = schema
                if param.get("required"):
                    req.append(str(param.get("name")))
            body_schema = {"type": "object", "properties": props, **({"required": req} if req else {})}
            body = Body(media, _kind(media), False, bool(req))
        request_body = op.get("requestBody")
        if request_body is not None and not self.spec.is_swagger:
            rb_where = f"{where}.requestBody"
            request_body, rb_doc = self.spec.deref(request_body, document, rb_where)
            if isinstance(request_body, Mapping):
                content = request_body.get("content") or {}
                media = _pick_media(content)
                if media is not None:
                    media_obj = content.get(media) or {}
                    raw_schema = media_obj.get("schema", {}) if isinstance(media_obj, Mapping) else {}
                    body_schema, body_needs = self.convert.unwrap(
                        *self.convert.convert(raw_schema, rb_doc, f"{rb_where}.content.{media}.schema")
                    )
                    if isinstance(body_schema, dict) and request_body.get("description") and "description" not in body_schema:
                        body_schema = {**body_schema, "description": _text(request_body["description"])}
                    encoding = media_obj.get("encoding") if isinstance(media_obj, Mapping) else None
                    deep = frozenset(
                        str(k) for k, v in (encoding or {}).items()
                        if isinstance(v, Mapping) and v.get("style") == "deepObject"
                    )
                    media, kind = _raw_any(media, body_schema)
                    body = Body(media, kind, False, bool(request_body.get("required")), deep)
        needs |= body_needs

        # Flatten an object body into top-level arguments when that is unambiguous.
        body_fields: list[tuple[str, dict[str, Any], bool]] = []
        if body is not None:
            flat = _flattenable(_opened(body_schema, self.convert), body.kind)
            if flat is not None:
                field_props, field_required = flat
                for fname, fschema in field_props.items():
                    # A field the body schema requires is required of the call even when the spec
                    # forgot `requestBody.required` (common): dropping it would lose the flag.
                    body_fields.append((fname, fschema, fname in field_required))
                body = Body(body.media_type, body.kind, True, body.required, body.deep_fields)
            elif body.kind in ("text", "binary") and not body_schema:
                body_schema = {"type": "string"}

        # Names: clashes across locations get a location suffix; path parameters keep theirs.
        counts: dict[str, int] = {}
        for _loc, pname, *_ in entries:
            counts[pname] = counts.get(pname, 0) + 1
        for fname, *_ in body_fields:
            counts[fname] = counts.get(fname, 0) + 1
        if body is not None and not body.flattened:
            counts["body"] = counts.get("body", 0) + 1

        def arg_name(pname: str, loc: str) -> str:
            if counts.get(pname, 0) > 1 and loc != "path":
                return f"{pname}_{loc}"
            return pname

        params: list[Param] = []
        for loc, pname, schema, is_required, extra in entries:
            arg = arg_name(pname, loc)
            if arg in properties:
                continue  # a duplicate declaration in the spec; the first wins
            properties[arg] = schema
            if is_required:
                required.append(arg)
            params.append(Param(arg, pname, loc, extra["style"], extra["explode"], extra["json_content"]))  # type: ignore[arg-type]
        if body is not None:
            if body.flattened:
                for fname, fschema, is_required in body_fields:
                    arg = arg_name(fname, "body")
                    if arg in properties:
                        continue
                    properties[arg] = fschema
                    if is_required:
                        required.append(arg)
                    binary = isinstance(fschema, Mapping) and fschema.get("format") == "binary"
                    params.append(Param(arg, fname, "body", binary=binary))
            else:
                arg = arg_name("body", "body")
                properties[arg] = body_schema if isinstance(body_schema, Mapping | bool) else {}
                if body.required:
                    required.append(arg)
                params.append(Param(arg, "", "body"))

        schema_out: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            schema_out["required"] = required
        if needs:  # exact: merging and unwrapping may have dropped references
            used = self.convert.refs_in(properties)
            if used:
                schema_out["$defs"] = self.convert.defs_for(used)
        security = op.get("security", self.global_security)
        servers = op.get("servers") or item.get("servers") if not self.spec.is_swagger else None
        return Operation(
            name=name,
            method=method.upper(),
            path=path,
            operation_id=str(op["operationId"]) if op.get("operationId") else None,
            summary=_text(op.get("summary")),
            description=_text(op.get("description")),
            tags=tags,
            group=_group(tags, path),
            params=tuple(params),
            body=body,
            security=list(security) if isinstance(security, list) else None,
            servers=list(servers) if isinstance(servers, list) else None,
            raw=op,
            document=document,
            where=where,
            input_schema=schema_out,
        )

    def _parameters(
        self, item: Mapping[str, Any], op: Mapping[str, Any], document: str, where: str
    ) -> list[tuple[Mapping[str, Any], str, str]]:
        """Path-level then operation-level parameters; the operation's win by (name, in)."""
        merged: dict[tuple[str, str], tuple[Mapping[str, Any], str, str]] = {}
        for level, source in (("", item), ("", op)):
            raw = source.get("parameters") or []
            if not isinstance(raw, list):
                raise SpecError(f"{self.spec.location}: {where}: 'parameters' must be a list")
            for index, param in enumerate(raw):
                pwhere = f"{where}.parameters[{index}]{level}"
                resolved, pdoc = self.spec.deref(param, document, pwhere)
                if not isinstance(resolved, Mapping) or "in" not in resolved:
                    raise SpecError(f"{self.spec.location}: {pwhere}: a parameter needs 'name' and 'in'")
                merged[(str(resolved.get("name")), str(resolved["in"]))] = (resolved, pdoc, pwhere)
        return list(merged.values())

    def _param_schema(self, param: Mapping[str, Any], document: str, where: str) -> tuple[dict[str, Any], bool, frozenset[str]]:
        json_content = False
        if "schema" in param:
            raw = param["schema"]
        elif isinstance(param.get("content"), Mapping) and param["content"]:
            media = next(iter(param["content"]))
            raw = (param["content"][media] or {}).get("schema", {})
            json_content = _is_json(str(media))
        else:  # Swagger 2.0: the schema keywords live on the parameter itself
            raw = {k: v for k, v in param.items() if k not in ("name", "in", "required", "description")}
        schema, needs = self.convert.convert(raw, document, f"{where}.schema")
        if not isinstance(schema, dict):
            schema = {}
        description = _text(param.get("description"))
        if description and schema.get("description") != description:
            schema = {**schema, "description": description} if "$ref" not in schema else {"allOf": [schema], "description": description}
        if param.get("deprecated") is True:
            schema = {**schema, "deprecated": True}
        return schema, json_content, needs


def build_operations(
    spec: Spec, converter: SchemaConverter, include: Selection | None = None, exclude: Selection | None = None,
    failed: dict[tuple[str, str], str] | None = None,
) -> list[Operation]:
    """Every kept operation of ``spec``, in document order, with unique tool names.

    An operation that cannot be built raises :class:`SpecError`; when ``failed`` is given,
    it is left out instead and its ``(path, method)`` is recorded there with the reason.
    """
    return _Builder(spec, converter).operations(include or Selection(), exclude or Selection(), failed)


def _is_json(media: str) -> bool:
    base = media.split(";", 1)[0].strip().lower()
    return base == "application/json" or base.endswith("+json") or base == "*/*"


def _kind(media: str) -> BodyKind:
    base = media.split(";", 1)[0].strip().lower()
    if _is_json(base):
        return "json"
    if base == "application/x-www-form-urlencoded":
        return "form"
    if base.startswith("multipart/"):
        return "multipart"
    if base.startswith("text/") or base.endswith(("xml", "yaml")):
        return "text"
    return "binary"


_MEDIA_PREFERENCE = ("json", "form", "multipart", "text", "binary")


def _raw_any(media: str, schema: Any) -> tuple[str, BodyKind]:
    """``*/*`` whose schema is a string (GitHub's release asset upload: "the raw file data")
    is sent as it is, not as a JSON string; anything else keeps its media type's kind."""
    if media.split(";", 1)[0].strip() == "*/*" and isinstance(schema, Mapping) and schema.get("type") == "string":
        if schema.get("format") == "binary":
            return "application/octet-stream", "binary"
        return "text/plain", "text"
    return media, _kind(media)


def _pick_media(content: Mapping[str, Any]) -> str | None:
    if not isinstance(content, Mapping) or not content:
        return None
    ranked = sorted((str(m) for m in content), key=lambda m: _MEDIA_PREFERENCE.index(_kind(m)))
    return ranked[0]


def _opened(schema: Any, converter: SchemaConverter) -> Any:
    """A body that is a reference to a recursive type (``NewNote`` whose ``parent`` leads back
    to it), or an ``allOf`` of such references, opened one level so that its top-level
    properties can be flattened; the references inside it stay ``$defs`` references."""

    def open_ref(part: Any) -> Any:
        if isinstance(part, dict) and len(part) == 1 and isinstance(part.get("$ref"), str):
            body = converter.definition(part["$ref"].removeprefix("#/$defs/"))
            return body if isinstance(body, dict) else part
        return part

    schema = open_ref(schema)
    if isinstance(schema, dict) and isinstance(schema.get("allOf"), list):
        merged = _merge_all_of({**schema, "allOf": [open_ref(p) for p in schema["allOf"]]})
        if "allOf" not in merged:
            return merged
    return schema


def _flattenable(schema: Any, kind: BodyKind) -> tuple[Mapping[str, Any], list[str]] | None:
    if kind not in ("json", "form", "multipart") or not isinstance(schema, Mapping):
        return None
    if any(k in schema for k in ("oneOf", "anyOf", "allOf", "$ref", "not")):
        return None
    properties = schema.get("properties")
    if not isinstance(properties, Mapping) or not properties:
        return None
    if schema.get("type") not in (None, "object"):
        return None
    required = schema.get("required") or []
    # readOnly fields are the server's: never required of the caller.
    required = [r for r in required if not (isinstance(properties.get(r), Mapping) and properties[r].get("readOnly"))]
    return properties, required


def _default_style(location: str, param: Mapping[str, Any]) -> str:
    fmt = param.get("collectionFormat")
    if fmt:  # Swagger 2.0
        return {"csv": "form", "multi": "form", "ssv": "spaceDelimited", "tsv": "tabDelimited", "pipes": "pipeDelimited"}.get(str(fmt), "form")
    return "form" if location in ("query", "cookie") else "simple"


def _explode(param: Mapping[str, Any], location: str) -> bool:
    if "explode" in param:
        return bool(param["explode"])
    fmt = param.get("collectionFormat")
    if fmt is not None:
        return bool(fmt == "multi")
    if param.get("in") and "type" in param and "schema" not in param:  # Swagger 2.0 default csv
        return False
    style = param.get("style") or _default_style(location, param)
    return style == "form"
