"""Secret-typed arguments: found in a tool's schema once, kept out of every text but the call.

An argument is secret when its schema says so: ``"format": "password"``, ``"writeOnly":
true`` (what Pydantic's ``SecretStr`` produces) or ``"x-mcs-secret": true``. A map or a
tuple with a secret among its values (``dict[str, SecretStr]``, ``tuple[str, SecretStr]``:
``additionalProperties``, ``patternProperties``, ``prefixItems``...) is secret as a whole.
The tool receives the real value; everything else sees ``[redacted]`` in its place:

* hooks and audit records (:class:`~mcs.pipeline.ExecutionEvent` ``.arguments``);
* validation errors, which never quote a secret value back;
* any error message a call produces (a driver or a peer echoing the value): the
  pipeline scrubs secret values of four characters or more from it.
* the log records of the libraries a driver sends through (:data:`LIBRARY_LOGGERS`)
  while the call runs: the pipeline runs every call with secret arguments inside
  :func:`scrubbed_logs` of their values.

A driver's own credentials (a token, an API key it sends) are scrubbed the same way from
what a peer answers in an error: :func:`credential_forms` lists the forms a peer may echo
them in, :func:`scrub` and :func:`scrub_value` replace them, :func:`excerpt` scrubs and cuts
a peer's text for an error message. While a driver sends,
:func:`scrubbed_logs` keeps them out of the log records of the libraries it sends through
(:data:`LIBRARY_LOGGERS`: httpx, httpcore, gql, websockets, the ``mcp`` SDK...), which
write URLs, headers and payloads at ``INFO`` and ``DEBUG``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from mcs._schema_refs import variants as schema_variants

__all__ = [
    "LIBRARY_LOGGERS", "REDACTED", "SecretMask", "credential_forms", "excerpt", "redact", "scrub", "scrub_value", "scrubbed_logs",
    "secret_mask", "secret_values",
]

REDACTED = "[redacted]"
#: Shorter secret values are not scrubbed from free text (they would mangle it).
MIN_SCRUBBED_LENGTH = 4
_MAX_DEPTH = 12

#: Where the secrets of a schema are: ``True`` for a secret value, a nested mask for an
#: object's properties (``"*"`` for array items).
SecretMask = Mapping[str, Any]


def _is_secret(schema: Mapping[str, Any]) -> bool:
    return (
        schema.get("format") == "password"
        or schema.get("writeOnly") is True
        or schema.get("x-mcs-secret") is True
    )


def _mask(schema: Any, root: Mapping[str, Any], depth: int) -> SecretMask | bool | None:
    if depth > _MAX_DEPTH:
        return None
    variants = schema_variants(schema, root)
    if any(_is_secret(v) for v in variants):
        return True
    mask: dict[str, Any] = {}
    for variant in variants:
        if any(_mask(sub, root, depth + 1) is not None for sub in _unnamed_members(variant)):
            return True  # values with no name or index of their own: the whole object or array is secret
        properties = variant.get("properties")
        if isinstance(properties, Mapping):
            for name, sub in properties.items():
                inner = _mask(sub, root, depth + 1)
                if inner is not None:
                    _merge(mask, str(name), inner)
        items = variant.get("items")
        if isinstance(items, Mapping):
            inner = _mask(items, root, depth + 1)
            if inner is not None:
                _merge(mask, "*", inner)
        for sub in _conditional_parts(variant):  # then/else/dependentSchemas add to this same object
            inner = _mask(sub, root, depth + 1)
            if inner is True:
                return True
            for name, part in (inner or {}).items():
                _merge(mask, name, part)
    return mask or None


def _unnamed_members(schema: Mapping[str, Any]) -> list[Any]:
    """The subschemas of ``schema`` whose values a mask cannot name: a map's values
    (``additionalProperties``, ``patternProperties``, ``unevaluatedProperties``) and a
    tuple's positions (``prefixItems``, ``items`` as a list, ``additionalItems``,
    ``unevaluatedItems``)."""
    found: list[Any] = []
    for key in ("additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems"):
        if isinstance(schema.get(key), Mapping):
            found.append(schema[key])
    patterns = schema.get("patternProperties")
    if isinstance(patterns, Mapping):
        found.extend(patterns.values())
    for key in ("prefixItems", "items"):
        if isinstance(schema.get(key), list):
            found.extend(schema[key])
    return found


def _conditional_parts(schema: Mapping[str, Any]) -> list[Any]:
    parts = [schema[key] for key in ("then", "else") if isinstance(schema.get(key), Mapping)]
    dependent = schema.get("dependentSchemas")
    if isinstance(dependent, Mapping):
        parts.extend(dependent.values())
    return parts


def _merge(mask: dict[str, Any], name: str, inner: SecretMask | bool) -> None:
    """Add ``inner`` at ``name``; where two masks meet the value is wholly secret (more
    redaction, never less)."""
    if name in mask and mask[name] != inner:
        mask[name] = True
    else:
        mask[name] = inner


def secret_mask(schema: Mapping[str, Any]) -> SecretMask | None:
    """Where the secret arguments of ``schema`` are, or ``None`` when it has none.

    Compute it once per tool (it walks the schema, local ``$ref``\\ s included).
    """
    found = _mask(schema, schema, 0)
    if found is True:  # the whole argument object is secret
        return {"*": True}
    return found if isinstance(found, Mapping) else None


def redact(arguments: Any, mask: SecretMask | None) -> Any:
    """A copy of ``arguments`` with every secret value replaced by :data:`REDACTED`."""
    if mask is None:
        return arguments
    return _redact(arguments, mask)


def _redact(value: Any, mask: SecretMask | bool) -> Any:
    if mask is True:
        return REDACTED
    if not isinstance(mask, Mapping):
        return value
    if isinstance(value, Mapping):
        every = mask.get("*") if not isinstance(value, list) else None
        out: dict[str, Any] = {}
        for key, item in value.items():
            sub = mask.get(str(key), every if every is True else None)
            out[key] = _redact(item, sub) if sub is not None else item
        return out
    if isinstance(value, list) and "*" in mask:
        return [_redact(item, mask["*"]) for item in value]
    return value


def secret_values(arguments: Any, mask: SecretMask | None) -> list[str]:
    """The secret values in ``arguments`` as text, longest first (for :func:`scrub`)."""
    if mask is None:
        return []
    found: list[str] = []
    _collect(arguments, mask, found)
    texts = {t for t in found if len(t) >= MIN_SCRUBBED_LENGTH}
    return sorted(texts, key=len, reverse=True)


def _collect(value: Any, mask: SecretMask | bool, found: list[str]) -> None:
    if mask is True:
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, Mapping | list):
            for item in value.values() if isinstance(value, Mapping) else value:
                _collect(item, True, found)
        elif value is not None and not isinstance(value, bool):
            found.append(str(value))
        return
    if not isinstance(mask, Mapping):
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            sub = mask.get(str(key), mask.get("*"))
            if sub is not None:
                _collect(item, sub, found)
    elif isinstance(value, list) and "*" in mask:
        for item in value:
            _collect(item, mask["*"], found)


def scrub(text: str, values: Iterable[str]) -> str:
    """``text`` with each of ``values`` (and its JSON-escaped and ``repr`` forms, as an
    exception quotes it, and its percent- and form-encoded forms, as a URL in one quotes
    it) replaced by :data:`REDACTED`."""
    import json
    from urllib.parse import quote, quote_plus

    for value in values:
        if value in text:
            text = text.replace(value, REDACTED)
        for escaped in (json.dumps(value)[1:-1], repr(value)[1:-1], quote(value, safe=""), quote(value),
                        quote_plus(value)):
            if escaped != value and escaped in text:
                text = text.replace(escaped, REDACTED)
    return text


def excerpt(text: str, secrets: Sequence[str], limit: int, *, fold: bool = True, markup: bool = False) -> str:
    """``text`` as a peer's words are quoted in an error: ``secrets`` (longest first, as
    :func:`credential_forms` gives them) replaced by :data:`REDACTED`, then cut to at most
    ``limit`` characters with ``...`` after a cut, so no part of a secret is left at the cut.
    With ``fold``, every run of whitespace becomes one space (one line of text), and a
    secret is found both as given and as folding writes it. With ``markup`` (an HTML or XML
    page), character references (``&#115;``, ``&#x73;``, ``&amp;``) are decoded first, so a
    secret written with them is found too; the excerpt shows the decoded text."""
    if markup:
        import html

        text = html.unescape(text)
    if secrets:
        text = scrub(text, secrets)
    if fold:
        text = " ".join(text.split())
        if secrets:
            folded = {" ".join(secret.split()) for secret in secrets}
            text = scrub(text, sorted(folded.union(secrets), key=len, reverse=True))
    return text[:limit] + "..." if len(text) > limit else text


def credential_forms(values: Iterable[str]) -> tuple[str, ...]:
    """The texts to give :func:`scrub` so that no form in which a peer could echo the
    credentials ``values`` (header, query or cookie values a driver sent) is left, longest
    first, none shorter than :data:`MIN_SCRUBBED_LENGTH`: each value as sent; the part after
    an auth-scheme word (``Bearer x`` gives ``x``); a Basic pair decoded, and its password.
    :func:`scrub` replaces the percent- and form-encoded forms of each of these itself; they
    are listed only for a text too short to be scrubbed whose encoding is long enough
    (``a/b`` gives ``a%2Fb``)."""
    import base64
    from urllib.parse import quote, quote_plus

    raw: set[str] = set()
    for value in values:
        raw.add(value)
        word, _, rest = value.partition(" ")
        if not rest or not word.isalpha():
            continue
        raw.add(rest)
        if word.lower() == "basic":
            try:
                pair = base64.b64decode(rest, validate=True).decode("utf-8")
            except ValueError:  # not base64, or not UTF-8 (UnicodeDecodeError is a ValueError)
                continue
            raw.update((pair, pair.partition(":")[2]))
    short = {text for text in raw if len(text) < MIN_SCRUBBED_LENGTH}
    texts = (raw - short) | {quote(text, safe="") for text in short} | {quote_plus(text) for text in short}
    kept = {text for text in texts if len(text) >= MIN_SCRUBBED_LENGTH}
    return tuple(sorted(kept, key=len, reverse=True))


def scrub_value(value: Any, values: Iterable[str]) -> Any:
    """``value`` (JSON-like: strings, lists, mappings) with :func:`scrub` applied to every
    string in it, mapping keys included."""
    secrets = list(values)
    if not secrets:
        return value
    return _scrub_value(value, secrets, 0)


def _scrub_value(value: Any, secrets: list[str], depth: int) -> Any:
    if isinstance(value, str):
        return scrub(value, secrets)
    if depth > 64:  # deeper than any answer a driver keeps: dropped, not walked
        return REDACTED
    if isinstance(value, Mapping):
        return {scrub(str(k), secrets): _scrub_value(v, secrets, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_scrub_value(v, secrets, depth + 1) for v in value]
    return value


# ---------------------------------------------------------------------- other libraries' logs

#: The loggers of the libraries the drivers send through, where a record may quote what
#: was sent: httpx's request line (a query-string key), websockets' request headers, gql's
#: payloads, the ``mcp`` SDK's every message sent and received (``DEBUG``), and the ``mcp``
#: bridge's copy of a server's log messages (a server may quote an argument back). A filter
#: on each scrubs the secrets of every :func:`scrubbed_logs` block running at the time; a
#: record with none of them is left as it is, and none is dropped.
LIBRARY_LOGGERS: tuple[str, ...] = (
    "httpx", "httpx2",
    *(f"{core}.{part}" for core in ("httpcore", "httpcore2")
      for part in ("connection", "http11", "http2", "proxy", "socks")),
    "gql.transport.httpx", "gql.transport.aiohttp", "gql.transport.requests", "gql.transport.websockets",
    "gql.transport.common.base", "websockets.client", "websockets.protocol", "aiohttp.client",
    "urllib3.connectionpool", "zeep.transports",
    "mcp.client.streamable_http", "mcp.client.sse", "mcp.client.stdio", "mcp.shared.jsonrpc_dispatcher",
    "mcs_mcp.client.server",
)

_SecretSource = Callable[[], Iterable[str]]
_active: tuple[_SecretSource, ...] = ()
_active_lock = threading.Lock()


class _ScrubbingFilter(logging.Filter):
    """Scrubs the secrets of the running :func:`scrubbed_logs` blocks from a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        sources = _active
        if sources:
            secrets = sorted({text for source in sources for text in source() if len(text) >= MIN_SCRUBBED_LENGTH},
                             key=len, reverse=True)
            if secrets:
                _scrub_record(record, secrets)
        return True


def _scrub_record(record: logging.LogRecord, secrets: list[str]) -> None:
    """``record`` with ``secrets`` scrubbed from its message (formatted once, its ``args``
    folded in, when a secret is there), its exception text and its stack text."""
    try:
        message = record.getMessage()
    except Exception:  # a record whose args do not fit its format: the handler reports it
        return
    scrubbed = scrub(message, secrets)
    if scrubbed != message or (record.args and scrub(repr(record.args), secrets) != repr(record.args)):
        record.msg, record.args = scrubbed, None
    text = record.exc_text
    if not text and record.exc_info:
        text = logging.Formatter().formatException(record.exc_info)
    if text and scrub(text, secrets) != text:
        record.exc_text = scrub(text, secrets)  # what a formatter prints in place of the traceback
    if record.stack_info:
        record.stack_info = scrub(record.stack_info, secrets)


_FILTER = _ScrubbingFilter()
_installed = False


def _install() -> None:
    global _installed
    if not _installed:
        for name in LIBRARY_LOGGERS:
            logging.getLogger(name).addFilter(_FILTER)  # addFilter keeps one copy
        _installed = True


class scrubbed_logs:
    """While the ``with`` block runs, no record of the :data:`LIBRARY_LOGGERS` carries any
    text ``secrets()`` gives (in the forms :func:`scrub` replaces): in any thread or task,
    as a library may log from a task of its own. ``secrets`` is called only when a record
    is written (credentials worked out late, an OAuth token fetched inside the block, are
    covered); give it the forms :func:`credential_forms` lists. Blocks may nest and overlap."""

    __slots__ = ("_secrets",)

    def __init__(self, secrets: _SecretSource) -> None:
        self._secrets = secrets

    def __enter__(self) -> None:
        global _active
        if not _installed:
            _install()
        with _active_lock:
            _active = (*_active, self._secrets)

    def __exit__(self, *exc: object) -> None:
        global _active
        with _active_lock:
            rest = list(_active)
            rest.remove(self._secrets)
            _active = tuple(rest)
