"""One MCP server connection: how to reach it, and a session kept open on the background loop.

A :class:`ServerSpec` says how to reach a server: a command (stdio) or a URL
(streamable HTTP, or the legacy HTTP+SSE transport with ``sse=True``). A :class:`Connection` opens the session lazily, keeps it for every
later request, and closes it cleanly. When the server dies (its process exits, its HTTP
endpoint stops answering) every pending request fails at once with :class:`ServerGone`,
never hangs; the next request opens a new session (a stdio server is started again).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import sys
import threading
import time
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import IO, Any, Literal, TextIO, TypeVar, cast
from urllib.parse import urlsplit, urlunsplit

from mcs_mcp.client.handlers import ClientHandlers
from mcs_mcp.client.http_bounds import bound_messages, bounded_client_factory
from mcs_mcp.client.loop import in_running_loop, sync_loop
from mcs_mcp.client.stdio import MAX_MESSAGE_BYTES, bounded_stdio_client

logger = logging.getLogger("mcs_mcp.client")

T = TypeVar("T")

ConnectMode = Literal["legacy", "auto"]


class ServerGone(ConnectionError):
    """The server cannot be reached any more (or never could); the text says why."""


class SessionLost(ServerGone):
    """The server answered 404 to the session's id (it was restarted, or ended the session):
    it ran nothing, and a new session is needed."""


class _Post:
    """What became of the POST of one request over HTTP+SSE (see :func:`_sse_transport`):
    whether it was ``sent``, and the server's ``status`` once it ``answered`` (404: the
    server does not know the session, so it ran nothing)."""

    __slots__ = ("answered", "sent", "status")

    def __init__(self) -> None:
        self.sent = False
        self.status: int | None = None
        self.answered = asyncio.Event()

    async def never_ran(self, within: float) -> bool:
        """Whether the server cannot have run the request: it was never sent, or the
        server answered its POST with 404. A POST still waiting for its answer is given
        ``within`` seconds (the session may end before its answer arrives)."""
        if not self.sent:
            return True
        if self.status is None and within > 0:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(within):
                    await self.answered.wait()
        return self.status == 404


#: Seconds a request that failed as its HTTP+SSE session ended waits for the answer to its
#: POST, to learn whether the server received it (the SDK's own bound on a POST is 5 s).
_SSE_POST_WAIT = 5.0
#: The request being made over HTTP+SSE in this context. The SDK's SSE transport POSTs each
#: message in the context of the task that sent it, so its HTTP hooks see the request's record.
_posting: contextvars.ContextVar[_Post | None] = contextvars.ContextVar("mcs_mcp_sse_post", default=None)


class ServerError(Exception):
    """The server answered a request with a JSON-RPC error (``code``, ``message``)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, eq=False)
class ServerSpec:
    """How to reach one MCP server: ``command`` (+ ``args``, ``env``, ``cwd``) or ``url`` (+ ``headers``).

    ``auth`` is an ``httpx2.Auth`` (for instance the SDK's OAuth providers) used for HTTP.
    ``sse``: ``url`` is an HTTP+SSE endpoint (the 2024-11-05 transport, ``GET /sse`` then
    ``POST`` to the endpoint it names) rather than streamable HTTP.
    ``errlog`` receives a stdio server's stderr (default: this process's stderr).
    ``max_message_bytes``: the longest message the server may send, over stdio (see
    :mod:`mcs_mcp.client.stdio`), streamable HTTP and HTTP+SSE (see
    :mod:`mcs_mcp.client.http_bounds`).
    """

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    auth: Any = None
    errlog: IO[str] | None = None
    sse: bool = False
    max_message_bytes: int = MAX_MESSAGE_BYTES

    def __post_init__(self) -> None:
        if (self.command is None) == (self.url is None):
            raise ValueError(f"MCP server {self.name!r}: give either a command (stdio) or a url (HTTP)")
        if self.url is not None and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"MCP server {self.name!r}: url must start with http:// or https://, got {self.url!r}")
        if self.sse and self.url is None:
            raise ValueError(f"MCP server {self.name!r}: sse needs a url (the server's SSE endpoint)")

    @property
    def transport(self) -> str:
        if self.command is not None:
            return "STDIO"
        return "SSE" if self.sse else "HTTP"

    def describe(self) -> str:
        """Where the server is, for messages: never the headers, nor a URL's user, password,
        query or fragment (any of them may hold a token)."""
        if self.url is not None:
            parts = urlsplit(self.url)
            host = parts.netloc.rpartition("@")[2]
            return urlunsplit((parts.scheme, host, parts.path, "", ""))
        return " ".join([str(self.command), *self.args])


