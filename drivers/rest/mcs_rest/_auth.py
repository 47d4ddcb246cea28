"""Credentials from the spec's security schemes, applied to outgoing requests.

Configuration maps a scheme name (as in ``components.securitySchemes`` or Swagger's
``securityDefinitions``) to its credential:

* ``apiKey`` (header, query or cookie): the key, a string;
* ``http`` ``bearer``: the token, a string;
* ``http`` ``basic``: ``"user:password"`` or a ``(user, password)`` pair;
* ``oauth2`` and ``openIdConnect``: a token you already hold (a personal access token),
  a string, sent as ``Authorization: Bearer``;
* ``oauth2`` client credentials: ``{"client_id": ..., "client_secret": ..., "scopes": [...],
  "token_url": ...}`` (``token_url`` defaults to the spec's ``tokenUrl``). The token is
  fetched on first use, cached, and refreshed before it expires or after a 401.
* a callable, for any bearer-token scheme (``http bearer``, ``oauth2``, ``openIdConnect``)
  or an ``apiKey``: it returns the current token (or key), or a ``(token, expires_in)``
  pair. It is called on first use, again once after a 401, and again when the
  ``expires_in`` it gave has (nearly) run out. An ``async def`` callable is awaited on
  the async path; a plain one runs on a worker thread there, so it may block.

:func:`describe_schemes` lists what a spec declares and how to set each; headers the
spec does not describe go in the driver's ``headers=`` option.

An operation uses the first of its security requirements whose schemes are all
configured. Credentials never appear in error messages.
"""

from __future__ import annotations

import asyncio
import base64
import inspect
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcs.errors import ConfigurationError, ExecutionError

if TYPE_CHECKING:
    import httpx

    from mcs.http import Body

_REFRESH_MARGIN = 30.0
#: The most of a token endpoint's answer that is read (decoded); a larger one is refused.
TOKEN_MAX_BYTES = 65_536


@dataclass(frozen=True, slots=True)
class Applied:
    """What one scheme adds to a request."""

    headers: tuple[tuple[str, str], ...] = ()
    query: tuple[tuple[str, str], ...] = ()
    cookies: tuple[tuple[str, str], ...] = ()


@dataclass
class OAuthClientCredentials:
    """An OAuth 2.0 client-credentials token source with caching and refresh."""

    token_url: str
    client_id: str
    client_secret: str
    scopes: tuple[str, ...] = ()
    _token: str | None = None
    _expires: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _form(self) -> tuple[dict[str, str], dict[str, str]]:
        from mcs.http import ACCEPT_ENCODING  # httpx loads on the first call

        data = {"grant_type": "client_credentials"}
        if self.scopes:
            data["scope"] = " ".join(self.scopes)
        raw = f"{self.client_id}:{self.client_secret}".encode()
        headers = {"Authorization": "Basic " + base64.b64encode(raw).decode("ascii"), "Accept": "application/json",
                   "Accept-Encoding": ACCEPT_ENCODING}
        return data, headers

    def _store(self, status: int, body: Body) -> str:
        if status != 200:
            raise ExecutionError(
                f"The OAuth token endpoint refused the client credentials (HTTP {status}); "
                "the driver's OAuth configuration must be fixed, retrying will not help."
            )
        if body.truncated:
            raise ExecutionError(
                f"The OAuth token endpoint answered with more than {TOKEN_MAX_BYTES} bytes; refused "
                "(a token response is small). The driver's OAuth configuration must be fixed."
            )
        try:
            payload = json.loads(body.data)
            token = str(payload["access_token"])
        except (ValueError, KeyError, TypeError):
            raise ExecutionError("The OAuth token endpoint answered without an access_token.") from None
        expires_in = payload.get("expires_in")
        lifetime = float(expires_in) if isinstance(expires_in, int | float | str) and str(expires_in).replace(".", "", 1).isdigit() else 3600.0
        self._token = token
        self._expires = time.monotonic() + lifetime
        return token

    def _fresh(self) -> str | None:
        if self._token is not None and time.monotonic() < self._expires - _REFRESH_MARGIN:
            return self._token
        return None

    def invalidate(self) -> None:
        """Forget the token (after a 401); the next request fetches a new one."""
        self._token = None

    def token(self, client: httpx.Client, timeout: float | None) -> str:
        with self._lock:
            cached = self._fresh()
            if cached is not None:
                return cached
            from mcs.http import read_body

            data, headers = self._form()
            deadline = None if timeout is None else time.monotonic() + timeout
            request = client.build_request("POST", self.token_url, data=data, headers=headers, timeout=timeout)
            response = client.send(request, stream=True)
            body = read_body(response, max_bytes=TOKEN_MAX_BYTES, deadline=deadline)
            return self._store(response.status_code, body)

    async def atoken(self, client: httpx.AsyncClient, timeout: float | None) -> str:
        cached = self._fresh()
        if cached is not None:
            return cached
        from mcs.http import aread_body

        data, headers = self._form()
        deadline = None if timeout is None else time.monotonic() + timeout
        request = client.build_request("POST", self.token_url, data=data, headers=headers, timeout=timeout)
        response = await client.send(request, stream=True)
        body = await aread_body(response, max_bytes=TOKEN_MAX_BYTES, deadline=deadline)
        return self._store(response.status_code, body)


