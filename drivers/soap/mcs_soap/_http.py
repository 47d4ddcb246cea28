"""Sending SOAP messages: zeep transports over pooled httpx clients, bounded in size and time.

What a caller can rely on:

* Every request goes to the address zeep was given (the WSDL's or the configured
  endpoint); redirects are not followed.
* The whole call, connection set-up included, is bounded by the call's deadline
  (:data:`CALL` carries it from the driver); each read waits at most what is left.
* Requests go through the core's bounded HTTP path (:mod:`mcs.http`): its transports,
  whose sockets obey the call's total deadline, and its capped reader. A response body
  over ``max_response_bytes`` (after decompression, which is bounded too) is refused: a
  cut SOAP message would not parse, so nothing half-read is used.
* Retries (jittered exponential backoff, ``Retry-After`` honoured, never past the
  deadline) happen only for operations configured idempotent, on 429/502/503/504 and
  broken connections; a connection that was never established may be retried for any
  operation, as nothing was sent.
* A non-XML error answer (an HTML 404 page, a proxy's 502) becomes ``EXECUTION_ERROR``
  naming the HTTP status, with a short excerpt; SOAP faults are left to zeep. The call's
  credentials (:attr:`CallState.credentials`) are scrubbed from the excerpt and from a
  connection error's text, as a service or a proxy may quote them back, and from the
  records httpx and httpcore log while a request is sent.
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections.abc import Mapping
from typing import Any

import httpx
from requests import Response
from requests.structures import CaseInsensitiveDict
from zeep.transports import AsyncTransport, Transport
from zeep.wsdl import utils as _wsdl_utils

from mcs import http as mcs_http
from mcs.errors import ExecutionError, ToolTimeoutError
from mcs.redaction import excerpt, scrub, scrubbed_logs
from mcs_soap._callstate import CALL, CallState, HttpOptions
from mcs_soap._faults import echo_forms

_etree_to_string: Any = _wsdl_utils.etree_to_string
RETRY_STATUSES = frozenset({429, 502, 503, 504})
_EXCERPT = 400
_USER_AGENT = "mcs-soap/0.1"


def _state() -> CallState:
    return CALL.get() or CallState(tool="soap", deadline=None, retryable=False)


def _timeouts(deadline: float | None) -> httpx.Timeout | None:
    if deadline is None:
        return None
    left = deadline - time.monotonic()
    if left <= 0:
        raise ToolTimeoutError("The call's deadline passed before the request was sent.")
    return httpx.Timeout(left)


def _refuse_oversize(tool: str, cap: int) -> ExecutionError:
    return ExecutionError(
        f"{tool}: the response is larger than {cap} bytes (max_response_bytes) and "
        "was refused; a SOAP message cannot be cut. Ask for less data if the operation allows it.",
        tool=tool, details={"max_response_bytes": cap},
    )


def _whole(body: mcs_http.Body, options: HttpOptions, tool: str) -> bytes:
    """The body read by the core's reader, refused (not cut) over the cap."""
    if body.truncated:
        raise _refuse_oversize(tool, options.max_response_bytes)
    return body.data


def _to_requests(response: httpx.Response, content: bytes) -> Response:
    """The ``requests.Response`` zeep expects, built from what was read."""
    out = Response()
    out._content = content
    out.status_code = response.status_code
    out.headers = CaseInsensitiveDict(response.headers.items())
    out.encoding = response.charset_encoding or "utf-8"
    out.url = str(response.request.url)
    return out


def _is_xml(content_type: str, content: bytes) -> bool:
    media = content_type.split(";", 1)[0].strip().lower()
    if media.endswith(("/xml", "+xml")) or media == "multipart/related":
        return True
    return content.lstrip()[:1] == b"<" and not content.lstrip()[:15].lower().startswith((b"<!doctype html", b"<html"))


_PROLOG_SKIP = re.compile(rb"\s*(<\?.*?\?>|<!--.*?-->)", re.DOTALL)


def declares_dtd(content: bytes) -> bool:
    """Whether an XML document's prolog holds a ``<!DOCTYPE`` (checked before any parsing)."""
    position = 3 if content.startswith(b"\xef\xbb\xbf") else 0
    while True:
        match = _PROLOG_SKIP.match(content, position)
        if match is None:
            break
        position = match.end()
    return content[position:].lstrip()[:9].upper() == b"<!DOCTYPE"


