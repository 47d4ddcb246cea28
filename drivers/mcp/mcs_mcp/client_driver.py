"""Any MCP server as an MCS driver (entry point ``mcp``).

    mcs.load_driver("mcp", command="python", args=["server.py"], env={"K": "V"})   # stdio
    mcs.load_driver("mcp", url="http://127.0.0.1:8000/mcp", headers={...})        # streamable HTTP
    mcs.load_driver("mcp", url="http://127.0.0.1:8000/sse", sse=True)             # legacy HTTP+SSE
    mcs.load_driver("mcp", config="claude_desktop_config.json")                   # several servers

The server's tools become MCS tools (names sanitised, the original kept in
``Tool.meta["original_name"]``); optionally its prompts and resources too. When a
server offers ``list_interfaces`` (see ``docs/interfaces.md``) its tools are read from
there, with the interfaces' canonical descriptions; otherwise from ``tools/list``.

Connections open on first use and are reused: synchronous calls share one session on a
background event loop; async calls get one session per running event loop (so each
``asyncio.run`` opens its own, and for a stdio server that is a new process; keep one
loop alive to reuse it). :meth:`MCPDriver.close` ends them all (and stops stdio
servers). A server that dies fails the pending calls at once with ``EXECUTION_ERROR``
saying so; the next call opens a new session. Every new session, on any event loop, is
listed and held to the approved listing before a call runs on it. A call's deadline bounds
connecting, and a listing the call waits for, too.

A server that asks its client something (elicitation, sampling, roots) is answered by
the ``on_elicit``/``on_sample``/``roots`` options, and its log and progress
notifications reach ``on_log``/``on_progress`` (see :mod:`mcs_mcp.client.handlers`);
progress of a call also reaches the calling context (``ctx.report_progress``), so a
bridged server's progress flows on through ``mcs serve``. Resource templates, argument
completions (:meth:`MCPDriver.acomplete`) and resource subscriptions
(:meth:`MCPDriver.subscribe`) are reachable too; a server's ``list_changed`` and
``resources/updated`` notifications are passed on to the driver's change listeners.

Tool definitions are pinned by hash when first seen (SECURITY.md F2). A later change of
a tool's description or schema, a tool that appears later, one that shadows a name
another server owns, or one whose description hides instructions is *held back*: not
described, not callable, listed by :meth:`MCPDriver.held_tools` until
:meth:`MCPDriver.accept` approves it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import math
import os
import threading
import time
import uuid
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass, replace
from functools import partial
from typing import IO, Any, ClassVar

from mcs import discovery, prompts
from mcs.context import AgentContext, Session
from mcs.driver import DriverMeta, ToolDriver, _with_prefix, refuse_unknown_options
from mcs.errors import ConfigurationError, ExecutionError, InvalidInputError, ToolTimeoutError
from mcs.pipeline import Invocation
from mcs.tools import Tool, sanitize_tool_name
from mcs.truncation import cap_result
from mcs_mcp.client.config import load_config
from mcs_mcp.client.connection import (
    ConnectMode,
    Endpoint,
    ServerError,
    ServerGone,
    ServerSpec,
    arun_each,
    run_each,
)
from mcs_mcp.client.handlers import ClientHandlers
from mcs_mcp.client.loop import in_running_loop
from mcs_mcp.client.oauth import MemoryTokenStorage, authorization_code_provider
from mcs_mcp.client.output_check import speed_up_output_check
from mcs_mcp.client.pinning import HeldTool, PinStore
from mcs_mcp.client.results import prompt_result, resource_result, tool_result, wraps_result
from mcs_mcp.client.stdio import MAX_MESSAGE_BYTES
from mcs_mcp.interfaces import wire

logger = logging.getLogger("mcs_mcp.client")

_DRIVER_ID = str(uuid.uuid5(uuid.NAMESPACE_URL, "mcs:driver:mcp-client"))
_READ_RESOURCE = "read_resource"
#: The discovery meta-tools' names (MCS spec section 7): a server's tool exposed under one
#: would take the driver's own place, and receive what the model meant for other tools.
_META_TOOL_NAMES = frozenset({discovery.SEARCH_TOOL, discovery.DESCRIBE_TOOL, discovery.CALL_TOOL})
class _Call:
    """The call being made: its ``deadline`` (``time.monotonic()``), within which a listing
    the call needs first (to know its tool) connects too, the servers its listings
    ``tried`` (a call tries a failed server at most once, whichever listing asks it), and
    whether it ``listed`` first (then the request that follows keeps that deadline: the
    listing and the call share one ``timeout``)."""

    __slots__ = ("deadline", "listed", "tried")

    def __init__(self, deadline: float | None = None, tried: set[str] | None = None) -> None:
        self.deadline = deadline
        self.tried = tried
        self.listed = False


#: The call being made in this context (``None`` outside a call).
_call: contextvars.ContextVar[_Call | None] = contextvars.ContextVar("mcs_mcp_call", default=None)
#: Each thread's synchronous calls share one :class:`_Call`, changed in place: the context a
#: synchronous call hands the driven loop then stays equal from call to call, and the loop
#: keeps its worker task (a new value per call would retire it, one more loop turn per call).
_threads = threading.local()


def _deadline_of_call() -> float | None:
    call = _call.get()
    return None if call is None else call.deadline


def _tried_in_call() -> set[str] | None:
    call = _call.get()
    return None if call is None else call.tried


def _listed_in_call() -> None:
    """The call being made (if any) waited for a listing: its request keeps its deadline."""
    call = _call.get()
    if call is not None:
        call.listed = True


def _sharing_deadline(invocation: Invocation) -> Invocation | None:
    """``invocation`` bounded by the deadline of the call that listed before it (the core
    starts an invocation's deadline after the lookup, so the listing's time would otherwise
    come on top of ``timeout``); ``None`` when nothing was listed first, or that deadline is
    not the shorter. The first request after a listing takes it; the next ones of a
    response have their own."""
    call = _call.get()
    if call is None or not call.listed:
        return None
    call.listed = False
    if call.deadline is None or (invocation.deadline is not None and invocation.deadline <= call.deadline):
        return None
    return replace(invocation, deadline=call.deadline)


@dataclass(frozen=True, slots=True)
class _Route:
    """What an exposed tool name calls: a tool, a prompt or a resource read on one server."""

    server: str
    kind: str  # "tool" | "prompt" | "resource"
    target: str
    wrapped: bool = False  # a tool's output schema is the SDKs' {"result": ...} wrapper


@dataclass(frozen=True, slots=True)
class _Failure:
    """Why one server is left out of the listing: the full error, and a short reason for the model."""

    error: ExecutionError
    why: str  # "cannot be reached", "did not list its tools in time"... (never the server's own text)
    at: float  # time.monotonic() of the failure
    wait: float  # seconds before a listing tries the server again

    @property
    def due(self) -> bool:
        """Whether a listing may try the server again now."""
        return time.monotonic() >= self.at + self.wait


@dataclass(frozen=True, slots=True)
class _Listing:
    """One server's offer: tools (as MCP dicts) and their interface, prompts, resources."""

    tools: list[dict[str, Any]]
    interfaces: list[dict[str, Any]]
    prompts: list[Any]
    resources: list[Any]
    via: str  # "list_interfaces" | "tools/list"
    templates: tuple[Any, ...] = ()


