"""What the driver hands the transports for each call: options, deadline, retryability.

Kept apart from :mod:`mcs_soap._http` (which imports zeep and httpx) so that a driver
can be built, listed and described without importing either.
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CallState:
    """The call being sent: its tool (for messages), deadline and whether it may be retried,
    and the credentials it carries (configured header values, the WS-Security password, the
    text of configured SOAP headers), to scrub from any error a service's answer becomes."""

    tool: str
    deadline: float | None
    retryable: bool
    credentials: tuple[str, ...] = ()


#: Set by the driver around each zeep call; the transports read it (sync and async).
CALL: contextvars.ContextVar[CallState | None] = contextvars.ContextVar("mcs_soap_call", default=None)


@dataclass(frozen=True, slots=True)
class HttpOptions:
    """How requests are sent: static headers (credentials included), caps and retries."""

    headers: tuple[tuple[str, str], ...] = ()
    max_response_bytes: int = 10 * 1024 * 1024
    retries: int = 2
    backoff: float = 0.25
    max_backoff: float = 8.0