def _check_status(response: Response, state: CallState) -> None:
    tool, status = state.tool, response.status_code
    if declares_dtd(response.content or b""):
        raise ExecutionError(
            f"{tool}: the service's response declares a DTD; it was refused unread "
            "(DTDs, entities and external references are never processed).",
            tool=tool, details={"status": status, "refused": "DTD"},
        )
    if status in (200, 201, 202):
        return
    if _is_xml(response.headers.get("Content-Type", ""), response.content or b""):
        return  # a SOAP fault (500, or 400 in SOAP 1.2): zeep reads it
    said = excerpt((response.content or b"").decode("utf-8", "replace"), echo_forms(state.credentials), _EXCERPT,
                   markup=True)  # an error page may write a credential as character references
    hint = "The service failed; you may try again later." if status >= 500 else (
        "The request was not authorised; calling again will not help." if status in (401, 403) else
        "The call did not succeed.")
    raise ExecutionError(
        f"{tool}: the service answered HTTP {status} without a SOAP message. {hint}"
        + (f" Response: {said}" if said else ""),
        tool=tool, details={"status": status, "body": said},
    )


class _Attempts:
    """The retry decisions for one call."""

    def __init__(self, options: HttpOptions, state: CallState) -> None:
        self.options = options
        self.state = state
        self.count = 0

    def _delay(self, after: float | None) -> float | None:
        if self.count >= self.options.retries:
            return None
        delay: float = min(self.options.max_backoff, self.options.backoff * 2.0**self.count) * (0.5 + random.random() / 2)
        if after is not None:
            delay = max(delay, after)
        if self.state.deadline is not None and time.monotonic() + delay >= self.state.deadline:
            return None
        self.count += 1
        return delay

    def after_error(self, exc: httpx.TransportError) -> float:
        """The wait before retrying after ``exc``; raises when the call must not be retried."""
        tool = self.state.tool
        if isinstance(exc, httpx.TimeoutException):
            raise ToolTimeoutError(f"{tool} did not get a response in time.", tool=tool) from None
        never_sent = isinstance(exc, httpx.ConnectError)
        delay = self._delay(None) if (never_sent or self.state.retryable) else None
        if delay is None:
            raise ExecutionError(
                f"{tool}: could not reach the service "
                f"({type(exc).__name__}: {scrub(str(exc), echo_forms(self.state.credentials))}).", tool=tool,
                details={"retried": self.count},
            ) from None
        return delay

    def after_status(self, response: httpx.Response) -> float | None:
        if response.status_code in RETRY_STATUSES and self.state.retryable:
            delay: float | None = self._delay(mcs_http.retry_after(response.headers))
            return delay
        return None


def _headers(options: HttpOptions, headers: Mapping[str, str]) -> list[tuple[str, str]]:
    return [("User-Agent", _USER_AGENT), ("Accept-Encoding", mcs_http.ACCEPT_ENCODING),
            *options.headers, *((str(k), str(v)) for k, v in headers.items())]


def _incomplete(tool: str) -> ToolTimeoutError:
    return ToolTimeoutError(f"{tool} did not get a complete response in time.", tool=tool)


def send_sync(client: httpx.Client, options: HttpOptions, method: str, url: str, *,
              content: bytes | None = None, params: Any = None, headers: Mapping[str, str]) -> Response:
    """Send one request under the current :data:`CALL`; the body read whole, within the caps."""
    state = _state()
    with mcs_http.bounded(state.deadline), scrubbed_logs(lambda: echo_forms(state.credentials)):
        # connect, headers and body within the deadline, as a whole; no credential in httpx's logs
        return _send_sync(client, options, method, url, content=content, params=params, headers=headers)