#: Close tasks scheduled by :meth:`Endpoint.close` on the caller's own loop, kept alive until done.
_closing_tasks: set[asyncio.Task[None]] = set()


def _close_on_sync_loop(session: Connection) -> None:
    sync_loop().run(session.aclose(), timeout=15)


def _errlog(preferred: IO[str] | None) -> TextIO:
    """A stream with a real file descriptor for a subprocess's stderr.

    ``sys.stderr`` may be replaced by an object without one (pytest's capture, notebooks);
    then the original stderr is used.
    """
    for candidate in (preferred, sys.stderr, sys.__stderr__):
        if candidate is None:
            continue
        try:
            candidate.fileno()
        except (AttributeError, OSError, ValueError):
            continue
        return cast(TextIO, candidate)
    raise ValueError("no stderr with a file descriptor is available for the MCP server process")


def _sse_transport(spec: ServerSpec, on_refused: Callable[[str], None] | None,
                   on_lost: Callable[[], None] | None) -> Any:
    """The SDK's HTTP+SSE transport on a bounded client that notes, for the request whose
    message it POSTs (:data:`_posting`), that it was sent and whether the server answered
    404 for the session (then ``on_lost``: the SDK's writer stops after an error status,
    so the session can send nothing more)."""
    from mcp.client.sse import sse_client

    assert spec.url is not None
    bounded = bounded_client_factory(max_message_bytes=spec.max_message_bytes,
                                     server=f"{spec.name!r} ({spec.describe()})", on_refused=on_refused)

    async def sending(request: Any) -> None:
        post = _posting.get()
        if post is not None and request.method == "POST":
            post.sent = True

    async def answered(response: Any) -> None:
        if response.request.method != "POST":
            return
        post = _posting.get()
        if post is not None:
            post.status = response.status_code
            post.answered.set()
        if response.status_code == 404 and on_lost is not None:
            on_lost()

    def factory(headers: dict[str, str] | None = None, timeout: Any = None, auth: Any = None) -> Any:
        client = bounded(headers=headers, timeout=timeout, auth=auth)
        client.event_hooks["request"].append(sending)
        client.event_hooks["response"].append(answered)
        return client

    return sse_client(spec.url, headers=dict(spec.headers) or None, auth=spec.auth, httpx_client_factory=factory)


def _transport(spec: ServerSpec, on_refused: Callable[[str], None] | None = None,
               on_lost: Callable[[], None] | None = None) -> Any:
    if spec.command is not None:
        from mcp.client.stdio import StdioServerParameters

        params = StdioServerParameters(
            command=spec.command,
            args=list(spec.args),
            env=dict(spec.env) if spec.env is not None else None,
            cwd=spec.cwd,
        )
        return bounded_stdio_client(params, _errlog(spec.errlog), max_message_bytes=spec.max_message_bytes,
                                    on_refused=on_refused)
    assert spec.url is not None
    if spec.sse:
        return _sse_transport(spec, on_refused, on_lost)
    server = f"{spec.name!r} ({spec.describe()})"
    from mcp.shared._httpx_utils import create_mcp_http_client

    http = bound_messages(create_mcp_http_client(headers=dict(spec.headers) or None, auth=spec.auth),
                          max_message_bytes=spec.max_message_bytes, server=server, on_refused=on_refused)
    return _HttpTransport(spec.url, http, authenticated=bool(spec.auth) or any(
        k.lower() == "authorization" for k in spec.headers), max_message_bytes=spec.max_message_bytes)


