"""Sending a built request: credentials, redirects, retries, bounded reads, result mapping.

What a caller can rely on:

* Redirects are followed only within the same origin (scheme, host, port), at most
  ``max_redirects`` times. A redirect to another origin is refused unless its host is in
  ``redirect_hosts``; then credentials, cookies and configured headers are stripped,
  a redirect that would re-send a body to another origin is refused, and the target
  must pass the egress block list (no loopback, private or metadata address, however
  spelled or resolved; the connection is pinned to the addresses checked).
* Retries: only for idempotent methods (or requests carrying an idempotency key) on
  429/502/503/504 and transport errors; a connection that was never established may be
  retried for any method. Backoff is exponential with jitter and honours ``Retry-After``;
  a wait that would pass the deadline, or a ``Retry-After`` over ``max_retry_after``
  (60 s, with or without a deadline), is not started: the error goes to the caller with
  its ``retry_after``.
* Reads go through the core's bounded reader (:mod:`mcs.http`): streamed, stopped at
  ``max_response_bytes`` of *decoded* content (a compression bomb cannot fill memory).
  With the driver's own transports the deadline covers connect, headers and body as a
  whole, not one socket read.
* A non-2xx answer raises ``EXECUTION_ERROR`` naming the status, with a body excerpt.
"""

from __future__ import annotations

import asyncio
import functools
import random
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson

from mcs.errors import ExecutionError, ToolTimeoutError
from mcs.http import (
    ACCEPT_ENCODING,
    aread_body,
    bounded,
    describe_failure,
    header_values,
    pin,
    read_body,
    retry_after,
    truncation_marker,
)
from mcs.redaction import credential_forms, excerpt, scrubbed_logs
from mcs.urls import same_origin
from mcs_rest._auth import Applied, Scheme, apply
from mcs_rest._request import Built, HttpOptions, cookie_header
from mcs_rest._results import BinaryBody, TooDeep, load_json

REDIRECTS = frozenset({301, 302, 303, 307, 308})
_EXCERPT = 600
_SENSITIVE = frozenset({"authorization", "proxy-authorization", "cookie"})
_DEFAULT_HEADERS = (
    ("Accept", "application/json, */*;q=0.5"),
    ("Accept-Encoding", ACCEPT_ENCODING),  # decoded by mcs.http, with a bound
    ("User-Agent", "mcs-rest/0.1"),
)


@dataclass
class Response:
    """The outcome of one call: status, media type and the decoded value."""

    status: int
    content_type: str
    value: Any
    truncated: bool = False
    headers: Mapping[str, str] = field(default_factory=dict)
    #: The credentials the request carried, as texts a peer may echo (longest first):
    #: scrubbed from errors. Worked out only when asked (only an error needs them).
    secrets: Callable[[], tuple[str, ...]] = tuple
    #: ``value`` came from a JSON body that may hold integers beyond 2**53 - 1 (kept exact here).
    wide_ints: bool = False
    #: The body is JSON nested deeper than :data:`mcs.truncation.MAX_JSON_DEPTH`: ``value`` is its text.
    too_deep: bool = False


# ---------------------------------------------------------------------- reading


