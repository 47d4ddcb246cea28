"""The RFC-0001 wire protocol, shared by every transport and by the client driver.

The full specification is ``docs/rfc0001.md``; this module is its single implementation:

* HTTP status per error code (:data:`STATUS_BY_CODE`), success and error bodies
  (:class:`Outcome`);
* how :class:`~mcs.AgentContext` travels: HTTP headers (:func:`context_from_headers`)
  or, on WebSocket and STDIO, a ``context`` object in each frame
  (:func:`context_from_json`), with the same limits on both;
* decoding an execute request (:func:`parse_execute`) with the exact error for each
  way it can be malformed.

Nothing here imports a web framework.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mcs.context import AgentContext, new_context
from mcs.errors import ErrorCode, ExecutionError, InvalidInputError, ToolCallError
from mcs.strict_json import STRICT_JSON
from mcs.tools import json_type
from mcs.truncation import MAX_JSON_DEPTH, too_deep

PROTOCOL_VERSION = "1.0"

CAPABILITIES_PATH = "/mcp/capabilities"
EXECUTE_PATH = "/mcp/execute"
WEBSOCKET_PATH = "/mcp/ws"

HEADER_AGENT_ID = "X-Agent-Id"
HEADER_MODEL = "X-Agent-Model"
HEADER_REQUEST_ID = "X-Request-Id"
HEADER_META_PREFIX = "X-Agent-Meta-"

DEFAULT_MAX_BODY_BYTES = 1024 * 1024
#: The deepest nesting of objects and arrays accepted in ``arguments`` (``{"a": [1]}`` is 2).
MAX_ARGUMENT_DEPTH = MAX_JSON_DEPTH

#: HTTP status for each reserved error code (and the ``status`` of WebSocket/STDIO frames).
STATUS_BY_CODE: Mapping[ErrorCode, int] = {
    ErrorCode.INVALID_INPUT: 400,
    ErrorCode.TOOL_NOT_FOUND: 404,
    ErrorCode.POLICY_DENIED: 403,
    ErrorCode.EXECUTION_ERROR: 502,
    ErrorCode.TIMEOUT: 504,
}
STATUS_TOO_LARGE = 413
STATUS_UNSUPPORTED_MEDIA = 415

MAX_AGENT_ID = 256
MAX_MODEL = 256
MAX_META_KEYS = 32
MAX_META_VALUE = 1024
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,128}$")
_META_KEY = re.compile(r"^[a-z0-9][a-z0-9_\-]{0,63}$")
_EXECUTE_KEYS = ("tool", "arguments")
_CONTEXT_KEYS = ("agent_id", "model", "request_id", "metadata")


def error_body(code: ErrorCode, message: str) -> dict[str, str]:
    """The RFC-0001 error shape ``{"error": CODE, "message": ...}``."""
    return {"error": code.value, "message": message}


@dataclass(frozen=True, slots=True)
class Outcome:
    """The answer to one execute request, independent of the transport.

    ``status`` is the HTTP status; :meth:`body` is the JSON body: ``{"tool",
    "request_id", "result"}`` on success, ``{"error", "message"}`` on failure.
    """

    tool: str
    request_id: str
    result: Any = None
    error: ToolCallError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def status(self) -> int:
        return 200 if self.error is None else STATUS_BY_CODE[self.error.code]

    def body(self) -> dict[str, Any]:
        if self.error is not None:
            return self.error.to_dict()
        return {"tool": self.tool, "request_id": self.request_id, "result": self.result}


# Built once: ``json.dumps`` with options builds a new encoder on every call.
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def encode(body: Any) -> bytes:
    """Compact UTF-8 JSON; refuses NaN and Infinity, which JSON cannot carry.

    Raises:
        ExecutionError: ``body`` holds something JSON cannot represent.
    """
    try:
        return _ENCODER.encode(body).encode()
    except (TypeError, ValueError) as exc:
        raise ExecutionError(f"the result cannot be sent as JSON ({exc})") from None


def encode_outcome(outcome: Outcome) -> tuple[int, bytes]:
    """``(status, body bytes)``; a result JSON cannot carry becomes ``EXECUTION_ERROR``."""
    try:
        return outcome.status, encode(outcome.body())
    except ExecutionError:
        error = ExecutionError(
            f"{outcome.tool} returned a result that JSON cannot carry (NaN, Infinity or "
            "a non-JSON type).",
            tool=outcome.tool,
        )
        return STATUS_BY_CODE[error.code], encode(error.to_dict())


def decode_json(raw: bytes | str) -> Any:
    """Parse a request body or frame: strict JSON (RFC 8259), so every value read can be
    sent back; ``NaN``, ``Infinity`` and numbers beyond a float's range (``1e999``)
    are refused like any other malformed input.

    Raises:
        InvalidInputError: not UTF-8, not JSON, or nested too deeply.
    """
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes | bytearray) else raw
    except UnicodeDecodeError:
        raise InvalidInputError("The request body is not valid UTF-8.") from None
    try:
        return STRICT_JSON.decode(text)
    except RecursionError:
        raise InvalidInputError("The request body is nested too deeply.") from None
    except ValueError as exc:
        raise InvalidInputError(f"The request body is not valid JSON: {exc}.") from None


def refuse_unknown_keys(payload: Mapping[str, Any], allowed: Sequence[str], where: str) -> None:
    """Refuse a request object with a key outside ``allowed``, so a typo is reported, not ignored.

    Raises:
        InvalidInputError: naming the unknown keys (sorted) and ``allowed`` (in the order
            given) of the object described by ``where`` ("the frame", "'context'").
    """
    for key in payload:
        if key not in allowed:
            break
    else:
        return  # every key allowed, the common case: no set to build
    unknown = sorted(set(payload).difference(allowed))
    if unknown:
        names = [repr(key) for key in allowed]
        listing = f"{', '.join(names[:-1])} and {names[-1]}" if len(names) > 1 else "".join(names)
        raise InvalidInputError(
            f"Unknown key(s) {', '.join(map(repr, unknown))} in {where}; allowed keys are {listing}."
        )


def parse_execute(payload: Any) -> tuple[str, dict[str, Any]]:
    """``{"tool": str, "arguments": object}`` -> ``(tool, arguments)``.

    ``arguments`` may be omitted (it means ``{}``); any other key is refused so a typo
    (``"argument"``, ``"name"``) is reported instead of silently ignored.

    Raises:
        InvalidInputError: the payload does not have that shape; the message says how.
    """
    if not isinstance(payload, dict):
        raise InvalidInputError(
            f'An execute request is a JSON object {{"tool": ..., "arguments": {{...}}}}, '
            f"got {_type_in_words(payload)}."
        )
    refuse_unknown_keys(payload, _EXECUTE_KEYS, "the execute request")
    tool = payload.get("tool")
    if not isinstance(tool, str) or not tool:
        raise InvalidInputError(
            f"'tool' must be a non-empty string naming a tool, got {_type_in_words(tool)}."
        )
    arguments = payload.get("arguments", {})
    if not isinstance(arguments, dict):
        raise InvalidInputError(
            f"'arguments' must be a JSON object, got {_type_in_words(arguments)}.", tool=tool
        )
    if too_deep(arguments, MAX_ARGUMENT_DEPTH):
        raise InvalidInputError(
            f"'arguments' are nested too deeply: at most {MAX_ARGUMENT_DEPTH} levels of objects "
            "and arrays are accepted.", tool=tool,
        )
    return tool, arguments


_TYPE_IN_WORDS = {
    "null": "null", "boolean": "a boolean", "integer": "a number", "number": "a number",
    "string": "a string", "array": "an array", "object": "an object",
}


def _type_in_words(value: Any) -> str:
    """What an error message calls ``value``: ``"a string"``, ``"an object"``, ``"null"``..."""
    kind = json_type(value)
    return type(value).__name__ if kind is None else _TYPE_IN_WORDS[kind]


_CONTROL_CHARACTER = re.compile("[\x00-\x1f\x7f]")


def _check_text(name: str, value: Any, limit: int) -> str:
    if not isinstance(value, str) or not value or len(value) > limit:
        raise InvalidInputError(f"{name} must be a string of 1 to {limit} characters.")
    if _CONTROL_CHARACTER.search(value):
        raise InvalidInputError(f"{name} must not contain control characters.")
    return value


def _build_context(
    agent_id: Any, model: Any, request_id: Any, metadata: Mapping[str, Any]
) -> AgentContext:
    if request_id is not None and (not isinstance(request_id, str) or not _REQUEST_ID.match(request_id)):
        raise InvalidInputError(
            f"{HEADER_REQUEST_ID} must be 1 to 128 characters of A-Z a-z 0-9 . _ : -"
        )
    if len(metadata) > MAX_META_KEYS:
        raise InvalidInputError(f"At most {MAX_META_KEYS} agent metadata entries are allowed.")
    meta: dict[str, str] = {}
    for key, value in metadata.items():
        normal = str(key).lower()
        if not _META_KEY.match(normal):
            raise InvalidInputError(
                f"Agent metadata key {key!r} must be 1 to 64 characters of a-z 0-9 _ - "
                "(starting with a letter or digit)."
            )
        meta[normal] = _check_text(f"Agent metadata {normal!r}", value, MAX_META_VALUE)
    return new_context(
        "anonymous" if agent_id is None else _check_text(HEADER_AGENT_ID, agent_id, MAX_AGENT_ID),
        None if model is None else _check_text(HEADER_MODEL, model, MAX_MODEL),
        request_id,
        meta,
    )


def context_from_headers(headers: Mapping[str, str]) -> AgentContext:
    """The caller's :class:`AgentContext` from HTTP headers (names case-insensitive).

    ``X-Agent-Id`` (default ``"anonymous"``), ``X-Agent-Model``, ``X-Request-Id``
    (generated when absent) and one ``X-Agent-Meta-<key>`` per metadata entry (keys
    lower-cased). Identity is untrusted input: it is checked for shape, never believed.

    Raises:
        InvalidInputError: a value is too long, empty, or has forbidden characters.
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    prefix = HEADER_META_PREFIX.lower()
    metadata = {k[len(prefix):]: v for k, v in lowered.items() if k.startswith(prefix)}
    return _build_context(
        lowered.get(HEADER_AGENT_ID.lower()),
        lowered.get(HEADER_MODEL.lower()),
        lowered.get(HEADER_REQUEST_ID.lower()),
        metadata,
    )


