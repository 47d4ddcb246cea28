"""Host and Origin checks against DNS rebinding, shared by every HTTP server MCS runs.

Both ``mcs serve --protocol mcp`` and the RFC-0001 server (``--protocol rfc0001``,
``McpServer.asgi_app()``) put :class:`HostOriginMiddleware` first, with the same rules
(SECURITY.md E1):

* a ``Host`` not on the allow-list gets 421, an ``Origin`` not on it (``null`` included)
  403, before anything else runs; a WebSocket handshake is refused the same way (403);
* bound to loopback (the default), the loopback names on any port are allowed
  (``localhost``, ``127.0.0.1``, ``[::1]``) and requests without ``Origin`` are accepted;
* bound elsewhere, ``Host`` is checked only when ``allowed_hosts`` is given; ``Origin``
  always is (only ``allowed_origins`` pass).

Patterns are ``name``, ``name:*`` (any port) or ``*``; comparison ignores case.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from mcs.urls import LOOPBACK_HOSTS


def is_loopback(host: str) -> bool:
    """Whether a bind address is this machine only."""
    return host in ("127.0.0.1", "localhost", "::1", "[::1]") or host.startswith("127.")


def allowed_hosts_for(bind_host: str, extra: Iterable[str] = ()) -> list[str] | None:
    """Host header patterns accepted (``name`` or ``name:*``); ``None``: not checked."""
    hosts = list(extra)
    if is_loopback(bind_host):
        for name in LOOPBACK_HOSTS:
            hosts.extend([name, f"{name}:*"])
    return hosts or None


def allowed_origins_for(bind_host: str, extra: Iterable[str] = ()) -> list[str]:
    """Origin patterns accepted: ``extra``, plus the loopback origins when bound to loopback."""
    origins = list(extra)
    if is_loopback(bind_host):
        for scheme in ("http", "https"):
            for name in LOOPBACK_HOSTS:
                origins.extend([f"{scheme}://{name}", f"{scheme}://{name}:*"])
    return origins


def matches(value: str, patterns: Sequence[str]) -> bool:
    """Whether ``value`` fits one of ``patterns`` (see the module doc)."""
    lowered = value.lower()
    for pattern in patterns:
        pattern = pattern.lower()
        if pattern == "*" or lowered == pattern:
            return True
        if pattern.endswith(":*"):
            base = pattern[:-2]
            head, sep, port = lowered.rpartition(":")
            if sep and head == base and port.isdigit():
                return True
    return False


class HostOriginMiddleware:
    """Refuses HTTP requests and WebSocket handshakes whose ``Host`` or ``Origin`` is not allowed."""

    def __init__(
        self, app: ASGIApp, *, allowed_hosts: list[str] | None, allowed_origins: list[str],
        respond: Callable[[int, str], Response] | None = None,
    ) -> None:
        self.app = app
        self.allowed_hosts = allowed_hosts
        self.allowed_origins = allowed_origins
        #: Builds the refusal (status, reason) in the server's own shape; default plain text.
        self.respond = respond or (lambda status, reason: Response(reason, status_code=status))

    def refusal(self, headers: Headers) -> tuple[int, str] | None:
        """``(status, reason)`` when the request must be refused, else ``None``."""
        host = headers.get("host")
        if self.allowed_hosts is not None and (not host or not matches(host, self.allowed_hosts)):
            return 421, "Invalid Host header: this server does not answer to that name"
        origin = headers.get("origin")
        if origin is not None and not matches(origin, self.allowed_origins):
            return 403, "Invalid Origin header: cross-origin requests are not allowed"
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        refused = self.refusal(Headers(scope=scope))
        if refused is None:
            await self.app(scope, receive, send)
            return
        status, reason = refused
        if scope["type"] == "websocket":
            # Closing before accepting makes the server answer the handshake with 403.
            await send({"type": "websocket.close", "code": 1008, "reason": reason[:120]})
            return
        await self.respond(status, reason)(scope, receive, send)
