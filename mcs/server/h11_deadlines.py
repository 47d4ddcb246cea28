"""uvicorn's h11 protocol with deadlines for receiving a request (see :mod:`mcs.server.connections`).

One deadline runs at a time, following h11's view of the client:

* ``head``: from the moment the connection is made, and on a kept-alive connection from
  the first byte of the next request, until h11 has the whole request head;
* ``body``: from then until the body's last byte (also when the app answered without
  reading it: uvicorn then drops the body, and would wait for it forever).

Once the request is complete nothing runs: the time the app takes, and a response
streamed for as long as it lasts, are not the client's slowness. Between requests uvicorn's
own keep-alive timeout applies. Always the h11 implementation (never httptools), so the
same code keeps the same bounds wherever MCS is installed.

A request head larger than h11's buffer bound (16 KiB unless uvicorn's
``h11_max_incomplete_event_size`` says otherwise) is answered ``431`` and the connection
closed, whether it arrived in pieces or in one read (h11 alone bounds only a head still
incomplete).

With a TLS context (:func:`protocol_for`), the TLS handshake is done here, not by the
server's listening socket: the connection counts against ``max_connections`` from the
moment it is accepted (one over the cap is closed before any handshake), the handshake must
be over within ``head_timeout`` (asyncio waits 60 s by default), and closing waits at most
:data:`TLS_SHUTDOWN_TIMEOUT` seconds for the client's ``close_notify`` (30 s by default).

A connection closed here (408, 431, 503) is aborted when it is still open :data:`CLOSE_GRACE`
seconds later. Nothing a client sends once its connection is closing is read: over TLS it
still arrives, and h11 raised on a request after our answer (a traceback logged for every
such client).
"""

from __future__ import annotations

import asyncio
import logging
import re
import ssl
from http import HTTPStatus
from typing import Any, ClassVar, Literal

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from mcs.server.connections import MAX_HEAD_BYTES, ConnectionLimits

logger = logging.getLogger("mcs.server.connections")

Phase = Literal["head", "body"]

CLOSE_GRACE = 1.0
"""Seconds a connection closed after an answer of ours may take to go before it is aborted."""

TLS_SHUTDOWN_TIMEOUT = 3.0
"""Seconds a closing TLS connection waits for the client's ``close_notify`` before it is
dropped (and stops counting against ``max_connections``)."""

# Where h11 itself ends a request head: the first empty line.
_HEAD_END = re.compile(rb"\n\r?\n")


