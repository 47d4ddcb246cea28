"""Turning validated arguments into one HTTP request, safely.

:func:`build` places every argument where the spec says (path, query, header, cookie,
body) with OpenAPI's serialisation styles. The rules that keep an LLM from steering the
request anywhere else:

* a path value is percent-encoded as one segment (``/`` becomes ``%2F``, ``.``/``..``
  become ``%2E``), so ``../admin`` cannot change the path and ``%2f`` is not decoded;
  a segment that holds a value must not end up empty, ``.`` or ``..``: ``/users/{id}``
  with an empty ``id`` would be ``/users/``, and a ``label`` value ``""`` a ``.`` segment
  that URL normalisation removes;
* CR, LF and NUL are refused in every path, query, header and cookie value, and a header
  value must be one HTTP allows (:func:`mcs.urls.header_value`);
* the scheme, host and port come only from the configured base URL.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode

import orjson

from mcs.errors import InvalidInputError
from mcs.urls import EgressPolicy, encode_path_segment, header_value
from mcs_rest._operations import Operation, Param

_PATH_VARIABLE = re.compile(r"\{([^}/]+)\}")
_FORBIDDEN = re.compile(r"[\r\n\x00]")


@dataclass(frozen=True)
class HttpOptions:
    """Transport options of a driver (see :class:`mcs_rest.RestDriver`)."""

    max_response_bytes: int = 1_048_576
    retries: int = 2
    backoff: float = 0.25
    max_backoff: float = 10.0
    #: The longest ``Retry-After`` waited for before a retry; a longer one ends the retries.
    max_retry_after: float = 60.0
    retry_statuses: frozenset[int] = frozenset({429, 502, 503, 504})
    max_redirects: int = 5
    redirect_hosts: frozenset[str] = frozenset()
    idempotency_header: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    #: Checks every cross-origin redirect target (resolved once, connection pinned).
    egress: EgressPolicy = field(default_factory=EgressPolicy)


@dataclass(slots=True)
class Built:
    """A request before credentials: method, full URL, query pairs, headers, body.

    ``base`` is the base URL ``url`` starts with (``""`` when not known): the transport
    joins the rest to httpx's parse of it instead of parsing ``url`` whole.
    """

    method: str
    url: str
    query: list[tuple[str, str]] = field(default_factory=list)
    headers: list[tuple[str, str]] = field(default_factory=list)
    cookies: list[tuple[str, str]] = field(default_factory=list)
    content: bytes | None = None
    data: dict[str, Any] | None = None
    files: list[tuple[str, tuple[str | None, bytes, str]]] | None = None
    base: str = ""


@functools.lru_cache(maxsize=4096)
def _template(path: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``path`` split once into its literal pieces and the variable names between them."""
    pieces = _PATH_VARIABLE.split(path)
    return tuple(pieces[0::2]), tuple(pieces[1::2])


@functools.lru_cache(maxsize=4096)
def _valued_segments(path: str) -> tuple[int, ...]:
    """The indexes of the ``/``-separated segments of ``path`` that hold a variable."""
    return tuple(i for i, segment in enumerate(path.split("/")) if _PATH_VARIABLE.search(segment))


def _check_segments(template: str, path: str, tool: str) -> None:
    """Refuse a filled-in ``path`` where a segment holding a value is empty, ``.`` or ``..``:
    servers and clients merge or remove such segments, so the request would reach another
    resource (``DELETE /users/{id}`` with ``id=""`` is ``DELETE /users/``)."""
    segments = path.split("/")
    for index in _valued_segments(template):
        if segments[index] in ("", ".", ".."):
            names = _PATH_VARIABLE.findall(template.split("/")[index])
            raise InvalidInputError(
                f"{tool}: the path argument {' and '.join(repr(n) for n in names)} would leave the path "
                f"segment empty or a dot segment ({template}); give a non-empty value.",
                tool=tool, details={"fields": names},
            )


def _scalar(value: Any) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return repr(value) if isinstance(value, float) else str(value)
    return orjson.dumps(value).decode()


def _checked(text: str, param: Param, tool: str) -> str:
    if _FORBIDDEN.search(text):
        raise InvalidInputError(
            f"Argument {param.arg!r} of {tool} contains a line break or NUL character, which is "
            f"not allowed in a {param.location} value. Send it without CR/LF.",
            tool=tool, details={"fields": [param.arg]},
        )
    return text


