"""The server as an OAuth 2.0 resource server: bearer JWTs, RFC 9728 metadata, scopes.

What a caller can rely on (SECURITY.md E2-E4, E6):

* Every request to the MCP endpoint needs ``Authorization: Bearer <JWT>``; a token in
  the query string (``?access_token=``) is refused, never read.
* Every listed authorization server is trusted (gen-mcp's ``authorizationServers``, the
  format's section 8.2): a token's ``iss`` must be exactly one of them, and its key comes
  from *that* server's JWKS, discovered from its RFC 8414 (or OpenID) metadata, or the
  configured ``jwksUri`` when it belongs to that server (same origin, or the only
  server). With a ``jwksUri`` and no server, the keys are that JWKS and ``iss`` is not
  checked (the key set is the trust). The metadata advertises exactly these servers.
* A token is accepted only when its header ``alg`` is one of the configured algorithms
  (never ``none``, never HMAC with a public key), it names no ``jku``/``x5u``/``jwk``
  and no ``crit`` extension, its key comes from its issuer's JWKS (fetched with a
  timeout, cached, refreshed at most once per ``min_refresh`` seconds for an unknown
  ``kid``), the JWK's own ``alg`` (if any) matches, and ``iss``, ``aud``, ``exp``
  (and ``nbf``) check out. Otherwise: 401 with
  ``WWW-Authenticate: Bearer ... resource_metadata="<RFC 9728 URL>"``.
* A call naming a tool (prompt, resource) whose ``required_scopes`` the token lacks is
  refused before it runs: HTTP 403 with
  ``WWW-Authenticate: Bearer error="insufficient_scope", scope="..."``.
* The verified identity is put where the SDK binds sessions to it (``scope["user"]``),
  so a session id presented with another user's token is answered 404.
* The caller's agent id is the token's ``sub`` (else ``client_id``, else ``azp``); with
  several trusted issuers it is ``<iss>#<sub>``: a subject is unique only at its issuer.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import jwt
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from starlette.authentication import AuthCredentials
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcs.errors import ConfigurationError
from mcs.urls import same_origin
from mcs_mcp.serving.options import OAuthOptions

logger = logging.getLogger("mcs_mcp.serving.auth")

PRM_PATH = "/.well-known/oauth-protected-resource"
_FORBIDDEN_HEADERS = ("jku", "x5u", "jwk", "x5c", "crit")


class TokenError(Exception):
    """A bearer token was refused; the message is safe to return to the client."""


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a verified token says is calling."""

    subject: str | None
    client_id: str
    scopes: frozenset[str]
    claims: Mapping[str, Any]
    #: The caller's name for ``AgentContext.agent_id``: ``sub`` (else the client), prefixed
    #: with ``<iss>#`` when several issuers are trusted, as a subject is unique only at its issuer.
    agent_id: str

    def missing(self, required: Iterable[str]) -> list[str]:
        return [scope for scope in required if scope not in self.scopes]


def scopes_of(claims: Mapping[str, Any]) -> frozenset[str]:
    """RFC 9068 ``scope`` (space-separated) or the common ``scp`` list."""
    raw = claims.get("scope", claims.get("scp"))
    if isinstance(raw, str):
        return frozenset(raw.split())
    if isinstance(raw, list | tuple):
        return frozenset(str(s) for s in raw)
    return frozenset()


