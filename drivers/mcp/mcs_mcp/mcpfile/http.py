"""HTTP invocations with gen-mcp 0.2.x's fixed routing.

Where each argument goes:

* an argument named by a URL placeholder goes into the URL, percent-encoded as one
  segment (``a/b`` becomes ``a%2Fb``; ``%2e`` is sent as ``%252e``, never decoded twice);
* an argument named by a header template goes into that header only;
* every other argument goes into the query string for ``GET``, ``DELETE`` and ``HEAD``,
  and into the JSON body for ``POST``, ``PUT`` and ``PATCH`` (``bodyRoot`` sends the value
  at one path instead; ``bodyAsArray`` wraps the body in a list).

Results: the body as text; a JSON object also as structured content; a status outside
2xx is an error for the LLM. Bodies are read by the core's bounded reader (:mod:`mcs.http`):
streamed, inflated with a bound, stopped at ``max_response_bytes`` of decoded content with
an explicit ``[truncated ...]`` marker; the deadline covers connect, headers and body.
Redirects are followed only within the same origin, at most five times.

Retries, as the REST driver makes them: an idempotent method (``GET``, ``HEAD``, ``PUT``,
``DELETE``) answered 408, 429, 502, 503 or 504, or failing in transport, is tried again
up to ``retries`` times, with exponential backoff and jitter that honours
``Retry-After``; a connection that was never established is retried for any method. A
wait that would pass the deadline is not started, so the last answer stands.

Logs: while a request is sent (retries and redirects included), httpx's and httpcore's
own log records never quote a credential the file configures (:meth:`HttpInvoker.credentials`):
:func:`mcs.redaction.scrubbed_logs` puts ``[redacted]`` in its place.

Destinations: the host comes from the file. With ``allow_dynamic_hosts`` a URL whose host
part holds an argument (or an incoming header) may go where the caller says (a URL that
starts with a placeholder takes the value whole, as a fetch tool does), but only to
public addresses over http(s): the egress block list (:class:`mcs.urls.EgressPolicy`)
refuses other schemes, credentials in the URL, and loopback, private, link-local, CGNAT
and metadata destinations in every spelling, and the connection is pinned to the
addresses it checked.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import ssl
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote_plus, urlencode, urljoin

import httpx

from mcs.content import Binary
from mcs.errors import ConfigurationError, ExecutionError, InvalidInputError, ToolTimeoutError
from mcs.http import (
    ACCEPT_ENCODING,
    aread_body,
    bounded,
    describe_failure,
    pin,
    read_body,
    retry_after,
)
from mcs.redaction import credential_forms, scrubbed_logs
from mcs.redaction import excerpt as redaction_excerpt
from mcs.urls import EgressPolicy, encode_path_segment, header_value, same_origin
from mcs_mcp.mcpfile.results import (
    CREDENTIAL_HEADERS,
    HEADER_PREFIX,
    InvokeResult,
    env_value,
    incoming_header,
)
from mcs_mcp.mcpfile.templates import (
    MISSING,
    Placeholder,
    Template,
    check_params,
    format_scalar,
    lookup,
    parse_template,
)

BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE"})
RETRY_STATUSES = frozenset({408, 429, 502, 503, 504})
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"})
MAX_REDIRECTS = 5
#: A query parameter whose name reads as a credential (``api_key``, ``access_token``, ``sig``):
#: a value the file writes for it is scrubbed from the libraries' logs.
CREDENTIAL_QUERY_NAME = re.compile(r"key|token|secret|pass|pwd|auth|sig|credential|session", re.IGNORECASE)


@dataclass(frozen=True)
class HttpOptions:
    """Driver-wide settings for outbound HTTP."""

    max_response_bytes: int = 5 * 1024 * 1024
    verify: ssl.SSLContext | bool = True
    allow_credential_forwarding: bool = False
    allow_dynamic_hosts: bool = False
    retries: int = 2
    backoff: float = 0.25
    max_backoff: float = 10.0
    #: Where a caller-chosen host may go (only used with ``allow_dynamic_hosts``).
    egress: EgressPolicy = field(default_factory=EgressPolicy)


class HttpInvoker:
    """One compiled ``http`` invocation. Build with :func:`compile_http`."""

    def __init__(
        self,
        *,
        tool: str,
        method: str,
        url: Template,
        headers: Mapping[str, Template],
        body_root: str,
        body_as_array: bool,
        options: HttpOptions,
        dynamic_host: bool = False,
    ) -> None:
        self.tool = tool
        #: The caller chooses (part of) the host: the egress block list applies.
        self.dynamic_host = dynamic_host
        self.method = method
        self.url = url
        self.headers = dict(headers)
        self.body_root = body_root
        self.body_as_array = body_as_array
        self.options = options
        self.has_body = method in BODY_METHODS
        self._url_params = set(url.params())
        self._header_params = {p for t in self.headers.values() for p in t.params()}
        self._url_host_env = _host_env_placeholders(url)
        self._query_credentials = _literal_query_credentials(url)

    # ------------------------------------------------------------------ building requests

    def build(self, arguments: Mapping[str, Any], metadata: Mapping[str, str]) -> httpx.Request:
        """The request for ``arguments`` (validated); nothing is sent.

        Raises:
            InvalidInputError: a value cannot go where the template puts it (CR/LF in a header).
            PolicyDeniedError: a caller-chosen URL has a refused form (scheme, credentials).
            ExecutionError: a needed environment variable or incoming header is missing.
        """
        url = self._render_url(arguments, metadata)
        headers = {name: self._render_header(name, tpl, arguments, metadata) for name, tpl in self.headers.items()}
        remaining = _without_paths(arguments, self._url_params | self._header_params)
        content: bytes | None = None
        if self.has_body:
            body: Any = remaining
            if self.body_root:
                body = lookup(arguments, self.body_root)
            elif self.body_as_array:
                body = [remaining]
            if body is not MISSING:
                content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
                headers["Content-Type"] = "application/json; charset=UTF-8"
        else:
            pairs = _query_pairs(remaining)
            if pairs:
                query = urlencode(pairs, quote_via=quote, safe="")
                url = f"{url}{'&' if '?' in url else '?'}{query}"
        headers.setdefault("Accept-Encoding", ACCEPT_ENCODING)
        if self.dynamic_host:  # refused before anything is built or resolved
            self.options.egress.check_form(url)
        try:
            return httpx.Request(self.method, url, headers=headers, content=content)
        except (httpx.InvalidURL, ValueError) as exc:
            raise InvalidInputError(f"{self.tool}: the arguments make an invalid URL ({exc}).", tool=self.tool) from None

    def _render_url(self, arguments: Mapping[str, Any], metadata: Mapping[str, str]) -> str:
        out: list[str] = []
        for index, part in enumerate(self.url.parts):
            if isinstance(part, str):
                out.append(part)
            elif part.source == "env":
                out.append(env_value(part.name, tool=self.tool))
            else:
                value = self._value(part, arguments, metadata)
                if value is MISSING:
                    out.append("")
                elif index == 1 and self.url.parts[0] == "" and self.dynamic_host:
                    # A URL that starts with the caller's value takes it whole (a fetch
                    # tool); the egress policy judges the result before anything is sent.
                    out.append(format_scalar(value))
                else:
                    out.append(_encode_segment(value))
        return "".join(out)

    def _render_header(
        self, name: str, template: Template, arguments: Mapping[str, Any], metadata: Mapping[str, str]
    ) -> str:
        out: list[str] = []
        for part in template.parts:
            if isinstance(part, str):
                out.append(part)
                continue
            if part.source == "env":
                text = env_value(part.name, tool=self.tool)
            else:
                value = self._value(part, arguments, metadata)
                text = "" if value is MISSING else format_scalar(value)
            if header_value(text) is None:
                where = f"argument '{part.name}'" if part.source == "param" else part.text
                raise InvalidInputError(
                    f"Invalid arguments for {self.tool}: {where} goes into the HTTP header {name!r} "
                    "and must be ASCII text without line breaks, NUL or other control characters.",
                    tool=self.tool,
                    details={"fields": [part.name]},
                )
            out.append(text)
        return "".join(out).strip(" \t")

    def _value(self, part: Placeholder, arguments: Mapping[str, Any], metadata: Mapping[str, str]) -> Any:
        if part.source == "header":
            return incoming_header(metadata, part.name, tool=self.tool)
        return lookup(arguments, part.name)

    def credentials(self, request: httpx.Request, metadata: Mapping[str, str],
                    argument_secrets: Iterable[str] = ()) -> tuple[str, ...]:
        """The texts of ``request`` (built by :meth:`build` with ``metadata``) that a log must not
        show, in every form a log may quote them (:func:`mcs.redaction.credential_forms`):

        * the value of each header the file configures without an argument in it, and each
          environment value or incoming header placed in any header;
        * each environment value in the URL after its host (a key in the path or the query),
          and each value the file writes for a query parameter whose name reads as a
          credential (``api_key=...``, ``token=...``: :data:`CREDENTIAL_QUERY_NAME`);
        * a password in the URL, and ``argument_secrets`` (the call's secret-typed values).
        """
        values: list[str] = [*argument_secrets, *self._query_credentials]
        for name, template in self.headers.items():
            if not template.params():
                values.append(request.headers.get(name, ""))
            values.extend(_configured_values(template.placeholders, metadata))
        url_parts = (p for p in self.url.placeholders if p.source == "env" and p.start not in self._url_host_env)
        values.extend(_configured_values(url_parts, metadata))
        if request.url.password:
            values.append(request.url.password)
        return credential_forms(value for value in values if value)

    # ------------------------------------------------------------------ sending

    def _egress(self) -> EgressPolicy | None:
        return self.options.egress if self.dynamic_host else None

    def send(self, client: httpx.Client, request: httpx.Request, deadline: float | None, *,
             secrets: Sequence[str] = ()) -> InvokeResult:
        """Send ``request`` (following same-origin redirects, retrying as the module doc says)
        and read the capped response. While it runs, no record of the HTTP libraries' loggers
        quotes ``secrets`` (give it :meth:`credentials`)."""
        attempt = 0
        with scrubbed_logs(lambda: secrets):
            while True:
                try:
                    return self._send_once(client, request, deadline, secrets)
                except _Retry as retry:
                    delay = self._retry_delay(attempt, retry, deadline)
                    if delay is None:
                        raise retry.error from None
                time.sleep(delay)
                attempt += 1

    async def asend(self, client: httpx.AsyncClient, request: httpx.Request, deadline: float | None, *,
                    secrets: Sequence[str] = ()) -> InvokeResult:
        """Async twin of :meth:`send`."""
        attempt = 0
        with scrubbed_logs(lambda: secrets):
            while True:
                try:
                    return await self._asend_once(client, request, deadline, secrets)
                except _Retry as retry:
                    delay = self._retry_delay(attempt, retry, deadline)
                    if delay is None:
                        raise retry.error from None
                await asyncio.sleep(delay)
                attempt += 1

    def _send_once(self, client: httpx.Client, request: httpx.Request, deadline: float | None,
                   secrets: Sequence[str] = ()) -> InvokeResult:
        egress = self._egress()
        with self._retryable_errors(), bounded(deadline, egress):
            for _ in range(MAX_REDIRECTS + 1):
                if egress is not None:
                    pin(request.url, egress)
                _set_timeout(request, deadline)
                response = client.send(request, stream=True)
                try:
                    follow = self._redirect(request, response)
                    if follow is None:
                        body = read_body(response, max_bytes=self.options.max_response_bytes,
                                         deadline=deadline, tool=self.tool)
                        return self._checked(response, body.data, body.truncated, secrets)
                finally:
                    response.close()
                request = follow
        raise _too_many_redirects(self.tool)

    async def _asend_once(self, client: httpx.AsyncClient, request: httpx.Request, deadline: float | None,
                          secrets: Sequence[str] = ()) -> InvokeResult:
        egress = self._egress()
        with self._retryable_errors(), bounded(deadline, egress):
            for _ in range(MAX_REDIRECTS + 1):
                if egress is not None:
                    pin(request.url, egress)
                _set_timeout(request, deadline)
                response = await client.send(request, stream=True)
                try:
                    follow = self._redirect(request, response)
                    if follow is None:
                        body = await aread_body(response, max_bytes=self.options.max_response_bytes,
                                                deadline=deadline, tool=self.tool)
                        return self._checked(response, body.data, body.truncated, secrets)
                finally:
                    await response.aclose()
                request = follow
        raise _too_many_redirects(self.tool)

    def _checked(self, response: httpx.Response, raw: bytes, truncated: bool,
                 secrets: Sequence[str] = ()) -> InvokeResult:
        """:meth:`_result`, with a retryable status on an idempotent method marked for a retry."""
        try:
            return self._result(response, raw, truncated, secrets)
        except ExecutionError as error:
            if response.status_code in RETRY_STATUSES and self.method in IDEMPOTENT_METHODS:
                raise _Retry(error, retry_after(response.headers)) from None
            raise

    @contextmanager
    def _retryable_errors(self) -> Iterator[None]:
        """httpx's errors as the LLM's (see :func:`_translated_errors`), those worth a retry
        marked: a refused connection (nothing was sent), or any transport failure of an
        idempotent method. A timeout is not retried: the deadline is what ran out."""
        with _translated_errors(self.tool):
            try:
                yield
            except httpx.TransportError as exc:
                if isinstance(exc, httpx.TimeoutException):
                    raise
                if isinstance(exc, httpx.ConnectError) or self.method in IDEMPOTENT_METHODS:
                    raise _Retry(_transport_error(self.tool, exc), None) from None
                raise

    def _retry_delay(self, attempt: int, retry: _Retry, deadline: float | None) -> float | None:
        """Seconds to wait before the next attempt, or ``None`` when none should happen."""
        options = self.options
        if attempt >= options.retries:
            return None
        delay: float = min(options.max_backoff, options.backoff * (2 ** attempt)) * (0.5 + random.random() / 2)
        if retry.after is not None:
            delay = max(delay, retry.after)
        if deadline is not None and time.monotonic() + delay >= deadline:
            return None
        return delay

    def _redirect(self, request: httpx.Request, response: httpx.Response) -> httpx.Request | None:
        if response.status_code not in (301, 302, 303, 307, 308) or "location" not in response.headers:
            return None
        target = httpx.URL(urljoin(str(request.url), response.headers["location"]))
        if not same_origin(target, request.url):
            raise ExecutionError(
                f"{self.tool}: the server redirected to another origin, which is not followed.",
                tool=self.tool,
                details={"status": response.status_code},
            )
        keep_body = response.status_code in (307, 308)
        method = request.method if keep_body or request.method in ("GET", "HEAD") else "GET"
        headers = dict(request.headers)
        if not keep_body:
            headers.pop("content-type", None)
            headers.pop("content-length", None)
        return httpx.Request(method, target, headers=headers, content=request.content if keep_body else None)

    def _result(self, response: httpx.Response, raw: bytes, truncated: bool,
                secrets: Sequence[str] = ()) -> InvokeResult:
        """The answer as the tool returns it; an error status raises, quoting the body with
        ``secrets`` (the credentials this request carried) scrubbed out."""
        mime = response.headers.get("content-type")
        if 200 <= response.status_code < 300 and raw and not is_text_media(mime):
            binary = Binary.of(raw, mime or "application/octet-stream", truncated=truncated)
            return InvokeResult(text=binary["base64"], mime_type=mime, truncated=truncated,
                                extra={"status": response.status_code}, binary=binary)
        text = raw.decode(response.encoding or "utf-8", errors="replace")
        if truncated:
            text += f"\n[truncated: the response exceeded {self.options.max_response_bytes} bytes]"
        status = response.status_code
        if not 200 <= status < 300:
            markup = bool(mime) and any(kind in mime.lower() for kind in ("html", "xml"))
            excerpt = redaction_excerpt(text, secrets, 1000, fold=False, markup=markup)
            raise ExecutionError(
                f"{self.tool}: the server answered HTTP {status}"
                + (f" {response.reason_phrase}" if response.reason_phrase else "")
                + (f": {excerpt}" if excerpt.strip() else "."),
                tool=self.tool,
                details={"status": status, "retryable": status in (408, 429, 502, 503, 504)},
            )
        structured: dict[str, Any] | None = None
        if not truncated and mime and "json" in mime.lower():
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = None
            if isinstance(parsed, dict):
                structured = parsed
        return InvokeResult(text=text, structured=structured, mime_type=mime, truncated=truncated,
                            extra={"status": status})


def is_text_media(content_type: str | None) -> bool:
    """Whether a body of ``content_type`` is text: none given, ``text/*``, JSON, XML, YAML,
    JavaScript, a form, or any type that names a ``charset``."""
    if not content_type:
        return True
    media = content_type.split(";", 1)[0].strip().lower()
    return (
        not media or media.startswith("text/") or "charset=" in content_type.lower()
        or media.endswith(("json", "xml", "yaml", "javascript")) or media == "application/x-www-form-urlencoded"
    )


def compile_http(
    config: Mapping[str, Any],
    *,
    tool: str,
    where: str,
    input_schema: Mapping[str, Any] | None,
    options: HttpOptions,
    allowed_params: frozenset[str] = frozenset(),
) -> HttpInvoker:
    """Check and compile a resolved ``http`` config.

    Raises:
        ConfigurationError: a bad method or URL, a placeholder with no property, a caller-chosen
            host, credentials forwarded without permission, or ``bodyRoot`` with ``bodyAsArray``.
    """
    method = config.get("method")
    if not isinstance(method, str) or method.upper() not in METHODS:
        raise ConfigurationError(
            f"{where}: invalid HTTP method {method!r}; use one of {', '.join(sorted(METHODS))}"
        )
    url_text = config.get("url")
    if not isinstance(url_text, str) or not url_text:
        raise ConfigurationError(f"{where}: http.url is required")
    url = parse_template(url_text, where=f"{where}: url")
    check_params(url, input_schema, where=where, allowed=allowed_params)
    dynamic_host = _check_authority(url, where, options)
    headers_raw = config.get("headers") or {}
    if not isinstance(headers_raw, Mapping):
        raise ConfigurationError(f"{where}: http.headers must be a mapping of header names to values")
    headers: dict[str, Template] = {}
    for name, value in headers_raw.items():
        if not isinstance(value, str):
            raise ConfigurationError(f"{where}: header {name!r} must be a string")
        template = parse_template(value, where=f"{where}: header {name}")
        check_params(template, input_schema, where=where, allowed=allowed_params)
        headers[str(name)] = template
    for template in (url, *headers.values()):
        for part in template.placeholders:
            credential = part.source == "header" and part.name.lower() in CREDENTIAL_HEADERS
            if credential and (template is url or not options.allow_credential_forwarding):
                raise ConfigurationError(
                    f"{where}: {part.text} would forward the caller's credentials to another "
                    "service (token passthrough). Configure the downstream credential instead "
                    "(for example {env.API_TOKEN}), or pass allow_credential_forwarding=True."
                )
    body_root = config.get("bodyRoot") or ""
    body_as_array = bool(config.get("bodyAsArray") or False)
    if not isinstance(body_root, str):
        raise ConfigurationError(f"{where}: http.bodyRoot must be a string")
    if body_root and body_as_array:
        raise ConfigurationError(f"{where}: bodyRoot and bodyAsArray are mutually exclusive")
    return HttpInvoker(
        tool=tool,
        method=method.upper(),
        url=url,
        headers=headers,
        body_root=body_root,
        body_as_array=body_as_array,
        options=options,
        dynamic_host=dynamic_host,
    )


def _check_authority(url: Template, where: str, options: HttpOptions) -> bool:
    """Refuse argument or header placeholders in the scheme and host part of the URL,
    unless ``allow_dynamic_hosts``; returns whether the caller chooses (part of) the host."""
    text = url.text
    scheme_end = text.find("://")
    if scheme_end == -1:
        # No scheme: the URL starts with a placeholder (like "${BASE_URL}/x") or is relative.
        first = url.parts[1] if len(url.parts) > 1 and url.parts[0] == "" else None
        if not isinstance(first, Placeholder):
            return False
        if first.source != "env":
            if not options.allow_dynamic_hosts:
                raise ConfigurationError(
                    f"{where}: the URL starts with {first.text}, which would let the caller choose the "
                    "destination; pass allow_dynamic_hosts=True to allow it"
                )
            return True
        # The scheme and host come from the environment: until the first literal '/', '?'
        # or '#', what follows still is the host part ("{env.BASE}{x}" with x=".evil.example").
        dynamic = False
        for part in url.parts:
            if isinstance(part, str):
                if any(c in part for c in "/?#"):
                    break
            elif part.source != "env":
                if not options.allow_dynamic_hosts:
                    raise ConfigurationError(
                        f"{where}: {part.text} is in the host part of the URL (after {first.text}, before "
                        "any '/'), which would let the caller choose the destination; put a '/' before it, "
                        "or pass allow_dynamic_hosts=True to allow it"
                    )
                dynamic = True
        return dynamic
    rest = text[scheme_end + 3 :]
    cut = min((i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i != -1), default=len(rest))
    authority_end = scheme_end + 3 + cut
    dynamic = False
    for part in url.placeholders:
        if part.source != "env" and part.start < authority_end:
            if not options.allow_dynamic_hosts:
                raise ConfigurationError(
                    f"{where}: {part.text} is in the host part of the URL, which would let the caller "
                    "choose the destination; pass allow_dynamic_hosts=True to allow it"
                )
            dynamic = True
    return dynamic


def _host_env_placeholders(url: Template) -> frozenset[int]:
    """The start offsets of the environment placeholders in the scheme and host part of
    ``url`` (``{env.API_BASE}``, ``https://{env.HOST}/``): a base URL, not a credential."""
    text = url.text
    scheme_end = text.find("://")
    if scheme_end != -1:
        rest = text[scheme_end + 3 :]
        cut = min((i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i != -1), default=len(rest))
        return frozenset(p.start for p in url.placeholders if p.source == "env" and p.start < scheme_end + 3 + cut)
    found: set[int] = set()
    for part in url.parts:  # no scheme: the leading placeholders give it, up to a '/', '?' or '#'
        if isinstance(part, str):
            if any(c in part for c in "/?#"):
                break
        elif part.source == "env":
            found.add(part.start)
    return frozenset(found)


def _literal_query_credentials(url: Template) -> tuple[str, ...]:
    """The values ``url`` writes itself for query parameters named like a credential."""
    masked = "".join(part if isinstance(part, str) else "\0" for part in url.parts)
    query = masked.partition("?")[2].partition("#")[0]
    found: list[str] = []
    for pair in query.split("&"):
        name, _, value = pair.partition("=")
        if value and "\0" not in value and "\0" not in name and CREDENTIAL_QUERY_NAME.search(unquote_plus(name)):
            found.extend({value, unquote_plus(value)})
    return tuple(found)


def _configured_values(placeholders: Iterable[Placeholder], metadata: Mapping[str, str]) -> list[str]:
    """The environment values and incoming headers of ``placeholders`` (arguments left out)."""
    values: list[str] = []
    for part in placeholders:
        if part.source == "env":
            values.append(os.environ.get(part.name, ""))
        elif part.source == "header":
            values.append(metadata.get(HEADER_PREFIX + part.name.lower(), ""))
    return values


def _encode_segment(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(encode_path_segment(format_scalar(item)) for item in value)
    return encode_path_segment(format_scalar(value))


def _without_paths(arguments: Mapping[str, Any], paths: set[str]) -> dict[str, Any]:
    """A deep copy of ``arguments`` without ``paths``; emptied parent objects go too."""
    result: dict[str, Any] = json.loads(json.dumps(arguments))
    for path in paths:
        keys = path.split(".")
        chain: list[dict[str, Any]] = [result]
        for key in keys[:-1]:
            child = chain[-1].get(key)
            if not isinstance(child, dict):
                break
            chain.append(child)
        else:
            chain[-1].pop(keys[-1], None)
            for depth in range(len(chain) - 1, 0, -1):
                if chain[depth]:
                    break
                chain[depth - 1].pop(keys[depth - 1], None)
    return result


def _query_pairs(arguments: Mapping[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    """Scalars as ``k=v``, arrays as repeated ``k=v``, objects as dotted ``k.sub=v``; nulls left out."""
    pairs: list[tuple[str, str]] = []
    for key, value in arguments.items():
        name = f"{prefix}{key}"
        if value is None:
            continue
        if isinstance(value, dict):
            pairs.extend(_query_pairs(value, f"{name}."))
        elif isinstance(value, list):
            pairs.extend((name, format_scalar(item)) for item in value if item is not None)
        else:
            pairs.append((name, format_scalar(value)))
    return pairs


def _set_timeout(request: httpx.Request, deadline: float | None) -> None:
    if deadline is None:
        return
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise httpx.TimeoutException("deadline passed", request=request)
    request.extensions["timeout"] = httpx.Timeout(remaining).as_dict()


def _timeout(tool: str) -> ToolTimeoutError:
    return ToolTimeoutError(f"{tool}: the HTTP request did not finish before the deadline.", tool=tool)


class _Retry(Exception):
    """A failed attempt that may be tried again: the error it ends with, and ``Retry-After``."""

    def __init__(self, error: ExecutionError, after: float | None) -> None:
        super().__init__(error.message)
        self.error = error
        self.after = after


def _transport_error(tool: str, exc: httpx.HTTPError) -> ExecutionError:
    category, reason, retryable = describe_failure(exc)
    return ExecutionError(f"{tool}: the HTTP request failed: {reason}.", tool=tool,
                          details={"category": category, "retryable": retryable})


def _too_many_redirects(tool: str) -> ExecutionError:
    return ExecutionError(f"{tool}: too many redirects (more than {MAX_REDIRECTS}).", tool=tool)


@contextmanager
def _translated_errors(tool: str) -> Iterator[None]:
    """httpx's exceptions as the errors the LLM sees: ``TIMEOUT``, else ``EXECUTION_ERROR``."""
    try:
        yield
    except httpx.TimeoutException:
        raise _timeout(tool) from None
    except httpx.HTTPError as exc:
        raise _transport_error(tool, exc) from None


def ssl_context(ca_files: list[str], ca_dir: str, insecure: bool) -> ssl.SSLContext | bool:
    """The ``verify`` value for httpx from a 0.2.0 ``clientTlsConfig``."""
    if insecure:
        return False
    if not ca_files and not ca_dir:
        return True
    context = ssl.create_default_context()
    try:
        for path in ca_files:
            context.load_verify_locations(cafile=path)
        if ca_dir:
            context.load_verify_locations(capath=ca_dir)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigurationError(f"clientTlsConfig: cannot load CA certificates ({exc})") from None
    return context
