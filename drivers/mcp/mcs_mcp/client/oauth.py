"""The OAuth authorization-code flow for the ``mcp`` driver, on the SDK's ``OAuthClientProvider``.

    MCPDriver(url=..., oauth_redirect_uri="http://127.0.0.1:8765/callback")

The SDK does the protocol: protected-resource and authorization-server discovery,
dynamic client registration or a client ID metadata document
(``oauth_client_metadata_url``), PKCE, the scope from ``WWW-Authenticate`` or
``scopes_supported``, step-up on ``insufficient_scope``, refresh. This module supplies
what the SDK leaves to the application:

* how the user authorizes: ``oauth_authorize(authorization_url) -> redirected URL``.
  :func:`browser_authorize` (the default) opens the browser and catches the redirect on
  a one-shot loopback listener at ``oauth_redirect_uri``; :func:`headless_authorize`
  fetches the URL without a browser and reads the redirect, for authorization servers
  that approve without a person (test servers, pre-approved clients);
* where tokens live: ``token_storage`` takes any SDK ``TokenStorage``, or a path for a
  :class:`FileTokenStorage`; the default keeps them in memory.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import os
import webbrowser
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from mcs.errors import ConfigurationError

#: ``authorization_url -> the URL the browser was redirected to`` (plain or async).
Authorize = Callable[[str], "str | Awaitable[str]"]


class MemoryTokenStorage:
    """The SDK's ``TokenStorage`` protocol, in memory (tokens end with the process)."""

    def __init__(self) -> None:
        self._tokens: Any = None
        self._client: Any = None

    async def get_tokens(self) -> Any:
        return self._tokens

    async def set_tokens(self, tokens: Any) -> None:
        self._tokens = tokens

    async def get_client_info(self) -> Any:
        return self._client

    async def set_client_info(self, client_info: Any) -> None:
        self._client = client_info