_RAW_AGENT_ID = HEADER_AGENT_ID.lower().encode()
_RAW_MODEL = HEADER_MODEL.lower().encode()
#: ``X-Request-Id`` as an ASGI raw header name (lower-case bytes).
RAW_HEADER_REQUEST_ID = HEADER_REQUEST_ID.lower().encode()
_RAW_META_PREFIX = HEADER_META_PREFIX.lower().encode()


def context_from_raw_headers(raw: Iterable[tuple[bytes, bytes]]) -> AgentContext:
    """:func:`context_from_headers` of an ASGI request's raw header list (``scope["headers"]``:
    ``(name, value)`` byte pairs, read as Latin-1 like any ASGI framework does), the same
    context and the same errors; only the ``X-`` headers are decoded. Where a header is
    repeated the last one counts, as there."""
    agent_id = model = request_id = None
    metadata: dict[str, str] = {}
    for name, value in raw:
        if name[:2] not in (b"x-", b"X-"):
            continue
        name = name.lower()
        if name == _RAW_AGENT_ID:
            agent_id = value.decode("latin-1")
        elif name == RAW_HEADER_REQUEST_ID:
            request_id = value.decode("latin-1")
        elif name == _RAW_MODEL:
            model = value.decode("latin-1")
        elif name.startswith(_RAW_META_PREFIX):
            # str.lower as well: it also lowers the Latin-1 letters bytes.lower leaves
            metadata[name[len(_RAW_META_PREFIX):].decode("latin-1").lower()] = value.decode("latin-1")
    return _build_context(agent_id, model, request_id, metadata)