def _path_value(param: Param, value: Any, tool: str) -> str:
    style, explode = param.style or "simple", param.explode
    if style == "simple" and type(value) is int:  # the common id: digits need no encoding or check
        return str(value)
    if isinstance(value, Mapping):
        pairs = [(_checked(str(k), param, tool), _checked(_scalar(v), param, tool)) for k, v in value.items()]
        if explode:
            parts = [f"{encode_path_segment(k)}={encode_path_segment(v)}" for k, v in pairs]
        else:
            parts = [f"{encode_path_segment(k)},{encode_path_segment(v)}" for k, v in pairs]
    elif isinstance(value, list):
        parts = [encode_path_segment(_checked(_scalar(v), param, tool)) for v in value]
    else:
        parts = [encode_path_segment(_checked(_scalar(value), param, tool))]
    if style == "label":
        return "." + ("." if explode else ",").join(parts)
    if style == "matrix":
        name = encode_path_segment(param.name)
        if isinstance(value, list) and explode:
            return "".join(f";{name}={p}" for p in parts)
        return f";{name}=" + ",".join(parts)
    return ",".join(parts)


def _query_pairs(param: Param, value: Any, tool: str) -> list[tuple[str, str]]:
    if value is None:
        return []
    if param.json_content:
        return [(param.name, _checked(orjson.dumps(value).decode(), param, tool))]
    style = param.style or "form"
    if isinstance(value, list):
        items = [_checked(_scalar(v), param, tool) for v in value]
        if style == "form" and param.explode:
            return [(param.name, v) for v in items]
        if style == "deepObject":  # undefined by OpenAPI for arrays; Stripe's `expand[]=a&expand[]=b`
            return [(f"{param.name}[]", v) for v in items]
        joiner = {"spaceDelimited": " ", "pipeDelimited": "|", "tabDelimited": "\t"}.get(style, ",")
        return [(param.name, joiner.join(items))]
    if isinstance(value, Mapping):
        if style == "deepObject":
            return _bracketed(param.name, value, param, tool)
        pairs = [(_checked(str(k), param, tool), _checked(_scalar(v), param, tool)) for k, v in value.items()]
        if param.explode:
            return pairs
        return [(param.name, ",".join(f"{k},{v}" for k, v in pairs))]
    return [(param.name, _checked(_scalar(value), param, tool))]


def _bracketed(prefix: str, value: Any, param: Param | None, tool: str) -> list[tuple[str, str]]:
    """``a[b][c]=v`` for objects, ``a[0][k]=v`` for lists of objects, ``a=v1&a=v2`` (``a[]``) for lists."""
    out: list[tuple[str, str]] = []
    if isinstance(value, Mapping):
        for key, sub in value.items():
            name = str(key) if param is None else _checked(str(key), param, tool)
            out.extend(_bracketed(f"{prefix}[{name}]", sub, param, tool))
    elif isinstance(value, list):
        if any(isinstance(v, Mapping | list) for v in value):
            for index, sub in enumerate(value):
                out.extend(_bracketed(f"{prefix}[{index}]", sub, param, tool))
        else:
            name = f"{prefix}[]" if "[" in prefix else prefix
            out.extend((name, _scalar(v) if param is None else _checked(_scalar(v), param, tool)) for v in value)
    elif value is not None:
        text = _scalar(value)
        out.append((prefix, _checked(text, param, tool) if param is not None else text))
    return out


def _field(text: str, param: Param, tool: str) -> str:
    """``text`` as the header's value (:func:`mcs.urls.header_value`)."""
    if not text.isascii():
        raise InvalidInputError(
            f"Argument {param.arg!r} of {tool} goes into an HTTP header and must be ASCII text; "
            "send it without accents or other non-ASCII characters.",
            tool=tool, details={"fields": [param.arg]},
        )
    value = header_value(text)
    if value is None:
        raise InvalidInputError(
            f"Argument {param.arg!r} of {tool} goes into the HTTP header {param.name!r} and holds a "
            "control character, which no header value may; send printable text only.",
            tool=tool, details={"fields": [param.arg]},
        )
    return value


def _header_value(param: Param, value: Any, tool: str) -> str:
    if param.json_content:
        text = orjson.dumps(value).decode()
    elif isinstance(value, list):
        text = ",".join(_scalar(v) for v in value)
    elif isinstance(value, Mapping):
        sep = "=" if param.explode else ","
        text = ",".join(f"{k}{sep}{_scalar(v)}" for k, v in value.items())
    else:
        text = _scalar(value)
    return _checked(text, param, tool)


