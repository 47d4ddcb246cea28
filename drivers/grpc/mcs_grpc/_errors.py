"""gRPC status codes mapped once to the core's error codes.

``DEADLINE_EXCEEDED`` is ``TIMEOUT``; every other status is ``EXECUTION_ERROR`` (the call
reached the transport). ``details`` always holds ``grpc_code`` (the name), ``grpc_status``
(the number), ``grpc_details`` (the server's text, capped), ``method`` and ``retryable``: true
when the same call may succeed later and repeating it is safe, that is for the transient
codes (``UNAVAILABLE``, ``ABORTED``, ``RESOURCE_EXHAUSTED``, ``DEADLINE_EXCEEDED``) on an
idempotent method, and never for a message over the size limit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import grpc

from mcs.errors import ExecutionError, ToolCallError, ToolTimeoutError
from mcs.redaction import excerpt

_EXCERPT = 300
TRANSIENT = frozenset({
    grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.ABORTED,
    grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.DEADLINE_EXCEEDED,
})
_HINTS: dict[grpc.StatusCode, str] = {
    grpc.StatusCode.INVALID_ARGUMENT: "The server refused the arguments; fix them and call again.",
    grpc.StatusCode.OUT_OF_RANGE: "A value is out of the range the server accepts; fix it and call again.",
    grpc.StatusCode.FAILED_PRECONDITION: "The system is not in a state that allows this call; change that first.",
    grpc.StatusCode.NOT_FOUND: "Nothing was found; check the identifiers in the arguments.",
    grpc.StatusCode.ALREADY_EXISTS: "It exists already; use a different identifier or fetch the existing one.",
    grpc.StatusCode.PERMISSION_DENIED: "The caller may not do this; calling again will not help.",
    grpc.StatusCode.UNAUTHENTICATED: "The credentials were refused; calling again will not help.",
    grpc.StatusCode.UNIMPLEMENTED: "The server does not implement this method.",
    grpc.StatusCode.UNAVAILABLE: "The service is unavailable right now.",
    grpc.StatusCode.RESOURCE_EXHAUSTED: "A limit or quota was exceeded.",
    grpc.StatusCode.ABORTED: "The call was aborted by a conflict.",
    grpc.StatusCode.DEADLINE_EXCEEDED: "The call did not finish before its deadline.",
    grpc.StatusCode.CANCELLED: "The call was cancelled.",
    grpc.StatusCode.DATA_LOSS: "The server reported lost or corrupted data.",
    grpc.StatusCode.INTERNAL: "The server failed.",
    grpc.StatusCode.UNKNOWN: "The server failed with an unknown error.",
}


def is_size_limit(code: grpc.StatusCode, details: str) -> bool:
    return code == grpc.StatusCode.RESOURCE_EXHAUSTED and "larger than max" in details


def status_error(
    code: grpc.StatusCode, details: str, *, tool: str, method: str, idempotent: bool,
    extra: dict[str, Any] | None = None, secrets: Sequence[str] = (),
) -> ToolCallError:
    """The error the model reads for a call that ended with ``code``; ``secrets`` (the
    metadata values sent, :func:`mcs.redaction.credential_forms`) are scrubbed from the
    server's details, which may echo them."""
    size_limit = is_size_limit(code, details)
    retryable = code in TRANSIENT and idempotent and not size_limit
    hint = _HINTS.get(code, "The call did not succeed.")
    if size_limit:
        hint = "A message was larger than the configured limit; ask for less (a narrower request, a smaller page)."
    elif code in TRANSIENT:
        hint += " Trying again later may help." if retryable else " The method is not idempotent: do not repeat it blindly."
    said = excerpt(details or "", secrets, _EXCERPT)
    message = f"{method} failed with gRPC status {code.name}. {hint}"
    if said:
        message += f" Server said: {said}"
    info: dict[str, Any] = {
        "grpc_code": code.name, "grpc_status": code.value[0], "grpc_details": said,
        "method": method, "retryable": retryable, **(extra or {}),
    }
    if code == grpc.StatusCode.DEADLINE_EXCEEDED:
        return ToolTimeoutError(message, tool=tool, details=info)
    return ExecutionError(message, tool=tool, details=info)


def rpc_error(error: grpc.RpcError, *, tool: str, method: str, idempotent: bool,
              extra: dict[str, Any] | None = None, secrets: Sequence[str] = ()) -> ToolCallError:
    """:func:`status_error` for a raised ``grpc.RpcError`` (sync or ``grpc.aio``)."""
    code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
    details = error.details() if hasattr(error, "details") else str(error)
    return status_error(code or grpc.StatusCode.UNKNOWN, details or "", tool=tool, method=method,
                        idempotent=idempotent, extra=extra, secrets=secrets)
