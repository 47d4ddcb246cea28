"""The message framing shared by the WebSocket and STDIO transports.

One JSON object per WebSocket text message, or per line on STDIO:

    request  {"id": 1, "method": "execute", "tool": "get_customer",
              "arguments": {...}, "context": {"agent_id": "a1", ...}}
             {"id": 2, "method": "capabilities"}
    reply    {"id": 1, "status": 200, "request_id": "...", "body": {...}}

``status`` and ``body`` are exactly what HTTP would answer for the same call, so a
client handles every transport the same way. ``id`` (a string, a number or null) is
echoed; replies to frames that cannot be read carry ``"id": null``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcs.context import AgentContext
from mcs.errors import ErrorCode, InvalidInputError
from mcs.server.wire import (
    STATUS_BY_CODE,
    STATUS_TOO_LARGE,
    Outcome,
    context_from_json,
    decode_json,
    encode,
    encode_outcome,
    error_body,
    parse_execute,
    refuse_unknown_keys,
)

if TYPE_CHECKING:
    from mcs.server.backend import Backend

_FRAME_KEYS = ("id", "method", "tool", "arguments", "context")
logger = logging.getLogger("mcs.server")


@dataclass(frozen=True, slots=True)
class FrameCall:
    """A decoded request frame."""

    id: Any
    method: str
    context: AgentContext
    tool: str = ""
    arguments: dict[str, Any] | None = None


def _reply(frame_id: Any, status: int, request_id: str | None, body: bytes) -> str:
    head = encode({"id": frame_id, "status": status, "request_id": request_id})
    return head[:-1].decode() + ',"body":' + body.decode() + "}"


def error_reply(frame_id: Any, status: int, code: ErrorCode, message: str,
                request_id: str | None = None) -> str:
    return _reply(frame_id, status, request_id, encode(error_body(code, message)))


def read_frame(raw: str | bytes, max_bytes: int, default: AgentContext | None = None) -> FrameCall | str:
    """Decode one frame; returns a :class:`FrameCall`, or the error reply to send back."""
    size = len(raw.encode() if isinstance(raw, str) else raw)
    if size > max_bytes:
        return error_reply(None, STATUS_TOO_LARGE, ErrorCode.INVALID_INPUT,
                           f"The frame is {size} bytes; the limit is {max_bytes} bytes.")
    frame_id: Any = None
    try:
        payload = decode_json(raw)
        if not isinstance(payload, dict):
            raise InvalidInputError("A frame is a JSON object with 'id' and 'method'.")
        frame_id = payload.get("id")
        if not (frame_id is None or isinstance(frame_id, str | int | float)) or isinstance(frame_id, bool):
            frame_id = None
            raise InvalidInputError("'id' must be a string, a number or null.")
        refuse_unknown_keys(payload, _FRAME_KEYS, "the frame")
        method = payload.get("method")
        context = context_from_json(payload.get("context"), default)
        if method == "capabilities":
            return FrameCall(frame_id, "capabilities", context)
        if method != "execute":
            raise InvalidInputError(
                f"'method' must be 'execute' or 'capabilities', got {method!r}."
            )
        tool, arguments = parse_execute(
            {k: v for k, v in payload.items() if k in ("tool", "arguments")}
        )
        return FrameCall(frame_id, "execute", context, tool, arguments)
    except InvalidInputError as error:
        return error_reply(frame_id, STATUS_BY_CODE[error.code], error.code, error.message)


def capabilities_reply(call: FrameCall, backend: Backend) -> str:
    return _reply(call.id, 200, call.context.request_id, encode(backend.capabilities()))


def outcome_reply(call: FrameCall, outcome: Outcome) -> str:
    status, body = encode_outcome(outcome)
    return _reply(call.id, status, outcome.request_id, body)


def failure_reply(call: FrameCall, exc: Exception) -> str:
    """The reply to a frame the server failed to answer (a bug, never the frame's fault):
    what HTTP answers then (``500 EXECUTION_ERROR``); the failure is logged, the
    connection or the STDIO loop goes on."""
    logger.error("unexpected error answering a %s frame", call.method, exc_info=exc)
    return error_reply(call.id, 500, ErrorCode.EXECUTION_ERROR,
                       "The server failed unexpectedly; nothing was returned.", call.context.request_id)


def handle_frame(
    backend: Backend, raw: str | bytes, default: AgentContext | None = None,
    execute: Callable[[FrameCall], Outcome] | None = None,
) -> str:
    """Answer one frame synchronously (STDIO); ``execute`` defaults to ``backend.execute``.
    Never raises: a failure of the server itself is :func:`failure_reply`."""
    call = read_frame(raw, backend.max_body_bytes, default)
    if isinstance(call, str):
        return call
    try:
        if call.method == "capabilities":
            return capabilities_reply(call, backend)
        run = execute or (lambda c: backend.execute(c.tool, c.arguments, c.context))
        return outcome_reply(call, run(call))
    except Exception as exc:
        return failure_reply(call, exc)