def _file(name: str, value: Any, media: str = "application/octet-stream") -> tuple[str, bytes, str]:
    data = value if isinstance(value, bytes) else _scalar(value).encode("utf-8")
    return (name, data, media)


def build(op: Operation, arguments: Mapping[str, Any], base_url: str) -> Built:
    """The request for ``op`` with ``arguments`` (already validated against its schema).

    Raises:
        InvalidInputError: a value cannot be sent safely (CR/LF in a header, ...).
    """
    tool = op.name
    path_values: dict[str, str] = {}
    built = Built(op.method, "")
    body_fields: dict[str, Any] = {}
    whole_body: Any = None
    has_whole = False
    for param in op.params:
        if param.arg not in arguments:
            continue
        value = arguments[param.arg]
        location = param.location
        if location == "path":
            path_values[param.name] = _path_value(param, value, tool)
        elif location == "query":
            built.query.extend(_query_pairs(param, value, tool))
        elif location == "header":
            if value is not None:
                built.headers.append((param.name, _field(_header_value(param, value, tool), param, tool)))
        elif location == "cookie":
            if value is not None:
                built.cookies.append((param.name, _header_value(param, value, tool)))
        elif param.name:
            body_fields[param.name] = value
        else:
            whole_body, has_whole = value, True

    literals, names = _template(op.path)
    parts = [literals[0]]
    checked = True  # an int in the simple style is digits: no segment to check
    for name, literal in zip(names, literals[1:], strict=True):
        value = path_values.get(name)
        if value is None:
            raise InvalidInputError(f"{tool} needs the path argument {name!r}.", tool=tool, details={"fields": [name]})
        checked = checked and value.isdigit()
        parts += (value, literal)
    path = "".join(parts)
    if not checked:
        _check_segments(op.path, path, tool)
    built.url = base_url + path
    built.base = base_url
    body = op.body
    if body is not None and (has_whole or body_fields or body.required):
        # A required body is sent even when every field of it was left out: `{}` (or the
        # media type's empty form), never a POST with no body and no Content-Type.
        payload = whole_body if has_whole else body_fields
        if body.kind == "json":
            media = body.media_type if body.media_type != "*/*" else "application/json"
            built.content = orjson.dumps(payload, option=orjson.OPT_NON_STR_KEYS)
            built.headers.append(("Content-Type", media))
        elif body.kind == "form":
            pairs = _form_pairs(payload, body.deep_fields)
            built.content = urlencode(pairs).encode("ascii")
            built.headers.append(("Content-Type", "application/x-www-form-urlencoded"))
        elif body.kind == "multipart":
            binary = {p.name for p in op.params if p.location == "body" and p.binary}
            data: dict[str, Any] = {}
            files: list[tuple[str, tuple[str | None, bytes, str]]] = []
            items = payload.items() if isinstance(payload, Mapping) else [("file", payload)]
            for key, value in items:
                if key in binary or isinstance(value, bytes):
                    files.append((key, _file(key, value)))
                elif isinstance(value, list):
                    data[key] = [_scalar(v) for v in value]
                else:
                    data[key] = _scalar(value)
            if not files:  # httpx sends multipart only with a part: send the fields as parts
                for key, value in data.items():
                    for item in value if isinstance(value, list) else [value]:
                        files.append((key, (None, item.encode("utf-8"), "text/plain")))
                data = {}
            built.data, built.files = data or None, files
        else:
            raw = b"" if not has_whole else payload if isinstance(payload, bytes) else _scalar(payload).encode("utf-8")
            built.content = raw
            built.headers.append(("Content-Type", body.media_type))
    return built


def _form_pairs(payload: Any, deep: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    """Form fields: objects as ``a[b]=c``; lists as repeated ``a=x&a=y``, or ``a[]=x`` for
    fields the spec encodes with ``style: deepObject`` (Stripe's ``expand[]``)."""
    if not isinstance(payload, Mapping):
        return [("body", _scalar(payload))]
    pairs: list[tuple[str, str]] = []
    for key, value in payload.items():
        if isinstance(value, list) and key in deep and not any(isinstance(v, Mapping | list) for v in value):
            pairs.extend((f"{key}[]", _scalar(v)) for v in value)
        elif isinstance(value, Mapping | list):
            pairs.extend(_bracketed(str(key), value, None, ""))
        elif value is not None:
            pairs.append((str(key), _scalar(value)))
    return pairs


def cookie_header(cookies: Iterable[tuple[str, str]]) -> str:
    return "; ".join(f"{name}={quote(value, safe='')}" for name, value in cookies)