class JWKSCache:
    """Signing keys from a JWKS URL, fetched asynchronously with a timeout and cached."""

    def __init__(
        self,
        uri: str | None,
        *,
        issuer: str | None = None,
        timeout: float = 5.0,
        ttl: float = 300.0,
        min_refresh: float = 30.0,
    ) -> None:
        if uri is None and issuer is None:
            raise ConfigurationError("a JWKS needs its URL, or an issuer to discover it from")
        self.uri = uri
        self.issuer = issuer
        self.timeout = timeout
        self.ttl = ttl
        self.min_refresh = min_refresh
        self._keys: dict[str | None, tuple[jwt.PyJWK, str | None]] = {}
        self._fetched_at = 0.0
        self._lock = asyncio.Lock()
        self.fetch_count = 0

    async def _discover(self, client: httpx.AsyncClient) -> str:
        """The issuer's ``jwks_uri`` from its RFC 8414 or OpenID metadata, else the usual path.

        The metadata must name the same issuer, so a document served for another issuer
        cannot redirect key fetching.
        """
        assert self.issuer is not None
        base = self.issuer.rstrip("/")
        parts = urlsplit(base)
        origin, path = f"{parts.scheme}://{parts.netloc}", parts.path
        candidates = [
            f"{origin}/.well-known/oauth-authorization-server{path}",
            f"{base}/.well-known/openid-configuration",
        ]
        for url in candidates:
            try:
                response = await client.get(url)
                document = response.json() if response.status_code == 200 else None
            except (httpx.HTTPError, ValueError):
                continue
            if isinstance(document, Mapping) and isinstance(document.get("jwks_uri"), str):
                if str(document.get("issuer", "")).rstrip("/") != base:
                    logger.warning("authorization server metadata at %s names another issuer", url)
                    continue
                return str(document["jwks_uri"])
        return f"{base}/.well-known/jwks.json"

    async def _fetch(self) -> None:
        self.fetch_count += 1
        self._fetched_at = time.monotonic()
        try:
            async with httpx.AsyncClient(timeout=self.timeout, follow_redirects=False) as client:
                if self.uri is None:
                    self.uri = await self._discover(client)
                response = await client.get(self.uri)
                response.raise_for_status()
                document = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            logger.warning("fetching JWKS from %s failed: %s", self.uri, type(exc).__name__)
            raise TokenError("the signing keys could not be fetched") from None
        keys: dict[str | None, tuple[jwt.PyJWK, str | None]] = {}
        entries = document.get("keys") if isinstance(document, Mapping) else None
        for entry in entries if isinstance(entries, list) else []:
            kid, alg = (entry.get("kid"), entry.get("alg")) if isinstance(entry, Mapping) else (None, None)
            if not isinstance(entry, Mapping) or not isinstance(kid, str | None) or not isinstance(alg, str | None):
                continue  # not a JWK object, or a kid/alg that is no string: skipped, not fatal
            try:
                key = jwt.PyJWK.from_dict(dict(entry))
            except (jwt.PyJWTError, ValueError, TypeError):
                continue  # unusable or unsupported key types are skipped, not fatal
            keys[kid] = (key, alg)
        self._keys = keys

    async def key_for(self, kid: str | None) -> tuple[jwt.PyJWK, str | None]:
        """The key with ``kid`` and the ``alg`` its JWK declares (if any).

        The first request fetches the keys and they are refreshed after ``ttl``; beyond that,
        an unknown ``kid`` (or a key set still empty: the server down, or none of its keys
        usable) triggers at most one refresh per ``min_refresh`` seconds, never one per token.
        A failed refresh keeps the keys already held.
        """
        async with self._lock:
            now = time.monotonic()
            since = now - self._fetched_at
            if self.fetch_count == 0 or since > self.ttl or (kid not in self._keys and since > self.min_refresh):
                try:
                    await self._fetch()
                except TokenError:
                    if not self._keys:
                        raise
            elif not self._keys:
                raise TokenError("the signing keys could not be fetched (or none is usable)")
        if kid in self._keys:
            return self._keys[kid]
        if kid is None and len(self._keys) == 1:
            return next(iter(self._keys.values()))
        raise TokenError("the token's signing key is not known")


def trusted_issuers(options: OAuthOptions) -> tuple[str, ...]:
    """The authorization servers whose tokens are accepted: ``issuer`` when set, else every
    ``authorization_servers`` entry (what the protected-resource metadata advertises)."""
    return (options.issuer,) if options.issuer else tuple(dict.fromkeys(options.authorization_servers))


