"""A real petstore-like HTTP API for the REST driver's tests (starlette under uvicorn).

Every request is recorded (method, raw path, query, headers, body) so tests can assert
what went over the wire. Extra endpoints misbehave on purpose: redirects, 503 with
Retry-After, huge, endless, compressed and slow bodies.
"""

from __future__ import annotations

import asyncio
import base64
import gzip
import socket
import threading
import zlib
from collections.abc import AsyncIterator, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import (
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Route
from support.servers import loopback_socket, running_uvicorn


@dataclass
class Recorded:
    method: str
    path: str
    raw_path: str
    query: str
    headers: dict[str, str]
    body: bytes


@dataclass
class State:
    requests: list[Recorded] = field(default_factory=list)
    pets: dict[int, dict[str, Any]] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)
    tokens_issued: int = 0
    port: int = 0
    #: The port of the same API on another origin (``localhost:away_port``): where the
    #: ``-away`` routes redirect. The loopback names are one host, so the port differs.
    away_port: int = 0

    def count(self, key: str) -> int:
        self.counters[key] = self.counters.get(key, 0) + 1
        return self.counters[key]


def build_app(state: State) -> Starlette:
    async def record(request: Request) -> Recorded:
        body = await request.body()
        entry = Recorded(
            request.method, request.url.path, request.scope["raw_path"].decode("latin-1"),
            request.scope["query_string"].decode("latin-1"),
            {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in request.scope["headers"]}, body,
        )
        state.requests.append(entry)
        return entry

    async def health(request: Request) -> Response:
        await record(request)
        return JSONResponse({"status": "up"})

    async def list_pets(request: Request) -> Response:
        await record(request)
        limit = int(request.query_params.get("limit", "100"))
        if limit > 100:
            return JSONResponse({"error": "limit must be at most 100"}, status_code=400)
        tags = request.query_params.getlist("tags")
        pets = [p for p in state.pets.values() if not tags or p.get("tag") in tags]
        return JSONResponse(pets[:limit])

    async def create_pet(request: Request) -> Response:
        entry = await record(request)
        import json

        data = json.loads(entry.body)
        pet = {"id": len(state.pets) + 1, "name": data["name"], "tag": data.get("tag")}
        state.pets[pet["id"]] = pet
        return JSONResponse(pet, status_code=201)

    async def get_pet(request: Request) -> Response:
        await record(request)
        pet_id = request.path_params["pet_id"]
        if not pet_id.isdigit() or int(pet_id) not in state.pets:
            return JSONResponse({"error": f"no pet {pet_id}"}, status_code=404)
        return JSONResponse(state.pets[int(pet_id)])

    async def delete_pet(request: Request) -> Response:
        await record(request)
        state.pets.pop(int(request.path_params["pet_id"]), None)
        return Response(status_code=204)

    async def upload_photo(request: Request) -> Response:
        await record(request)
        async with request.form() as form:
            upload = form["file"]
            content = await upload.read()  # type: ignore[union-attr]
            caption = form.get("caption")
        return JSONResponse({"pet": request.path_params["pet_id"], "caption": caption, "size": len(content)})

    async def login(request: Request) -> Response:
        await record(request)
        async with request.form() as form:
            return JSONResponse({"user": form.get("username"), "remember": form.get("remember")})

    async def note(request: Request) -> Response:
        entry = await record(request)
        return PlainTextResponse("stored: " + entry.body.decode())

    async def echo(request: Request) -> Response:
        entry = await record(request)
        return JSONResponse({"path": entry.path, "raw_path": entry.raw_path, "query": entry.query,
                             "headers": entry.headers})

    async def secure(request: Request) -> Response:
        entry = await record(request)
        auth = entry.headers.get("authorization", "")
        ok = (
            auth == "Bearer s3cret"
            or entry.headers.get("x-api-key") == "k3y"
            or "api_key=k3y" in entry.query  # k3y, or a longer key starting so
            or "session=c00kie" in entry.headers.get("cookie", "")
            or auth == "Basic " + base64.b64encode(b"alice:pw").decode()
            or auth.startswith("Bearer oauth-")
        )
        if not ok and entry.headers.get("x-error-page") == "as-html":  # the key as character references
            key = "".join(f"&#{ord(c)};" for c in entry.headers.get("x-api-key") or "")
            bearer = "".join(f"&#x{ord(c):x};" for c in auth)
            page = f"<html><body><p>Denied: key {key}, {bearer}</p></body></html>"
            return Response(page, status_code=401, media_type="text/html")
        if not ok:  # echoes what it was sent, as debug error pages do
            received = {"authorization": auth, "x-api-key": entry.headers.get("x-api-key"),
                        "cookie": entry.headers.get("cookie"), "query": entry.query}
            return JSONResponse({"error": "unauthorised", "received": received}, status_code=401)
        return JSONResponse({"ok": True, "auth": auth})

    async def token(request: Request) -> Response:
        await record(request)
        async with request.form() as form:
            grant = form.get("grant_type")
        if request.headers.get("authorization") != "Basic " + base64.b64encode(b"app:appsecret").decode():
            return JSONResponse({"error": "invalid_client"}, status_code=401)
        if grant != "client_credentials":
            return JSONResponse({"error": "unsupported_grant_type"}, status_code=400)
        state.tokens_issued += 1
        return JSONResponse({"access_token": f"oauth-{state.tokens_issued}", "token_type": "bearer", "expires_in": 3600})

    async def token_bomb(request: Request) -> Response:
        await record(request)
        return Response(BOMB, media_type="application/json", headers={"Content-Encoding": "gzip"})

    async def oauth_only(request: Request) -> Response:
        entry = await record(request)
        # the first token issued is "revoked": a refresh must happen
        if entry.headers.get("authorization") in (None, "Bearer oauth-1"):
            return JSONResponse({"error": "token expired"}, status_code=401)
        return JSONResponse({"ok": True, "auth": entry.headers.get("authorization")})

    async def flaky(request: Request) -> Response:
        await record(request)
        n = state.count(f"flaky:{request.method}")
        fail = int(request.query_params.get("fail", "1"))
        if n <= fail:
            return JSONResponse({"error": "busy"}, status_code=503, headers={"Retry-After": request.query_params.get("after", "1")})
        return JSONResponse({"attempts": n})

    async def redirect_same(request: Request) -> Response:
        await record(request)
        return RedirectResponse("/v1/echo/landed", status_code=302)

    async def redirect_away(request: Request) -> Response:
        await record(request)
        return RedirectResponse(f"http://localhost:{state.away_port}/v1/echo/away", status_code=302)

    async def redirect_away_307(request: Request) -> Response:
        await record(request)
        return RedirectResponse(f"http://localhost:{state.away_port}/v1/echo/away", status_code=307)

    async def big(request: Request) -> Response:
        await record(request)

        async def chunks() -> AsyncIterator[bytes]:
            block = b"x" * 65536
            for _ in range(800):  # 50 MiB
                yield block

        return StreamingResponse(chunks(), media_type="text/plain")

    async def endless(request: Request) -> Response:
        await record(request)

        async def chunks() -> AsyncIterator[bytes]:
            block = b'{"a":1},' * 4096
            while True:
                yield block
                await asyncio.sleep(0)

        return StreamingResponse(chunks(), media_type="application/json")

    async def bomb(request: Request) -> Response:
        await record(request)
        return Response(BOMB, media_type="application/json", headers={"Content-Encoding": "gzip"})

    async def drip(request: Request) -> Response:
        await record(request)

        async def chunks() -> AsyncIterator[bytes]:
            while True:
                yield b"x"
                await asyncio.sleep(0.3)

        return StreamingResponse(chunks(), media_type="text/plain")

    async def image(request: Request) -> Response:
        await record(request)
        return Response(PNG, media_type="image/png")

    async def gzipped(request: Request) -> Response:
        await record(request)
        return Response(gzip.compress(b'{"compressed": true}'), media_type="application/json",
                        headers={"Content-Encoding": "gzip"})

    async def bad_response(request: Request) -> Response:
        await record(request)
        return JSONResponse({"id": "not-a-number", "name": 5})

    async def memos(request: Request) -> Response:
        import json

        entry = await record(request)
        if request.method == "GET":
            return _memo(int(request.path_params["memo_id"]))
        body = json.loads(entry.body or b"{}")
        memo_id = int(request.path_params.get("memo_id", 1))
        status = 201 if request.method == "POST" else 200
        return JSONResponse({"text": "before", **body, "id": memo_id}, status_code=status)

    async def spec(request: Request) -> Response:
        from pathlib import Path

        text = (Path(__file__).with_name("petstore.yaml")).read_text()
        text = text.replace('"{scheme}://api.example.invalid/v1"', '"/v1"')
        return Response(text, media_type="application/yaml")

    async def spec_bomb(request: Request) -> Response:
        await record(request)
        return Response(SPEC_BOMB, media_type="application/json", headers={"Content-Encoding": "gzip"})

    routes = [
        Route("/spec.yaml", spec, methods=["GET"]),
        Route("/spec-moved", lambda _: RedirectResponse("/spec.yaml", status_code=301), methods=["GET"]),
        Route("/spec-away", lambda _: RedirectResponse(f"http://localhost:{state.away_port}/spec.yaml?sig=abc",
                                                       status_code=302), methods=["GET"]),
        Route("/spec-loopback", lambda _: RedirectResponse(f"http://localhost:{state.port}/spec.yaml",
                                                           status_code=302), methods=["GET"]),
        Route("/spec-loop", lambda _: RedirectResponse("/spec-loop", status_code=302), methods=["GET"]),
        Route("/spec-bomb.json", spec_bomb, methods=["GET"]),
        Route("/v1/health", health, methods=["GET"]),
        Route("/v1/pets", list_pets, methods=["GET"]),
        Route("/v1/pets", create_pet, methods=["POST"]),
        Route("/v1/pets/{pet_id}", get_pet, methods=["GET"]),
        Route("/v1/pets/{pet_id}", delete_pet, methods=["DELETE"]),
        Route("/v1/pets/{pet_id}/photo", upload_photo, methods=["POST"]),
        Route("/v1/login", login, methods=["POST"]),
        Route("/v1/notes", note, methods=["PUT"]),
        Route("/v1/users/{rest:path}", echo, methods=["GET"]),
        Route("/v1/echo/{rest:path}", echo, methods=["GET", "POST"]),
        Route("/v1/secure", secure, methods=["GET"]),
        Route("/oauth/token", token, methods=["POST"]),
        Route("/oauth/bomb", token_bomb, methods=["POST"]),
        Route("/v1/oauth-only", oauth_only, methods=["GET"]),
        Route("/v1/flaky", flaky, methods=["GET", "POST"]),
        Route("/v1/redirect-same", redirect_same, methods=["GET"]),
        Route("/v1/redirect-away", redirect_away, methods=["GET"]),
        Route("/v1/redirect-away-307", redirect_away_307, methods=["POST"]),
        Route("/v1/big", big, methods=["GET"]),
        Route("/v1/endless", endless, methods=["GET"]),
        Route("/v1/bomb", bomb, methods=["GET"]),
        Route("/v1/drip", drip, methods=["GET"]),
        Route("/v1/image", image, methods=["GET"]),
        Route("/v1/gzipped", gzipped, methods=["GET"]),
        Route("/v1/bad-response", bad_response, methods=["GET"]),
        Route("/v1/memos", memos, methods=["POST"]),
        Route("/v1/memos/{memo_id}", memos, methods=["GET", "PUT", "PATCH"]),
    ]
    return Starlette(routes=routes)