class _HttpTransport:
    """Streamable HTTP with our own HTTP client, closed together with the transport.

    It remembers a 401 (and its ``WWW-Authenticate``), so a refused connection can say
    what to configure instead of the SDK's generic "error response".
    """

    def __init__(self, url: str, http: Any, *, authenticated: bool = False,
                 max_message_bytes: int = MAX_MESSAGE_BYTES) -> None:
        self._url = url
        self._http = http
        self._max_message_bytes = max_message_bytes
        self._stack = contextlib.AsyncExitStack()
        self.authenticated = authenticated
        self.unauthorized: str | None = None  # the WWW-Authenticate of the last 401
        self.session_lost = False  # a 404 answered a request that carried the session's id
        http.event_hooks["response"].append(self._watch)

    async def _watch(self, response: Any) -> None:
        if response.status_code == 401:
            self.unauthorized = response.headers.get("www-authenticate", "")
        elif response.status_code == 404 and response.request.headers.get("mcp-session-id"):
            self.session_lost = True

    def explain(self, name: str, reason: str) -> str | None:
        """Why the server refused us, and what to configure; ``None`` when it did not."""
        if self.unauthorized is None:
            return None
        if self.authenticated:
            return (f"MCP server {name!r} ({self._url}) refused the authorization: {reason} (HTTP 401: "
                    f"{self.unauthorized or 'no details'}); check the token, client_id/client_secret or scope")
        return (f"MCP server {name!r} ({self._url}) requires authorization (HTTP 401). Configure one of: "
                "bearer_token=...; client_id with client_secret or private_key_pem (OAuth client credentials); "
                "oauth_redirect_uri=... (OAuth authorization code, interactive); or auth= an httpx2.Auth such as "
                "the SDK's OAuthClientProvider")

    async def __aenter__(self) -> Any:
        from mcp.client.streamable_http import streamable_http_client

        await self._stack.enter_async_context(self._http)
        # ``http`` bounds every message (``bound_messages``); the SDK's own cap on one SSE event
        # (1 MiB by default) is set to the same bound, so one option says how long a message may be.
        return await self._stack.enter_async_context(streamable_http_client(
            self._url, http_client=self._http, max_sse_event_size=self._max_message_bytes))

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        return await self._stack.__aexit__(exc_type, exc, tb)