def _media(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def _charset(content_type: str) -> str:
    for part in content_type.split(";")[1:]:
        key, _, value = part.strip().partition("=")
        if key.lower() == "charset" and value:
            return value.strip('"')
    return "utf-8"


def _is_text(media: str) -> bool:
    return (
        media.startswith("text/") or media.endswith(("+xml", "/xml", "/javascript", "+yaml", "/yaml"))
        or media == "application/x-www-form-urlencoded"
    )


def _is_json(media: str) -> bool:
    return media == "application/json" or media.endswith("+json")


def _marker(cap: int) -> str:
    return truncation_marker(cap)


def _decode(status: int, headers: httpx.Headers, content_type: str, body: bytes, truncated: bool, cap: int) -> Response:
    media = _media(content_type)
    value: Any
    wide_ints = deep = False
    if not body:
        value = None
    elif _is_json(media) or (not media and body[:1] in (b"{", b"[")):
        if truncated:
            value = body.decode("utf-8", errors="replace") + _marker(cap)
        else:
            try:
                value, wide_ints = load_json(body)
            except TooDeep:  # read as text, and not judged against the spec (the checks recurse)
                value, deep = body.decode("utf-8", errors="replace"), True
            except ValueError:  # orjson.JSONDecodeError is one
                value = body.decode("utf-8", errors="replace")
    elif _is_text(media) or not media:
        try:
            value = body.decode(_charset(content_type), errors="replace")
        except LookupError:
            value = body.decode("utf-8", errors="replace")
        if truncated:
            value += _marker(cap)
    else:
        value = BinaryBody(body, content_type or "application/octet-stream", truncated)
    return Response(status, content_type, value, truncated, headers, wide_ints=wide_ints, too_deep=deep)


def read_sync(response: httpx.Response, cap: int, deadline: float | None, tool: str) -> Response:
    """The decoded :class:`Response`, read by the core's bounded reader (:mod:`mcs.http`).

    Raises:
        ExecutionError: the body broke off (the peer closed early, a reset, a body shorter
            than its ``Content-Length``), with the failure's category.
    """
    content_type, encoding = header_values(response.headers, "content-type", "content-encoding")
    try:
        body = read_body(response, max_bytes=cap, deadline=deadline, tool=tool, encoding=encoding)
    except httpx.TransportError as exc:
        raise _broken_off(tool, exc) from None
    return _decode(response.status_code, response.headers, content_type, body.data, body.truncated, cap)


async def read_async(response: httpx.Response, cap: int, deadline: float | None, tool: str) -> Response:
    content_type, encoding = header_values(response.headers, "content-type", "content-encoding")
    try:
        body = await aread_body(response, max_bytes=cap, deadline=deadline, tool=tool, encoding=encoding)
    except httpx.TransportError as exc:
        raise _broken_off(tool, exc) from None
    return _decode(response.status_code, response.headers, content_type, body.data, body.truncated, cap)


def _broken_off(tool: str, exc: httpx.TransportError) -> ExecutionError:
    category, reason, retryable = describe_failure(exc)
    return ExecutionError(f"{tool}: the API's answer broke off: {reason}.", tool=tool,
                          details={"category": category, "retryable": retryable})


def error_for(
    response: Response, method: str, path: str, tool: str, argument_secrets: Sequence[str] = ()
) -> ExecutionError:
    """``EXECUTION_ERROR`` for a non-2xx answer, with a hint the LLM can act on. The
    credentials the request carried and ``argument_secrets`` (the call's secret-typed
    argument values) are scrubbed from the body excerpt it quotes, before it is cut: a peer
    may echo them (a debug error page), and the model must never read them, whole or in part."""
    status = response.status
    value = response.value
    secrets = response.secrets()
    if argument_secrets:
        secrets = tuple(sorted({*secrets, *credential_forms(argument_secrets)}, key=len, reverse=True))
    if isinstance(value, bytes):
        said = excerpt(f"<{len(value)} bytes of {response.content_type or 'binary data'}>", secrets, _EXCERPT)
    elif isinstance(value, str):  # an HTML or XML page may write a credential as character references
        media = _media(response.content_type)
        said = excerpt(value, secrets, _EXCERPT, markup=media.endswith(("html", "xml")))
    elif value is None:
        said = "<empty body>"
    else:
        said = excerpt(orjson.dumps(value).decode(), secrets, _EXCERPT, fold=False)
    if status in (400, 409, 422):
        hint = "Fix the arguments (see the message) and call again."
    elif status in (401, 403):
        hint = "The request was not authorised; calling again with the same arguments will not help."
    elif status == 404:
        hint = "Nothing was found there; check the identifiers in the arguments."
    elif status == 429:
        hint = "The server is rate limiting; wait before calling again."
    elif status >= 500:
        hint = "The server failed; you may try again later."
    else:
        hint = "The call did not succeed."
    reason = httpx.codes.get_reason_phrase(status)
    details: dict[str, Any] = {"status": status, "body": said, "category": "upstream" if status >= 500 else "request",
                               "retryable": status in (408, 429) or status >= 500}
    after = retry_after(response.headers) if isinstance(response.headers, httpx.Headers) else None
    if after is not None:
        details["retry_after"] = after
    return ExecutionError(
        f"{method} {path} returned HTTP {status}{' ' + reason if reason else ''}. {hint} Response: {said}",
        tool=tool,
        details=details,
    )


# ---------------------------------------------------------------------- building requests
#
# httpx.Request("GET", url) parses and validates the whole URL on every call, which is
# most of what building a request costs. The base URL is parsed once; each request joins
# its path (built from encoded values, SECURITY.md B1) and query to that parse, when the
# path is one httpx would send unchanged: only characters its path encoding leaves as
# they are, whole %XX escapes, no dot segment. Anything else takes httpx's own parse.

_KEPT_PATH = re.compile(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-Fa-f]{2})*")
_PROBE_PATH = "/a%2F~b/c;d=e,f.g"