class FileTokenStorage:
    """Tokens and the registered client in a JSON file (created ``0600``, replaced atomically)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise ConfigurationError(f"token storage {self.path} is unreadable: {exc}") from None
        return data if isinstance(data, dict) else {}

    def _write(self, key: str, value: Any) -> None:
        data = self._read()
        data[key] = value.model_dump(mode="json", exclude_none=True)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_suffix(self.path.suffix + ".tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle)
        os.replace(temporary, self.path)

    async def get_tokens(self) -> Any:
        from mcp.shared.auth import OAuthToken

        raw = self._read().get("tokens")
        return OAuthToken.model_validate(raw) if raw else None

    async def set_tokens(self, tokens: Any) -> None:
        self._write("tokens", tokens)

    async def get_client_info(self) -> Any:
        from mcp.shared.auth import OAuthClientInformationFull

        raw = self._read().get("client")
        return OAuthClientInformationFull.model_validate(raw) if raw else None

    async def set_client_info(self, client_info: Any) -> None:
        self._write("client", client_info)


def token_storage(value: Any) -> Any:
    """``None`` -> memory; a path -> :class:`FileTokenStorage`; any ``TokenStorage`` as it is."""
    if value is None:
        return MemoryTokenStorage()
    if isinstance(value, str | os.PathLike):
        return FileTokenStorage(value)
    if not all(callable(getattr(value, m, None)) for m in ("get_tokens", "set_tokens")):
        raise ConfigurationError("token_storage must be a path or an object with get_tokens/set_tokens (TokenStorage)")
    return value


async def headless_authorize(authorization_url: str) -> str:
    """Fetch the authorization URL without a browser and return where it redirects.

    For authorization servers that approve at once (test servers, pre-approved clients);
    one that shows a login page makes this fail with a message saying so.
    """
    import httpx2

    async with httpx2.AsyncClient(timeout=30) as http:
        response = await http.get(authorization_url, follow_redirects=False)
    location = response.headers.get("location")
    if response.status_code not in (301, 302, 303, 307, 308) or not location:
        raise ConfigurationError(
            f"the authorization server answered {response.status_code} without a redirect: it wants a person "
            "to log in; use the default oauth_authorize (a browser)"
        )
    return str(location)


def browser_authorize(
    redirect_uri: str, *, open_browser: Callable[[str], object] = webbrowser.open, timeout: float = 300.0
) -> Callable[[str], Awaitable[str]]:
    """An ``oauth_authorize`` that opens the browser and catches the redirect to ``redirect_uri``.

    ``redirect_uri`` must be a loopback ``http`` URL with a port (``http://127.0.0.1:8765/callback``):
    a one-shot listener there receives the browser's redirect, answers with a page that
    says the window can be closed, and returns the URL it received.
    """
    parts = urlsplit(redirect_uri)
    if parts.scheme != "http" or parts.hostname not in ("127.0.0.1", "localhost", "::1") or not parts.port:
        raise ConfigurationError(
            f"oauth_redirect_uri {redirect_uri!r}: the browser flow listens on a loopback address, so it must be "
            "http://127.0.0.1:PORT/PATH (or pass oauth_authorize=... to handle the redirect yourself)"
        )
    host, port, path = parts.hostname, parts.port, parts.path or "/"

    async def authorize(authorization_url: str) -> str:
        received: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        async def on_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                request_line = (await reader.readline()).decode("latin-1")
                while (await reader.readline()).strip():
                    pass  # headers
                target = request_line.split(" ")[1] if request_line.count(" ") >= 2 else ""
                if urlsplit(target).path != path:
                    writer.write(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                    return
                body = b"Authorization received; you can close this window."
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: "
                             + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)
                if not received.done():
                    received.set_result(f"http://{parts.netloc}{target}")
            finally:
                with contextlib.suppress(Exception):
                    await writer.drain()
                writer.close()

        server = await asyncio.start_server(on_connection, host, port)
        try:
            opened = open_browser(authorization_url)
            if inspect.isawaitable(opened):
                await opened
            return await asyncio.wait_for(received, timeout)
        except TimeoutError:
            raise ConfigurationError(f"no authorization arrived at {redirect_uri} within {timeout:g} s") from None
        finally:
            server.close()
            await server.wait_closed()

    return authorize


def authorization_code_provider(
    url: str,
    *,
    redirect_uri: str,
    authorize: Authorize | None = None,
    scope: str | None = None,
    client_name: str = "mcs",
    client_metadata_url: str | None = None,
    client_id: str | None = None,
    client_secret: str | None = None,
    storage: Any = None,
) -> Any:
    """The SDK's ``OAuthClientProvider`` for the authorization-code flow (see the module docstring).

    ``client_id`` (+ ``client_secret``) is a pre-registered client: no registration happens.
    """
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import (
        AuthorizationCodeResult,
        OAuthClientInformationFull,
        OAuthClientMetadata,
    )
    from pydantic import AnyUrl

    store = token_storage(storage)
    if client_id is not None:
        preset = OAuthClientInformationFull(
            client_id=client_id, client_secret=client_secret, redirect_uris=[AnyUrl(redirect_uri)],
            token_endpoint_auth_method="client_secret_basic" if client_secret else "none",
        )
        store = _Preregistered(store, preset)
    handler = authorize or browser_authorize(redirect_uri)
    landed: list[str] = []

    async def redirect(authorization_url: str) -> None:
        result = handler(authorization_url)
        landed.append(str(await result if inspect.isawaitable(result) else result))

    async def callback() -> Any:
        query = parse_qs(urlsplit(landed.pop()).query)
        if "error" in query:
            detail = query.get("error_description", query["error"])[0]
            raise ConfigurationError(f"the authorization server refused: {detail}")
        if "code" not in query:
            raise ConfigurationError("the authorization redirect carried no code")
        return AuthorizationCodeResult(
            code=query["code"][0], state=query.get("state", [None])[0], iss=query.get("iss", [None])[0]
        )

    try:
        return OAuthClientProvider(
            server_url=url,
            client_metadata=OAuthClientMetadata(
                client_name=client_name, redirect_uris=[AnyUrl(redirect_uri)], scope=scope,
                grant_types=["authorization_code", "refresh_token"], response_types=["code"],
            ),
            storage=store,
            redirect_handler=redirect,
            callback_handler=callback,
            client_metadata_url=client_metadata_url,
        )
    except ValueError as exc:
        raise ConfigurationError(str(exc)) from None


class _Preregistered:
    """A storage that starts with a pre-registered client's information."""

    def __init__(self, inner: Any, client: Any) -> None:
        self._inner = inner
        self._client = client

    async def get_tokens(self) -> Any:
        return await self._inner.get_tokens()

    async def set_tokens(self, tokens: Any) -> None:
        await self._inner.set_tokens(tokens)

    async def get_client_info(self) -> Any:
        return await self._inner.get_client_info() or self._client

    async def set_client_info(self, client_info: Any) -> None:
        await self._inner.set_client_info(client_info)
