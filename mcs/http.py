"""One bounded way to speak HTTP, for every driver that does (DESIGN.md, section 11).

A peer can be hostile or broken: it can drip its headers one byte at a time, send an
endless body, a compression bomb, or answer for a name that later resolves elsewhere.
This module gives a driver three pieces that bound all of that; the REST, gen-mcp file
and RFC-0001 drivers use them, and any other HTTP-speaking driver should:

* :func:`transport` / :func:`async_transport`: httpx transports whose sockets obey the
  *total* deadline of the :func:`bounded` block they are used in. Connect, TLS, writing
  the request, reading headers and reading the body all get at most what is left of it,
  so a peer answering one byte every 0.5 s cannot keep a ``timeout=2`` call alive past
  2 s. (httpx's own timeouts are per socket operation.) Inside a block given an
  :class:`~mcs.urls.EgressPolicy`, a connection goes only to addresses the policy
  checked, resolved once (DNS-rebinding safe); :func:`pin` checks one more destination.
* :func:`read_body` / :func:`aread_body`: the body, streamed and inflated here (gzip,
  deflate) with a bound, cut at ``max_bytes`` of *decoded* content, never past the
  deadline. Send ``Accept-Encoding:`` :data:`ACCEPT_ENCODING` so nothing else comes.
* :func:`decoded_chunks` / :func:`adecoded_chunks`: the same reader for a library that
  reads the response itself (gql reads through httpx): wrap the raw stream, and the
  library sees decoded bytes; past the cap :class:`BodyTooLarge` carries the head.
* :func:`truncation_marker` (from :mod:`mcs.truncation`): the explicit marker a driver
  appends to a cut result.
* :func:`header_values`: headers' values in one pass (every response needs two or three).
* :func:`describe_failure`: an httpx exception as a category (``timeout``, ``dns``,
  ``tls``, ``connect``, ``protocol``, ``network``), a sentence for the model without
  addresses or internals, and whether retrying may help.

Usage (sync; the async twin is the same with ``aread_body``)::

    with mcs.http.bounded(invocation.deadline):
        response = client.send(request, stream=True)
        body = mcs.http.read_body(response, max_bytes=cap, deadline=invocation.deadline, tool=name)

Needs ``httpx`` (every HTTP-speaking driver depends on it already).
"""

from __future__ import annotations

import contextlib
import contextvars
import email.utils
import math
import ssl
import time
import zlib
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from mcs.errors import ExecutionError, ToolTimeoutError
from mcs.truncation import truncation_marker
from mcs.urls import EgressPolicy

__all__ = [
    "ACCEPT_ENCODING",
    "Body",
    "BodyTooLarge",
    "adecoded_chunks",
    "aread_body",
    "async_transport",
    "bounded",
    "decoded_chunks",
    "describe_failure",
    "header_values",
    "pin",
    "read_body",
    "retry_after",
    "transport",
    "truncation_marker",
]

#: The content codings :func:`read_body` decodes; ask for no others.
ACCEPT_ENCODING = "gzip, deflate"


# ---------------------------------------------------------------------- the scope of one call


@dataclass
class _Scope:
    deadline: float | None
    policy: EgressPolicy | None
    pins: dict[tuple[str, int], tuple[str, ...]] = field(default_factory=dict)

    def left(self, timeout: float | None, error: type[Exception]) -> float | None:
        """``timeout`` narrowed to what is left of the deadline; raises ``error`` once it passed."""
        if self.deadline is None:
            return timeout
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise error("the call's deadline passed")
        return left if timeout is None else min(timeout, left)


_SCOPE: contextvars.ContextVar[_Scope | None] = contextvars.ContextVar("mcs_http_scope", default=None)


class _Bounded:
    """The block :func:`bounded` returns: a plain context manager (a generator-based one
    costs several times more, on every call of every HTTP-speaking driver)."""

    __slots__ = ("_scope", "_token")

    def __init__(self, scope: _Scope) -> None:
        self._scope = scope

    def __enter__(self) -> None:
        self._token = _SCOPE.set(self._scope)

    def __exit__(self, *exc_info: object) -> None:
        _SCOPE.reset(self._token)


def bounded(deadline: float | None, egress: EgressPolicy | None = None) -> contextlib.AbstractContextManager[None]:
    """Inside this block, transports from this module honour ``deadline`` (a
    ``time.monotonic()`` instant) on every socket operation, and with ``egress`` connect
    only to destinations the policy allows, at the addresses it checked."""
    return _Bounded(_Scope(deadline, egress))