@functools.lru_cache(maxsize=64)
def _parsed_base(base: str) -> tuple[Any, str] | None:
    """httpx's parse of ``base`` and its Host header value, or ``None`` when requests to it
    must be parsed whole (a query or fragment in it, or an httpx whose URL internals differ:
    the join is checked against httpx's own parse here)."""
    try:
        url = httpx.URL(base)
        reference = url._uri_reference
        if reference.query is not None or reference.fragment is not None:
            return None
        if str(_joined(reference, _PROBE_PATH, "q=1")) != str(httpx.URL(base + _PROBE_PATH + "?q=1")):
            return None
    except (AttributeError, TypeError, ValueError, httpx.InvalidURL):
        return None
    return reference, url.netloc.decode("ascii")


@functools.lru_cache(maxsize=64)
def _fixed_headers(host: str, configured: tuple[tuple[str, str], ...]) -> httpx.Headers:
    """Host, the defaults and the configured headers, normalised once (each request copies them)."""
    return httpx.Headers([("Host", host), *_DEFAULT_HEADERS, *configured])


def _joined(reference: Any, path: str, query: str | None) -> httpx.URL:
    # Positional, not ``_replace`` (a third of the cost); ``_parsed_base``'s probe checks
    # the field order against httpx's own parse.
    scheme, userinfo, host, port, base_path, _, fragment = reference
    url = httpx.URL.__new__(httpx.URL)
    url._uri_reference = type(reference)(scheme, userinfo, host, port, base_path + path, query, fragment)
    return url


def _direct_url(built: Built, query: list[tuple[str, str]]) -> tuple[httpx.URL, str] | None:
    """The request URL joined to the parsed base, and its Host value; ``None``: parse it whole."""
    if not built.base or not built.url.startswith(built.base):
        return None
    parsed = _parsed_base(built.base)
    path = built.url[len(built.base):]
    if parsed is None or not path.startswith("/") or "/." in path or not _KEPT_PATH.fullmatch(path):
        return None
    reference, host = parsed
    pairs: Any = query  # httpx types the values more widely than list invariance allows
    return _joined(reference, path, str(httpx.QueryParams(pairs)) if query else None), host