def _jwks_owner(jwks_uri: str | None, issuers: tuple[str, ...]) -> str | None:
    """The issuer a configured ``jwksUri`` serves the keys of (see the module doc).

    Raises:
        ConfigurationError: several servers and the URI's origin is none (or more than one) of theirs.
    """
    if jwks_uri is None or not issuers:
        return None
    if len(issuers) == 1:
        return issuers[0]
    owners = [i for i in issuers if same_origin(i, jwks_uri)]
    if len(owners) != 1:
        raise ConfigurationError(
            f"jwksUri {jwks_uri} is on the origin of {'none' if not owners else 'several'} of the "
            f"authorizationServers ({', '.join(issuers)}), so whose keys it holds is unclear; leave it "
            "out (each server's keys are discovered from its RFC 8414 metadata) or serve it from its server"
        )
    return owners[0]


class JWTVerifier:
    """Checks bearer JWTs against the trusted issuers (each with its own JWKS) and one audience."""

    def __init__(self, options: OAuthOptions, *, resource: str) -> None:
        self.issuers = trusted_issuers(options)
        if not self.issuers and not options.jwks_uri:
            raise ConfigurationError("OAuth needs authorizationServers (or an issuer), or a jwksUri")
        self.audience = options.audience or resource
        self.algorithms = tuple(a for a in options.algorithms if a != "none" and not a.startswith("HS"))
        if not self.algorithms:
            raise ConfigurationError("OAuth needs at least one asymmetric signing algorithm")
        self.leeway = options.leeway
        owner = _jwks_owner(options.jwks_uri, self.issuers)

        def cache(uri: str | None, issuer: str | None) -> JWKSCache:
            return JWKSCache(uri, issuer=issuer, timeout=options.jwks_timeout, ttl=options.jwks_cache_seconds)

        # Without a jwksUri of its own, a server's keys are discovered from its metadata
        # (gen-mcp's fallback). With no server at all, the jwksUri is the whole trust.
        self.key_sets: dict[str | None, JWKSCache] = (
            {issuer: cache(options.jwks_uri if issuer == owner else None, issuer) for issuer in self.issuers}
            if self.issuers else {None: cache(options.jwks_uri, None)}
        )

    @property
    def issuer(self) -> str | None:
        """The only trusted issuer, or ``None`` when there are several (or none)."""
        return self.issuers[0] if len(self.issuers) == 1 else None

    def _key_set(self, token: str) -> tuple[JWKSCache, str | None]:
        """The JWKS the token's ``iss`` selects, and the issuer to require (``None``: not checked)."""
        if not self.issuers:
            return self.key_sets[None], None
        try:
            issuer = jwt.decode(token, options={"verify_signature": False}).get("iss")
        except jwt.PyJWTError:
            raise TokenError("the token is not a well-formed JWT") from None
        if not isinstance(issuer, str) or issuer not in self.key_sets:  # exact, never a prefix match
            raise TokenError("the token was not issued by a trusted authorization server")
        return self.key_sets[issuer], issuer

    async def verify(self, token: str) -> Principal:
        """The token's principal, or :class:`TokenError` saying why it was refused."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise TokenError("the token is not a well-formed JWT") from None
        alg = header.get("alg")
        if alg not in self.algorithms:
            raise TokenError(f"the token's algorithm is not accepted (accepted: {', '.join(self.algorithms)})")
        if any(name in header for name in _FORBIDDEN_HEADERS):
            raise TokenError("the token carries header parameters this server does not accept")
        key_set, issuer = self._key_set(token)
        key, jwk_alg = await key_set.key_for(header.get("kid"))
        if (jwk_alg and jwk_alg != alg) or not _fits(alg, key):
            raise TokenError("the token's algorithm does not match its key")
        required = ["exp", "aud", "iss"] if issuer is not None else ["exp", "aud"]
        try:
            claims = jwt.decode(
                token,
                key.key,
                algorithms=[alg],
                audience=self.audience,
                issuer=issuer,
                leeway=self.leeway,
                options={"require": required, "strict_aud": False},
            )
        except jwt.ExpiredSignatureError:
            raise TokenError("the token has expired") from None
        except jwt.ImmatureSignatureError:
            raise TokenError("the token is not valid yet") from None
        except jwt.InvalidAudienceError:
            raise TokenError("the token was not issued for this resource") from None
        except jwt.InvalidIssuerError:
            raise TokenError("the token was not issued by the trusted authorization server") from None
        except jwt.PyJWTError:
            raise TokenError("the token could not be verified") from None
        if issuer is not None and claims.get("iss") != issuer:  # exact, never a prefix or substring match
            raise TokenError("the token was not issued by the trusted authorization server")
        subject = _caller_name(claims.get("sub"))
        client_id = _caller_name(claims.get("client_id")) or _caller_name(claims.get("azp")) or subject
        if client_id is None:  # every such token would be one caller: one rate budget, one audit name
            raise TokenError("the token names no caller: it has no sub, client_id or azp claim (RFC 9068)")
        name = subject or client_id
        return Principal(
            subject=subject,
            client_id=client_id,
            scopes=scopes_of(claims),
            claims=claims,
            # "alice" of one trusted server is not "alice" of another: one name would give
            # them one rate budget, one audit name and what an agents_policy grants either.
            agent_id=f"{issuer}#{name}" if issuer is not None and len(self.issuers) > 1 else name,
        )


def _caller_name(claim: Any) -> str | None:
    """A claim that names a caller (``sub``, ``client_id``, ``azp``): non-empty text, else ``None``."""
    return claim if isinstance(claim, str) and claim else None


def _fits(alg: str, key: jwt.PyJWK) -> bool:
    """Whether ``alg`` is an algorithm of ``key``'s type (RSA: RS*/PS*, EC: ES* of its
    curve, OKP: EdDSA), as PyJWT's own algorithm checks it. A JWK without ``alg`` leaves
    the choice to the token's header, which an attacker writes."""
    try:
        algorithm = jwt.get_algorithm_by_name(alg)
        algorithm.check_crypto_key_type(key.key)
        algorithm.prepare_key(key.key)
    except (NotImplementedError, ValueError, TypeError, jwt.PyJWTError):
        return False
    return True


