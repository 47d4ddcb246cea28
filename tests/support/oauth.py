"""A test authorization server on loopback: a JWKS, RFC 8414 metadata, real RS256 tokens."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from typing import Any

import jwt
import uvicorn
from cryptography.hazmat.primitives.asymmetric import rsa
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from support.servers import HOST, loopback_socket, running_uvicorn


@dataclass
class AuthServer:
    """Serves a JWKS and signs RS256 access tokens with a key made for the test."""

    issuer: str
    key: rsa.RSAPrivateKey
    kid: str
    jwks_hits: list[float]

    @property
    def jwks_uri(self) -> str:
        return self.issuer + "/jwks"

    def token(self, *, audience: str, scope: str = "", sub: str | None = "alice", lifetime: int = 300,
              headers: dict[str, Any] | None = None, key: Any = None, algorithm: str = "RS256",
              **claims: Any) -> str:
        now = int(time.time())
        payload = {"iss": self.issuer, "sub": sub, "aud": audience, "iat": now, "exp": now + lifetime,
                   "scope": scope, "client_id": "test-client", **claims}
        payload = {name: value for name, value in payload.items() if value is not None}  # None: leave it out
        return jwt.encode(payload, key if key is not None else self.key, algorithm=algorithm,
                          headers={"kid": self.kid, **(headers or {})})


@contextmanager
def running_auth_server(kid: str = "test-key", *, declare_alg: bool = True) -> Iterator[AuthServer]:
    """An :class:`AuthServer` on a free loopback port for the block, signing with its own
    key under ``kid``; ``declare_alg=False`` leaves ``alg`` out of the JWK (as some
    authorization servers publish their keys)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    public.update({"kid": kid, "use": "sig", **({"alg": "RS256"} if declare_alg else {})})
    hits: list[float] = []
    with closing(loopback_socket()) as sock:
        issuer = f"http://{HOST}:{sock.getsockname()[1]}"

        async def jwks(request: Request) -> JSONResponse:
            hits.append(time.monotonic())
            return JSONResponse({"keys": [public]})

        async def metadata(request: Request) -> JSONResponse:
            return JSONResponse({"issuer": issuer, "jwks_uri": issuer + "/jwks",
                                 "authorization_endpoint": issuer + "/authorize",
                                 "token_endpoint": issuer + "/token"})

        app = Starlette(routes=[Route("/jwks", jwks), Route("/.well-known/oauth-authorization-server", metadata)])
        config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="off")
        with running_uvicorn(config, sock):
            yield AuthServer(issuer, key, kid, hits)
