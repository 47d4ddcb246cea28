"""Real servers on loopback for the tests: free ports, subprocess servers and their clean stop,
small HTTP services on a thread."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import closing, contextmanager, suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from mcs.demo import serve_on_loopback

if TYPE_CHECKING:
    import uvicorn

HOST = "127.0.0.1"


async def asgi_body(receive: Any) -> bytes:
    """The whole body of an ASGI HTTP request, read from its ``receive`` messages."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            return body


def free_port() -> int:
    """A loopback port nothing listens on (free when asked; a server should take it soon)."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def loopback_socket() -> socket.socket:
    """A TCP socket bound to a free loopback port, for a server to take over (no race for the port)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((HOST, 0))
    return sock


def wait_for_port(port: int, process: subprocess.Popen[Any] | None = None, timeout: float = 20.0) -> None:
    """Return once something accepts connections on ``port``.

    Raises RuntimeError as soon as ``process`` (the server meant to listen) has exited, and
    TimeoutError when nothing listens within ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the test server exited with {process.returncode}")
        try:
            with socket.create_connection((HOST, port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listens on {HOST}:{port}")


def stop(process: subprocess.Popen[Any], timeout: float = 10) -> None:
    """Terminate ``process`` (kill it when it does not end within ``timeout``); close its pipes."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    for pipe in (process.stdin, process.stdout, process.stderr):
        if pipe is not None:
            pipe.close()


def start_server(
    argv: Sequence[str | Path],
    port: int,
    *,
    timeout: float = 20.0,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    stderr: int | IO[Any] | None = subprocess.DEVNULL,
) -> subprocess.Popen[bytes]:
    """Start ``argv`` (a server that will listen on ``port``) and wait until it does.

    The caller stops it with ``stop``; if it never listens it is stopped here and the error raised.
    """
    process = subprocess.Popen(
        [str(arg) for arg in argv], env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=stderr
    )
    try:
        wait_for_port(port, process, timeout)
    except BaseException:
        stop(process)
        raise
    return process


@contextmanager
def server_process(argv: Sequence[str | Path], port: int, **options: Any) -> Iterator[subprocess.Popen[bytes]]:
    """``start_server`` (same options) as a context manager: the server runs inside the block, stopped after."""
    process = start_server(argv, port, **options)
    try:
        yield process
    finally:
        stop(process)


@contextmanager
def silent_peer() -> Iterator[int]:
    """A loopback TCP peer that accepts every connection and never sends a byte (a server
    that hangs); yields its port. Its connections are closed when the block ends."""
    listener = socket.create_server((HOST, 0))
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                held.append(listener.accept()[0])
            except OSError:  # the listener was shut down: the block ended
                return

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        with suppress(OSError):
            listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept() (close alone does not)
        listener.close()
        thread.join(5)
        for connection in held:
            connection.close()


class JSONHandler(BaseHTTPRequestHandler):
    """A request handler that answers JSON and does not log each request to stderr."""

    def send_json(self, body: Any, status: int = 200) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


class QuietHTTPServer(ThreadingHTTPServer):
    """A ``ThreadingHTTPServer`` that does not print a client's broken pipe or reset: a
    client that gave up (a timeout test) or was refused before reading is expected."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


@contextmanager
def serving_http(
    handler: type[BaseHTTPRequestHandler],
    *,
    server_class: type[ThreadingHTTPServer] = QuietHTTPServer,
    poll_interval: float = 0.5,
) -> Iterator[str]:
    """Serve ``handler`` on a free loopback port from a thread; yields the base URL (no slash)."""
    with serve_on_loopback(handler, server_class=server_class, poll_interval=poll_interval) as url:
        yield url


@contextmanager
def running_uvicorn(
    config: uvicorn.Config, sock: socket.socket | None = None, *, timeout: float = 20.0
) -> Iterator[uvicorn.Server]:
    """Run uvicorn on a thread (on ``sock`` when given, else where ``config`` binds) inside the block.

    Yields once the server has started; raises RuntimeError when it does not within ``timeout``.
    """
    import uvicorn

    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]} if sock else {}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + timeout
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the test server (uvicorn) did not start")
            time.sleep(0.01)
        yield server
    finally:
        server.should_exit = True
        thread.join(10)


@contextmanager
def uvicorn_on_loopback(config: uvicorn.Config, *, timeout: float = 20.0) -> Iterator[str]:
    """``running_uvicorn`` on a free loopback port; yields the base URL (no slash)."""
    with closing(loopback_socket()) as sock, running_uvicorn(config, sock, timeout=timeout):
        yield f"http://{HOST}:{sock.getsockname()[1]}"