@dataclass
class RefreshingToken:
    """A token (or API key) from the user's callable, cached until a 401 or its expiry."""

    scheme: str
    fetch: Callable[[], Any]
    _token: str | None = None
    _expires: float | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _fresh(self) -> str | None:
        if self._token is None:
            return None
        if self._expires is not None and time.monotonic() >= self._expires - _REFRESH_MARGIN:
            return None
        return self._token

    def _accept(self, value: Any) -> str:
        lifetime: Any = None
        if isinstance(value, tuple) and len(value) == 2:
            value, lifetime = value
        if not isinstance(value, str) or not value or any(c in value for c in "\r\n\0"):
            raise ExecutionError(
                f"The credential callable of security scheme {self.scheme!r} returned no usable token "
                "(it must return a non-empty string, or a (token, expires_in) pair); the driver's "
                "configuration must be fixed, retrying will not help."
            )
        self._token = value
        self._expires = time.monotonic() + float(lifetime) if isinstance(lifetime, int | float) else None
        return value

    def _failed(self, exc: Exception) -> ExecutionError:
        # The callable's own message may carry a secret: name only its type.
        return ExecutionError(
            f"The credential callable of security scheme {self.scheme!r} failed ({type(exc).__name__})."
        )

    def invalidate(self) -> None:
        """Forget the token (after a 401); the next request calls the callable again."""
        self._token = None

    def token(self, client: Any = None, timeout: float | None = None) -> str:
        with self._lock:
            cached = self._fresh()
            if cached is not None:
                return cached
            try:
                value = self.fetch()
                if inspect.isawaitable(value):
                    value = asyncio.run(_awaited(value))
            except Exception as exc:
                raise self._failed(exc) from None
            return self._accept(value)

    async def atoken(self, client: Any = None, timeout: float | None = None) -> str:
        cached = self._fresh()
        if cached is not None:
            return cached
        try:
            if inspect.iscoroutinefunction(self.fetch):
                value = await self.fetch()
            else:
                value = await asyncio.to_thread(self.fetch)
                if inspect.isawaitable(value):
                    value = await value
        except Exception as exc:
            raise self._failed(exc) from None
        return self._accept(value)


async def _awaited(value: Any) -> Any:
    return await value


@dataclass
class Scheme:
    """One configured security scheme."""

    name: str
    kind: str  # apiKey | bearer | basic | oauth2
    location: str = ""  # header | query | cookie (apiKey)
    key_name: str = ""
    secret: str = ""
    oauth: OAuthClientCredentials | RefreshingToken | None = None  # a token fetched per request


def _schemes_of(spec_root: Mapping[str, Any], swagger: bool) -> Mapping[str, Any]:
    if swagger:
        return spec_root.get("securityDefinitions") or {}
    return (spec_root.get("components") or {}).get("securitySchemes") or {}


