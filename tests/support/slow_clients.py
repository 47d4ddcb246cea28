"""A raw-socket HTTP/1.1 client that sends as slowly as a test tells it (slowloris and
friends), and reads what the server answers with h11."""

from __future__ import annotations

import select
import socket
import time
from types import TracebackType

import h11

HOST = "127.0.0.1"


def request_head(method: str, path: str, port: int, **headers: str) -> bytes:
    """A request head with ``Host`` and the given headers (``content_length="12"`` is
    ``Content-Length: 12``), ending with the blank line."""
    lines = [f"{method} {path} HTTP/1.1", f"Host: {HOST}:{port}"]
    lines += [f"{name.replace('_', '-').title()}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


class SlowClient:
    """One TCP connection to ``127.0.0.1:port``; the answer is read with h11's client side."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection((HOST, port), timeout=10)
        self.received = b""
        self.closed_by_server = False
        self._parser = h11.Connection(h11.CLIENT)

    def send(self, data: bytes) -> None:
        """Send ``data`` at once; a server that already closed is noted, not raised."""
        try:
            self.sock.sendall(data)
        except (BrokenPipeError, ConnectionResetError):
            self.closed_by_server = True

    def trickle(self, data: bytes, *, every: float, within: float) -> float:
        """Send ``data`` one byte every ``every`` seconds (then nothing) until the server
        closes the connection or ``within`` seconds pass; the seconds it took."""
        started = time.monotonic()
        pending = data
        while not self.closed_by_server and time.monotonic() - started < within:
            if pending:
                self.send(pending[:1])
                pending = pending[1:]
            self._read_for(min(every, within - (time.monotonic() - started)))
        return time.monotonic() - started

    def wait_closed(self, within: float) -> float:
        """Read until the server closes the connection or ``within`` seconds pass; the
        seconds it took."""
        return self.trickle(b"", every=within, within=within)

    def response(self, within: float = 10.0) -> h11.Response:
        """The next complete response (head and body; the body is in :attr:`last_body`).

        Raises:
            TimeoutError: none complete within ``within`` seconds.
        """
        deadline = time.monotonic() + within
        self._expect_a_response()
        head: h11.Response | None = None
        self.last_body = b""
        while True:
            event = self._parser.next_event()
            if event is h11.NEED_DATA:
                if self.closed_by_server or time.monotonic() > deadline:
                    raise TimeoutError(f"no complete response within {within:g} s; received {self.received!r}")
                self._read_for(min(0.05, max(0.0, deadline - time.monotonic())))
                continue
            if isinstance(event, h11.Response):
                head = event
            elif isinstance(event, h11.Data):
                self.last_body += bytes(event.data)
            elif isinstance(event, h11.EndOfMessage) and head is not None:
                if self._parser.our_state is h11.DONE and self._parser.their_state is h11.DONE:
                    self._parser.start_next_cycle()
                return head

    def _expect_a_response(self) -> None:
        """h11 reads a response only to a request it sent: tell it one was (the bytes went
        out raw)."""
        if self._parser.our_state is h11.IDLE:
            self._parser.send(h11.Request(method="GET", target="/", headers=[("Host", HOST)]))
            self._parser.send(h11.EndOfMessage())

    def is_open(self) -> bool:
        """Whether the server has not closed the connection (nothing is read from it)."""
        if self.closed_by_server:
            return False
        readable, _, _ = select.select([self.sock], [], [], 0)
        if not readable:
            return True
        try:
            peeked = self.sock.recv(1, socket.MSG_PEEK)
        except ConnectionResetError:
            return False
        return peeked != b""

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> SlowClient:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def _read_for(self, seconds: float) -> None:
        readable, _, _ = select.select([self.sock], [], [], max(0.0, seconds))
        if not readable:
            return
        try:
            data = self.sock.recv(65536)
        except ConnectionResetError:
            data = b""
        if not data:
            self.closed_by_server = True
            self._parser.receive_data(b"")
            return
        self.received += data
        self._parser.receive_data(data)