def pin(url: httpx.URL, policy: EgressPolicy) -> None:
    """Check ``url`` against ``policy`` now and pin its host to the checked addresses for
    the rest of the :func:`bounded` block (a redirect target, a model-chosen host).

    Raises:
        PolicyDeniedError: the destination is refused (nothing was sent).
        ExecutionError: its host does not resolve.
    """
    _, port, addresses = policy.check_url(str(url))
    scope = _SCOPE.get()
    if scope is not None:
        scope.pins[(url.host.lower(), port)] = addresses


def _destination(scope: _Scope | None, host: str, port: int) -> tuple[str, ...] | None:
    """The addresses to connect to, or ``None`` for an ordinary connection by name."""
    if scope is None:
        return None
    pinned = scope.pins.get((host.lower(), port))
    if pinned is not None:
        return pinned
    if scope.policy is not None:
        addresses = scope.policy.check_host(host, port)
        scope.pins[(host.lower(), port)] = addresses
        return addresses
    return None


# ---------------------------------------------------------------------- network backends
#
# Written against httpcore's backend interface by duck typing, so the same classes serve
# httpcore and its fork httpcore2 (what httpx2 runs on); ``_Errors`` carries the module's
# own exception types, which its httpx maps to ``httpx.TimeoutException`` and friends.


@dataclass(frozen=True, slots=True)
class _Errors:
    read: type[Exception]
    write: type[Exception]
    connect_timeout: type[Exception]
    connect: type[Exception]

    @classmethod
    def of(cls, core: Any) -> _Errors:
        return cls(core.ReadTimeout, core.WriteTimeout, core.ConnectTimeout, core.ConnectError)


def _left(timeout: float | None, error: type[Exception]) -> float | None:
    scope = _SCOPE.get()
    return timeout if scope is None else scope.left(timeout, error)


class _Stream:
    def __init__(self, inner: Any, errors: _Errors) -> None:
        self._inner = inner
        self._errors = errors

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        data: bytes = self._inner.read(max_bytes, _left(timeout, self._errors.read))
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout, self._errors.write))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> _Stream:
        left = _left(timeout, self._errors.connect_timeout)
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, left), self._errors)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend:
    def __init__(self, inner: Any, errors: _Errors) -> None:
        self._inner = inner
        self._errors = errors

    def connect_tcp(
        self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> _Stream:
        scope = _SCOPE.get()
        addresses = _destination(scope, host, port) or (host,)
        failure: Exception | None = None
        for address in addresses:
            left = timeout if scope is None else scope.left(timeout, self._errors.connect_timeout)
            try:
                stream = self._inner.connect_tcp(address, port, left, local_address, socket_options)
            except self._errors.connect as exc:
                failure = exc
                continue
            return _Stream(stream, self._errors)
        assert failure is not None
        raise failure

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> _Stream:
        return _Stream(self._inner.connect_unix_socket(path, timeout, socket_options), self._errors)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _AsyncStream:
    def __init__(self, inner: Any, errors: _Errors) -> None:
        self._inner = inner
        self._errors = errors

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        data: bytes = await self._inner.read(max_bytes, _left(timeout, self._errors.read))
        return data

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self._inner.write(buffer, _left(timeout, self._errors.write))

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                        timeout: float | None = None) -> _AsyncStream:
        left = _left(timeout, self._errors.connect_timeout)
        try:
            inner = await self._inner.start_tls(ssl_context, server_hostname, left)
        except BaseException:
            # httpcore closes the socket of a failed handshake only on an Exception: a handshake
            # cancelled by the call's deadline (CancelledError) would leave it open.
            with contextlib.suppress(Exception):
                await self._inner.aclose()
            raise
        return _AsyncStream(inner, self._errors)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _AsyncBackend:
    def __init__(self, inner: Any, errors: _Errors) -> None:
        self._inner = inner
        self._errors = errors

    async def connect_tcp(
        self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> _AsyncStream:
        scope = _SCOPE.get()
        if scope is not None and scope.policy is not None and (host.lower(), port) not in scope.pins:
            import anyio.to_thread

            # The policy resolves the name, which may block: off the event loop.
            addresses = await anyio.to_thread.run_sync(_destination, scope, host, port)
        else:
            addresses = _destination(scope, host, port)
        failure: Exception | None = None
        for address in addresses or (host,):
            left = timeout if scope is None else scope.left(timeout, self._errors.connect_timeout)
            try:
                stream = await self._inner.connect_tcp(address, port, left, local_address, socket_options)
            except self._errors.connect as exc:
                failure = exc
                continue
            return _AsyncStream(stream, self._errors)
        assert failure is not None
        raise failure

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Iterable[Any] | None = None) -> _AsyncStream:
        return _AsyncStream(await self._inner.connect_unix_socket(path, timeout, socket_options), self._errors)

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


