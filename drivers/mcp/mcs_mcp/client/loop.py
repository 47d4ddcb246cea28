"""The event loop that synchronous callers share, driven by whichever thread needs it.

MCP sessions are anyio objects bound to the event loop that opened them. Async callers
get a session on their own running loop (no thread hop). Synchronous callers share one
private loop that has no thread of its own: the calling thread runs it for the length of
its call (``run_until_complete``), so a sync call costs no thread switch either. Between
calls the loop simply waits; the sessions' streams buffer what arrives.

When several threads call at once, one drives the loop and the others' coroutines run on
it too; a thread whose coroutine is still pending when the driver returns takes over.
A sync call made from inside a running event loop (where this thread cannot run a second
loop) is driven from a helper thread.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_POLL = 0.002  # seconds a waiting thread sleeps before trying to drive the loop itself


def in_running_loop() -> bool:
    """True when this thread is running an event loop (cheap: no exception on the common path)."""
    return asyncio.events._get_running_loop() is not None


async def _bounded(coro: Coroutine[Any, Any, T], timeout: float | None) -> T:
    if timeout is None:
        return await coro
    try:
        async with asyncio.timeout(timeout):
            return await coro
    except TimeoutError:
        raise TimeoutError(f"no answer within {timeout:g} s") from None


class DrivenLoop:
    """A private event loop run by its callers' threads (see the module docstring)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._lock = threading.Lock()
        self._helpers: concurrent.futures.ThreadPoolExecutor | None = None

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on this loop from synchronous code and return its result.

        Raises:
            TimeoutError: ``timeout`` seconds passed (the coroutine is cancelled).
        """
        work = coro if timeout is None else _bounded(coro, timeout)
        if in_running_loop():
            if self._helpers is None:
                self._helpers = concurrent.futures.ThreadPoolExecutor(4, thread_name_prefix="mcs-mcp-sync")
            return self._helpers.submit(self._drive, work).result()
        return self._drive(work)

    async def _then_stop(self, work: Coroutine[Any, Any, T]) -> T:
        try:
            return await work
        finally:
            self.loop.stop()

    def _run_here(self, work: Coroutine[Any, Any, T]) -> T:
        """``run_until_complete(work)``, one loop iteration shorter: the coroutine stops the
        loop as it ends, instead of a done-callback doing it one iteration later. The
        sessions' own tasks still run whenever the loop runs; what they have left when
        this call ends runs at the start of the next one."""
        task = self.loop.create_task(self._then_stop(work))
        while not task.done():  # a stop requested by anything else does not end this call
            self.loop.run_forever()
        return task.result()

    def _drive(self, work: Coroutine[Any, Any, T]) -> T:
        if self._lock.acquire(blocking=False):
            try:
                return self._run_here(work)
            finally:
                self._lock.release()
        future = asyncio.run_coroutine_threadsafe(work, self.loop)
        while True:
            done, _ = concurrent.futures.wait([future], timeout=_POLL)
            if done:
                return future.result()
            if self._lock.acquire(blocking=False):
                try:
                    if not future.done():
                        self.loop.run_until_complete(asyncio.wrap_future(future, loop=self.loop))
                finally:
                    self._lock.release()
                return future.result()


_lock = threading.Lock()
_shared: DrivenLoop | None = None


def sync_loop() -> DrivenLoop:
    """The process-wide loop for synchronous MCP calls."""
    global _shared
    shared = _shared
    if shared is not None and not shared.loop.is_closed():
        return shared
    with _lock:
        if _shared is None or _shared.loop.is_closed():
            _shared = DrivenLoop()
        return _shared


@atexit.register
def _shutdown() -> None:
    """At exit, end sessions nobody closed (stdio servers stop cleanly, no pending-task noise)."""
    shared = _shared
    if shared is None or shared.loop.is_closed() or shared.loop.is_running():
        return
    if not shared._lock.acquire(timeout=1):
        return
    try:
        tasks = asyncio.all_tasks(shared.loop)
        for task in tasks:
            task.cancel()
        with contextlib.suppress(Exception):
            if tasks:
                shared.loop.run_until_complete(asyncio.wait(tasks, timeout=5))
            shared.loop.close()
    finally:
        shared._lock.release()