class MCPDriver(ToolDriver):
    """An MCS driver over one or more MCP servers.

    Reach a server with ``command`` (+ ``args``, ``env``, ``cwd``) over stdio, ``url``
    (+ ``headers``, ``auth``) over streamable HTTP (with ``sse=True``: the legacy HTTP+SSE
    transport, ``url`` being the SSE endpoint), or name several in ``config`` (a path to an
    ``mcpServers`` JSON file, or the parsed mapping). Other keyword arguments:

    * ``name``: the server's name for messages and pins (default ``"mcp"``);
    * ``include_prompts`` / ``include_resources``: also offer prompts (as ``prompt_<name>``
      tools) and resources (one ``read_resource`` tool with the URIs as an enum);
    * ``interfaces``: only describe tools of these interfaces (names like ``media.player.v1``
      or families like ``media.player``; ``"unclassified"`` for the rest) - prompt context
      partitioning; switch later with :meth:`use_interfaces`;
    * ``supported_interfaces``: interface versions this client understands, sent with
      ``list_interfaces`` so the server answers with the highest version both support;
    * ``pins``: a :class:`PinStore`, or a path to a JSON file to keep pins in;
      ``trust_new_tools``: pin tools that appear later without holding them back;
    * ``namespace``: prefix every tool with its server's name (default off: a name another
      server already offers is then held back as shadowing);
    * ``connect_timeout``: seconds to start and initialise a server (default 30; a call
      connects within the time left of its deadline when that is shorter);
      ``listing_timeout``: seconds a connected server may take to list its tools (default 30).
      A server that cannot be reached, answers its listing with an error or too late is
      left out of the listing and named in the description; the others are listed, and it
      is tried again (reconnecting when its session ended) by a later listing
      (:meth:`list_tools`, :meth:`alist_tools`, the description), at most once per
      ``retry_interval`` seconds (default 1), an interval that doubles with each failure in a
      row up to ``max_retry_interval`` (default 60). A notification from it, or a call of
      one of its tools, tries it at once. Only when every server fails does listing raise
      (and then each call tries them again, once);
    * ``relist_interval``: a server's ``list_changed`` notifications make the bridge list
      that server again (not the others) on next use, at most once per this many seconds
      (default 1); the change listeners hear a burst of them as at most two notifications,
      one at once and one at the end of the interval;
    * ``max_result_bytes``: cap on what one call returns to the model (default 1 MiB);
      a longer text, or structured content whose JSON is longer, is cut and ends with
      ``[truncated: ...]``;
    * ``max_message_bytes``: the longest message a server may send (default 16 MiB), over
      stdio, streamable HTTP and HTTP+SSE; a longer one ends the session, and every waiting
      call fails saying so (see :mod:`mcs_mcp.client.stdio` and
      :mod:`mcs_mcp.client.http_bounds`);
    * ``stderr``: a text file that receives stdio servers' stderr (default: this process's);
    * ``bearer_token`` (HTTP): sent as ``Authorization: Bearer ...``; ``client_id`` with
      ``client_secret`` (``client_secret_basic``) or ``private_key_pem`` (+ ``signing_algorithm``,
      ``private_key_jwt``), and optionally ``scope`` and ``issuer``: the OAuth
      client-credentials grant through the SDK's providers;
    * ``oauth_redirect_uri`` (HTTP): the OAuth authorization-code flow, with
      ``oauth_authorize``, ``oauth_client_metadata_url``, ``oauth_client_name``, ``scope``,
      ``token_storage`` and a pre-registered ``client_id``/``client_secret`` (see
      :mod:`mcs_mcp.client.oauth`); ``auth`` takes any ``httpx2.Auth``, for instance the
      SDK's ``OAuthClientProvider``;
    * ``on_elicit``, ``on_elicit_url``, ``on_sample``, ``roots``, ``on_log``, ``on_progress``:
      what the client answers and observes (see :mod:`mcs_mcp.client.handlers`);
    * every :class:`mcs.ToolDriver` option (``timeout``, ``prefix``, ``description_mode``...).
    """

    enforces_deadline: ClassVar[bool] = True

    def __init__(
        self,
        *,
        command: str | None = None,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        url: str | None = None,
        sse: bool = False,
        headers: Mapping[str, str] | None = None,
        config: str | os.PathLike[str] | Mapping[str, Any] | None = None,
        name: str = "mcp",
        auth: Any = None,
        bearer_token: str | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        private_key_pem: str | None = None,
        signing_algorithm: str = "RS256",
        scope: str | None = None,
        issuer: str | None = None,
        include_prompts: bool = False,
        include_resources: bool = False,
        interfaces: Sequence[str] | None = None,
        supported_interfaces: Sequence[str] | None = None,
        pins: PinStore | str | os.PathLike[str] | None = None,
        trust_new_tools: bool = False,
        namespace: bool = False,
        connect_timeout: float = 30.0,
        listing_timeout: float = 30.0,
        relist_interval: float = 1.0,
        retry_interval: float = 1.0,
        max_retry_interval: float = 60.0,
        max_result_bytes: int = 1024 * 1024,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
        mode: ConnectMode = "legacy",
        stderr: IO[str] | None = None,
        oauth_redirect_uri: str | None = None,
        oauth_authorize: Callable[[str], Any] | None = None,
        oauth_client_metadata_url: str | None = None,
        oauth_client_name: str = "mcs",
        token_storage: Any = None,
        on_elicit: Callable[..., Any] | None = None,
        on_elicit_url: Callable[..., Any] | None = None,
        on_sample: Callable[..., Any] | None = None,
        roots: Sequence[Any] | Callable[[], Any] | None = None,
        on_log: Callable[..., Any] | None = None,
        on_progress: Callable[..., Any] | None = None,
        **options: Any,
    ) -> None:
        refuse_unknown_options(MCPDriver, options, "the MCP driver")
        super().__init__(**options)
        sources = sum(x is not None for x in (command, url, config))
        if sources != 1:
            raise ConfigurationError(
                "the mcp driver needs exactly one of: command=... (stdio), url=... (streamable HTTP), "
                "config=PATH (an mcpServers JSON file)"
            )
        if isinstance(args, str):
            raise ConfigurationError("args must be a list of strings, not one string")
        if config is not None:
            specs = [replace(s, errlog=stderr) if s.command else s for s in load_config(config)]
        else:
            http_headers = dict(headers or {})
            if bearer_token is not None:
                http_headers["Authorization"] = f"Bearer {bearer_token}"
            if url is not None and auth is None and oauth_redirect_uri is not None:
                auth = authorization_code_provider(
                    url, redirect_uri=oauth_redirect_uri, authorize=oauth_authorize, scope=scope,
                    client_name=oauth_client_name, client_metadata_url=oauth_client_metadata_url,
                    client_id=client_id, client_secret=client_secret, storage=token_storage,
                )
            elif url is not None and auth is None and client_id is not None:
                auth = _client_credentials(url, client_id, client_secret, private_key_pem, signing_algorithm,
                                           scope, issuer)
            try:
                specs = [
                    ServerSpec(
                        name=name, command=command, args=tuple(args), env=env, cwd=cwd,
                        url=url, headers=http_headers, auth=auth, errlog=stderr, sse=sse,
                    )
                ]
            except ValueError as exc:
                raise ConfigurationError(str(exc)) from None
        if max_message_bytes < 1024:
            raise ConfigurationError("max_message_bytes must be at least 1024")
        specs = [replace(s, max_message_bytes=max_message_bytes) for s in specs]
        self.connections: dict[str, Endpoint] = {
            spec.name: Endpoint(
                spec, connect_timeout=connect_timeout, mode=mode, on_tools_changed=partial(self._tools_changed, spec.name),
                handlers=ClientHandlers(
                    on_elicit=on_elicit, on_elicit_url=on_elicit_url, on_sample=on_sample, roots=roots,
                    on_log=on_log, on_progress=on_progress, server=spec.name,
                ),
                on_change=partial(self._server_changed, spec.name),
                on_reopen=partial(self._recheck, spec.name),
            )
            for spec in specs
        }
        if relist_interval < 0:
            raise ConfigurationError("relist_interval must be 0 or more seconds")
        if not 0 <= retry_interval <= max_retry_interval:
            raise ConfigurationError("retry_interval must be 0 or more seconds, and max_retry_interval at least as long")
        self.retry_interval = retry_interval
        self.max_retry_interval = max_retry_interval
        if max_result_bytes < 1:
            raise ConfigurationError("max_result_bytes must be at least 1")
        self.max_result_bytes = max_result_bytes
        self._subscriptions: dict[str, list[Callable[[str], Any]]] = {}
        self._readable: dict[str, tuple[list[Any], list[Any]]] = {}
        self.include_prompts = include_prompts
        self.include_resources = include_resources
        self.supported_interfaces = tuple(supported_interfaces or ())
        self.active_interfaces: tuple[str, ...] | None = tuple(interfaces) if interfaces is not None else None
        self.pins = pins if isinstance(pins, PinStore) else PinStore(pins)
        self.trust_new_tools = trust_new_tools
        self.namespace = namespace
        self._routes: dict[str, _Route] = {}
        self._listings: dict[str, _Listing] = {}
        self.relist_interval = relist_interval
        self._stale: set[str] = set()  # servers that announced a change of their lists
        self._relisted: dict[str, float] = {}  # server -> when its listing was last dropped for a change
        self._announced: dict[str, float] = {}  # list kind -> when the listeners were last told
        self._announcing: set[str] = set()  # list kinds with a notification held to the end of the interval
        self._reported: set[tuple[str, str, str]] = set()
        self.listing_timeout = listing_timeout
        self._failures: dict[str, _Failure] = {}  # server -> why its last listing failed
        # server -> what its reopened session lists differently, refused until the next review
        self._changed_on_reopen: dict[str, set[tuple[str, str]]] = {}
        self._retry: set[str] = set()  # failed servers to list again at the next listing
        self._offered: dict[str, list[str]] = {}  # server -> the tool names it offered last
        self._unavailable: dict[str, Tool] = {}  # a failed server's former tool name -> its stand-in
        transports = sorted({spec.transport for spec in specs})
        self.meta = DriverMeta(
            id=_DRIVER_ID,
            name=name if config is None else "mcp",
            version="0.1.0",
            protocol="MCP",
            transport="/".join(transports),
            spec_format="MCP tools/list",
            target_llms=prompts.target_llms(self.prompt_templates),
            capabilities=("healthcheck", "status", "completions", "list_changed"),
            prefix=self.prefix,
        )

    # ----------------------------------------------------------------- listing

    def _tools_changed(self, server: str) -> None:
        # notifications/tools/list_changed: that server is listed again on next use; new tools stay held (F2).
        self._stale.add(server)
        self._announce("tools")

    def _server_changed(self, server: str, kind: str, uri: str | None) -> None:
        """A server's prompts/resources list changed, or a subscribed resource was updated."""
        if kind in ("prompts", "resources"):
            self._stale.add(server)  # prompt and resource tools are re-listed too
            self._announce(kind)
            return
        if kind == "resource" and uri is not None:
            for callback in list(self._subscriptions.get(uri, ())):
                try:
                    callback(uri)
                except Exception:
                    logger.exception("subscription callback for %s raised", uri)
        self._tell(kind, uri)

    def _tell(self, kind: str, uri: str | None) -> None:
        for listener in list(self._listeners()):
            try:
                listener(kind, uri)  # type: ignore[arg-type]
            except Exception:
                logger.exception("change listener %r raised", listener)

    def _announce(self, kind: str) -> None:
        """Tell the listeners that a list changed, at most once per ``relist_interval``: the
        first notification of a burst is passed on at once, the rest become one more at the
        end of the interval. Called on the event loop of the session that heard it."""
        now = time.monotonic()
        last = self._announced.get(kind)
        if last is None or now - last >= self.relist_interval:
            self._announced[kind] = now
            self._tell_changed(kind)
            return
        if kind in self._announcing:
            return  # one is already due at the end of the interval
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not heard on a session's loop (a direct call): nothing to hold it on
            self._tell_changed(kind)
            return
        self._announcing.add(kind)
        loop.call_later(last + self.relist_interval - now, self._announce_held, kind)

    def _announce_held(self, kind: str) -> None:
        self._announcing.discard(kind)
        self._announced[kind] = time.monotonic()
        self._tell_changed(kind)

    def _tell_changed(self, kind: str) -> None:
        """Tell the listeners that a list changed, after making the changed servers' next
        use list them again: a listener that lists at once sees the change it was told of.
        Announcements are themselves held to ``relist_interval``, so this bounds re-listing too."""
        for server in self._stale:
            self._relisted.pop(server, None)
        self._tell(kind, None)

    def _drop_changed_listings(self) -> bool:
        """Forget the listings of the servers that announced a change, each at most once per
        ``relist_interval`` (a later one waits for the next use after that); True when any was."""
        if not self._stale:
            return False
        now = time.monotonic()
        due = [s for s in list(self._stale) if now - self._relisted.get(s, -math.inf) >= self.relist_interval]
        for server in due:
            self._stale.discard(server)
            self._relisted[server] = now
            self._listings.pop(server, None)
            if server in self._failures:
                self._retry.add(server)  # it spoke: try it now
        return bool(due)

    def _tool_map(self) -> dict[str, Tool]:
        if self._drop_changed_listings():
            self.refresh_tools()
        return super()._tool_map()

    def _list_tools(self) -> Iterable[Tool]:
        self._routes = {}
        self._changed_on_reopen.clear()  # every listing is reviewed against the pins below
        self._retry_when_all_failed()
        tools: list[Tool] = []
        methods: dict[str, str] = {}  # an interface's method name -> "server:tool" that answers to it
        self._fetch(self._to_list())
        self._retry.clear()
        owners = self._claims()  # exposed name -> "server:name there" that owns it
        for server in self.connections:
            listing = self._listings.get(server)
            if listing is not None:
                tools.extend(self._server_tools(server, listing, owners, methods))
        if self._failures and len(self._failures) == len(self.connections):
            raise next(iter(self._failures.values())).error  # nothing to offer: say why
        self._stand_ins(owners)
        return tools

    async def _recheck(self, server: str, client: Any) -> None:
        """A new session (opened again after the last one ended, or the first one on another
        event loop) that a call is about to use: list the server on it, as at a first
        connection. What it lists differently from the approved listing is refused (see
        :meth:`_operation`) until the tools are listed and reviewed against the pins again,
        which the next use does; what is unchanged is called as before."""
        async with asyncio.timeout(self.listing_timeout):
            listing = await self._afetch(client, server=server)
        before = self._listings.get(server)
        if listing == before:
            return
        if before is not None:
            self._changed_on_reopen[server] = _changed(before, listing)
            logger.warning("MCP server %r lists something else since it was reconnected: its tools are reviewed "
                           "again before they are called", server)
        self._listed(server, listing)
        self.refresh_tools()

    def _retry_when_all_failed(self) -> None:
        """When every server failed, nothing is offered meanwhile: a call tries each again
        (once per call), a listing those that are due."""
        if self._failures and len(self._failures) == len(self.connections):
            tried = _tried_in_call()
            self._retry |= {s for s, f in self._failures.items() if f.due or (tried is not None and s not in tried)}

    def _to_list(self) -> list[Endpoint]:
        """The servers a listing asks now: those not listed yet, except the ones that failed
        and are not due to be tried again. One to try again gets a new session if its last one ended."""
        due = [connection for server, connection in self.connections.items()
               if server not in self._listings and (server not in self._failures or server in self._retry)]
        tried = _tried_in_call()
        for connection in due:
            if connection.spec.name in self._retry:
                connection.forget_ended()
            if tried is not None:
                tried.add(connection.spec.name)
        return due

    def _fetch(self, connections: Sequence[Endpoint]) -> None:
        """List these servers at the same time (each on its synchronous session), keeping
        each listing or recording why it failed."""
        deadline = _deadline_of_call()
        if connections:
            _listed_in_call()
        results = run_each([(c, partial(self._afetch, server=c.spec.name)) for c in connections],
                           timeout=self._listing_time(deadline), deadline=deadline, lists=True)
        self._record(connections, results)

    def _record(self, connections: Sequence[Endpoint], results: Sequence[Any]) -> None:
        for connection, result in zip(connections, results, strict=True):
            if isinstance(result, BaseException):
                self._listing_failed(connection, result if isinstance(result, Exception) else Exception(result))
            else:
                self._listed(connection.spec.name, result)

    def _listing_time(self, deadline: float | None) -> float:
        """How long a listing may take: ``listing_timeout``, or less when a call waits for it."""
        if deadline is None:
            return self.listing_timeout
        return max(min(self.listing_timeout, deadline - time.monotonic()), 0.0)

    def _deadline(self) -> float | None:
        """The deadline of a call starting now (``None`` without a ``timeout``)."""
        return None if self.timeout is None else time.monotonic() + self.timeout

    def _listed(self, server: str, listing: _Listing) -> None:
        self._listings[server] = listing
        if self._failures.pop(server, None) is not None:
            logger.info("MCP server %r answers again: its tools are listed", server)

    def _listing_failed(self, connection: Endpoint, exc: Exception) -> None:
        """Leave the server out of the listing, remembering why (logged with the full reason)."""
        server = connection.spec.name
        error = _listing_error(exc, connection)
        if not isinstance(error, ExecutionError):  # anything else the listing raised (a malformed answer)
            logger.warning("listing MCP server %r failed", server, exc_info=exc)
            error = ExecutionError(f"MCP server {server!r} could not list its tools: {_reason_of(exc)}",
                                   details={"server": server})
        before = self._failures.get(server)
        wait = self.retry_interval if before is None else min(before.wait * 2, self.max_retry_interval)
        self._failures[server] = _Failure(error, _why(exc), at=time.monotonic(), wait=wait)
        if len(self.connections) > 1:  # with one server the listing raises this error itself
            logger.warning("MCP server %r is left out of the listing: %s", server, error.message)

    def _claims(self) -> dict[str, str]:
        """The names servers keep from the last listing (exposed name -> ``"server:name"``):
        a failed server keeps every name it offered (its stand-ins answer to them), a listed
        one the tool names it lists again. Another server's tool of such a name is held as
        shadowing, whatever the order of the servers: a name does not pass to another
        server because its own failed a listing, or came up after that other one."""
        claims: dict[str, str] = {}
        for server, names in self._offered.items():
            if server in self._failures:
                claims.update((name, f"{server}:{name}") for name in names)
                continue
            listing = self._listings.get(server)
            if listing is None:
                continue
            listed = {self._exposed(server, t["name"]): t["name"] for t in listing.tools if t["name"] != wire.METHOD}
            claims.update((name, f"{server}:{listed[name]}") for name in names if name in listed)
        return claims

    def _stand_ins(self, owners: Mapping[str, str]) -> None:
        """Remember what each listed server offers; a failed server's former tools get
        stand-ins (not listed, not described) whose calls say that server is unavailable."""
        for server in self._listings:
            self._offered[server] = [name for name, route in self._routes.items() if route.server == server]
        self._unavailable = {}
        for server in self._failures:
            for name in self._offered.get(server, ()):
                if owners.get(name, server).split(":", 1)[0] != server:
                    continue
                self._routes[name] = _Route(server, "unavailable", name)
                tool = Tool(name=name, description="", input_schema={"type": "object"},
                            meta={"original_name": name, "server": server, "kind": "unavailable"})
                tool = _with_prefix(tool, self.prefix) if self.prefix else tool
                self._unavailable[tool.name] = tool

    def _retry_failed(self) -> None:
        """A listing: the servers that failed and are due are tried again (and the tools
        listed anew); the others wait for their interval (see ``retry_interval``)."""
        due = {server for server, failure in self._failures.items() if failure.due}
        if due:
            self._retry |= due
            self.refresh_tools()

    def _retry_for_call(self, name: str) -> bool:
        """A call of a tool (by its exposed name) whose server failed its last listing tries
        that server again now, once per call; True when it was tried."""
        tried = _tried_in_call()
        stand_in = self._unavailable.get(name)
        if tried is None or stand_in is None:
            return False
        server = str(stand_in.meta["server"])
        if server in tried or server not in self._failures:
            return False
        self._retry.add(server)
        self.refresh_tools()
        return True

    def list_tools(self) -> tuple[Tool, ...]:
        """Every tool of the servers that answer; one that failed before is tried again."""
        self._retry_failed()
        return super().list_tools()

    def get_tool(self, name: str) -> Tool | None:
        """:meth:`mcs.ToolDriver.get_tool`; a tool of a server that failed its last listing
        resolves to a stand-in whose call fails saying so."""
        found = super().get_tool(name)
        if found is None and self._unavailable:
            if not in_running_loop() and self._retry_for_call(name):  # (async calls try it before)
                found = super().get_tool(name)
                if found is not None:
                    return found
            return self._unavailable.get(name)
        return found

    def _known_names(self) -> dict[str, Mapping[str, Any]]:
        known = super()._known_names()
        if not self._unavailable:
            return known
        return {**{name: tool.input_schema for name, tool in self._unavailable.items()}, **known}

    def get_function_description(self, model_name: str | None = None) -> str:
        """The tools' description; a server left out of the listing is named at its end."""
        self._retry_failed()
        text = super().get_function_description(model_name)
        if self._failures and self.custom_tool_description is None:
            text += "\n\n" + self._unavailable_note()
        return text

    def _unavailable_note(self) -> str:
        servers = "; ".join(f"MCP server {server!r} {failure.why}" for server, failure in self._failures.items())
        return f"Unavailable now, so their tools are not listed: {servers}."

    async def _aprefetch(self, *, retry: bool = False) -> None:
        """List every server not listed yet on the caller's loop, so async use opens no second
        session; with ``retry``, servers that failed are tried again too."""
        if self._drop_changed_listings():
            self.refresh_tools()
        if retry and self._failures:
            self._retry_failed()
        self._retry_when_all_failed()
        connections = self._to_list()
        if not connections:
            return
        self._retry.difference_update(c.spec.name for c in connections)
        deadline = _deadline_of_call()
        _listed_in_call()
        results = await arun_each([(c, partial(self._afetch, server=c.spec.name)) for c in connections],
                                  timeout=self._listing_time(deadline), deadline=deadline, lists=True)
        self._record(connections, results)
        if any(not isinstance(result, BaseException) for result in results):
            self.refresh_tools()

    def process_llm_response(self, llm_response: Any, *, context: Any = None) -> Any:
        """:meth:`mcs.ToolDriver.process_llm_response`; a listing the call needs first
        connects within the call's ``timeout``."""
        with _calling_sync(self._deadline()):
            return super().process_llm_response(llm_response, context=context)

    def call_tool(self, name: str, arguments: Mapping[str, Any] | None = None, *, context: Any = None) -> Any:
        """:meth:`mcs.ToolDriver.call_tool`; a listing the call needs first connects within
        the call's ``timeout``."""
        with _calling_sync(self._deadline()):
            return super().call_tool(name, arguments, context=context)

    async def aprocess_llm_response(self, llm_response: Any, *, context: Any = None) -> Any:
        """:meth:`mcs.ToolDriver.aprocess_llm_response`; the servers are listed on the
        caller's loop first, and a call of a tool of a server that failed its last listing
        tries that server again at once (once per call), as the synchronous path does."""
        with _calling(self._deadline()):
            await self._aprefetch()
            if self._retry_for_calls(lambda: _calls_in(llm_response, self._known_names())):
                await self._aprefetch()
            return await super().aprocess_llm_response(llm_response, context=context)

    def run_llm_response(self, llm_response: Any, *, context: Any = None) -> list[Any]:
        """:meth:`mcs.ToolDriver.run_llm_response`; as :meth:`process_llm_response`, a
        listing the calls need first connects within the ``timeout`` of the first call."""
        with _calling_sync(self._deadline()):
            return super().run_llm_response(llm_response, context=context)

    async def arun_llm_response(self, llm_response: Any, *, context: Any = None) -> list[Any]:
        """:meth:`mcs.ToolDriver.arun_llm_response`; as :meth:`aprocess_llm_response`, the
        servers are listed on the caller's loop, and a failed server a call names is tried
        again at once."""
        with _calling(self._deadline()):
            await self._aprefetch()
            if self._retry_for_calls(lambda: _calls_in(llm_response, self._known_names())):
                await self._aprefetch()
            return await super().arun_llm_response(llm_response, context=context)

    async def acall_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, context: Any = None
    ) -> Any:
        """:meth:`mcs.ToolDriver.acall_tool`; as :meth:`aprocess_llm_response`, a tool of a
        server that failed its last listing tries that server again at once."""
        with _calling(self._deadline()):
            self._retry_for_calls(lambda: [(name, dict(arguments or {}))])
            await self._aprefetch()
            return await super().acall_tool(name, arguments, context=context)

    def stream_call(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, context: Any = None
    ) -> Iterator[Any]:
        """:meth:`mcs.ToolDriver.stream_call`; as :meth:`call_tool`, a listing the call needs
        first connects within the call's ``timeout``, and a tool of a server that failed its
        last listing tries that server again at once."""
        with _calling_sync(self._deadline()):
            return super().stream_call(name, arguments, context=context)

    def astream_call(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, context: Any = None
    ) -> AsyncIterator[Any]:
        """:meth:`mcs.ToolDriver.astream_call`; as :meth:`acall_tool`, the servers are listed
        on the caller's loop first and a tool of a server that failed its last listing tries
        that server again at once. Because listing is awaited, an unknown tool or invalid
        arguments raise at the first item rather than at this call."""
        return self._astream_call(name, arguments, context)

    async def _astream_call(
        self, name: str, arguments: Mapping[str, Any] | None, context: Any
    ) -> AsyncIterator[Any]:
        with _calling(self._deadline()):
            self._retry_for_calls(lambda: [(name, dict(arguments or {}))])
            await self._aprefetch()
            stream = super().astream_call(name, arguments, context=context)
        async with contextlib.aclosing(stream):  # type: ignore[type-var]
            async for item in stream:
                yield item

    def _retry_for_calls(self, calls: Callable[[], Iterable[tuple[str, Mapping[str, Any]]]]) -> bool:
        """Mark the failed servers whose former tools ``calls`` name (directly, or through
        discovery's ``call_tool``) to be listed again now (:meth:`_retry_for_call`); True
        when any was. ``calls`` is read only while a failed server has stand-ins."""
        if not self._unavailable:
            return False
        retried = False
        for name, arguments in calls():
            tool = ToolDriver.get_tool(self, name)
            if tool is not None and discovery.is_call_tool(tool):
                with contextlib.suppress(InvalidInputError):
                    name = discovery.unwrap_call(tool, arguments)[0]
            retried = self._retry_for_call(name) or retried
        return retried

    async def aconnect(self) -> None:
        """Connect to every server on the caller's event loop and list it there (a no-op
        where a session on this loop is open).

        While that loop runs, the servers' notifications (``list_changed``, resource
        updates, logs) reach the listeners as they arrive; a session only synchronous calls
        use reads them when the next call comes. ``mcs serve`` connects a served bridge on
        its own loop this way, so its clients hear of changes at once.

        A server that cannot be listed is left out (and tried again at the next listing).

        Raises:
            ExecutionError: no server can be listed.
        """
        loop = asyncio.get_running_loop()
        connections = [c for c in self.connections.values() if not c.connected_on(loop)]
        # a listing, not a bare connect: a server tells of changes to clients that listed
        results = await arun_each([(c, partial(self._afetch, server=c.spec.name)) for c in connections],
                                  timeout=self.listing_timeout, lists=True)
        self._record(connections, results)
        if connections:
            self.refresh_tools()
        if self._failures and len(self._failures) == len(self.connections):
            raise next(iter(self._failures.values())).error

    async def alist_tools(self) -> tuple[Tool, ...]:
        """:meth:`list_tools` for async code: lists the servers on the caller's loop."""
        await self._aprefetch(retry=True)
        return ToolDriver.list_tools(self)

    async def _afetch(self, client: Any, *, server: str = "mcp") -> _Listing:
        interfaces: list[dict[str, Any]] = []
        tools: list[dict[str, Any]] = []
        via = "tools/list"
        listing = None
        if wire.server_offers_interfaces(client.server_capabilities):
            listing = await wire.request_listing(client.session, self.supported_interfaces)
        if listing is None and client.server_capabilities.tools is not None:
            # A server without the tools capability (prompts or resources only) is not asked.
            tools = await list_all_tools(client)
            if any(t["name"] == wire.METHOD for t in tools):
                listing = await wire.call_listing_tool(client, self.supported_interfaces)
        if listing is not None:
            via = "list_interfaces"
            interfaces = wire.negotiated(listing, self.supported_interfaces)
            tools = wire.tools_of(interfaces)
            for section in interfaces:
                if section.get("deprecated"):
                    note = section["deprecated"] if isinstance(section["deprecated"], str) else ""
                    logger.warning("MCP server %r implements %s, which is deprecated%s",
                                   server, section["interface"], f": {note}" if note else "")
        prompts: list[Any] = []
        resources: list[Any] = []
        caps = client.server_capabilities
        if self.include_prompts and caps.prompts is not None:
            prompts = await list_all(client.list_prompts, "prompts", lambda page: page.prompts)
        templates: list[Any] = []
        if self.include_resources and caps.resources is not None:
            resources = await list_all(client.list_resources, "resources", lambda page: page.resources)
            with contextlib.suppress(Exception):  # templates are optional for a server
                templates = await list_all(client.list_resource_templates, "resource templates",
                                           lambda page: page.resource_templates)
        return _Listing(tools=tools, interfaces=interfaces, prompts=prompts, resources=resources, via=via,
                        templates=tuple(templates))

    def _exposed(self, server: str, original: str) -> str:
        return sanitize_tool_name(f"{server}_{original}" if self.namespace else original)

    @staticmethod
    def _exposed_namespaced(server: str, original: str) -> str:
        return sanitize_tool_name(f"{server}_{original}")

    def _server_tools(self, server: str, listing: _Listing, owners: dict[str, str],
                      methods: dict[str, str] | None = None) -> list[Tool]:
        # Every tool is reviewed (pinned), selected or not: switching interfaces later
        # must not make the rest look new.
        candidates = [t for t in listing.tools if t["name"] != wire.METHOD]
        shadowed: dict[str, str] = {}
        originals: dict[str, set[str]] = {}  # exposed name -> the server's names that become it
        for item in candidates:
            exposed = self._exposed(server, item["name"])
            originals.setdefault(exposed, set()).add(item["name"])
            owner = owners.get(exposed)
            if owner is not None and owner != f"{server}:{item['name']}":
                shadowed[item["name"]] = owner.split(":", 1)[0]
        clashes = {
            name: f"the server's tools {', '.join(map(repr, sorted(names)))} are all exposed as {exposed!r}; none "
                  "is offered, since which one a call reaches would depend on the order of the listing"
            for exposed, names in originals.items() if len(names) > 1 for name in names
        }
        methods = {} if methods is None else methods
        for exposed, names in originals.items():
            claim = methods.get(exposed)
            if claim is not None and not claim.startswith(f"{server}:"):
                owner, tool = claim.split(":", 1)
                for name in names:
                    clashes[name] = (
                        f"server {owner!r} offers {tool!r} for the interface method {exposed!r}, which a model "
                        f"calls by that name; namespace=True offers this one as {self._exposed_namespaced(server, name)!r}"
                    )
            if exposed in _META_TOOL_NAMES:
                for name in names:
                    clashes[name] = (
                        f"it would be exposed as {exposed!r}, the name of the driver's own discovery tool (the "
                        f"model's searches and calls of other servers' tools go there); namespace=True offers it "
                        f"as {self._exposed_namespaced(server, name)!r}"
                    )
        allowed, held = self.pins.review(
            server,
            [(t["name"], t.get("description"), t.get("inputSchema"), _pinned_extra(t)) for t in candidates],
            owners=shadowed,
            clashes=clashes,
            trust_new=self.trust_new_tools,
        )
        self._report(held)
        out: list[Tool] = []
        for item in candidates:
            if item["name"] not in allowed or not self._selected(item):
                continue
            exposed = self._exposed(server, item["name"])
            mine = f"{server}:{item['name']}"
            if owners.get(exposed, mine) != mine:
                continue
            owners[exposed] = mine
            if item.get("_interface") and isinstance(item.get("_method"), str) and not self.namespace:
                methods.setdefault(item["_method"], f"{server}:{exposed}")
            self._routes[exposed] = _Route(server, "tool", item["name"], wraps_result(item.get("outputSchema")))
            out.append(_tool(exposed, server, item))
        for item in candidates:
            # A held (or unselected) tool keeps its name: another server's tool of that name
            # would otherwise receive the calls meant for it while it waits for approval.
            owners.setdefault(self._exposed(server, item["name"]), f"{server}:{item['name']}")
        out.extend(self._prompt_tools(server, listing, owners))
        resources = self._reviewed_resources(server, listing.resources)
        templates = self._reviewed_templates(server, listing.templates)
        self._readable[server] = (resources, templates)
        if resources or templates:
            exposed = self._exposed(server, _READ_RESOURCE)
            if exposed not in owners:
                owners[exposed] = f"{server}:{_READ_RESOURCE}"
                self._routes[exposed] = _Route(server, "resource", "")
                uris = [str(r.uri) for r in resources]
                lines = "; ".join(f"{r.uri}: {r.description or r.name}" for r in resources)
                description = f"Read a resource of MCP server {server}."
                if lines:
                    description += f" Resources: {lines}."
                uri_schema: dict[str, Any] = {"type": "string", "enum": uris}
                if templates:
                    shapes = "; ".join(f"{t.uri_template}: {t.description or t.name}" for t in templates)
                    description += f" Or a URI of these templates (fill the {{variables}}): {shapes}."
                    uri_schema = {"type": "string", "description": "a listed resource URI or a filled template"}
                out.append(
                    Tool(
                        name=exposed,
                        description=description,
                        input_schema={
                            "type": "object",
                            "properties": {"uri": uri_schema},
                            "required": ["uri"],
                        },
                        annotations={"readOnlyHint": True},
                        meta={"original_name": _READ_RESOURCE, "server": server, "kind": "resource"},
                    )
                )
        return out

    def _report(self, held: list[HeldTool]) -> None:
        for hold in held:
            key = (hold.server, hold.name, hold.current_hash)
            if key not in self._reported:
                self._reported.add(key)
                logger.warning(
                    "MCP server %r: %r held back until accepted (%s): %s",
                    hold.server, hold.name, hold.reason, hold.detail,
                )

    def _reviewed_resources(self, server: str, resources: list[Any]) -> list[Any]:
        """The resources whose pinned definition still holds and whose text hides nothing."""
        if not resources:
            return []
        allowed, held = self.pins.review(
            f"{server}/resources",
            [(str(r.uri), r.description, None, _dumped(r, exclude={"uri", "description"})) for r in resources],
            trust_new=self.trust_new_tools,
        )
        self._report(held)
        return [r for r in resources if str(r.uri) in allowed]

    def _reviewed_templates(self, server: str, templates: Sequence[Any]) -> list[Any]:
        """The resource templates whose pinned definition still holds and whose text hides nothing."""
        if not templates:
            return []
        allowed, held = self.pins.review(
            f"{server}/resource-templates",
            [(str(t.uri_template), t.description, None, _dumped(t, exclude={"uriTemplate", "description"}))
             for t in templates],
            trust_new=self.trust_new_tools,
        )
        self._report(held)
        return [t for t in templates if str(t.uri_template) in allowed]

    def _prompt_tools(self, server: str, listing: _Listing, owners: dict[str, str]) -> list[Tool]:
        out: list[Tool] = []
        if not listing.prompts:
            return out
        allowed, held = self.pins.review(
            f"{server}/prompts",
            [(p.name, p.description, None, _dumped(p, exclude={"name", "description"})) for p in listing.prompts],
            trust_new=self.trust_new_tools,
        )
        self._report(held)
        for prompt in listing.prompts:
            if prompt.name not in allowed:
                continue
            exposed = self._exposed(server, f"prompt_{prompt.name}")
            if exposed in owners:
                continue
            owners[exposed] = f"{server}:prompt:{prompt.name}"
            self._routes[exposed] = _Route(server, "prompt", prompt.name)
            arguments = list(prompt.arguments or [])
            out.append(
                Tool(
                    name=exposed,
                    description=f"Get the prompt {prompt.name!r}: {prompt.description or ''}".strip(),
                    input_schema={
                        "type": "object",
                        "properties": {
                            a.name: {"type": "string", **({"description": a.description} if a.description else {})}
                            for a in arguments
                        },
                        "required": [a.name for a in arguments if a.required],
                    },
                    annotations={"readOnlyHint": True},
                    meta={"original_name": prompt.name, "server": server, "kind": "prompt"},
                )
            )
        return out

    def _selected(self, item: Mapping[str, Any]) -> bool:
        if self.active_interfaces is None:
            return True
        interface = item.get("_interface") or wire.UNCLASSIFIED
        return any(wire.matches(interface, wanted) for wanted in self.active_interfaces)

    # ----------------------------------------------------------------- interfaces

    def use_interfaces(self, *names: str) -> None:
        """Describe only the tools of these interfaces from now on (none given: every tool).

        Names are exact (``media.player.v1``), families (``media.player``) or ``unclassified``.
        """
        self.active_interfaces = tuple(names) if names else None
        self.refresh_tools()

    def interfaces(self) -> list[dict[str, Any]]:
        """What each server's ``list_interfaces`` reported (empty for servers without it)."""
        self._tool_map()
        return [
            {**section, "server": server}
            for server, listing in self._listings.items()
            for section in listing.interfaces
        ]

    # ----------------------------------------------------------------- pinning

    def held_tools(self) -> list[HeldTool]:
        """Tools held back until accepted: changed, new, shadowing or suspicious (see :mod:`~mcs_mcp.client.pinning`)."""
        self._tool_map()
        return self.pins.held()

    def accept(self, name: str, server: str | None = None) -> None:
        """Approve a held tool as it is now (by its server-side name); it is offered at once.

        Raises:
            KeyError: no held tool has that name.
        """
        self.pins.accept(name, server)
        self.refresh_tools()

    def reload(self) -> None:
        """List every server's tools again (pins still apply)."""
        self._listings.clear()
        self.refresh_tools()

    # ----------------------------------------------------------------- calling

    def upstream_of(self, tool: Tool) -> str:
        """Each MCP server is its own upstream for the circuit breaker."""
        return str(tool.meta.get("server", ""))

    def _route(self, invocation: Invocation) -> tuple[_Route, Endpoint]:
        route = self._routes.get(invocation.tool.unprefixed_name)
        if route is None:
            raise ExecutionError(f"{invocation.tool.name} is not offered by any connected MCP server")
        if route.kind == "unavailable":
            failure = self._failures.get(route.server)
            why = failure.why if failure is not None else "is unavailable"
            raise ExecutionError(
                f"{invocation.tool.name} cannot run now: MCP server {route.server!r} {why}. It is tried again "
                "later (a call of its tools tries it at once); use another tool meanwhile.",
                tool=invocation.tool.name, details={"server": route.server},
            )
        return route, self.connections[route.server]

    def _prime_output_schemas(self, client: Any, server: str) -> None:
        """Tell the SDK session the output schemas ``list_interfaces`` already gave, so its
        result check sends no second ``tools/list`` (the Interfaces RFC promises none).

        An interface method's result is checked by MCS against the interface's ``returns``
        (with a message naming it), so the session gets no schema for it; another tool's
        schema is its own. The SDK keeps this cache privately (``_tool_output_schemas``, SDK
        2.x): when it is not there, the session lists the tools itself, as before.
        """
        listing = self._listings.get(server)
        if listing is None or listing.via != "list_interfaces":  # the common case: nothing to tell
            return
        schemas = getattr(getattr(client, "session", None), "_tool_output_schemas", None)
        if not isinstance(schemas, dict):
            return
        for tool in listing.tools:
            schemas.setdefault(tool["name"], None if tool.get("_interface") else tool.get("outputSchema"))

    def _progress_sink(self, server: str, context: AgentContext) -> Callable[..., Awaitable[None]] | None:
        """Where the server's progress for one call goes: ``on_progress`` and the calling
        context's session. ``None`` when neither listens: the request then asks for no
        progress (no ``progressToken``), since every notification would be dropped."""
        handlers = self.connections[server].handlers
        observed = handlers is not None and handlers.on_progress is not None
        relayed = type(context.session).report_progress is not Session.report_progress
        if not (observed or relayed):
            return None

        async def progress(done: float, total: float | None, message: str | None) -> None:
            if handlers is not None:
                await handlers.progress(done, total, message)
            with contextlib.suppress(Exception):  # the caller's client may be gone
                await context.report_progress(done, total, message)

        return progress

    async def _operation(self, route: _Route, invocation: Invocation, client: Any, *, bounded: bool) -> Any:
        """The request behind one call; ``bounded``: the time left of the call's deadline,
        read after connecting, bounds it."""
        if (route.kind, route.target) in self._changed_on_reopen.get(route.server, ()):
            raise ExecutionError(
                f"{invocation.tool.name} was not called: MCP server {route.server!r} was connected again and no "
                "longer lists it as it was approved (it changed, or is gone). Like at a first connection, a "
                "changed tool is held back until accepted; the tools are listed again at the next use.",
                tool=invocation.tool.name, details={"server": route.server},
            )
        timeout = invocation.remaining() if bounded else None
        if timeout == 0:  # nothing is sent that could only time out (the server would run it all the same)
            raise ToolTimeoutError(
                f"{invocation.tool.name} was not called: no time was left of its {invocation.timeout or 0:g} s "
                "deadline (listing the MCP server's tools used it up)",
                tool=invocation.tool.name, details={"category": "not_started", "retryable": True},
            )
        if route.kind == "tool":
            self._prime_output_schemas(client, route.server)
            speed_up_output_check(client.session, route.target)
            result = await client.call_tool(
                route.target, invocation.arguments, read_timeout_seconds=timeout,
                progress_callback=self._progress_sink(route.server, invocation.context),
            )
            value = tool_result(result, invocation.tool.name, wrapped=route.wrapped)
        else:
            async with asyncio.timeout(timeout):
                if route.kind == "prompt":
                    arguments = {k: str(v) for k, v in invocation.arguments.items()}
                    value = prompt_result(await client.get_prompt(route.target, arguments))
                else:
                    uri = str(invocation.arguments["uri"])
                    self._check_resource_uri(route.server, uri, invocation.tool.name)
                    value = resource_result(await client.read_resource(uri))
        return cap_result(value, self.max_result_bytes)

    def _check_resource_uri(self, server: str, uri: str, tool: str) -> None:
        """A URI the model gives must be a reviewed resource or fill a reviewed template.

        Templates are matched by the SDK's RFC 6570 matcher (every form a server may list:
        ``{var}``, ``{+path}``, ``{?query}``...); a template it cannot parse fits nothing,
        and a filled template must give every variable it fills a value.
        """
        from mcp.shared.uri_template import InvalidUriTemplate, UriTemplate

        resources, templates = self._readable.get(server, ([], []))
        if any(str(r.uri) == uri for r in resources):
            return
        for template in templates:
            try:
                values = UriTemplate.parse(str(template.uri_template)).match(uri)
            except (InvalidUriTemplate, ValueError):
                continue
            if values is not None and all(values.values()):
                return
        listed = [str(r.uri) for r in resources] + [str(t.uri_template) for t in templates]
        raise InvalidInputError(
            f"{uri!r} is not a resource of MCP server {server}: use one of {', '.join(listed)} "
            "(templates with their {variables} filled)",
            tool=tool,
        )

    def _call_tool(self, invocation: Invocation) -> Any:
        # enforces_deadline: the deadline bounds connecting and then the request here.
        route, connection = self._route(invocation)
        invocation = _sharing_deadline(invocation) or invocation
        try:
            return connection.run(partial(self._operation, route, invocation, bounded=True),
                                  deadline=invocation.deadline)
        except Exception as exc:
            raise _translate(exc, invocation, connection) from None

    async def _acall_tool(self, invocation: Invocation) -> Any:
        # The async pipeline already bounds this coroutine by the deadline; a shorter one,
        # shared with the listing before the call, bounds the request here.
        route, connection = self._route(invocation)
        shared = _sharing_deadline(invocation)
        invocation = shared or invocation
        try:
            return await connection.arun(partial(self._operation, route, invocation, bounded=shared is not None),
                                         deadline=invocation.deadline)
        except Exception as exc:
            raise _translate(exc, invocation, connection) from None

    # ----------------------------------------------------------------- completions, subscriptions

    def _endpoint(self, server: str | None) -> Endpoint:
        if server is None:
            if len(self.connections) != 1:
                raise ConfigurationError(f"name the server: one of {', '.join(self.connections)}")
            return next(iter(self.connections.values()))
        try:
            return self.connections[server]
        except KeyError:
            raise ConfigurationError(f"no MCP server {server!r}; known: {', '.join(self.connections)}") from None

    @staticmethod
    def _completion(kind: str, name: str, argument: str, value: str,
                    arguments: Mapping[str, str] | None) -> Callable[[Any], Any]:
        import mcp_types as types

        ref: Any = types.PromptReference(name=name) if kind == "prompt" else types.ResourceTemplateReference(uri=name)

        async def complete(client: Any) -> list[str]:
            if client.server_capabilities.completions is None:
                return []
            result = await client.complete(ref, {"name": argument, "value": value}, dict(arguments or {}) or None)
            return list(result.completion.values)

        return complete

    async def acomplete(
        self, kind: str, name: str, argument: str, value: str, arguments: Mapping[str, str] | None = None,
        *, server: str | None = None,
    ) -> list[str]:
        """The server's completions (``completion/complete``) for a prompt argument
        (``kind="prompt"``, ``name`` the prompt) or a resource-template variable
        (``kind="resource"``, ``name`` the URI template); empty when it has none."""
        endpoint = self._endpoint(server)
        try:
            values: list[str] = await endpoint.arun(
                self._completion(kind, name, argument, value, arguments), timeout=self.timeout
            )
        except Exception as exc:
            raise _translate_plain(exc, endpoint, "complete") from None
        return values

    def complete(
        self, kind: str, name: str, argument: str, value: str, arguments: Mapping[str, str] | None = None,
        *, server: str | None = None,
    ) -> list[str]:
        """Synchronous twin of :meth:`acomplete`."""
        endpoint = self._endpoint(server)
        try:
            values: list[str] = endpoint.run(
                self._completion(kind, name, argument, value, arguments), timeout=self.timeout
            )
        except Exception as exc:
            raise _translate_plain(exc, endpoint, "complete") from None
        return values

    def subscribe(self, uri: str, callback: Callable[[str], Any] | None = None, *, server: str | None = None) -> None:
        """Subscribe to a resource (``resources/subscribe``): ``callback(uri)`` runs on every
        ``notifications/resources/updated`` for it, and change listeners hear
        ``("resource", uri)``.

        Raises:
            ExecutionError: the server refused, or does not support subscriptions.
        """
        endpoint = self._endpoint(server)

        async def subscribe(client: Any) -> None:
            import mcp_types as types

            resources = client.server_capabilities.resources
            if resources is None or not resources.subscribe:
                raise ExecutionError(f"MCP server {endpoint.spec.name!r} does not support resource subscriptions")
            # The request itself: the SDK's helper warns that 2026-07-28 servers replace it,
            # and this driver speaks the handshake-era protocol where it is current.
            await client.session.send_request(
                types.SubscribeRequest(params=types.SubscribeRequestParams(uri=uri)), types.EmptyResult
            )

        try:
            endpoint.run(subscribe, timeout=self.timeout)
        except ExecutionError:
            raise
        except Exception as exc:
            raise _translate_plain(exc, endpoint, f"subscribe to {uri}") from None
        if callback is not None:
            self._subscriptions.setdefault(uri, []).append(callback)

    def unsubscribe(self, uri: str, *, server: str | None = None) -> None:
        """End a subscription (``resources/unsubscribe``); its callbacks stop."""
        endpoint = self._endpoint(server)
        self._subscriptions.pop(uri, None)
        async def unsubscribe(client: Any) -> None:
            import mcp_types as types

            await client.session.send_request(
                types.UnsubscribeRequest(params=types.UnsubscribeRequestParams(uri=uri)), types.EmptyResult
            )

        try:
            endpoint.run(unsubscribe, timeout=self.timeout)
        except Exception as exc:
            raise _translate_plain(exc, endpoint, f"unsubscribe from {uri}") from None

    # ----------------------------------------------------------------- capabilities

    def healthcheck(self) -> dict[str, Any]:
        """``{"status": "ok" | "error", "servers": {name: "ok" | reason}}``; pings each server's session."""
        servers: dict[str, str] = {}
        for server, connection in self.connections.items():
            try:
                connection.run(lambda client: client.list_tools(), timeout=10)
                servers[server] = "ok"
            except Exception as exc:
                servers[server] = str(exc) or type(exc).__name__
        ok = all(v == "ok" for v in servers.values())
        return {"status": "ok" if ok else "error", "servers": servers}

    def get_status(self) -> dict[str, Any]:
        """Connections, listing source and held tools, without touching the network."""
        return {
            "servers": {
                server: {
                    "transport": c.spec.transport,
                    "connected": c.is_open,
                    "gone": c.gone_reason,
                    "listing": self._listings[server].via if server in self._listings else None,
                    "listing_error": self._failures[server].error.message if server in self._failures else None,
                }
                for server, c in self.connections.items()
            },
            "held_tools": [h.name for h in self.pins.held()],
        }

    def close(self) -> None:
        """Close every session (stdio servers are stopped). Safe to call twice."""
        for connection in self.connections.values():
            connection.close()

    async def aclose(self) -> None:
        """Close every session from async code, waiting for the one on this loop."""
        for connection in self.connections.values():
            await connection.aclose()