def build_schemes(spec_root: Mapping[str, Any], swagger: bool, auth: Mapping[str, Any]) -> dict[str, Scheme]:
    """Match configured credentials to the spec's schemes.

    Raises:
        ConfigurationError: a credential names no scheme of the spec, or has the wrong shape.
    """
    declared = _schemes_of(spec_root, swagger)
    out: dict[str, Scheme] = {}
    for name, credential in auth.items():
        definition = declared.get(name)
        if not isinstance(definition, Mapping):
            known = ", ".join(sorted(map(str, declared))) or "none"
            raise ConfigurationError(
                f"auth names the security scheme {name!r}, which the spec does not declare (declared: "
                f"{known}); send a credential the spec does not describe with headers={{...}}"
            )
        kind = str(definition.get("type", ""))
        if callable(credential):
            out[name] = _from_callable(name, kind, definition, swagger, credential)
        elif kind == "apiKey":
            location = str(definition.get("in", "header"))
            if location not in ("header", "query", "cookie"):
                raise ConfigurationError(f"security scheme {name!r}: apiKey 'in' must be header, query or cookie")
            out[name] = Scheme(name, "apiKey", location, str(definition.get("name", "")), _string(name, credential))
        elif kind == "http" or (swagger and kind == "basic"):
            scheme = "basic" if kind == "basic" else str(definition.get("scheme", "")).lower()
            if scheme == "bearer":
                out[name] = Scheme(name, "bearer", secret=_string(name, credential))
            elif scheme == "basic":
                if isinstance(credential, Sequence) and not isinstance(credential, str) and len(credential) == 2:
                    credential = f"{credential[0]}:{credential[1]}"
                raw = _string(name, credential).encode()
                out[name] = Scheme(name, "basic", secret=base64.b64encode(raw).decode("ascii"))
            else:
                raise ConfigurationError(f"security scheme {name!r}: http scheme {scheme!r} is not supported (bearer and basic are)")
        elif kind in ("oauth2", "openIdConnect") and isinstance(credential, str):
            out[name] = Scheme(name, "bearer", secret=_string(name, credential))
        elif kind == "oauth2":
            if not isinstance(credential, Mapping):
                raise ConfigurationError(
                    f"security scheme {name!r}: give the access token as a string, or "
                    "{'client_id', 'client_secret'} to fetch one with client credentials"
                )
            token_url = credential.get("token_url") or _token_url(definition, swagger)
            if not token_url:
                raise ConfigurationError(f"security scheme {name!r}: no clientCredentials tokenUrl in the spec; pass token_url")
            try:
                oauth = OAuthClientCredentials(
                    str(token_url), str(credential["client_id"]), str(credential["client_secret"]),
                    tuple(credential.get("scopes") or ()),
                )
            except KeyError as exc:
                raise ConfigurationError(f"security scheme {name!r}: missing {exc.args[0]!r}") from None
            out[name] = Scheme(name, "oauth2", oauth=oauth)
        else:
            raise ConfigurationError(
                f"security scheme {name!r} of type {kind!r} is not supported; give the driver the "
                "header it needs with headers={...}"
            )
    return out


@dataclass(frozen=True, slots=True)
class DeclaredScheme:
    """A security scheme as the spec declares it, and the ``auth`` value that sets it."""

    name: str
    kind: str  # "apiKey in header X-Key", "http bearer", "oauth2", ...
    credential: str  # what to put under auth[name]