# ---------------------------------------------------------------------- transports


def _ssl_context(verify: ssl.SSLContext | str | bool, client: Any) -> ssl.SSLContext:
    if isinstance(verify, str):  # a CA bundle file or folder
        import os

        if os.path.isdir(verify):
            return ssl.create_default_context(capath=verify)
        return ssl.create_default_context(cafile=verify)
    context: ssl.SSLContext = client.create_ssl_context(verify=verify)
    return context


def _core_of(client: Any) -> Any:
    """The httpcore module an httpx module runs on (``httpx`` -> ``httpcore``, ``httpx2`` -> ``httpcore2``)."""
    import importlib

    return importlib.import_module(client.__name__.replace("httpx", "httpcore", 1))


def _pool_options(limits: Any) -> dict[str, Any]:
    return {"max_connections": limits.max_connections, "max_keepalive_connections": limits.max_keepalive_connections,
            "keepalive_expiry": limits.keepalive_expiry}


def transport(
    *, verify: ssl.SSLContext | str | bool = True, limits: httpx.Limits | None = None, client_module: Any = None,
) -> httpx.HTTPTransport:
    """A pooled HTTP/1.1 transport whose sockets obey :func:`bounded` (see the module doc).

    ``verify``: ``True`` (the system's CAs via certifi), ``False``, an ``SSLContext``, or
    the path of a CA bundle file or folder. Proxies from the environment are not used.
    ``client_module``: the httpx module the transport is for, when a library brings its
    own (``httpx2``, as gql may); default ``httpx``.
    """
    client = client_module or httpx
    core = _core_of(client)
    limits = limits or client.Limits(max_connections=100, max_keepalive_connections=20)
    # httpx builds its pool without a way to pass a network backend: build the same pool
    # with ours (httpx's handle_request only uses it through ``_pool``).
    made: Any = client.HTTPTransport(verify=False, limits=limits)
    made._pool = core.ConnectionPool(
        ssl_context=_ssl_context(verify, client), network_backend=_Backend(core.SyncBackend(), _Errors.of(core)),
        **_pool_options(limits),
    )
    result: httpx.HTTPTransport = made
    return result


def async_transport(
    *, verify: ssl.SSLContext | str | bool = True, limits: httpx.Limits | None = None, client_module: Any = None,
) -> httpx.AsyncHTTPTransport:
    """The async twin of :func:`transport`."""
    client = client_module or httpx
    core = _core_of(client)
    limits = limits or client.Limits(max_connections=100, max_keepalive_connections=20)
    made: Any = client.AsyncHTTPTransport(verify=False, limits=limits)
    made._pool = core.AsyncConnectionPool(
        ssl_context=_ssl_context(verify, client), network_backend=_AsyncBackend(core.AnyIOBackend(), _Errors.of(core)),
        **_pool_options(limits),
    )
    result: httpx.AsyncHTTPTransport = made
    return result


# ---------------------------------------------------------------------- reading bodies


@dataclass(frozen=True, slots=True)
class Body:
    """A response body as read: at most the cap of decoded bytes, and whether it was cut."""

    data: bytes
    truncated: bool