@dataclass
class _Plan:
    """Everything needed to (re)build the request for each attempt and redirect."""

    built: Built
    schemes: list[Scheme]
    options: HttpOptions
    tool: str
    path: str
    deadline: float | None
    retryable: bool
    sensitive: frozenset[str] = frozenset()
    sent: list[list[Applied]] = field(default_factory=list)

    def secrets(self) -> tuple[str, ...]:
        """The credentials of every attempt so far and the configured headers' values, in
        every form a peer may echo them (:func:`mcs.redaction.credential_forms`)."""
        sent = [value for applied in self.sent for extra in applied
                for _, value in (*extra.headers, *extra.query, *extra.cookies)]
        return credential_forms([*sent, *(value for _, value in self.options.headers)])

    def request(self, applied: list[Applied]) -> httpx.Request:
        """The request to send: built directly (no client defaults, no cookie jar)."""
        built = self.built
        if applied:
            self.sent.append(applied)
        headers = list(built.headers)  # beyond the defaults and the configured ones
        query = built.query
        cookies = built.cookies
        if self.sensitive or applied:
            headers, query, cookies = _without_owned(headers, query, cookies, applied, self.sensitive)
            for extra in applied:
                headers.extend(extra.headers)
                query.extend(extra.query)
                cookies.extend(extra.cookies)
        if cookies:
            headers.append(("Cookie", cookie_header(cookies)))
        if self.deadline is None:
            extensions: dict[str, Any] = {}
        else:
            left = max(0.001, self.deadline - time.monotonic())
            extensions = {"timeout": {"connect": left, "read": left, "write": left, "pool": left}}
        direct = None if built.files is not None or built.data is not None else _direct_url(built, query)
        if direct is not None:
            url, host = direct
            content = built.content
            if content is not None:
                headers.append(("Content-Length", str(len(content))))
            elif built.method in ("POST", "PUT", "PATCH"):
                headers.append(("Content-Length", "0"))
            # With ``stream=``, httpx adds no header of its own: Host and Content-Length
            # are set here as its own encoding would.
            request = httpx.Request(
                built.method, url, stream=httpx.ByteStream(content or b""), extensions=extensions,
                headers=[("Host", host), *_DEFAULT_HEADERS, *self.options.headers, *headers] if headers
                else _fixed_headers(host, self.options.headers),
            )
            request.read()
            return request
        headers[:0] = [*_DEFAULT_HEADERS, *self.options.headers]
        params: Any = query or None
        files: Any = built.files
        request = httpx.Request(
            built.method, built.url, params=params, headers=headers,
            content=built.content, data=built.data, files=files, extensions=extensions,
        )
        # A multipart body is a stream: read it (its parts are in memory already), so a
        # 307/308 can send it again, or see it and refuse to send it to another origin.
        request.read()
        return request

    def redirect(self, request: httpx.Request, response: httpx.Response, hops: int) -> httpx.Request:
        """The next request of a redirect chain, or an error when it must not be followed."""
        if hops >= self.options.max_redirects:
            raise ExecutionError(f"{self.tool}: the server redirected more than {self.options.max_redirects} times; stopped.", tool=self.tool)
        location = response.headers.get("location", "")
        target = request.url.join(location)
        if target.scheme not in ("http", "https"):
            raise ExecutionError(f"{self.tool}: the server redirected to a {target.scheme!r} URL; refused.", tool=self.tool)
        same = same_origin(target, request.url)
        keep_body = response.status_code in (307, 308)
        method = request.method
        if response.status_code == 303 or (response.status_code in (301, 302) and method == "POST"):
            method, keep_body = "GET", False
        if not same:
            if target.host not in self.options.redirect_hosts:
                raise ExecutionError(
                    f"{self.tool}: the server redirected to another origin ({target.scheme}://{target.host}); "
                    "not followed. The driver's redirect_hosts option must allow that host.",
                    tool=self.tool, details={"status": response.status_code},
                )
            if keep_body and request.content:
                raise ExecutionError(f"{self.tool}: a redirect would re-send the request body to another origin; refused.", tool=self.tool)
            # The upstream chose this destination: the block list applies, and the
            # connection goes to the addresses checked now (SECURITY.md B3-B5).
            pin(target, self.options.egress)
        headers = [
            (k, v) for k, v in request.headers.multi_items()
            if k.lower() not in ("host", "content-length", "transfer-encoding")
            and (keep_body or k.lower() != "content-type")
            and (same or (k.lower() not in _SENSITIVE and k.lower() not in self.sensitive))
        ]
        return httpx.Request(
            method, target, headers=headers, content=request.content if keep_body else None,
            extensions=self._extensions(request),
        )

    def _extensions(self, request: httpx.Request) -> dict[str, Any]:
        if self.deadline is None:
            return dict(request.extensions)
        left = max(0.001, self.deadline - time.monotonic())
        return {"timeout": {"connect": left, "read": left, "write": left, "pool": left}}

    def wait_after_error(self, exc: httpx.TransportError, attempt: int) -> float:
        """Seconds to wait before retrying a request that failed with ``exc``.

        Raises:
            ToolTimeoutError: ``exc`` is a timeout.
            ExecutionError: the request may not be retried (or no retry fits before the deadline).
        """
        if isinstance(exc, httpx.TimeoutException):
            raise ToolTimeoutError(f"{self.tool} did not get a response in time.", tool=self.tool) from None
        never_sent = isinstance(exc, httpx.ConnectError)
        delay = self.backoff(attempt, None) if (never_sent or self.retryable) else None
        if delay is None:
            category, reason, retryable = describe_failure(exc)
            raise ExecutionError(
                f"{self.tool}: could not reach the API: {reason}.", tool=self.tool,
                details={"category": category, "retryable": retryable and self.retryable},
            ) from None
        return delay

    def wait_after_status(self, attempt: int, response: httpx.Response) -> float | None:
        """Seconds to wait before retrying a response whose status asks for it; ``None`` keeps it."""
        if response.status_code in self.options.retry_statuses and self.retryable:
            return self.backoff(attempt, response)
        return None

    @property
    def uses_oauth(self) -> bool:
        """Whether a scheme fetches OAuth tokens, so a 401 may mean only that one expired."""
        return any(s.oauth for s in self.schemes)

    def invalidate_tokens(self) -> None:
        """Forget every cached OAuth token (after a 401); the next attempt fetches new ones."""
        for s in self.schemes:
            if s.oauth:
                s.oauth.invalidate()

    def backoff(self, attempt: int, response: httpx.Response | None) -> float | None:
        """Seconds to wait before the next attempt, or ``None`` when no retry should happen."""
        if attempt >= self.options.retries:
            return None
        delay: float = min(self.options.max_backoff, self.options.backoff * (2 ** attempt)) * (0.5 + random.random() / 2)
        if response is not None:
            after = retry_after(response.headers)
            if after is not None:
                if after > self.options.max_retry_after:  # the server's value bounds no wait of ours
                    return None
                delay = max(delay, after)
        if self.deadline is not None and time.monotonic() + delay >= self.deadline:
            return None
        return delay