def describe_schemes(spec_root: Mapping[str, Any], swagger: bool) -> list[DeclaredScheme]:
    """Every security scheme of the spec, with the credential ``auth`` takes for it."""
    out: list[DeclaredScheme] = []
    for name, definition in _schemes_of(spec_root, swagger).items():
        if not isinstance(definition, Mapping):
            continue
        kind = str(definition.get("type", ""))
        if kind == "apiKey":
            what, credential = f"apiKey in {definition.get('in', 'header')} {definition.get('name', '')}", '"KEY"'
        elif kind == "http" or (swagger and kind == "basic"):
            scheme = "basic" if kind == "basic" else str(definition.get("scheme", "")).lower()
            what = f"http {scheme}"
            credential = {"bearer": '"TOKEN"', "basic": '"USER:PASSWORD"'}.get(scheme, "(not supported: use headers=)")
        elif kind == "oauth2":
            what = "oauth2"
            credential = '"TOKEN"'
            if _token_url(definition, swagger):
                credential += ' or {"client_id": "...", "client_secret": "..."}'
        elif kind == "openIdConnect":
            what, credential = "openIdConnect", '"TOKEN"'
        else:
            what, credential = kind or "unknown", "(not supported: use headers=)"
        out.append(DeclaredScheme(str(name), what.strip(), credential))
    return out


def _from_callable(
    name: str, kind: str, definition: Mapping[str, Any], swagger: bool, fetch: Callable[[], Any],
) -> Scheme:
    """A scheme whose token (or key) comes from the user's callable."""
    source = RefreshingToken(name, fetch)
    if kind == "apiKey":
        location = str(definition.get("in", "header"))
        if location not in ("header", "query", "cookie"):
            raise ConfigurationError(f"security scheme {name!r}: apiKey 'in' must be header, query or cookie")
        return Scheme(name, "apiKey", location, str(definition.get("name", "")), oauth=source)
    bearer = kind in ("oauth2", "openIdConnect") or (kind == "http" and str(definition.get("scheme", "")).lower() == "bearer")
    if not bearer:
        raise ConfigurationError(
            f"security scheme {name!r} ({kind or 'unknown'}{' basic' if kind in ('http', 'basic') else ''}) "
            "takes no callable; a callable serves bearer-token schemes (http bearer, oauth2, openIdConnect) and apiKey"
        )
    return Scheme(name, "bearer", oauth=source)


def _token_url(definition: Mapping[str, Any], swagger: bool) -> str | None:
    if swagger:
        flow = definition.get("flow")
        return str(definition["tokenUrl"]) if flow == "application" and definition.get("tokenUrl") else None
    flows = definition.get("flows") or {}
    cc = flows.get("clientCredentials") or {}
    return str(cc["tokenUrl"]) if cc.get("tokenUrl") else None


def _string(name: str, credential: Any) -> str:
    if not isinstance(credential, str) or not credential:
        raise ConfigurationError(f"security scheme {name!r}: the credential must be a non-empty string")
    if any(c in credential for c in "\r\n\0"):
        raise ConfigurationError(f"security scheme {name!r}: the credential contains a line break or NUL")
    return credential


def choose(requirements: list[Mapping[str, Any]] | None, schemes: Mapping[str, Scheme]) -> list[Scheme]:
    """The schemes to apply for an operation's security requirements.

    ``None`` (no requirement declared) applies nothing; an empty requirement ``{}``
    means anonymous access is allowed. The first requirement whose schemes are all
    configured wins; when none fits, every configured scheme named anywhere is applied.
    """
    if not requirements or not schemes:
        return []
    for requirement in requirements:
        if not isinstance(requirement, Mapping):
            continue
        if not requirement:
            continue
        if all(name in schemes for name in requirement):
            return [schemes[name] for name in requirement]
    named = {name for req in requirements if isinstance(req, Mapping) for name in req}
    return [schemes[name] for name in named if name in schemes]


def apply(scheme: Scheme, token: str | None = None) -> Applied:
    """Headers, query pairs or cookies for one scheme (``token``: the current fetched token)."""
    if scheme.kind == "apiKey":
        pair = ((scheme.key_name, token if token is not None else scheme.secret),)
        if scheme.location == "header":
            return Applied(headers=pair)
        if scheme.location == "query":
            return Applied(query=pair)
        return Applied(cookies=pair)
    if scheme.kind == "bearer":
        return Applied(headers=(("Authorization", f"Bearer {token if token is not None else scheme.secret}"),))
    if scheme.kind == "basic":
        return Applied(headers=(("Authorization", f"Basic {scheme.secret}"),))
    return Applied(headers=(("Authorization", f"Bearer {token}"),))