class _Inflater:
    """Content decoding with an output bound (httpx's own decoders have none)."""

    def __init__(self, encoding: str, tool: str | None) -> None:
        self._raw_deflate_tried = False
        self.pending = False
        if not encoding:  # identity, the common case: nothing to work out
            self._z: Any = None
            return
        codings = [c.strip().lower() for c in encoding.split(",") if c.strip()]
        codings = [c for c in codings if c != "identity"]
        if not codings:
            self._z = None
        elif codings == ["gzip"] or codings == ["x-gzip"]:
            self._z = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif codings == ["deflate"]:
            self._z = zlib.decompressobj()
        else:
            raise ExecutionError(
                f"{_who(tool)}the server answered with the content-encoding {encoding!r}, which is not "
                f"accepted (only {ACCEPT_ENCODING}).", tool=tool,
            )

    def feed(self, data: bytes, limit: int, tool: str | None) -> bytes:
        if self._z is None:
            return data
        try:
            out: bytes = self._z.decompress(data, limit)
        except zlib.error:
            if not self._raw_deflate_tried and self._z.total_in == 0 and self._z.total_out == 0:
                # "deflate" is meant to be zlib-wrapped; some servers send it raw.
                self._raw_deflate_tried = True
                self._z = zlib.decompressobj(-zlib.MAX_WBITS)
                return self.feed(data, limit, tool)
            raise ExecutionError(f"{_who(tool)}the server sent a body that could not be decompressed.", tool=tool) from None
        self.pending = bool(self._z.unconsumed_tail)
        return out


def _who(tool: str | None) -> str:
    return f"{tool}: " if tool else ""


class _Reader:
    def __init__(self, encoding: str, max_bytes: int, deadline: float | None, tool: str | None) -> None:
        if max_bytes < 0:
            raise ValueError("max_bytes must not be negative")
        self._inflater = _Inflater(encoding, tool)
        self._cap = max_bytes
        self._deadline = deadline
        self._tool = tool
        self._chunks: list[bytes] = []
        self._total = 0
        self._truncated = False

    def add(self, raw: bytes) -> bool:
        """Take one raw chunk; ``True`` once reading must stop (the cap is passed)."""
        data = self._inflater.feed(raw, self._cap - self._total + 1, self._tool)
        self._total += len(data)
        self._chunks.append(data)
        self._truncated = self._total > self._cap or self._inflater.pending
        if not self._truncated and self._deadline is not None and time.monotonic() >= self._deadline:
            raise self.timeout()
        return self._truncated

    def last(self) -> bytes:
        """The decoded bytes of the last chunk added."""
        return self._chunks[-1]

    def timeout(self) -> ToolTimeoutError:
        return ToolTimeoutError(f"{_who(self._tool)}no complete response arrived before the deadline.", tool=self._tool)

    def body(self) -> Body:
        return Body(b"".join(self._chunks)[: self._cap], self._truncated)


def header_values(headers: httpx.Headers, *names: str) -> list[str]:
    """The values of the headers ``names`` (lower case), each as ``headers.get(name, "")``
    gives it (several lines joined with ``", "``), read in one pass over the raw fields.
    ``Headers.get`` first decodes every field of the response and raises and catches an
    exception for an absent one: on a small answer that costs more than reading its body."""
    wanted = [name.encode("ascii") for name in names]
    found: list[list[bytes]] = [[] for _ in names]
    for key, value in headers.raw:
        key = key.lower()
        if key in wanted:
            found[wanted.index(key)].append(value)
    values = []
    for lines in found:
        value = lines[0] if len(lines) == 1 else b", ".join(lines)
        # httpx decodes with the encoding all fields of the response fit; for ASCII, any.
        values.append(value.decode("ascii") if value.isascii() else value.decode(headers.encoding))
    return values


def _encoding(response: httpx.Response, given: str | None) -> str:
    return given if given is not None else header_values(response.headers, "content-encoding")[0]


def read_body(
    response: httpx.Response, *, max_bytes: int, deadline: float | None, tool: str | None = None,
    encoding: str | None = None,
) -> Body:
    """Read ``response``'s body (sent with ``stream=True``), bounded; closes the response.

    At most ``max_bytes`` of decoded content is kept (``Body.truncated`` tells it was
    cut); compressed input is inflated only that far. Reading stops at ``deadline``.
    ``encoding``: the response's ``Content-Encoding`` when the caller has read it already
    (see :func:`header_values`); by default it is read here.

    Raises:
        ToolTimeoutError: the deadline passed before the body was complete.
        ExecutionError: an unsupported or broken content encoding.
    """
    if response.is_stream_consumed:  # already in memory (a mock transport): cut it as is
        data = response.content
        return Body(data[:max_bytes], len(data) > max_bytes)
    reader = _Reader(_encoding(response, encoding), max_bytes, deadline, tool)
    try:
        for raw in response.iter_raw():
            if reader.add(raw):
                break
    except httpx.TimeoutException:
        raise reader.timeout() from None
    finally:
        response.close()
    return reader.body()