def _without_owned(
    headers: list[tuple[str, str]], query: list[tuple[str, str]], cookies: list[tuple[str, str]],
    applied: list[Applied], sensitive: frozenset[str],
) -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[tuple[str, str]]]:
    """The arguments' headers, query pairs and cookies without those a credential or a
    configured header sets: the configuration's value is the only one sent (an argument of
    the same name would come first, and many servers read the first)."""
    owned_query = {name for extra in applied for name, _ in extra.query}
    owned_cookies = {name for extra in applied for name, _ in extra.cookies}
    owned_headers = sensitive | {name.lower() for extra in applied for name, _ in extra.headers}
    return ([(k, v) for k, v in headers if k.lower() not in owned_headers],
            [(k, v) for k, v in query if k not in owned_query],
            [(k, v) for k, v in cookies if k not in owned_cookies])


def sensitive_names(schemes: list[Scheme], options: HttpOptions) -> frozenset[str]:
    names = {s.key_name.lower() for s in schemes if s.kind == "apiKey" and s.location == "header"}
    names |= {name.lower() for name, _ in options.headers}
    return frozenset(names)


def _send(transport: httpx.BaseTransport, request: httpx.Request) -> httpx.Response:
    response = transport.handle_request(request)
    response.request = request
    return response


async def _asend(transport: httpx.AsyncBaseTransport, request: httpx.Request) -> httpx.Response:
    response = await transport.handle_async_request(request)
    response.request = request
    return response


