"""The event loop that synchronous callers share, driven by whichever thread needs it.

MCP sessions are anyio objects bound to the event loop that opened them. Async callers
get a session on their own running loop (no thread hop). Synchronous callers share one
private loop that has no thread of its own: the calling thread runs it for the length of
its call (``run_until_complete``), so a sync call costs no thread switch either. Between
calls the loop simply waits; the sessions' streams buffer what arrives.

The thread that drives the loop hands its coroutine to one long-lived worker task, which
awaits it and stops the loop as it ends: no Task per call, and the SDK's anyio cancel
scopes find the task state they made in earlier calls instead of building it again (about
1 % of a stdio round trip). The worker runs in a copy of the caller's context
(``contextvars``): a call from a different context, or after a call that changed the
worker's, gets a fresh worker in its own; so does a call after one that was cancelled.

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
import contextvars
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar, cast

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


class _Job:
    """One coroutine handed to the worker, and what became of it."""

    __slots__ = ("done", "error", "value", "work")

    def __init__(self, work: Coroutine[Any, Any, Any]) -> None:
        self.work = work
        self.done = False
        self.value: Any = None
        self.error: BaseException | None = None


class DrivenLoop:
    """A private event loop run by its callers' threads (see the module docstring)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._lock = threading.Lock()
        self._helpers: concurrent.futures.ThreadPoolExecutor | None = None
        self._worker: asyncio.Task[None] | None = None
        self._worker_context: contextvars.Context | None = None
        self._next_job: asyncio.Future[_Job] | None = None  # set while the worker waits for one

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

    async def _work(self, job: _Job) -> None:
        """The worker: run each job, stop the loop as it ends, wait for the next one.

        It ends after a job that was cancelled or left a cancellation pending (no later
        call inherits that state), when cancelled while it waits, and when it was replaced
        while running a job whose caller gave up (it then leaves the loop running).
        """
        task = asyncio.current_task()
        assert task is not None
        while True:
            try:
                job.value = await job.work
            except BaseException as exc:
                job.error = exc  # raised in the calling thread, as is
            job.done = True
            if self._worker is not task:
                return
            self.loop.stop()
            if isinstance(job.error, asyncio.CancelledError) or task.cancelling():
                self._worker = self._next_job = None
                return
            self._next_job = next_job = self.loop.create_future()
            job = await next_job

    def _run_here(self, work: Coroutine[Any, Any, T]) -> T:
        """``run_until_complete(work)``, shorter: the worker runs ``work`` and stops the
        loop as it ends (no Task per call, no done-callback one iteration later). The
        sessions' own tasks still run whenever the loop runs; what they have left when
        this call ends runs at the start of the next one."""
        job = _Job(work)
        waiting = self._next_job
        context = contextvars.copy_context()
        if waiting is not None and not waiting.done() and context == self._worker_context:
            self._next_job = None
            waiting.set_result(job)
        else:
            self._retire_worker()
            self._worker_context = context
            self._worker = self.loop.create_task(self._work(job), context=context)
        while not job.done:  # a stop requested by anything else does not end this call
            self.loop.run_forever()
        if job.error is not None:
            raise job.error
        return cast(T, job.value)

    def _retire_worker(self) -> asyncio.Task[None] | None:
        """Replace the worker: one waiting for a job is cancelled (it ends the next time the
        loop runs); one still running the job of a caller that gave up finishes it alone."""
        worker, waiting = self._worker, self._next_job
        self._worker = self._next_job = None
        if worker is None or worker.done():
            return None
        if waiting is not None and not waiting.done():
            worker.cancel()
        _retired.add(worker)  # the loop keeps only a weak reference until it ends
        worker.add_done_callback(_retired.discard)
        return worker

    def close(self) -> None:
        """End the worker and close the loop (for a loop of one's own: the shared one is
        closed at exit)."""
        with self._lock:
            worker = self._retire_worker()
            if worker is not None:
                self.loop.run_until_complete(asyncio.wait([worker], timeout=5))
            self.loop.close()

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


_retired: set[asyncio.Task[None]] = set()
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