def _send_sync(client: httpx.Client, options: HttpOptions, method: str, url: str, *,
               content: bytes | None = None, params: Any = None, headers: Mapping[str, str]) -> Response:
    state = _state()
    attempts = _Attempts(options, state)
    while True:
        request = client.build_request(method, url, content=content, params=params,
                                       headers=_headers(options, headers), timeout=_timeouts(state.deadline))
        try:
            response = client.send(request, stream=True)
        except httpx.TransportError as exc:
            time.sleep(attempts.after_error(exc))
            continue
        try:
            delay = attempts.after_status(response)
            if delay is not None:
                response.close()
                time.sleep(delay)
                continue
            body = mcs_http.read_body(response, max_bytes=options.max_response_bytes, deadline=state.deadline,
                                      tool=state.tool)
        except httpx.TimeoutException:
            raise _incomplete(state.tool) from None
        except httpx.TransportError as exc:
            time.sleep(attempts.after_error(exc))
            continue
        finally:
            response.close()
        out = _to_requests(response, _whole(body, options, state.tool))
        _check_status(out, state)
        return out


async def send_async(client: httpx.AsyncClient, options: HttpOptions, method: str, url: str, *,
                     content: bytes | None = None, params: Any = None, headers: Mapping[str, str]) -> Response:
    """The async twin of :func:`send_sync`."""
    state = _state()
    with mcs_http.bounded(state.deadline), scrubbed_logs(lambda: echo_forms(state.credentials)):
        return await _send_async(client, options, method, url, content=content, params=params, headers=headers)


async def _send_async(client: httpx.AsyncClient, options: HttpOptions, method: str, url: str, *,
                      content: bytes | None = None, params: Any = None, headers: Mapping[str, str]) -> Response:
    state = _state()
    attempts = _Attempts(options, state)
    while True:
        request = client.build_request(method, url, content=content, params=params,
                                       headers=_headers(options, headers), timeout=_timeouts(state.deadline))
        try:
            response = await client.send(request, stream=True)
        except httpx.TransportError as exc:
            await asyncio.sleep(attempts.after_error(exc))
            continue
        try:
            delay = attempts.after_status(response)
            if delay is not None:
                await response.aclose()
                await asyncio.sleep(delay)
                continue
            body = await mcs_http.aread_body(response, max_bytes=options.max_response_bytes,
                                             deadline=state.deadline, tool=state.tool)
        except httpx.TimeoutException:
            raise _incomplete(state.tool) from None
        except httpx.TransportError as exc:
            await asyncio.sleep(attempts.after_error(exc))
            continue
        finally:
            await response.aclose()
        out = _to_requests(response, _whole(body, options, state.tool))
        _check_status(out, state)
        return out


class SyncTransport(Transport):
    """zeep's transport for calls, over one pooled :class:`httpx.Client`."""

    def __init__(self, client: httpx.Client, options: HttpOptions) -> None:
        self.client = client
        self.options = options
        self.cache = None
        self.session = None
        self._close_session = False

    def post(self, address: str, message: bytes | str, headers: Mapping[str, str]) -> Response:
        data = message.encode("utf-8") if isinstance(message, str) else message
        return send_sync(self.client, self.options, "POST", address, content=data, headers=headers)

    def post_xml(self, address: str, envelope: Any, headers: Mapping[str, str]) -> Response:
        return self.post(address, _etree_to_string(envelope), headers)

    def get(self, address: str, params: Any, headers: Mapping[str, str]) -> Response:
        return send_sync(self.client, self.options, "GET", address, params=params, headers=headers)

    def load(self, url: str) -> bytes:
        raise ExecutionError(f"refused to load {url!r} while sending a call")

    def __del__(self) -> None:
        pass


class AsyncTransportOverHttpx(AsyncTransport):
    """zeep's async transport for calls, over one pooled :class:`httpx.AsyncClient`."""

    def __init__(self, client: httpx.AsyncClient, options: HttpOptions) -> None:
        self.client = client
        self.options = options
        self.cache = None
        self._close_session = False

    async def post(self, address: str, message: bytes | str, headers: Mapping[str, str]) -> Response:
        data = message.encode("utf-8") if isinstance(message, str) else message
        return await send_async(self.client, self.options, "POST", address, content=data, headers=headers)

    async def post_xml(self, address: str, envelope: Any, headers: Mapping[str, str]) -> Response:
        return await self.post(address, _etree_to_string(envelope), headers)

    async def get(self, address: str, params: Any, headers: Mapping[str, str]) -> Response:
        return await send_async(self.client, self.options, "GET", address, params=params, headers=headers)

    def load(self, url: str) -> bytes:
        raise ExecutionError(f"refused to load {url!r} while sending a call")

    async def aclose(self) -> None:
        await self.client.aclose()