def send_sync(client: httpx.Client, transport: httpx.BaseTransport, plan: _Plan) -> Response:
    """Send ``plan`` straight to ``transport`` (the client only fetches OAuth tokens).

    Going below :class:`httpx.Client` skips what this driver must not or need not do per
    request: the cookie jar (no state leaks from one call into the next), its redirect
    and auth flows (handled here with stricter rules), its default headers. The
    credentials sent appear in no log record of the HTTP libraries
    (:func:`mcs.redaction.scrubbed_logs`).
    """
    with bounded(plan.deadline), scrubbed_logs(plan.secrets):
        return _send_sync(client, transport, plan)


def _send_sync(client: httpx.Client, transport: httpx.BaseTransport, plan: _Plan) -> Response:
    attempt, refreshed = 0, False
    while True:
        applied = [apply(s, s.oauth.token(client, _left(plan.deadline)) if s.oauth else None) for s in plan.schemes]
        request = plan.request(applied)
        try:
            response = _send(transport, request)
            hops = 0
            while response.status_code in REDIRECTS and "location" in response.headers:
                response.close()
                request = plan.redirect(request, response, hops)
                hops += 1
                response = _send(transport, request)
        except httpx.TransportError as exc:
            time.sleep(plan.wait_after_error(exc, attempt))
            attempt += 1
            continue
        if response.status_code == 401 and not refreshed and plan.uses_oauth:
            response.close()
            plan.invalidate_tokens()
            refreshed = True
            continue
        delay = plan.wait_after_status(attempt, response)
        if delay is not None:
            response.close()
            time.sleep(delay)
            attempt += 1
            continue
        result = read_sync(response, plan.options.max_response_bytes, plan.deadline, plan.tool)
        result.secrets = plan.secrets
        return result


async def send_async(client: httpx.AsyncClient, transport: httpx.AsyncBaseTransport, plan: _Plan) -> Response:
    """The async twin of :func:`send_sync`."""
    with bounded(plan.deadline), scrubbed_logs(plan.secrets):
        return await _send_async(client, transport, plan)


async def _send_async(client: httpx.AsyncClient, transport: httpx.AsyncBaseTransport, plan: _Plan) -> Response:
    attempt, refreshed = 0, False
    while True:
        applied = [apply(s, await s.oauth.atoken(client, _left(plan.deadline)) if s.oauth else None) for s in plan.schemes]
        request = plan.request(applied)
        try:
            response = await _asend(transport, request)
            hops = 0
            while response.status_code in REDIRECTS and "location" in response.headers:
                await response.aclose()
                request = plan.redirect(request, response, hops)
                hops += 1
                response = await _asend(transport, request)
        except httpx.TransportError as exc:
            await asyncio.sleep(plan.wait_after_error(exc, attempt))
            attempt += 1
            continue
        if response.status_code == 401 and not refreshed and plan.uses_oauth:
            await response.aclose()
            plan.invalidate_tokens()
            refreshed = True
            continue
        delay = plan.wait_after_status(attempt, response)
        if delay is not None:
            await response.aclose()
            await asyncio.sleep(delay)
            attempt += 1
            continue
        result = await read_async(response, plan.options.max_response_bytes, plan.deadline, plan.tool)
        result.secrets = plan.secrets
        return result


def _left(deadline: float | None) -> float | None:
    return None if deadline is None else max(0.001, deadline - time.monotonic())


Plan = _Plan
