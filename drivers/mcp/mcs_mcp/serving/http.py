"""Streamable HTTP: the Starlette app around the SDK's session manager, and its runner.

Layers, outermost first (SECURITY.md E1, E2-E4, E7):

1. :class:`~mcs.server.origins.HostOriginMiddleware` (shared with the RFC-0001 server):
   a ``Host`` not on the allow-list gets 421, an ``Origin`` not on it (``null``
   included) 403, before anything else runs. Bound to loopback, the loopback names on
   any port are allowed; elsewhere ``Host`` is checked only when ``allowed_hosts`` is
   given, ``Origin`` always.
2. Request bodies over ``max_request_body`` get 413; a client gone before the end of its
   body is one warning on ``mcs_mcp.serving.http``, and the request goes no further (the
   SDK logged each at ERROR with a traceback).
3. With OAuth: :class:`~mcs_mcp.serving.auth.OAuthMiddleware` on ``base_path`` and the
   RFC 9728 metadata document at ``/.well-known/oauth-protected-resource[base_path]``.
4. gen-mcp 0.2.0 health endpoints (liveness, readiness) when the driver's
   ``health_settings()`` enables them.
5. The SDK's ``StreamableHTTPSessionManager`` at ``base_path`` (stateless by default,
   so replicas behind any load balancer answer any request; stateful with an optional
   event store for resumable streams).
"""

from __future__ import annotations

import contextlib
import logging
import secrets
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http import EventStore, StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import RequestBodyLimitMiddleware, TransportSecuritySettings
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from mcs.server.connections import tls_context, uvicorn_settings
from mcs.server.origins import (
    HostOriginMiddleware,
    allowed_hosts_for,
    allowed_origins_for,
    is_loopback,
)
from mcs.urls import LOOPBACK_HOSTS
from mcs_mcp.serving import auth as auth_mod
from mcs_mcp.serving.events import SessionEventStore
from mcs_mcp.serving.options import ServeOptions

logger = logging.getLogger(__name__)


def default_allowed_hosts(options: ServeOptions) -> list[str] | None:
    """Host header patterns accepted (``name`` or ``name:*``); ``None``: not checked."""
    return allowed_hosts_for(options.host, options.allowed_hosts)


def default_allowed_origins(options: ServeOptions) -> list[str]:
    return allowed_origins_for(options.host, options.allowed_origins)


def resource_url(options: ServeOptions) -> str:
    """The canonical URI of this MCP server (OAuth ``resource``, default audience)."""
    if options.auth is not None and options.auth.resource:
        return options.auth.resource
    return options.url


class _SessionManager(StreamableHTTPSessionManager):
    """The SDK's session manager, with 256-bit random session ids (the SDK's are version-4
    UUIDs: 122 random bits, under the 128 SECURITY.md E6 asks) and each session's transport
    given its own view of the shared event store
    (:class:`~mcs_mcp.serving.events.SessionEventStore`)."""

    def _admit_session(self, requestor: Any) -> Any:
        transport = super()._admit_session(requestor)
        if transport is not None:
            self._renumber(transport)
        shared: EventStore | None = self.event_store
        if transport is not None and shared is not None:
            if id(getattr(transport, "_event_store", None)) != id(shared):
                # Fail closed: a shared store replays one session's messages to another.
                raise RuntimeError("the MCP SDK's transport no longer takes its event store as expected; "
                                   "resumable sessions cannot be kept apart")
            transport._event_store = SessionEventStore(shared, str(transport.mcp_session_id))
        return transport

    def _renumber(self, transport: StreamableHTTPServerTransport) -> None:
        """Give a just-admitted session (nothing sent yet) a ``secrets.token_urlsafe(32)`` id."""
        old = transport.mcp_session_id
        if old is None or self._server_instances.get(old) is not transport:
            # Fail closed rather than serve a session under an id this code did not choose.
            raise RuntimeError("the MCP SDK no longer registers sessions as expected; "
                               "their ids cannot be made 128-bit random")
        new = secrets.token_urlsafe(32)
        transport.mcp_session_id = new
        self._server_instances[new] = transport
        del self._server_instances[old]
        if old in self._session_owners:
            self._session_owners[new] = self._session_owners.pop(old)


class ClientGoneMiddleware:
    """Reads a POST's body before the app does: when the client goes before its end (it
    disconnected, or was cut at the body deadline), logs one warning and answers nothing,
    since nobody is there to read it. The body is bounded by the middleware before this one."""

    def __init__(self, app: ASGIApp, max_body: int) -> None:
        self.app = app
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        body, extra = await auth_mod.read_body(receive, self.max_body)
        if body is None:
            await Response("Request body too large", status_code=413)(scope, receive, send)
            return
        if any(message["type"] == "http.disconnect" for message in extra):
            client = scope.get("client")
            peer = f"{client[0]}:{client[1]}" if client else "an unknown address"
            logger.warning("the client %s went before the end of its request body (%d bytes received): "
                           "request dropped", peer, len(body))
            return
        await self.app(scope, auth_mod.replay_body(body, extra, receive), send)