def context_to_headers(context: AgentContext) -> dict[str, str]:
    """The headers :func:`context_from_headers` reads back as ``context``."""
    headers = {HEADER_AGENT_ID: context.agent_id, HEADER_REQUEST_ID: context.request_id}
    if context.model is not None:
        headers[HEADER_MODEL] = context.model
    for key, value in context.metadata.items():
        headers[f"{HEADER_META_PREFIX}{key}"] = value
    return headers


def context_from_json(value: Any, default: AgentContext | None = None) -> AgentContext:
    """The ``context`` object of a WebSocket or STDIO frame, with the header limits.

    ``{"agent_id", "model", "request_id", "metadata": {str: str}}``, every key optional;
    a missing key falls back to ``default`` (the WebSocket handshake's headers), except
    ``request_id``, which is new for every frame unless given.

    Raises:
        InvalidInputError: the object has another shape or breaks a limit.
    """
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise InvalidInputError(f"'context' must be a JSON object, got {_type_in_words(value)}.")
    refuse_unknown_keys(value, _CONTEXT_KEYS, "'context'")
    metadata = value.get("metadata")
    if metadata is None:
        metadata = dict(default.metadata) if default is not None else {}
    elif not isinstance(metadata, dict):
        raise InvalidInputError("'context.metadata' must be an object of strings.")
    agent_id = value.get("agent_id", default.agent_id if default is not None else None)
    model = value.get("model", default.model if default is not None else None)
    return _build_context(agent_id, model, value.get("request_id"), metadata)


def context_to_json(context: AgentContext) -> dict[str, Any]:
    """The frame ``context`` object :func:`context_from_json` reads back as ``context``."""
    out: dict[str, Any] = {"agent_id": context.agent_id, "request_id": context.request_id}
    if context.model is not None:
        out["model"] = context.model
    if context.metadata:
        out["metadata"] = dict(context.metadata)
    return out


def is_json_content_type(value: str | None) -> bool:
    """``application/json`` or ``application/<x>+json``, any parameters, UTF-8 if a charset is given."""
    if value == "application/json":  # what nearly every client sends
        return True
    if not value:
        return False
    media, _, params = value.partition(";")
    media = media.strip().lower()
    if media != "application/json" and not (media.startswith("application/") and media.endswith("+json")):
        return False
    for param in params.split(";"):
        key, _, val = param.partition("=")
        if key.strip().lower() == "charset" and val.strip().strip('"').lower() not in ("utf-8", "utf8"):
            return False
    return True