async def aread_body(
    response: httpx.Response, *, max_bytes: int, deadline: float | None, tool: str | None = None,
    encoding: str | None = None,
) -> Body:
    """The async twin of :func:`read_body`."""
    if response.is_stream_consumed:
        data = response.content
        return Body(data[:max_bytes], len(data) > max_bytes)
    reader = _Reader(_encoding(response, encoding), max_bytes, deadline, tool)
    raw_chunks: AsyncIterator[bytes] = response.aiter_raw()
    try:
        async for raw in raw_chunks:
            if reader.add(raw):
                break
    except httpx.TimeoutException:
        raise reader.timeout() from None
    finally:
        await response.aclose()
    return reader.body()


class BodyTooLarge(Exception):
    """A body read by :func:`decoded_chunks` passed its cap; ``head`` is its first ``cap``
    decoded bytes, for a result cut with a marker."""

    def __init__(self, head: bytes, cap: int) -> None:
        super().__init__(f"the response passed {cap} bytes")
        self.head = head
        self.cap = cap


def _scope_deadline(deadline: float | None) -> float | None:
    if deadline is not None:
        return deadline
    scope = _SCOPE.get()
    return None if scope is None else scope.deadline


def decoded_chunks(
    raw: Iterable[bytes], *, encoding: str, max_bytes: int, deadline: float | None = None, tool: str | None = None,
) -> Iterator[bytes]:
    """The body in ``raw`` (a response's raw, still encoded chunks) decoded chunk by chunk,
    bounded as :func:`read_body` bounds it, for a library that reads the response itself:
    give it a stream over these chunks and drop the ``Content-Encoding`` header.

    ``encoding``: the response's ``Content-Encoding``. ``deadline``: by default, that of
    the enclosing :func:`bounded` block.

    Raises:
        BodyTooLarge: more than ``max_bytes`` of decoded content (or a compressed
            remainder beyond it); nothing past the cap was inflated.
        ToolTimeoutError: the deadline passed before the body was complete.
        ExecutionError: an unsupported or broken content encoding.
    """
    reader = _Reader(encoding, max_bytes, _scope_deadline(deadline), tool)
    for chunk in raw:
        if reader.add(chunk):
            raise BodyTooLarge(reader.body().data, max_bytes)
        yield reader.last()


async def adecoded_chunks(
    raw: AsyncIterable[bytes], *, encoding: str, max_bytes: int, deadline: float | None = None,
    tool: str | None = None,
) -> AsyncIterator[bytes]:
    """The async twin of :func:`decoded_chunks`."""
    reader = _Reader(encoding, max_bytes, _scope_deadline(deadline), tool)
    async for chunk in raw:
        if reader.add(chunk):
            raise BodyTooLarge(reader.body().data, max_bytes)
        yield reader.last()


# ---------------------------------------------------------------------- failures


def retry_after(headers: httpx.Headers) -> float | None:
    """The seconds a ``Retry-After`` header asks to wait (delta-seconds or an HTTP date,
    never negative, always finite), or ``None`` when it is absent or unreadable."""
    raw = (headers.get("retry-after") or "").strip()
    if not raw:
        return None
    if raw.isdigit():
        seconds = float(raw)
        return seconds if math.isfinite(seconds) else None
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def describe_failure(exc: httpx.HTTPError) -> tuple[str, str, bool]:
    """``(category, reason, retryable)`` for a failed exchange; ``reason`` names no host,
    address or stack, so it can go to the model as it is."""
    import socket

    if isinstance(exc, httpx.TimeoutException):
        return "timeout", "no complete answer arrived before the deadline", True
    causes: list[BaseException] = []
    seen: BaseException | None = exc
    while seen is not None and len(causes) < 10:
        causes.append(seen)
        seen = seen.__cause__ or seen.__context__
    if any(isinstance(c, ssl.SSLError) for c in causes):
        return "tls", "the TLS handshake failed (certificate or protocol)", False
    if any(isinstance(c, socket.gaierror) for c in causes):
        return "dns", "the server's name could not be resolved", True
    if isinstance(exc, httpx.ConnectError):
        return "connect", "the connection to the server was refused or failed", True
    if isinstance(exc, httpx.RemoteProtocolError | httpx.LocalProtocolError):
        return "protocol", "the server broke the HTTP protocol or closed the connection early", True
    return "network", f"the exchange failed ({type(exc).__name__})", True