ScopeLookup = Callable[[str, Mapping[str, Any]], tuple[str, ...]]


def _quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


class OAuthMiddleware:
    """ASGI middleware guarding ``base_path``: 401 without a valid token, 403 for scopes.

    ``required_scopes(method, params)`` names the scopes one JSON-RPC request needs
    (``tools/call`` of a tool with ``requiredScopes``); requests are read whole (up to
    ``max_body`` bytes, else 413) to look, then replayed to the app unchanged.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        verifier: JWTVerifier,
        base_path: str,
        metadata_url: str,
        required_scopes: ScopeLookup,
        max_body: int,
    ) -> None:
        self.app = app
        self.verifier = verifier
        self.base_path = base_path
        self.metadata_url = metadata_url
        self.required_scopes = required_scopes
        self.max_body = max_body

    def _guarded(self, path: str) -> bool:
        return path == self.base_path or path.startswith(self.base_path.rstrip("/") + "/")

    def _challenge(self, status: int, error: str | None, description: str | None, scope: str | None = None) -> Response:
        parts = []
        if error:
            parts.append(f'error="{error}"')
        if description:
            parts.append(f'error_description="{_quote(description)}"')
        if scope:
            parts.append(f'scope="{_quote(scope)}"')
        parts.append(f'resource_metadata="{self.metadata_url}"')
        body: dict[str, Any] = {"error": error or "unauthorized"}
        if description:
            body["error_description"] = description
        return JSONResponse(body, status_code=status, headers={"WWW-Authenticate": "Bearer " + ", ".join(parts)})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self._guarded(scope.get("path", "")):
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        if "access_token" in query:
            response = self._challenge(
                401, "invalid_request", "access tokens are accepted in the Authorization header only"
            )
            await response(scope, receive, send)
            return
        header = request.headers.get("authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            await self._challenge(401, None, None)(scope, receive, send)
            return
        try:
            principal = await self.verifier.verify(token.strip())
        except TokenError as exc:
            await self._challenge(401, "invalid_token", str(exc))(scope, receive, send)
            return
        access = AccessToken(
            token="<redacted>",
            client_id=principal.client_id,
            scopes=sorted(principal.scopes),
            expires_at=principal.claims.get("exp"),
            resource=self.verifier.audience,
            subject=principal.subject,
            claims={"iss": principal.claims.get("iss")},
        )
        scope["user"] = AuthenticatedUser(access)
        scope["auth"] = AuthCredentials(sorted(principal.scopes))
        scope["mcs.principal"] = principal
        if scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        body, more = await read_body(receive, self.max_body)
        if body is None:
            await Response("Request body too large", status_code=413)(scope, receive, send)
            return
        try:
            payload = json.loads(body)
        except (ValueError, RecursionError):
            # Answered here, never passed on: what this check cannot read, the SDK must
            # not run (a parser differential would skip the scope check).
            await _parse_error()(scope, receive, send)
            return
        missing = self._missing_scopes(payload, principal)
        if missing:
            await self._challenge(
                403, "insufficient_scope", "the token lacks the scope this call needs", " ".join(missing)
            )(scope, receive, send)
            return
        await self.app(scope, replay_body(body, more, receive), send)

    def _missing_scopes(self, payload: Any, principal: Principal) -> list[str]:
        messages = payload if isinstance(payload, list) else [payload]
        missing: list[str] = []
        for message in messages:
            if not isinstance(message, Mapping):
                continue
            method = message.get("method")
            params = message.get("params")
            if not isinstance(method, str):
                continue
            required = self.required_scopes(method, params if isinstance(params, Mapping) else {})
            missing.extend(s for s in principal.missing(required) if s not in missing)
        return missing


def _parse_error() -> Response:
    """HTTP 400 with a JSON-RPC parse error, as the streamable HTTP transport answers."""
    return JSONResponse(
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error: the body is not JSON "
                                                 "this server accepts (malformed, or nested too deeply)"}},
        status_code=400,
    )


async def read_body(receive: Receive, limit: int) -> tuple[bytes | None, list[Message]]:
    """The request body read whole (``None`` past ``limit`` bytes), and the message that
    ended it early, if one did (``http.disconnect``: the client went before its end)."""
    chunks = bytearray()
    extra: list[Message] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            extra.append(message)
            break
        chunks.extend(message.get("body", b""))
        if len(chunks) > limit:
            return None, extra
        if not message.get("more_body", False):
            break
    return bytes(chunks), extra


def replay_body(body: bytes, extra: list[Message], receive: Receive) -> Receive:
    """A ``receive`` that gives ``body`` as one message, then ``extra``, then ``receive``'s."""
    pending: list[Message] = [{"type": "http.request", "body": body, "more_body": False}, *extra]

    async def replayed() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed


def metadata_url(resource: str) -> str:
    """RFC 9728 section 3: the well-known URL, with the resource's path appended."""
    parts = urlsplit(resource)
    path = parts.path.rstrip("/")
    return f"{parts.scheme}://{parts.netloc}{PRM_PATH}{path}"


def metadata_document(options: OAuthOptions, resource: str, scopes: Iterable[str]) -> dict[str, Any]:
    """The RFC 9728 protected-resource metadata of this server: exactly the trusted
    authorization servers (none listed for a ``jwksUri``-only configuration)."""
    document: dict[str, Any] = {"resource": resource}
    servers = list(trusted_issuers(options))
    if servers:
        document["authorization_servers"] = servers
    document["bearer_methods_supported"] = ["header"]
    scope_list = sorted(set(scopes))
    if scope_list:
        document["scopes_supported"] = scope_list
    return document


def metadata_endpoint(document: Callable[[], dict[str, Any]]) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        return JSONResponse(document(), headers={"Cache-Control": "public, max-age=3600"})

    return endpoint