def _reason(exc: BaseException) -> str:
    """A one-line reason from an exception (or an exception group), without secrets or traces."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip() or type(exc).__name__
    if len(text) > 300:
        text = text[:300] + "..."
    return text


class Connection:
    """A lazily opened, reused MCP session to one server, on the event loop that opened it.

    Every coroutine here runs on that loop; :class:`Endpoint` picks the right one.
    """

    def __init__(
        self,
        spec: ServerSpec,
        *,
        connect_timeout: float = 30.0,
        mode: ConnectMode = "legacy",
        on_tools_changed: Callable[[], None] | None = None,
        handlers: ClientHandlers | None = None,
        on_change: Callable[[str, str | None], None] | None = None,
        on_reopen: Callable[[Any], Awaitable[None]] | None = None,
    ) -> None:
        self.spec = spec
        self.connect_timeout = connect_timeout
        self.mode: ConnectMode = mode
        self.on_tools_changed = on_tools_changed
        self.handlers = handlers or ClientHandlers(server=spec.name)
        self.on_change = on_change
        self.on_reopen = on_reopen
        self._client: Any = None
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None
        self._closing: asyncio.Event | None = None
        self._lock: asyncio.Lock | None = None
        self._launched_at = 0.0
        self._unchecked = False  # a new session not yet checked (by on_reopen, or a listing made on it)
        self._closed = False
        self._ending: set[asyncio.Task[None]] = set()  # ended sessions still shutting down
        self._transport: Any = None  # the session's transport (for what its HTTP answers told)
        self.gone_reason: str | None = None
        self._inflight: set[asyncio.Task[Any]] = set()
        self._cancelled_by_us: set[asyncio.Task[Any]] = set()

    # ----------------------------------------------------------------- lifecycle (its loop)

    @property
    def is_open(self) -> bool:
        return self._client is not None and self.gone_reason is None

    async def open(self, within: float | None = None, *, lists: bool = False) -> Any:
        """The connected ``mcp.Client``, connecting on first use and again after the
        session ended (the server died, or could not be reached): a stdio server is started
        anew, an HTTP one reached anew. Every new session (the first one on this loop too)
        is handed to ``on_reopen`` before any request uses it; until that succeeds, every
        request runs it again. ``lists``: the request is itself the listing its caller
        reviews, so it skips ``on_reopen`` (see :meth:`request`).

        Connecting (starting, ``initialize``) is bounded by ``connect_timeout`` and, when
        given, by ``within`` seconds (what is left of the caller's deadline).

        Raises:
            ServerGone: the connection is closed, or the server could not be started or
                reached within ``connect_timeout``.
            TimeoutError: ``within`` seconds passed first (the attempt goes on for the
                next caller, still bounded by ``connect_timeout``).
        """
        if self._client is not None and self.gone_reason is None and (lists or not self._unchecked):
            return self._client
        if self._closed:
            raise ServerGone(self.gone_reason or f"the connection to MCP server {self.spec.name!r} is closed")
        if self._lock is None:
            self._lock = asyncio.Lock()
        waited_from = time.monotonic()
        try:
            async with asyncio.timeout(within):
                async with self._lock:
                    await self._connected()
                    if self._unchecked and not lists:
                        if self.on_reopen is not None:
                            await self.on_reopen(self._client)
                        self._unchecked = False
        except TimeoutError:
            if within is None or time.monotonic() - waited_from < within:
                raise  # the on_reopen hook's own timeout
            where = f"MCP server {self.spec.name!r} ({self.spec.describe()})"
            if within < 0.05:
                raise TimeoutError(f"connecting to {where}: no time was left of the call's deadline") from None
            raise TimeoutError(
                f"connecting to {where} took longer than the {round(within, 1):g} s left of the call's deadline"
            ) from None
        return self._client

    async def _connected(self) -> None:
        """Make sure a live session exists (its lock held): drop an ended one, start one,
        and wait for ``initialize`` within what is left of ``connect_timeout``."""
        if self._closed:
            raise ServerGone(self.gone_reason or f"the connection to MCP server {self.spec.name!r} is closed")
        if self.gone_reason is not None:
            self._drop_ended()
        if self._task is None:
            self._launch()
        assert self._ready is not None
        left = self._launched_at + self.connect_timeout - time.monotonic()
        try:
            await asyncio.wait_for(asyncio.shield(self._ready), timeout=max(left, 0.0))
        except TimeoutError:
            reason = (f"MCP server {self.spec.name!r} ({self.spec.describe()}) gave no answer to initialize "
                      f"within {self.connect_timeout:g} s (connect_timeout)")
            self._give_up(reason)
            self._drop_ended()
            raise ServerGone(reason) from None
        if self.gone_reason is not None:
            raise ServerGone(self.gone_reason)

    def _drop_ended(self) -> None:
        """Forget the session that ended, so the next one starts clean; its task (if still
        shutting down) finishes on its own, and :meth:`aclose` waits for it."""
        task = self._task
        if task is not None and not task.done():
            if self._closing is not None:
                self._closing.set()
            if self._client is None:
                task.cancel()  # still connecting (to a peer that does not answer)
            self._ending.add(task)
            task.add_done_callback(self._ending.discard)
        self._task = None
        self._client = None
        self._ready = None
        self._closing = None
        self.gone_reason = None

    def _launch(self) -> None:
        running = asyncio.get_running_loop()
        self._ready = running.create_future()
        self._closing = asyncio.Event()
        self._launched_at = time.monotonic()
        # The session outlives the call that opened it and serves every later caller, so it
        # starts in an empty context: nothing of that first call (a served request's log
        # capture, its deadline) follows the session's reader into other callers' messages.
        self._task = running.create_task(self._main(self._ready, self._closing), name=f"mcp:{self.spec.name}",
                                         context=contextvars.Context())

    async def _main(self, ready: asyncio.Future[None], closing: asyncio.Event) -> None:
        from mcp import Client

        me = asyncio.current_task()

        def current() -> bool:
            """Whether this run is still the connection's session (not one already dropped)."""
            return self._task is me

        def refused(reason: str) -> None:
            if current():
                self._give_up(reason)

        def lost() -> None:
            if current():
                self._session_lost()

        transport = _transport(self.spec, on_refused=refused, on_lost=lost)
        if current():
            self._transport = transport
        try:
            async with Client(
                transport,
                mode=self.mode,
                cache=None,
                message_handler=self._on_message,
                **self.handlers.client_options(),
            ) as client:
                if current():
                    self._client = client
                    # Every session is checked before its first call, the first one on this
                    # loop too: another loop's session (or an earlier one) was what got approved.
                    self._unchecked = True
                if not ready.done():
                    ready.set_result(None)
                await closing.wait()
        except asyncio.CancelledError:
            if not closing.is_set() and current():  # the event loop is shutting down
                self._mark_gone(f"the event loop of the connection to MCP server {self.spec.name!r} ended")
                raise
        except Exception as exc:  # report every way the session can end
            where = self.spec.describe()
            explained = (
                transport.explain(self.spec.name, _reason(exc)) if isinstance(transport, _HttpTransport) else None
            )
            if current():
                self._mark_gone(explained or f"cannot reach MCP server {self.spec.name!r} ({where}): {_reason(exc)}")
        finally:
            if current():
                self._client = None
                if self.gone_reason is None:
                    self._mark_gone(f"the connection to MCP server {self.spec.name!r} is closed")
            if not ready.done():
                ready.set_result(None)

    def _give_up(self, reason: str) -> None:
        """End the session for ``reason`` (the server's answer came too late, or the transport
        refused what it sent): every call hears why, and the session closes."""
        self._mark_gone(reason)
        if self._closing is not None:
            self._closing.set()

    def _session_lost(self) -> None:
        """:meth:`_give_up`: the server answered 404 for the session."""
        self._give_up(f"MCP server {self.spec.name!r} ({self.spec.describe()}) no longer knows the "
                      "session (it was restarted, or ended the session)")

    def _mark_gone(self, reason: str) -> None:
        if self.gone_reason is None:
            self.gone_reason = reason
        current = asyncio.current_task()
        for task in list(self._inflight):
            if task is not current and not task.done():
                self._cancelled_by_us.add(task)
                task.cancel()

    async def _on_message(self, message: Any) -> None:
        import mcp.types as mt

        if isinstance(message, Exception):
            logger.debug("MCP server %s: transport error %s", self.spec.name, _reason(message))
            return
        root = getattr(message, "root", message)
        if isinstance(root, mt.ToolListChangedNotification) and self.on_tools_changed is not None:
            self.on_tools_changed()
        if self.on_change is None:
            return
        if isinstance(root, mt.PromptListChangedNotification):
            self.on_change("prompts", None)
        elif isinstance(root, mt.ResourceListChangedNotification):
            self.on_change("resources", None)
        elif isinstance(root, mt.ResourceUpdatedNotification):
            self.on_change("resource", str(root.params.uri))

    async def aclose(self) -> None:
        """Close the session and stop a stdio server; nothing reconnects afterwards. Safe to call twice."""
        self._closed = True
        if self._closing is not None:
            self._closing.set()
        if self._task is not None and self._client is None:
            self._task.cancel()  # still connecting (to a peer that may never answer)
        for task in [self._task, *self._ending]:
            if task is not None and not task.done():
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(task, timeout=10)
        self._task = None
        self._ending.clear()
        if self.gone_reason is None:
            self.gone_reason = f"the connection to MCP server {self.spec.name!r} is closed"

    # ----------------------------------------------------------------- requests (its loop)

    async def request(self, operation: Callable[[Any], Awaitable[T]], timeout: float | None = None,
                      *, deadline: float | None = None, lists: bool = False) -> T:
        """Run ``operation(client)``; fails at once when the server dies meanwhile.

        The request runs in the calling task (no extra task per call); when the session
        ends, every task still in a request is cancelled and raises :class:`ServerGone`,
        and the next request connects anew (see :meth:`open`). A request is sent again
        only when an HTTP server answered 404 to the session's id (it was restarted, so it
        ran nothing): then once, on a new session. ``deadline`` (a ``time.monotonic()`` instant) bounds connecting too;
        ``timeout`` bounds the operation itself.

        A new session is handed to ``on_reopen`` (the driver lists it and compares the
        listing with the approved one) before any request runs on it, except a request
        made with ``lists=True``: that one is the listing, and the session counts as
        checked once it succeeded (its caller reviews what it returned before any call).

        Raises:
            ServerGone: the server is unreachable or died during the request.
            ServerError: the server answered with a JSON-RPC error.
            TimeoutError: ``timeout`` seconds passed, or ``deadline`` while connecting.
        """
        try:
            return await self._request(operation, timeout, deadline, lists)
        except SessionLost:
            # The server refused the session's id before running anything (HTTP 404), and
            # the protocol asks for a new session: the request is sent once on it.
            return await self._request(operation, timeout, deadline, lists)

    async def _request(self, operation: Callable[[Any], Awaitable[T]], timeout: float | None,
                       deadline: float | None, lists: bool = False) -> T:
        if self._client is not None and self.gone_reason is None and not self._unchecked:
            client = self._client
        else:
            client = await self.open(None if deadline is None else max(deadline - time.monotonic(), 0.0),
                                     lists=lists)
        if timeout is not None and deadline is not None:  # connecting took some of the deadline
            timeout = min(timeout, max(deadline - time.monotonic(), 0.0))
        task = asyncio.current_task()
        assert task is not None
        self._inflight.add(task)
        # Over HTTP+SSE the request's POSTs are watched (see _sse_transport): one the server
        # never received, or answered 404 for the session, ran nothing and may be sent again.
        post = _Post() if self.spec.sse else None
        token = None if post is None else _posting.set(post)
        try:
            try:
                if timeout is None:
                    result = await operation(client)
                else:
                    async with asyncio.timeout(timeout):
                        result = await operation(client)
                if lists and client is self._client:
                    self._unchecked = False
                return result
            except asyncio.CancelledError:
                if self.gone_reason is not None and task in self._cancelled_by_us:
                    self._cancelled_by_us.discard(task)
                    task.uncancel()
                    raise ServerGone(self.gone_reason) from None
                raise
            except TimeoutError:
                if timeout is None:  # the operation's own deadline (or its own timeout error): as it is
                    raise
                raise TimeoutError(f"MCP server {self.spec.name!r} did not answer within {timeout:g} s") from None
            except (OSError, EOFError) as exc:
                self._mark_gone(f"MCP server {self.spec.name!r} is unreachable: {_reason(exc)}")
                raise ServerGone(self.gone_reason or "") from None
            except Exception as exc:
                # Imported here, off the per-call path: only a failed request needs the SDK's error type.
                from mcp.shared.exceptions import MCPError
                from mcp_types import REQUEST_TIMEOUT

                if not isinstance(exc, MCPError):
                    raise
                if exc.code == REQUEST_TIMEOUT:  # the SDK's own read timeout (read_timeout_seconds)
                    raise TimeoutError(f"MCP server {self.spec.name!r} did not answer in time") from None
                if isinstance(self._transport, _HttpTransport) and self._transport.session_lost:
                    self._session_lost()
                    raise SessionLost(self.gone_reason or "") from None
                if exc.code == -32000 and "closed" in exc.message.lower():
                    self._mark_gone(f"MCP server {self.spec.name!r} closed the connection")
                    raise ServerGone(self.gone_reason or "") from None
                raise ServerError(exc.code, exc.message) from None
            finally:
                self._inflight.discard(task)
        except SessionLost:
            raise
        except ServerGone:
            within = _SSE_POST_WAIT if deadline is None else min(_SSE_POST_WAIT, deadline - time.monotonic())
            if post is not None and await post.never_ran(within):
                raise SessionLost(self.gone_reason or f"MCP server {self.spec.name!r} lost the session") from None
            raise
        finally:
            if token is not None:
                _posting.reset(token)


Request = tuple["Endpoint", Callable[[Any], Awaitable[Any]]]


def run_each(requests: Sequence[Request], timeout: float | None = None, *,
             deadline: float | None = None, lists: bool = False) -> list[Any]:
    """Run each ``(endpoint, operation)`` at the same time from synchronous code, each on
    its endpoint's synchronous session (as :meth:`Endpoint.run`), and wait for them all.
    ``lists``: the operations are listings the caller reviews (see :meth:`Connection.request`).

    Returns each result, or the exception its request raised, in the order given: the
    time taken is the slowest request's, not the sum.
    """
    if not requests:
        return []
    driven = sync_loop()
    return driven.run(_gathered([endpoint._request_on(driven.loop, operation, timeout, deadline, lists)
                                 for endpoint, operation in requests]))


async def arun_each(requests: Sequence[Request], timeout: float | None = None, *,
                    deadline: float | None = None, lists: bool = False) -> list[Any]:
    """:func:`run_each` on the caller's running loop (each on its endpoint's session there)."""
    if not requests:
        return []
    loop = asyncio.get_running_loop()
    return await _gathered([endpoint._request_on(loop, operation, timeout, deadline, lists)
                            for endpoint, operation in requests])


async def _gathered(requests: list[Coroutine[Any, Any, Any]]) -> list[Any]:
    if len(requests) == 1:  # no task of its own: the request runs in the caller's
        try:
            return [await requests[0]]
        except Exception as exc:
            return [exc]
    return list(await asyncio.gather(*requests, return_exceptions=True))


class Endpoint:
    """One MCP server, usable from any thread and any event loop.

    Synchronous calls share one session on the process's driven loop
    (:func:`~mcs_mcp.client.loop.sync_loop`); async calls use a session on the caller's own
    running loop. Sessions are opened on first use and reused; one that ended (the server
    died, or could not be reached) is opened again by the next call. Every new session, on
    any loop, is handed to ``on_reopen`` before its first request (unless that request is a
    listing, see :meth:`Connection.request`). :meth:`close` (or :meth:`aclose`) ends them
    all, after which calls raise :class:`ServerGone`.
    """

    def __init__(
        self,
        spec: ServerSpec,
        *,
        connect_timeout: float = 30.0,
        mode: ConnectMode = "legacy",
        on_tools_changed: Callable[[], None] | None = None,
        handlers: ClientHandlers | None = None,
        on_change: Callable[[str, str | None], None] | None = None,
        on_reopen: Callable[[Any], Awaitable[None]] | None = None,
    ) -> None:
        self.spec = spec
        self.connect_timeout = connect_timeout
        self.mode: ConnectMode = mode
        self.on_tools_changed = on_tools_changed
        self.handlers = handlers
        self.on_change = on_change
        self.on_reopen = on_reopen
        self._sessions: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Connection] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()
        self._closed = False

    def connected_on(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Whether a session on ``loop`` is open and alive."""
        session = self._sessions.get(loop)
        return session is not None and session.is_open and not self._closed

    def _session(self, loop: asyncio.AbstractEventLoop) -> Connection:
        session = self._sessions.get(loop)
        if session is not None and not self._closed:
            return session
        with self._lock:
            if self._closed:
                raise ServerGone(f"the connection to MCP server {self.spec.name!r} is closed")
            session = self._sessions.get(loop)
            if session is None:
                # A session lives and dies with its loop, and holds it: a process that runs
                # a loop per call (asyncio.run) would otherwise keep every finished one.
                for finished in [other for other in self._sessions if other.is_closed()]:
                    del self._sessions[finished]
                on_tools_changed, on_change = self.on_tools_changed, self.on_change
                if loop is sync_loop().loop:
                    on_tools_changed, on_change = self._list_changes_heard_once(loop, on_tools_changed, on_change)
                session = Connection(
                    self.spec, connect_timeout=self.connect_timeout, mode=self.mode,
                    on_tools_changed=on_tools_changed, handlers=self.handlers, on_change=on_change,
                    on_reopen=self.on_reopen,
                )
                self._sessions[loop] = session
            return session

    def _list_changes_heard_once(
        self, loop: asyncio.AbstractEventLoop, on_tools_changed: Callable[[], None] | None,
        on_change: Callable[[str, str | None], None] | None,
    ) -> tuple[Callable[[], None] | None, Callable[[str, str | None], None] | None]:
        """The callbacks of the synchronous session (on ``loop``): its ``list_changed``
        notifications pass only while no session on another loop is open. A server tells
        every session of each change, and a session on a running loop hears it as it comes
        (the synchronous one only when the next call drives its loop), so listeners are
        told once per change, not once per session. Resource updates always pass: they
        come only to the session that subscribed."""

        def heard_elsewhere() -> bool:
            return any(other is not loop and s.is_open for other, s in list(self._sessions.items()))

        def tools_changed() -> None:
            if on_tools_changed is not None and not heard_elsewhere():
                on_tools_changed()

        def changed(kind: str, uri: str | None) -> None:
            if on_change is not None and (kind == "resource" or not heard_elsewhere()):
                on_change(kind, uri)

        return (None if on_tools_changed is None else tools_changed), (None if on_change is None else changed)

    def forget_ended(self) -> None:
        """Drop the sessions that ended (the server died, or could not be reached), so the
        next request connects anew: a stdio server is started again, an HTTP one reached
        again. Sessions still open are kept; after :meth:`close` nothing reconnects."""
        with self._lock:
            for loop, session in list(self._sessions.items()):
                if session.gone_reason is not None and (session._task is None or session._task.done()):
                    del self._sessions[loop]

    @property
    def is_open(self) -> bool:
        """True when a session is connected and alive."""
        return any(s.is_open for s in list(self._sessions.values()))

    @property
    def gone_reason(self) -> str | None:
        """Why the synchronous session ended (or, failing that, any session), else ``None``."""
        if self._closed:
            return f"the connection to MCP server {self.spec.name!r} is closed"
        sync = self._sessions.get(sync_loop().loop)
        if sync is not None and sync._task is not None:
            return sync.gone_reason
        return next((s.gone_reason for s in list(self._sessions.values()) if s.gone_reason), None)

    def run(self, operation: Callable[[Any], Awaitable[T]], timeout: float | None = None,
            *, deadline: float | None = None) -> T:
        """:meth:`Connection.request` from synchronous code (on the shared driven loop)."""
        driven = sync_loop()
        return driven.run(self._session(driven.loop).request(operation, timeout, deadline=deadline))

    def arun(self, operation: Callable[[Any], Awaitable[T]], timeout: float | None = None,
             *, deadline: float | None = None) -> Awaitable[T]:
        """:meth:`Connection.request` on the caller's running loop (await the result)."""
        return self._session(asyncio.get_running_loop()).request(operation, timeout, deadline=deadline)

    async def _request_on(self, loop: asyncio.AbstractEventLoop, operation: Callable[[Any], Awaitable[T]],
                          timeout: float | None, deadline: float | None, lists: bool = False) -> T:
        return await self._session(loop).request(operation, timeout, deadline=deadline, lists=lists)

    def close(self) -> None:
        """End every session (stdio servers are stopped). Safe to call twice, from sync code.

        A session on an event loop that is running in another thread is closed there; one
        on an idle loop (an async test's, between its test and its teardown) is closed by
        running that loop here, so its stdio server is stopped and reaped rather than
        abandoned; one on the loop running in this very thread is closed by a task
        scheduled on it (use :meth:`aclose` to wait for it).
        """
        for loop, session in self._take_all():
            if loop.is_closed():
                continue
            if loop is sync_loop().loop:
                with contextlib.suppress(Exception):
                    sync_loop().run(session.aclose(), timeout=15)
            elif loop.is_running():
                if in_running_loop() and asyncio.get_running_loop() is loop:
                    task = loop.create_task(session.aclose())
                    _closing_tasks.add(task)  # the loop keeps only a weak reference
                    task.add_done_callback(_closing_tasks.discard)
                else:
                    with contextlib.suppress(Exception):
                        asyncio.run_coroutine_threadsafe(session.aclose(), loop).result(timeout=15)
            elif not in_running_loop():
                # Another thread may start the loop meanwhile: then it says so, and that
                # thread's own run ends the session when the loop closes.
                with contextlib.suppress(RuntimeError):
                    loop.run_until_complete(session.aclose())

    async def aclose(self) -> None:
        """End every session, waiting for the one on the current loop."""
        current = asyncio.get_running_loop()
        others: list[tuple[asyncio.AbstractEventLoop, Connection]] = []
        for loop, session in self._take_all():
            if loop is current:
                await session.aclose()
            else:
                others.append((loop, session))
        for loop, session in others:
            if loop is sync_loop().loop:
                await asyncio.to_thread(_close_on_sync_loop, session)
            elif loop.is_running() and not loop.is_closed():
                with contextlib.suppress(Exception):
                    await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(session.aclose(), loop))

    def _take_all(self) -> list[tuple[asyncio.AbstractEventLoop, Connection]]:
        with self._lock:
            self._closed = True
            items = list(self._sessions.items())
            self._sessions.clear()
        return items