@contextlib.contextmanager
def _calling(deadline: float | None) -> Iterator[None]:
    """The context of one async call: its deadline, and the servers its listings asked so far."""
    token = _call.set(_Call(deadline, set()))
    try:
        yield
    finally:
        _call.reset(token)


@contextlib.contextmanager
def _calling_sync(deadline: float | None) -> Iterator[None]:
    """:func:`_calling` for a synchronous call: this thread's one :class:`_Call`, set for
    the call (the outer call's values come back after a nested one)."""
    call: _Call | None = getattr(_threads, "call", None)
    if call is None:
        call = _threads.call = _Call()
    token = _call.set(call) if _call.get() is not call else None
    outer = call.deadline, call.tried, call.listed
    call.deadline, call.tried, call.listed = deadline, set(), False
    try:
        yield
    finally:
        call.deadline, call.tried, call.listed = outer
        if token is not None:
            _call.reset(token)


def _calls_in(llm_response: Any, known_names: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """The (name, arguments) of every tool call in a model's output (see :mod:`mcs.parsing`)."""
    from mcs.parsing import parse_tool_calls

    return [(call.name, call.arguments) for call in parse_tool_calls(llm_response, known_names=known_names)]


def _why(exc: Exception) -> str:
    """Why a listing failed, in words that hold nothing the server wrote (the description
    and the model's errors carry this; the full reason goes to the log)."""
    if isinstance(exc, ServerGone):
        return "cannot be reached"
    if isinstance(exc, TimeoutError):
        return "did not list its tools in time"
    if isinstance(exc, ServerError):
        return "answered its listing with an error"
    return "could not list its tools"


def _reason_of(exc: Exception) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text if len(text) <= 300 else text[:300] + "..."


def _listing_error(exc: Exception, connection: Endpoint) -> Exception:
    if isinstance(exc, ExecutionError):  # a listing refused here (see list_all_tools): name the server
        return ExecutionError(exc.message.replace("the MCP server", f"MCP server {connection.spec.name!r}", 1))
    return _translate_plain(exc, connection, "list its tools")


def _translate_plain(exc: Exception, connection: Endpoint, what: str) -> Exception:
    """A failure of a request that is not a tool call (listing, completing, subscribing)."""
    name = connection.spec.name
    if isinstance(exc, ServerGone):
        return ExecutionError(str(exc), details={"server": name})
    if isinstance(exc, ServerError):
        return ExecutionError(f"MCP server {name!r} refused to {what}: {exc.message}")
    if isinstance(exc, TimeoutError):
        why = str(exc)
        return ExecutionError(f"MCP server {name!r} did not {what} in time"
                              + (f": {why}" if why.startswith("connecting") else ""), details={"server": name})
    return exc


def _translate(exc: Exception, invocation: Invocation, connection: Endpoint) -> Exception:
    name = invocation.tool.name
    if isinstance(exc, ExecutionError | ToolTimeoutError):
        return exc
    if isinstance(exc, ServerGone):
        return ExecutionError(f"{name} could not run: {exc}", tool=name, details={"server": connection.spec.name})
    if isinstance(exc, ServerError):
        return ExecutionError(
            f"{name}: the MCP server refused the call ({exc.message})",
            tool=name,
            details={"server": connection.spec.name, "code": exc.code},
        )
    if isinstance(exc, TimeoutError):
        why = str(exc)
        return ToolTimeoutError(f"{name} did not finish within {invocation.timeout or 0:g} s"
                                + (f": {why}." if why.startswith("connecting") else "."), tool=name)
    return exc


def _changed(before: _Listing, after: _Listing) -> set[tuple[str, str]]:
    """The routes (kind, target) whose definition differs between two listings of a server,
    or that the later one no longer has."""
    tools = {t["name"]: t for t in after.tools}
    changed = {("tool", t["name"]) for t in before.tools if tools.get(t["name"]) != t}
    prompts = {p.name: p for p in after.prompts}
    changed |= {("prompt", p.name) for p in before.prompts if prompts.get(p.name) != p}
    if (before.resources, before.templates) != (after.resources, after.templates):
        changed.add(("resource", ""))
    return changed


#: The most tools (or prompts, resources, resource templates) one server may list; a
#: longer listing is refused, not read on.
MAX_LISTED_TOOLS = 10_000
_MAX_PAGES = 1000


async def list_all_tools(client: Any, *, max_tools: int = MAX_LISTED_TOOLS) -> list[dict[str, Any]]:
    """Every tool the server behind an ``mcp.Client`` lists, following ``nextCursor``.

    Each tool is its ``tools/list`` JSON (camelCase keys, unset fields left out). A server
    that never stops paging cannot hang the caller or fill its memory: a cursor that comes
    back a second time (a loop), more than ``max_tools`` tools or more than 1000 pages
    end the listing with an :class:`~mcs.errors.ExecutionError` saying which.

    Raises:
        ExecutionError: the listing loops or is longer than those bounds.
    """
    tools = await list_all(client.list_tools, "tools", lambda page: page.tools, max_items=max_tools)
    return [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools]


async def list_all(list_page: Callable[..., Awaitable[Any]], kind: str, items: Callable[[Any], Sequence[Any]],
                   *, max_items: int = MAX_LISTED_TOOLS) -> list[Any]:
    """Every item of one MCP listing (``tools/list``, ``prompts/list``...), following ``nextCursor``.

    ``list_page(cursor=...)`` fetches one page and ``items(page)`` reads its entries; ``kind``
    names them in errors. The bounds are :func:`list_all_tools`'.

    Raises:
        ExecutionError: the listing loops, or holds more than ``max_items`` items or 1000 pages.
    """
    found: list[Any] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(_MAX_PAGES):
        page = await list_page(cursor=cursor)
        entries = items(page)
        if len(found) + len(entries) > max_items:
            raise ExecutionError(
                f"the MCP server lists more than {max_items} {kind}; no more are read (a server with that many "
                f"{kind} needs splitting, or MCS discovery mode over a smaller set)"
            )
        found.extend(entries)
        cursor = page.next_cursor
        if not cursor:
            return found
        if cursor in seen:
            raise ExecutionError(f"the MCP server pages its {kind} in a loop: the cursor {cursor[:80]!r} came back")
        seen.add(cursor)
    raise ExecutionError(f"the MCP server lists its {kind} in more than {_MAX_PAGES} pages; no more are read")


def _pinned_extra(item: Mapping[str, Any]) -> dict[str, Any]:
    """What a tool shows beyond name, description and input schema, pinned with them."""
    return {k: item[k] for k in ("title", "outputSchema", "annotations") if item.get(k)}


def _dumped(model: Any, *, exclude: set[str]) -> dict[str, Any]:
    """An SDK model (a prompt, a resource) as its wire JSON, without ``exclude``."""
    data: dict[str, Any] = model.model_dump(by_alias=True, exclude_none=True, mode="json")
    return {k: v for k, v in data.items() if k not in exclude}


def _tool(exposed: str, server: str, item: Mapping[str, Any]) -> Tool:
    meta: dict[str, Any] = {"original_name": item["name"], "server": server, "kind": "tool"}
    if item.get("_interface"):
        meta["interface"] = item["_interface"]
        meta["method"] = item.get("_method", item["name"])
    schema = item.get("inputSchema") or {"type": "object", "properties": {}}
    annotations = item.get("annotations") or {}
    return Tool(
        name=exposed,
        description=item.get("description") or "",
        input_schema=schema,
        title=item.get("title") or annotations.get("title"),
        output_schema=item.get("outputSchema"),
        annotations={k: v for k, v in annotations.items() if k != "title"},
        meta=meta,
    )


def _client_credentials(
    url: str,
    client_id: str,
    client_secret: str | None,
    private_key_pem: str | None,
    signing_algorithm: str,
    scope: str | None,
    issuer: str | None,
) -> Any:
    """The SDK's OAuth client-credentials provider: a secret (basic) or a private key (private_key_jwt)."""
    import warnings

    from mcp.client.auth.extensions import client_credentials as cc
    from mcp.shared.exceptions import MCPDeprecationWarning

    if (client_secret is None) == (private_key_pem is None):
        raise ConfigurationError(
            "client_id needs exactly one of client_secret (client_secret_basic) or "
            "private_key_pem (private_key_jwt) for the OAuth client-credentials grant"
        )
    with warnings.catch_warnings():
        # Without `issuer` the SDK warns that it will be required in 3.0; discovery still applies.
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        if client_secret is not None:
            return cc.ClientCredentialsOAuthProvider(
                server_url=url, storage=MemoryTokenStorage(), client_id=client_id, client_secret=client_secret,
                scope=scope, issuer=issuer,
            )
        assert private_key_pem is not None
        signer = cc.SignedJWTParameters(
            issuer=client_id, subject=client_id, signing_key=private_key_pem, signing_algorithm=signing_algorithm
        )
        return cc.PrivateKeyJWTOAuthProvider(
            server_url=url, storage=MemoryTokenStorage(), client_id=client_id,
            assertion_provider=signer.create_assertion_provider(), scope=scope, issuer=issuer,
        )
