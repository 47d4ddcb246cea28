"""The ASGI app (Starlette): ``GET /mcp/capabilities``, ``POST /mcp/execute``, WebSocket ``/mcp/ws``.

Every answer is JSON. Nothing a client sends produces a 500: bodies that are too large
(413), not JSON-typed (415), malformed, or with bad identity headers (400) get
``{"error": "INVALID_INPUT", "message": ...}``; unknown paths 404 and wrong methods 405
get the same shape. See ``docs/rfc0001.md`` for the whole protocol.

Before any of that, the ``Host`` and ``Origin`` checks of ``mcs serve --protocol mcp``
(:mod:`mcs.server.origins`) refuse DNS-rebinding and cross-origin requests, HTTP and
WebSocket alike: 421 for a ``Host``, 403 for an ``Origin`` not allowed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from mcs.errors import ErrorCode, InvalidInputError
from mcs.server import frames
from mcs.server.backend import Backend
from mcs.server.origins import HostOriginMiddleware, allowed_hosts_for, allowed_origins_for
from mcs.server.wire import (
    CAPABILITIES_PATH,
    EXECUTE_PATH,
    RAW_HEADER_REQUEST_ID,
    STATUS_TOO_LARGE,
    STATUS_UNSUPPORTED_MEDIA,
    WEBSOCKET_PATH,
    context_from_headers,
    context_from_raw_headers,
    decode_json,
    encode,
    encode_outcome,
    error_body,
    is_json_content_type,
    parse_execute,
)

logger = logging.getLogger("mcs.server")
_JSON = "application/json"


_RAW_JSON = (b"content-type", _JSON.encode("latin-1"))


class _JsonResponse(Response):
    """``Response(body, status_code=status, media_type="application/json", headers=...)``
    with its raw headers written directly: the same headers in the same order (the
    request id, the length, the type), without ``init_headers``' generic pass."""

    media_type = _JSON

    def __init__(self, status: int, body: bytes, request_id: str | None) -> None:
        self.status_code = status
        self.background = None
        self.body = body
        length = (b"content-length", str(len(body)).encode("latin-1"))
        self.raw_headers = ([(RAW_HEADER_REQUEST_ID, request_id.encode("latin-1")), length, _RAW_JSON]
                            if request_id else [length, _RAW_JSON])


def _json(status: int, body: bytes, request_id: str | None = None) -> Response:
    return _JsonResponse(status, body, request_id)


def _invalid(status: int, message: str, request_id: str | None = None) -> Response:
    return _json(status, encode(error_body(ErrorCode.INVALID_INPUT, message)), request_id)


async def _read_body(request: Request, limit: int) -> bytes | None:
    """The body, or ``None`` as soon as it is known to exceed ``limit`` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        return None
    # The ASGI messages read directly (what ``request.stream()`` does, without an async
    # generator per request).
    receive = request.receive
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        kind = message["type"]
        if kind == "http.disconnect":
            return b""  # nobody is left to answer; the empty body is refused as malformed
        if kind != "http.request":
            continue
        chunk = message.get("body", b"")
        if chunk:
            size += len(chunk)
            if size > limit:
                return None
            chunks.append(chunk)
        if not message.get("more_body", False):
            return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def create_app(
    backend: Backend,
    *,
    host: str = "127.0.0.1",
    allowed_hosts: Iterable[str] = (),
    allowed_origins: Iterable[str] = (),
) -> Starlette:
    """An ASGI app serving ``backend`` (an :class:`~mcs.server.McpServer` or a driver backend).

    ``host`` is the address the app is bound to (loopback by default: only the loopback
    names are accepted in ``Host``); ``allowed_hosts`` / ``allowed_origins`` widen the
    allow-lists (patterns ``name``, ``name:*``, ``*``), see :mod:`mcs.server.origins`.
    """
    limit = backend.max_body_bytes

    async def capabilities(request: Request) -> Response:
        try:
            context = context_from_headers(request.headers)
        except InvalidInputError as error:
            return _invalid(400, error.message)
        return _json(200, encode(backend.capabilities()), context.request_id)

    async def execute(request: Request) -> Response:
        try:
            context = context_from_raw_headers(request.scope["headers"])
        except InvalidInputError as error:
            return _invalid(400, error.message)
        content_type = request.headers.get("content-type")
        if not is_json_content_type(content_type):
            return _invalid(STATUS_UNSUPPORTED_MEDIA,
                            f"Content-Type must be application/json (UTF-8), got {content_type!r}.",
                            context.request_id)
        body = await _read_body(request, limit)
        if body is None:
            return _invalid(STATUS_TOO_LARGE, f"The request body exceeds {limit} bytes.",
                            context.request_id)
        try:
            tool, arguments = parse_execute(decode_json(body))
        except InvalidInputError as error:
            return _invalid(400, error.message, context.request_id)
        outcome = await backend.aexecute(tool, arguments, context)
        status, payload = encode_outcome(outcome)
        return _json(status, payload, outcome.request_id)

    async def websocket(ws: WebSocket) -> None:
        try:
            default = context_from_headers(ws.headers)
        except InvalidInputError as error:
            await ws.close(code=1008, reason=error.message[:120])
            return
        await ws.accept()
        try:
            while True:
                message = await ws.receive()
                if message["type"] == "websocket.disconnect":
                    return
                raw: str | bytes | None = message.get("text")
                if raw is None:
                    raw = message.get("bytes") or b""
                call = frames.read_frame(raw, limit, default)
                if isinstance(call, str):
                    await ws.send_text(call)
                    continue
                try:
                    if call.method == "capabilities":
                        reply = frames.capabilities_reply(call, backend)
                    else:
                        outcome = await backend.aexecute(call.tool, call.arguments, call.context)
                        reply = frames.outcome_reply(call, outcome)
                except Exception as exc:
                    reply = frames.failure_reply(call, exc)
                await ws.send_text(reply)
        except WebSocketDisconnect:
            return

    async def http_error(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 400
        if status == 404:
            message = (f"There is no endpoint {request.url.path!r}: use GET {CAPABILITIES_PATH}, "
                       f"POST {EXECUTE_PATH} or WebSocket {WEBSOCKET_PATH}.")
        elif status == 405:
            message = f"{request.method} is not allowed on {request.url.path}."
        else:
            message = "The request could not be read."
        return _invalid(status, message)

    async def server_error(request: Request, exc: Exception) -> Response:
        logger.error("unexpected error serving %s", request.url.path, exc_info=exc)
        return _json(500, encode(error_body(ErrorCode.EXECUTION_ERROR,
                                            "The server failed unexpectedly; nothing was returned.")))

    handlers: dict[Any, Any] = {HTTPException: http_error, Exception: server_error}
    return Starlette(
        routes=[
            Route(CAPABILITIES_PATH, capabilities, methods=["GET"]),
            Route(EXECUTE_PATH, execute, methods=["POST"]),
            WebSocketRoute(WEBSOCKET_PATH, websocket),
        ],
        exception_handlers=handlers,
        middleware=[Middleware(
            HostOriginMiddleware,
            allowed_hosts=allowed_hosts_for(host, allowed_hosts),
            allowed_origins=allowed_origins_for(host, allowed_origins),
            respond=lambda status, reason: _invalid(status, reason + "."),
        )],
    )
