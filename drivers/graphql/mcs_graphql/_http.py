"""Sending one GraphQL request over HTTP with gql's httpx transport.

What a caller can rely on:

* One pooled connection (gql ``SyncClientSession``) for the sync path and one per event
  loop for the async path; a dead server gives a clear error and the next call reconnects.
* The body is read through the core's bounded reader (:func:`mcs.http.decoded_chunks`):
  at most ``max_response_bytes`` of *decoded* content (gzip and deflate are inflated with
  a bound, so a compression bomb cannot fill memory). A larger answer comes back as its
  first bytes and a ``[truncated ...]`` marker instead of a parsed result.
* The call's deadline covers connect, headers and body (the core's transports inside
  :func:`mcs.http.bounded`), and the reader stops once it has passed between two chunks.
* Retries (``retries`` times, exponential backoff with jitter, never past the deadline)
  only for queries: on a connection failure or HTTP 429/502/503/504. A mutation is sent
  once. An HTTP 401 calls the ``auth`` callable again and retries once with its headers.
* Headers: the configured static ones and what ``auth`` returns; nothing from the model or
  the caller's context is ever forwarded.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import random
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from gql import Client, GraphQLRequest
from gql.transport.exceptions import (
    TransportConnectionFailed,
    TransportError,
    TransportProtocolError,
    TransportQueryError,
    TransportServerError,
)
from gql.transport.httpx import HTTPXAsyncTransport, HTTPXTransport
from gql.transport.httpx import httpx as http  # type: ignore[attr-defined]  # httpx or httpx2, as gql chose

from mcs import http as mcs_http
from mcs.errors import ConfigurationError, ExecutionError, ToolTimeoutError
from mcs.event_loops import PerLoop, close_outside_loops
from mcs.redaction import credential_forms, excerpt, scrubbed_logs

RETRY_STATUSES = frozenset({429, 502, 503, 504})
_DEFAULT_HEADERS = {
    "Accept": "application/graphql-response+json, application/json;q=0.9",
    "Accept-Encoding": "gzip, deflate",
    "User-Agent": "mcs-graphql/0.1",
}
_MAX_BACKOFF = 8.0

AuthHeaders = Callable[[], Mapping[str, str] | Awaitable[Mapping[str, str]]]


@dataclass(frozen=True, slots=True)
class Answer:
    """What the server answered: GraphQL ``data`` and ``errors``, or a truncated body."""

    data: Any = None
    errors: list[Any] | None = None
    truncated: str | None = None
    #: The credentials the request carried, in the forms a server may echo them
    #: (:func:`mcs.redaction.credential_forms`): to scrub from ``errors``.
    secrets: tuple[str, ...] = ()


def _truncated_text(cut: mcs_http.BodyTooLarge) -> str:
    return cut.head.decode("utf-8", errors="replace") + (
        f"\n[truncated: the response passed {cut.cap} bytes and was cut; select fewer fields "
        "or ask for a smaller page (first/last)]"
    )


class _CappedStream(http.SyncByteStream, http.AsyncByteStream):
    """The response body as gql reads it: decoded and bounded by the core's reader
    (:func:`mcs.http.decoded_chunks`), under the deadline of the enclosing ``bounded`` block."""

    def __init__(self, inner: Any, encoding: str, cap: int) -> None:
        self._inner = inner
        self._encoding = encoding
        self._cap = cap

    def __iter__(self) -> Iterator[bytes]:
        yield from mcs_http.decoded_chunks(self._inner, encoding=self._encoding, max_bytes=self._cap)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for data in mcs_http.adecoded_chunks(self._inner, encoding=self._encoding, max_bytes=self._cap):
            yield data

    def close(self) -> None:
        self._inner.close()

    async def aclose(self) -> None:
        await self._inner.aclose()


def _capped(response: Any, cap: int) -> Any:
    headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() not in ("content-encoding", "content-length")]
    stream = _CappedStream(response.stream, response.headers.get("content-encoding", ""), cap)
    return http.Response(response.status_code, headers=headers, stream=stream, extensions=response.extensions)


class _CappedTransport(http.BaseTransport):
    def __init__(self, inner: Any, cap: int) -> None:
        self._inner = inner
        self._cap = cap

    def handle_request(self, request: Any) -> Any:
        return _capped(self._inner.handle_request(request), self._cap)

    def close(self) -> None:
        self._inner.close()


class _AsyncCappedTransport(http.AsyncBaseTransport):
    def __init__(self, inner: Any, cap: int) -> None:
        self._inner = inner
        self._cap = cap

    async def handle_async_request(self, request: Any) -> Any:
        return _capped(await self._inner.handle_async_request(request), self._cap)

    async def aclose(self) -> None:
        await self._inner.aclose()


def check_headers(headers: Mapping[str, str], where: str) -> dict[str, str]:
    """``headers`` as a dict of strings; a line break or NUL in a name or value is refused."""
    out: dict[str, str] = {}
    for key, value in headers.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise ConfigurationError(f"{where}: header names and values must be strings")
        if any(c in key + value for c in "\r\n\0"):
            raise ConfigurationError(f"{where}: header {key!r} contains a line break or NUL")
        out[key] = value
    return out


class HttpLink:
    """One GraphQL endpoint over HTTP, shared by every tool of a driver."""

    def __init__(
        self, url: str, *, headers: Mapping[str, str], auth: AuthHeaders | None, max_response_bytes: int,
        retries: int, backoff: float, verify: bool | str,
    ) -> None:
        self.url = url
        self.max_response_bytes = max_response_bytes
        self.retries = retries
        self.backoff = backoff
        self._headers = {**_DEFAULT_HEADERS, **headers}
        self._configured = tuple(headers.values())
        self._auth = auth
        self._verify = verify
        self._client: Any = None
        self._session: Any = None
        self._aclients: PerLoop[tuple[Any, Any]] = PerLoop(_aclose_client)  # (gql client, its session) per loop
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ headers and timeouts

    def auth_headers(self) -> dict[str, str]:
        """What the ``auth`` callable gives now (sync path)."""
        if self._auth is None:
            return {}
        given = self._auth()
        if inspect.isawaitable(given):
            given = asyncio.run(_awaited(given))
        return self._checked(given)

    async def aauth_headers(self) -> dict[str, str]:
        """What the ``auth`` callable gives now, without blocking the loop (a plain callable runs
        on a worker thread)."""
        if self._auth is None:
            return {}
        if inspect.iscoroutinefunction(self._auth):
            given = await self._auth()
        else:
            given = await asyncio.to_thread(self._auth)
            if inspect.isawaitable(given):
                given = await given
        return self._checked(given)

    def secrets(self, auth: Mapping[str, str]) -> tuple[str, ...]:
        """The configured and ``auth`` header values, in every form a server may echo them."""
        return credential_forms([*self._configured, *auth.values()])

    @staticmethod
    def _checked(given: Any) -> dict[str, str]:
        if not isinstance(given, Mapping):
            raise ExecutionError("The driver's auth callable did not return a mapping of headers.")
        try:
            return check_headers(given, "the auth callable")
        except ConfigurationError as exc:
            raise ExecutionError(f"The driver's credentials are unusable: {exc}") from None

    @staticmethod
    def _extra(deadline: float | None, headers: Mapping[str, str]) -> dict[str, Any]:
        extra: dict[str, Any] = {}
        if headers:
            extra["headers"] = dict(headers)
        if deadline is not None:
            extra["timeout"] = http.Timeout(max(0.001, deadline - time.monotonic()))
        return extra

    # ------------------------------------------------------------------ sessions

    def _sync_session(self) -> Any:
        if self._session is not None:
            return self._session
        with self._lock:  # two threads calling at once still share one pool
            return self._open_sync_session()

    def _open_sync_session(self) -> Any:
        if self._session is None:
            # The core's transport (for the httpx gql runs on): sockets obey the call's whole deadline.
            inner = mcs_http.transport(verify=self._verify, client_module=http)
            transport = HTTPXTransport(
                self.url, headers=self._headers, transport=_CappedTransport(inner, self.max_response_bytes),
                follow_redirects=False, timeout=None,
            )
            client: Any = Client(transport=transport, execute_timeout=None)  # gql's connect/close are untyped
            self._session = client.connect_sync()
            self._client = client
        return self._session

    async def _async_session(self) -> Any:
        pair = self._aclients.current()
        if pair is None:
            inner = mcs_http.async_transport(verify=self._verify, client_module=http)
            transport = HTTPXAsyncTransport(
                self.url, headers=self._headers, transport=_AsyncCappedTransport(inner, self.max_response_bytes),
                follow_redirects=False, timeout=None,
            )
            aclient: Any = Client(transport=transport, execute_timeout=None)
            session = await aclient.connect_async()
            pair = await self._aclients.add((aclient, session))
        return pair[1]

    def _release(self) -> list[tuple[Any, Any]]:
        """Close the sync pool and forget the async ones; returns those for the caller to close."""
        if self._client is not None:
            self._client.close_sync()
            self._client = self._session = None
        return self._aclients.release()

    def close(self) -> None:
        """Close the pools; async ones too when no loop runs (their loop is gone, and so are their sockets)."""
        close_outside_loops(self._release(), _aclose_client)

    async def aclose(self) -> None:
        """Close the pools from inside the event loop that used them."""
        for pair in self._release():
            await _aclose_client(pair)

    # ------------------------------------------------------------------ sending

    def send(self, request: GraphQLRequest, deadline: float | None, *, retryable: bool, tool: str) -> Answer:
        """Send ``request`` (sync); retries and error mapping as the module docstring says."""
        attempt, refreshed = 0, False
        while True:
            auth = self.auth_headers()
            extra = self._extra(deadline, auth)
            try:
                with mcs_http.bounded(deadline), scrubbed_logs(functools.partial(self.secrets, auth)):
                    result = self._sync_session().execute(request, get_execution_result=True, extra_args=extra)
                return Answer(data=result.data, errors=None)
            except TransportError as exc:
                outcome = self._after(exc, attempt, refreshed, deadline, retryable, tool, auth)
            if isinstance(outcome, Answer):
                return replace(outcome, secrets=self.secrets(auth))
            if outcome is None:
                refreshed = True
            else:
                time.sleep(outcome)
                attempt += 1

    async def asend(self, request: GraphQLRequest, deadline: float | None, *, retryable: bool, tool: str) -> Answer:
        """The async twin of :meth:`send`."""
        attempt, refreshed = 0, False
        while True:
            auth = await self.aauth_headers()
            extra = self._extra(deadline, auth)
            try:
                session = await self._async_session()
                with mcs_http.bounded(deadline), scrubbed_logs(functools.partial(self.secrets, auth)):
                    result = await session.execute(request, get_execution_result=True, extra_args=extra)
                return Answer(data=result.data, errors=None)
            except TransportError as exc:
                outcome = self._after(exc, attempt, refreshed, deadline, retryable, tool, auth)
            if isinstance(outcome, Answer):
                return replace(outcome, secrets=self.secrets(auth))
            if outcome is None:
                refreshed = True
            else:
                await asyncio.sleep(outcome)
                attempt += 1

    def _after(
        self, exc: TransportError, attempt: int, refreshed: bool, deadline: float | None, retryable: bool, tool: str,
        auth: Mapping[str, str],
    ) -> Answer | float | None:
        """What to do after ``exc``: an :class:`Answer` to return, seconds to wait before a
        retry, ``None`` to retry at once with fresh credentials; or raise the mapped error."""
        if isinstance(exc, TransportQueryError):
            return Answer(data=exc.data, errors=list(exc.errors or []))
        if isinstance(exc, TransportServerError):
            status = exc.code or 0
            if status == 401 and self._auth is not None and not refreshed:
                return None
            delay = self._delay(attempt, deadline) if retryable and status in RETRY_STATUSES else None
            if delay is None:
                raise status_error(status, tool) from None
            return delay
        if isinstance(exc, TransportConnectionFailed):
            cause = exc.__cause__
            if isinstance(cause, mcs_http.BodyTooLarge):
                return Answer(truncated=_truncated_text(cause))
            if isinstance(cause, http.TimeoutException | ToolTimeoutError):
                raise ToolTimeoutError(f"{tool} did not get a complete answer from the GraphQL server in time.", tool=tool) from None
            if isinstance(cause, ExecutionError):  # an unsupported or broken content encoding
                raise ExecutionError(f"{tool}: {cause.message}", tool=tool) from None
            delay = self._delay(attempt, deadline) if retryable else None
            if delay is None:
                reason = type(cause).__name__ if cause is not None else "connection failed"
                raise ExecutionError(
                    f"{tool}: could not reach the GraphQL server ({reason}). It may be down; try again later.",
                    tool=tool, details={"reason": reason},
                ) from None
            return delay
        if isinstance(exc, TransportProtocolError):
            raise ExecutionError(
                f"{tool}: the server did not answer with a GraphQL result.", tool=tool,
                details={"reason": excerpt(str(exc), self.secrets(auth), 300, markup=True)},
            ) from None
        raise ExecutionError(f"{tool}: the GraphQL transport failed ({type(exc).__name__}).", tool=tool) from None

    def _delay(self, attempt: int, deadline: float | None) -> float | None:
        if attempt >= self.retries:
            return None
        delay: float = min(_MAX_BACKOFF, self.backoff * (2**attempt)) * (0.5 + random.random() / 2)
        if deadline is not None and time.monotonic() + delay >= deadline:
            return None
        return delay


def status_error(status: int, tool: str) -> ExecutionError:
    """``EXECUTION_ERROR`` for an HTTP status without a GraphQL answer, with what to do."""
    if status in (401, 403):
        hint = "The request was not authorised; calling again will not help."
    elif status == 404:
        hint = "The server has no GraphQL endpoint at the configured URL."
    elif status == 429:
        hint = "The server is rate limiting; wait before calling again."
    elif status >= 500:
        hint = "The server failed; you may try again later."
    else:
        hint = "The server refused the request."
    return ExecutionError(f"{tool}: the GraphQL server answered HTTP {status}. {hint}", tool=tool, details={"status": status})


async def _awaited(value: Awaitable[Any]) -> Any:
    return await value


async def _aclose_client(pair: tuple[Any, Any]) -> None:
    await pair[0].close_async()
