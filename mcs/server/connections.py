"""How long and how many clients may hold an HTTP endpoint MCS serves (slow clients).

Every HTTP server MCS runs with uvicorn (``mcs serve --protocol mcp`` over streamable
HTTP, ``mcs serve --protocol rfc0001``, ``McpServer.run()``, ``mcs inspect``) takes its
uvicorn settings from :func:`uvicorn_settings`, so the same bounds hold on all of them:

* **request head**: a new connection must deliver a complete request head within
  ``head_timeout`` seconds, and so must every later request on a kept-alive connection,
  counted from its first byte;
* **request body**: the body must be complete within ``body_timeout`` seconds of the end
  of the head, whether or not the app reads it;
* **connections**: at most ``max_connections`` are held at once; one more is answered
  503 and closed at once (uvicorn's ``limit_concurrency`` also answers 503 to a request
  while as many requests are running). Over TLS a connection counts from the moment it is
  accepted, one over the cap is closed before any handshake, the handshake must be over
  within ``head_timeout``, and a closing connection waits at most 3 s for the client's
  ``close_notify``;
* **head size**: a request head over :data:`MAX_HEAD_BYTES` (16 KiB) is answered 431 and
  the connection closed, whether it is complete or not;
* **idle keep-alive**: uvicorn closes a connection idle between requests after
  ``timeout_keep_alive`` (5 s).

uvicorn bounds idle connections itself but not the time a client takes to send a request
(its ``--timeout-request-start`` is still an open proposal): a client sending one header
byte every few seconds, or trickling a declared body, held a connection, its buffers and
its task for as long as it liked. The deadlines are kept by an h11 protocol class
(:mod:`mcs.server.h11_deadlines`). A client that misses one gets ``408 Request Timeout``
when no response has started (otherwise the connection is just closed), and a warning is
logged on ``mcs.server.connections``.

Nothing here limits a response: once a request is fully received, a long tool call or a
long SSE stream keeps its connection as long as it needs. What the bounds cannot do (a
flood of connections from many addresses, a client reading a response very slowly,
WebSocket messages after the handshake, per-client rate limits) needs a reverse proxy or
a firewall in front.
"""

from __future__ import annotations

import math
import ssl
from dataclasses import dataclass
from typing import Any

from mcs.errors import ConfigurationError

DEFAULT_HEAD_TIMEOUT = 10.0
DEFAULT_BODY_TIMEOUT = 30.0
DEFAULT_MAX_CONNECTIONS = 500
MAX_HEAD_BYTES = 16 * 1024
"""The largest request head (request line and headers) served; a larger one gets 431."""


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    """The bounds on slow or numerous clients (see the module docstring); seconds for
    the timeouts.

    Raises:
        ConfigurationError: a timeout that is not a positive finite number, or
            ``max_connections`` below 1.
    """

    head_timeout: float = DEFAULT_HEAD_TIMEOUT
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    max_connections: int = DEFAULT_MAX_CONNECTIONS

    def __post_init__(self) -> None:
        for name in ("head_timeout", "body_timeout"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value <= 0:
                raise ConfigurationError(f"{name} must be a positive number of seconds, got {value!r}")
        count = self.max_connections
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ConfigurationError(f"max_connections must be a whole number of at least 1, got {count!r}")

    @classmethod
    def from_settings(cls, settings: dict[str, Any]) -> ConnectionLimits:
        """Build from ``-s`` settings (``head_timeout``, ``body_timeout``,
        ``max_connections``, text or numbers); a missing key keeps its default.

        Raises:
            ConfigurationError: a value that is not a number of the right kind.
        """
        kwargs: dict[str, Any] = {
            name: _number(settings[name], name, kind) for name, kind in _SETTINGS.items() if name in settings
        }
        return cls(**kwargs)


#: The ``-s`` settings :meth:`ConnectionLimits.from_settings` reads, with the kind of number each takes.
_SETTINGS: dict[str, type[int] | type[float]] = {"head_timeout": float, "body_timeout": float, "max_connections": int}
SETTING_NAMES = tuple(_SETTINGS)


def _number(value: Any, name: str, kind: type[int] | type[float]) -> int | float:
    if isinstance(value, bool):
        raise ConfigurationError(f"-s {name} must be a number, got {value!r}")
    try:
        return kind(value)
    except (TypeError, ValueError):
        what = "a whole number" if kind is int else "a number of seconds"
        raise ConfigurationError(f"-s {name} must be {what}, got {value!r}") from None


def uvicorn_settings(limits: ConnectionLimits | None = None, *, tls: ssl.SSLContext | None = None) -> dict[str, Any]:
    """Keyword arguments for ``uvicorn.Config`` that enforce ``limits`` (default:
    :class:`ConnectionLimits`): the deadline-keeping h11 protocol as ``http``,
    ``limit_concurrency`` and the bound on a request head. With ``tls`` (see
    :func:`tls_context`) that protocol serves HTTPS, so that the handshake is bounded too:
    do not also give uvicorn ``ssl_*`` settings. Needs the ``server`` extra (uvicorn)."""
    from mcs.server.h11_deadlines import protocol_for

    chosen = limits or ConnectionLimits()
    # uvicorn's check counts the requesting connection itself among those open, and the
    # protocol already refuses connections beyond max_connections: one more keeps the
    # two from disagreeing.
    return {"http": protocol_for(chosen, tls), "limit_concurrency": chosen.max_connections + 1,
            "h11_max_incomplete_event_size": MAX_HEAD_BYTES}


def tls_context(cert_file: str, key_file: str) -> ssl.SSLContext:
    """The server-side TLS context for :func:`uvicorn_settings`: the certificate chain and
    key read from PEM files now, TLS 1.2 or later.

    Raises:
        ConfigurationError: a file that cannot be read, or a certificate and key that
            are not PEM or do not match.
    """
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(cert_file, key_file)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigurationError(f"cannot load the TLS certificate {cert_file!r} with the key {key_file!r}: "
                                 f"{exc}") from None
    return context


__all__ = [
    "DEFAULT_BODY_TIMEOUT",
    "DEFAULT_HEAD_TIMEOUT",
    "DEFAULT_MAX_CONNECTIONS",
    "MAX_HEAD_BYTES",
    "SETTING_NAMES",
    "ConnectionLimits",
    "tls_context",
    "uvicorn_settings",
]