def _memo(memo_id: int) -> Response:
    """Note 1 as notes.yaml promises; 13, 14 and 15 break that contract in different ways;
    16 keeps it but adds fields the spec does not promise, one inside its recursive parent."""
    if memo_id == 13:  # wrong type, a value out of range, no text, a field never promised, a bad header
        return JSONResponse({"id": "thirteen", "priority": 9, "created": "yesterday", "secret": "x"},
                            headers={"X-Rate-Limit": "lots"})
    if memo_id == 14:  # a media type the spec does not declare
        return PlainTextResponse("just text", headers={"X-Rate-Limit": "10"})
    if memo_id == 15:  # a status the spec does not declare
        return JSONResponse({"id": 15, "text": "queued"}, status_code=202, headers={"X-Rate-Limit": "10"})
    if memo_id == 16:
        parent = {"id": 1, "text": "first", "mood": "calm", "parent": {"id": 0, "text": "root"}}
        return JSONResponse({"id": 16, "text": "reply", "parent": parent, "views": 3}, headers={"X-Rate-Limit": "10"})
    return JSONResponse({"id": memo_id, "text": "hello", "priority": 2, "created": "2026-01-02T03:04:05Z"},
                        headers={"X-Rate-Limit": "10"})


def _bomb(size: int = 256 * 1024 * 1024, head: bytes = b"", fill: bytes = b"\0", tail: bytes = b"") -> bytes:
    """``size`` bytes of ``fill`` between ``head`` and ``tail``, gzip-compressed (about a
    thousandth of that on the wire)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = fill * (1024 * 1024)
    parts = [compressor.compress(head), *(compressor.compress(block) for _ in range(size // len(block)))]
    parts += [compressor.compress(tail), compressor.flush()]
    return b"".join(parts)


BOMB = _bomb()
#: A valid OpenAPI document of 256 MiB, mostly spaces.
SPEC_BOMB = _bomb(head=b'{"openapi": "3.0.0", "info": {"title": "t", "version": "1"}, "paths": {}', fill=b" ", tail=b"}")
PNG = bytes.fromhex("89504e470d0a1a0a") + b"\0" * 56


@dataclass
class Running:
    url: str
    state: State


@contextmanager
def serve() -> Iterator[Running]:
    """Run the API on a free loopback port in a thread, and again on a second port (the
    other origin its ``-away`` routes redirect to, with the same state); stop both on exit."""
    state = State()

    def config() -> uvicorn.Config:
        return uvicorn.Config(build_app(state), log_level="error", lifespan="off", ws="none", access_log=False)

    with closing(loopback_socket()) as sock, closing(loopback_socket()) as away:
        state.port, state.away_port = sock.getsockname()[1], away.getsockname()[1]
        with running_uvicorn(config(), sock), running_uvicorn(config(), away):
            yield Running(f"http://127.0.0.1:{state.port}", state)


class ResettingServer:
    """A raw TCP server that reads one request, counts it and resets the connection."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.received = 0
        self._stop = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        import struct

        self.sock.settimeout(0.1)
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    data = conn.recv(65536)
                except OSError:
                    data = b""
                if data:
                    self.received += 1
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    def close(self) -> None:
        self._stop = True
        self._thread.join(5)
        self.sock.close()