class DeadlineH11Protocol(H11Protocol):
    """One client connection: uvicorn's h11 protocol, plus the request deadlines of
    :attr:`limits` and the refusal (503) of connections beyond ``max_connections``."""

    limits: ClassVar[ConnectionLimits] = ConnectionLimits()
    tls: ClassVar[ssl.SSLContext | None] = None
    """The server's TLS context: the handshake is done here (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._timer: asyncio.TimerHandle | None = None
        # The phase watched and the request it belongs to (uvicorn's cycle, None before
        # the first): a new request restarts the deadline even in the same phase.
        self._watching: tuple[Phase, object] | None = None
        self._abort_timer: asyncio.TimerHandle | None = None
        self._handshake: asyncio.Task[None] | None = None
        configured = self.config.h11_max_incomplete_event_size
        self._max_head: int = configured if configured is not None else MAX_HEAD_BYTES

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        if self.tls is not None and transport.get_extra_info("sslcontext") is None:
            self._accept_tls(transport, self.tls)
            return
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections:
            self._refuse()
            return
        self._arm("head")

    def shutdown(self) -> None:
        if self._handshake is not None:
            self._handshake.cancel()  # the server stops: the handshake is dropped
            return
        super().shutdown()

    def handle_events(self) -> None:
        if self.conn.their_state is h11.IDLE and self._head_too_large():
            answered = self._answer(431, f"request head larger than {self._max_head} bytes")
            logger.warning("closed the connection from %s: request head larger than %d bytes%s",
                           self._peer(), self._max_head, " (answered 431)" if answered else "")
            self._close_soon()
            return
        super().handle_events()

    def data_received(self, data: bytes) -> None:
        if self.transport.is_closing():
            return  # answered and closing: nothing more is read (TLS still delivers it)
        super().data_received(data)
        self._follow(data_arrived=True)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._follow(data_arrived=False)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.transport is None:  # refused before its TLS handshake: never served
            return
        self._disarm()
        if self._abort_timer is not None:
            self._abort_timer.cancel()
            self._abort_timer = None
        super().connection_lost(exc)

    def _head_too_large(self) -> bool:
        """Whether the request head h11 is waiting for, as far as it has arrived, is
        larger than :attr:`_max_head` (complete or not)."""
        buffered = self.conn.trailing_data[0]
        if len(buffered) <= self._max_head:
            return False  # the common case, checked without scanning
        return _HEAD_END.search(buffered, 0, self._max_head) is None

    def _accept_tls(self, transport: asyncio.Transport, context: ssl.SSLContext) -> None:
        """Count the accepted connection (refusing it over the cap) and start its TLS
        handshake, bounded by ``head_timeout``."""
        peer = _address(transport)
        self.connections.add(self)
        if len(self.connections) > self.limits.max_connections:
            self.connections.discard(self)
            logger.warning("refused a connection from %s: %d connections are open already (closed before TLS)",
                           peer, self.limits.max_connections)
            transport.abort()
            return
        transport.pause_reading()  # nothing reaches h11 before the handshake
        self._handshake = self.loop.create_task(self._secure(transport, context, peer))

    async def _secure(self, transport: asyncio.Transport, context: ssl.SSLContext, peer: str) -> None:
        """Do the handshake, then serve the TLS transport as any other connection."""
        early = _Handover()
        seconds = self.limits.head_timeout
        started = self.loop.time()
        try:
            secured = await self.loop.start_tls(transport, early, context, server_side=True,
                                                ssl_handshake_timeout=seconds,
                                                ssl_shutdown_timeout=TLS_SHUTDOWN_TIMEOUT)
        except (OSError, asyncio.CancelledError) as exc:  # ssl.SSLError is an OSError
            # start_tls closed the connection; it is no longer counted.
            self._handshake = None
            self.connections.discard(self)
            if isinstance(exc, asyncio.CancelledError):
                raise
            if self.loop.time() - started >= seconds - 0.05:  # the loop may fire a timer a hair early
                logger.warning("closed the connection from %s: TLS handshake not done within %g s", peer, seconds)
            else:
                logger.debug("TLS handshake with %s failed: %s", peer, exc)
            return
        self._handshake = None
        if secured is None:  # the connection went while the handshake ended
            self.connections.discard(self)
            return
        secured.set_protocol(self)
        self.connection_made(secured)
        early.hand_over(self)

    def _follow(self, *, data_arrived: bool) -> None:
        """Keep the deadline of the phase the client is in now, starting one when the
        phase (or the request) changed, and none once the request is complete."""
        if self.transport.is_closing() or self.transport.get_protocol() is not self:
            self._disarm()  # closed, or handed to the WebSocket protocol
            return
        state = self.conn.their_state
        phase: Phase | None = None
        if state is h11.SEND_BODY:
            phase = "body"
        elif state is h11.IDLE and (data_arrived or self.cycle is None or self.conn.trailing_data[0]):
            phase = "head"
        if phase is None:
            self._disarm()
        elif self._watching != (phase, self.cycle):
            self._disarm()
            self._arm(phase)

    def _arm(self, phase: Phase) -> None:
        seconds = self.limits.head_timeout if phase == "head" else self.limits.body_timeout
        self._watching = (phase, self.cycle)
        self._timer = self.loop.call_later(seconds, self._expire, phase, seconds)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = None
        self._watching = None

    def _expire(self, phase: Phase, seconds: float) -> None:
        self._timer = None
        self._watching = None
        if self.transport.is_closing():
            return
        reason = f"request {phase} not received within {seconds:g} s"
        answered = self._answer(408, reason)
        logger.warning("closed the connection from %s: %s%s", self._peer(), reason,
                       " (answered 408)" if answered else "")
        self._close_soon()

    def _refuse(self) -> None:
        answered = self._answer(503, f"more than {self.limits.max_connections} connections open")
        logger.warning("refused a connection from %s: %d connections are open already%s",
                       self._peer(), self.limits.max_connections, " (answered 503)" if answered else "")
        self._close_soon()

    def _close_soon(self) -> None:
        """Close the connection, and abort it if it is still open after :data:`CLOSE_GRACE`
        seconds (a TLS client that never answers our ``close_notify``)."""
        self.transport.close()
        if self._abort_timer is None:
            self._abort_timer = self.loop.call_later(CLOSE_GRACE, self.transport.abort)

    def _answer(self, status: int, text: str) -> bool:
        """Send a short ``Connection: close`` response when no response has started;
        whether one was sent."""
        cycle = self.cycle
        waiting = cycle is not None and not cycle.response_started and self.conn.our_state is h11.SEND_RESPONSE
        if self.conn.our_state is not h11.IDLE and not waiting:
            return False
        if waiting and cycle is not None:
            # The app's receive() now returns http.disconnect, and what it sends is dropped.
            cycle.disconnected = True
            cycle.message_event.set()
        body = f"{text}\n".encode()
        headers = [
            *self.server_state.default_headers,
            (b"content-type", b"text/plain; charset=utf-8"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]
        try:
            parts = [
                self.conn.send(h11.Response(status_code=status, headers=headers, reason=HTTPStatus(status).phrase.encode())),
                self.conn.send(h11.Data(data=body)),
                self.conn.send(h11.EndOfMessage()),
            ]
        except h11.LocalProtocolError:
            return False
        self.transport.write(b"".join(part for part in parts if part))
        return True

    def _peer(self) -> str:
        return _address(self.transport)


class _Handover(asyncio.Protocol):
    """What TLS delivers between the end of the handshake and the moment the connection
    is served (asyncio passes decrypted data on at once), kept for :meth:`hand_over`."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.eof = False
        self.lost: tuple[Exception | None] | None = None

    def data_received(self, data: bytes) -> None:
        self.data.extend(data)

    def eof_received(self) -> None:
        self.eof = True

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = (exc,)

    def hand_over(self, protocol: asyncio.Protocol) -> None:
        """Pass on, in order, what was kept to ``protocol`` (which now has the transport)."""
        if self.data:
            protocol.data_received(bytes(self.data))
        if self.eof:
            protocol.eof_received()
        if self.lost is not None:
            protocol.connection_lost(self.lost[0])


def _address(transport: asyncio.BaseTransport) -> str:
    """The client's ``host:port`` as the warnings name it (TLS or not, served yet or not)."""
    peer = transport.get_extra_info("peername")
    if isinstance(peer, tuple) and len(peer) >= 2:
        return f"{peer[0]}:{peer[1]}"
    return "an unknown address"


def protocol_for(limits: ConnectionLimits, tls: ssl.SSLContext | None = None) -> type[DeadlineH11Protocol]:
    """The protocol class to give ``uvicorn.Config(http=...)`` so that ``limits`` hold
    (uvicorn makes one instance per connection from the class); with ``tls``, the
    connections are served over TLS (uvicorn's own ``ssl_*`` settings must then be unset)."""

    class Limited(DeadlineH11Protocol):
        pass

    Limited.limits = limits
    Limited.tls = tls
    return Limited


__all__ = ["CLOSE_GRACE", "TLS_SHUTDOWN_TIMEOUT", "DeadlineH11Protocol", "protocol_for"]
