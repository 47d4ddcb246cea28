"""A TCP proxy on loopback between a client and a broker that can stop forwarding on command.

``stall()`` stops reading what the client sends (the broker's replies still flow), so once
the socket buffers are full the client's writes block, exactly as on a link that stopped
moving; ``resume()`` forwards everything that waited. ``rewrite(old, new)`` replaces bytes the broker
sends before the client reads them (a hostile broker on the same wire). The proxy runs its own event loop on a
thread. Its listening socket asks for a small receive buffer, so a stall backs up into the
client after a few kilobytes rather than megabytes.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

HOST = "127.0.0.1"
_SMALL_BUFFER = 4096


class StallingProxy:
    """Forwards 127.0.0.1:``port`` to the broker at 127.0.0.1:``target_port``."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self._loop = asyncio.new_event_loop()
        self._flowing: asyncio.Event | None = None
        self._server: asyncio.Server | None = None
        self._writers: list[asyncio.StreamWriter] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._rewrites: list[tuple[bytes, bytes]] = []
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, _SMALL_BUFFER)  # accepted sockets inherit it
        listener.bind((HOST, 0))
        self.port: int = listener.getsockname()[1]
        self._thread = threading.Thread(target=self._run, args=(listener,), name="stalling-proxy", daemon=True)
        started = threading.Event()
        self._started = started
        self._thread.start()
        assert started.wait(10), "the proxy did not start"

    def _run(self, listener: socket.socket) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._serve(listener))
        self._loop.run_forever()
        self._loop.close()

    async def _serve(self, listener: socket.socket) -> None:
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._server = await asyncio.start_server(self._accept, sock=listener, limit=_SMALL_BUFFER)
        self._started.set()

    def _accept(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        """Called as the connection is made, so that ``close()`` closes its socket even when it
        comes before the task that serves it has started (asyncio would leave it to the
        garbage collector)."""
        self._writers.append(client_writer)
        task = self._loop.create_task(self._connection(client_reader, client_writer))
        self._tasks.add(task)  # the loop keeps only a weak reference
        task.add_done_callback(self._tasks.discard)

    async def _connection(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        try:
            broker_reader, broker_writer = await asyncio.open_connection(HOST, self.target_port)
        except OSError:
            client_writer.close()
            return
        self._writers.append(broker_writer)
        await asyncio.gather(self._pump(client_reader, broker_writer, stallable=True),
                             self._pump(broker_reader, client_writer, stallable=False),
                             return_exceptions=True)

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, stallable: bool) -> None:
        assert self._flowing is not None
        try:
            while True:
                if stallable:
                    await self._flowing.wait()
                data = await reader.read(_SMALL_BUFFER)
                if not data:
                    break
                if stallable and not self._flowing.is_set():  # stalled while this read waited: hold it
                    await self._flowing.wait()
                if not stallable:
                    for old, new in self._rewrites:
                        data = data.replace(old, new)
                writer.write(data)
                await writer.drain()
        finally:
            with contextlib.suppress(OSError, RuntimeError):
                writer.close()

    def stall(self) -> None:
        """Stop forwarding client -> broker bytes (they wait in the socket buffers)."""
        assert self._flowing is not None
        self._loop.call_soon_threadsafe(self._flowing.clear)

    def resume(self) -> None:
        """Forward again, everything that waited first."""
        assert self._flowing is not None
        self._loop.call_soon_threadsafe(self._flowing.set)

    def rewrite(self, old: bytes, new: bytes) -> None:
        """From now on, replace ``old`` with ``new`` in what the broker sends the client (keep
        the length, so packet lengths stay right; a pattern split across reads is missed)."""
        assert len(old) == len(new)
        self._rewrites.append((old, new))

    def drop(self) -> None:
        """Close every connection made so far (the client sees its link die)."""
        async def shut() -> None:
            for writer in self._writers:
                writer.close()

        asyncio.run_coroutine_threadsafe(shut(), self._loop).result(10)

    def close(self) -> None:
        """Stop serving and end every connection and task on the proxy's loop before it
        closes (a transport left to the garbage collector warns in a later test)."""
        async def shut() -> None:
            if self._server is not None:
                self._server.close()
            # A connection accepted just before (a client reconnecting) is still being set up
            # by a task of asyncio's, which holds its socket: let it reach `_accept`, where its
            # writer is kept and closed below. Cancelled, it would leave the socket to the
            # garbage collector, which warns in whatever test runs then.
            for _ in range(10):
                await asyncio.sleep(0)
            for writer in self._writers:
                writer.close()
            tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for writer in self._writers:
                with contextlib.suppress(Exception):
                    await writer.wait_closed()

        if self._loop.is_running():
            asyncio.run_coroutine_threadsafe(shut(), self._loop).result(10)
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


@contextmanager
def stalling_proxy(target_port: int) -> Iterator[StallingProxy]:
    proxy = StallingProxy(target_port)
    try:
        yield proxy
    finally:
        proxy.close()
