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

A connection closed here (408, 503) is aborted when it is still open :data:`CLOSE_GRACE`
seconds later: closing a TLS connection waits for the client's ``close_notify`` (30 s by
default), and it stays counted against ``max_connections`` until then. Nothing a client
sends once its connection is closing is read: over TLS it still arrives, and h11 raised on a
request after our answer (a traceback logged for every such client).
"""

from __future__ import annotations

import asyncio
import logging
from http import HTTPStatus
from typing import Any, ClassVar, Literal

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from mcs.server.connections import ConnectionLimits

logger = logging.getLogger("mcs.server.connections")

Phase = Literal["head", "body"]

CLOSE_GRACE = 1.0
"""Seconds a connection closed after an answer of ours may take to go before it is aborted."""


class DeadlineH11Protocol(H11Protocol):
    """One client connection: uvicorn's h11 protocol, plus the request deadlines of
    :attr:`limits` and the refusal (503) of connections beyond ``max_connections``."""

    limits: ClassVar[ConnectionLimits] = ConnectionLimits()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._timer: asyncio.TimerHandle | None = None
        # The phase watched and the request it belongs to (uvicorn's cycle, None before
        # the first): a new request restarts the deadline even in the same phase.
        self._watching: tuple[Phase, object] | None = None
        self._abort_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections:
            self._refuse()
            return
        self._arm("head")

    def data_received(self, data: bytes) -> None:
        if self.transport.is_closing():
            return  # answered and closing: nothing more is read (TLS still delivers it)
        super().data_received(data)
        self._follow(data_arrived=True)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._follow(data_arrived=False)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._abort_timer is not None:
            self._abort_timer.cancel()
            self._abort_timer = None
        super().connection_lost(exc)

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
        if self.client is None:
            return "an unknown address"
        host, port = self.client
        return f"{host}:{port}"


def protocol_for(limits: ConnectionLimits) -> type[DeadlineH11Protocol]:
    """The protocol class to give ``uvicorn.Config(http=...)`` so that ``limits`` hold
    (uvicorn makes one instance per connection from the class)."""

    class Limited(DeadlineH11Protocol):
        pass

    Limited.limits = limits
    return Limited


__all__ = ["CLOSE_GRACE", "DeadlineH11Protocol", "protocol_for"]
