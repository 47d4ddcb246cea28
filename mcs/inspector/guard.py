"""Who may talk to the inspector: the page's own origin, with the session token.

The inspector can run tools that change real systems, so it answers only requests that

* carry the session token as the first path segment (``/TOKEN/...``), compared in
  constant time: another local program or page does not know it;
* name the loopback address it listens on in ``Host`` (``127.0.0.1:PORT`` or
  ``localhost:PORT``): a DNS-rebinding page sends its own host name;
* come from the page itself: an ``Origin`` header, when present, is the page's own, and
  ``Sec-Fetch-Site``, when present, is ``same-origin`` or ``none`` (typed by a person);
  the one exception is a top-level navigation to the page (``GET /TOKEN/``), which loads
  static HTML and runs nothing (``--open`` reaches the page that way, from a local file).

Everything else gets ``403`` and reaches no route. Every answer also carries headers
that keep the page from being framed, sniffed or leaking its URL (the token) as a referrer.
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"content-security-policy",
     b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
     b"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
)


def new_token() -> str:
    """A random session token (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


class Guard:
    """ASGI middleware refusing what the module docstring describes; the app behind it
    sees the token segment as ``root_path``."""

    def __init__(self, app: ASGIApp, *, token: str, port: int) -> None:
        self.app = app
        self.token = token
        self.prefix = f"/{token}"
        self.hosts = frozenset({f"127.0.0.1:{port}", f"localhost:{port}"})
        self.origins = frozenset(f"http://{host}" for host in self.hosts)

    def refusal(self, scope: Scope) -> str | None:
        """Why the request is refused, or ``None`` when it may go on."""
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if headers.get("host", "").lower() not in self.hosts:
            return "this inspector answers only on its own loopback address"
        origin = headers.get("origin")
        if origin is not None and origin.lower() not in self.origins:
            return "requests from other origins are refused"
        path: str = scope.get("path", "")
        if headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none") and not self._opens_page(
            scope, headers
        ):
            return "requests from other sites are refused"
        segment = path[1:].split("/", 1)[0]
        if not secrets.compare_digest(segment.encode(), self.token.encode()):
            return "this address needs the session token printed by `mcs inspect`"
        return None

    def _opens_page(self, scope: Scope, headers: dict[str, str]) -> bool:
        """A top-level navigation to the page itself (what ``mcs inspect --open`` gives the
        browser, from a local file): it loads the static page and runs nothing."""
        return (
            scope.get("method") == "GET"
            and scope.get("path") == self.prefix + "/"
            and not scope.get("query_string")
            and headers.get("sec-fetch-mode") == "navigate"
            and headers.get("sec-fetch-dest") == "document"
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # no WebSocket is offered
            await send({"type": "websocket.close", "code": 1008})
            return
        reason = self.refusal(scope)
        if reason is not None:
            await _plain(send, 403, f"Forbidden: {reason}.\n")
            return
        if scope["path"] == self.prefix:
            await _redirect(send, self.prefix + "/")
            return

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self.app({**scope, "root_path": scope.get("root_path", "") + self.prefix}, receive, secured)


async def _plain(send: Send, status: int, text: str) -> None:
    body = text.encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()),
        *SECURITY_HEADERS,
    ]})
    await send({"type": "http.response.body", "body": body})


async def _redirect(send: Send, location: str) -> None:
    await send({"type": "http.response.start", "status": 307, "headers": [
        (b"location", location.encode()), (b"content-length", b"0"), *SECURITY_HEADERS,
    ]})
    await send({"type": "http.response.body", "body": b""})