def build_app(server: Server[Any], options: ServeOptions) -> Starlette:
    """The ASGI app serving ``server`` (from :func:`build_server`) as ``options`` say."""
    allowed_hosts = default_allowed_hosts(options)
    allowed_origins = default_allowed_origins(options)
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=allowed_hosts is not None,
        allowed_hosts=allowed_hosts or [],
        allowed_origins=allowed_origins,
    )
    manager = _SessionManager(
        app=server,
        stateless=options.stateless,
        json_response=options.json_response,
        security_settings=security,
        max_request_body_size=options.max_request_body,
        event_store=options.event_store,
        retry_interval=options.retry_interval,
    )
    mcp_app = StreamableHTTPASGIApp(manager)
    # Stateless, a GET stream could never carry anything (no session to send on) and
    # would only hold a connection open: 405, as the transport spec allows.
    methods = ["POST"] if options.stateless else ["GET", "POST", "DELETE"]
    routes: list[Route] = [Route(options.base_path, endpoint=mcp_app, methods=methods)]
    middleware: list[Middleware] = [
        Middleware(HostOriginMiddleware, allowed_hosts=allowed_hosts, allowed_origins=allowed_origins),
        Middleware(RequestBodyLimitMiddleware, max_body_size=options.max_request_body),
        Middleware(ClientGoneMiddleware, max_body=options.max_request_body),
    ]
    catalog = getattr(server, "mcs_catalog", None)
    if options.auth is not None:
        resource = resource_url(options)
        verifier = auth_mod.JWTVerifier(options.auth, resource=resource)
        prm_url = auth_mod.metadata_url(resource)
        auth_options = options.auth

        def document() -> dict[str, Any]:
            scopes = catalog.all_scopes() if catalog is not None else set()
            return auth_mod.metadata_document(auth_options, resource, scopes)

        endpoint = auth_mod.metadata_endpoint(document)
        path = urlsplit(resource).path.rstrip("/")
        routes.append(Route(auth_mod.PRM_PATH, endpoint=endpoint, methods=["GET"]))
        if path:
            routes.append(Route(auth_mod.PRM_PATH + path, endpoint=endpoint, methods=["GET"]))

        def scopes_for(method: str, params: Any) -> tuple[str, ...]:
            return catalog.required_scopes(method, params) if catalog is not None else ()

        middleware.append(
            Middleware(
                auth_mod.OAuthMiddleware,
                verifier=verifier,
                base_path=options.base_path,
                metadata_url=prm_url,
                required_scopes=scopes_for,
                max_body=options.max_request_body,
            )
        )
    routes.extend(_health_routes(catalog.driver if catalog is not None else None))
    forwarder = getattr(server, "mcs_log_forwarder", None)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        with contextlib.ExitStack() as stack:
            if forwarder is not None:
                stack.enter_context(forwarder.installed())
            async with manager.run():
                yield

    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
    app.state.mcs_session_manager = manager
    return app


def _health_routes(driver: Any) -> list[Route]:
    """gen-mcp 0.2.0 liveness/readiness endpoints, when the driver asks for them."""
    settings_of = getattr(driver, "health_settings", None)
    settings = settings_of() if callable(settings_of) else None
    if not settings or not settings.get("enabled"):
        return []

    async def alive(request: Any) -> Response:
        return JSONResponse({"status": "ok"})

    async def ready(request: Any) -> Response:
        check = getattr(driver, "healthcheck", None)
        if callable(check) and "healthcheck" in getattr(getattr(driver, "meta", None), "capabilities", ()):
            try:
                healthy = await _maybe_await(check())
            except Exception:
                healthy = False
            if healthy is False or (isinstance(healthy, dict) and healthy.get("ok") is False):
                return JSONResponse({"status": "unavailable"}, status_code=503)
        return JSONResponse({"status": "ready"})

    return [
        Route(str(settings.get("liveness_path") or "/healthz"), alive, methods=["GET"]),
        Route(str(settings.get("readiness_path") or "/readyz"), ready, methods=["GET"]),
    ]


async def _maybe_await(value: Any) -> Any:
    import inspect

    return await value if inspect.isawaitable(value) else value


def uvicorn_config(app: ASGIApp, options: ServeOptions, **overrides: Any) -> Any:
    """A ``uvicorn.Config`` for ``app``: address, TLS, no access log, our logging untouched,
    and the bounds on slow and numerous clients of ``options.connection_limits``.

    Raises:
        ConfigurationError: TLS files that cannot be loaded (read here, once).
    """
    import uvicorn

    tls = tls_context(options.tls.cert_file, options.tls.key_file) if options.tls is not None else None
    kwargs: dict[str, Any] = {
        "host": options.host,
        "port": options.port,
        "log_config": None,
        "access_log": False,
        "lifespan": "on",
        "timeout_graceful_shutdown": 2,
        "ws": "none",
        **uvicorn_settings(options.connection_limits, tls=tls),
    }
    kwargs.update(overrides)
    return uvicorn.Config(app, **kwargs)


async def serve_http(server: Server[Any], options: ServeOptions) -> None:
    """Run until cancelled (or SIGINT/SIGTERM) on ``options.host:options.port``."""
    import uvicorn

    config = uvicorn_config(build_app(server, options), options)
    await uvicorn.Server(config).serve()


__all__ = [
    "LOOPBACK_HOSTS",
    "HostOriginMiddleware",
    "build_app",
    "default_allowed_hosts",
    "default_allowed_origins",
    "is_loopback",
    "resource_url",
    "serve_http",
    "uvicorn_config",
]
