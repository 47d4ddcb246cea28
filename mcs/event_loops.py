"""One resource per running event loop, for drivers whose async clients belong to a loop.

An httpx ``AsyncClient``, a gql session or a gRPC aio channel can only be used on the
event loop that opened it, so a driver that serves async calls keeps one per loop.
:class:`PerLoop` keeps them so that a process which runs many loops (``asyncio.run``
once per request, a common way to call async code from sync code) holds only the
resources of loops that are still running:

* a resource is made on first use in a loop and registered with :meth:`PerLoop.add`;
* that loop's shutdown (``loop.shutdown_asyncgens()``, which ``asyncio.run`` and
  ``asyncio.Runner`` run) closes it on its own loop and forgets it;
* a loop closed without that shutdown is forgotten the next time a resource is added
  (its resource cannot be closed any more: its loop is gone, and its sockets with it);
* :meth:`PerLoop.release` hands every resource back for the driver's ``close`` or
  ``aclose``, and :func:`close_outside_loops` is the synchronous ``close``.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Generic, TypeVar

from mcs.errors import ConfigurationError

if TYPE_CHECKING:
    import asyncio

T = TypeVar("T")

_INSIDE_A_LOOP = "call `await driver.aclose()` to close a driver inside an event loop"


class PerLoop(Generic[T]):
    """Resources keyed by the running event loop; ``aclose(resource)`` closes one on its loop.

    Loops on several threads may share one: a loop's entry is only written from that
    loop's thread, :meth:`release` swaps the whole table at once, and each method reads
    the table once, so a release from another thread never makes a loop lose or close
    another loop's resource.
    """

    __slots__ = ("_aclose", "_entries")

    def __init__(self, aclose: Callable[[T], Awaitable[object]]) -> None:
        self._aclose = aclose
        # id(loop) -> (the loop, weakly; the resource; what closes it at the loop's shutdown)
        self._entries: dict[int, tuple[weakref.ref[asyncio.AbstractEventLoop], T, AsyncGenerator[None, None]]] = {}

    def current(self) -> T | None:
        """The running loop's resource, or ``None`` when it has none yet (call from a coroutine)."""
        loop = _running_loop()
        entry = self._entries.get(id(loop))
        if entry is None or entry[0]() is not loop:  # none, or a dead loop's whose id was reused
            return None
        return entry[1]

    async def add(self, resource: T) -> T:
        """Keep ``resource`` as the running loop's, to be closed by that loop's shutdown.

        A resource the loop already had is replaced, not closed: the caller closes it if
        it still can (it found it unusable)."""
        loop = _running_loop()
        self._forget_stopped_loops()
        closer = self._close_at_shutdown(id(loop), resource)
        await anext(closer)  # suspended from here on, until the loop's shutdown finalises it
        self._entries[id(loop)] = (weakref.ref(loop), resource, closer)
        return resource

    async def aclose_current(self) -> None:
        """Close the running loop's resource now, on this loop, and forget it (nothing when it has none)."""
        loop = _running_loop()
        entries = self._entries  # one dict throughout: another thread's release() swaps it
        entry = entries.get(id(loop))
        if entry is None or entry[0]() is not loop:
            return
        entries.pop(id(loop), None)
        await entry[2].aclose()  # the closer's ``finally`` closes the resource

    def release(self) -> list[T]:
        """Forget every resource and return them, for the caller to close (see :func:`close_outside_loops`)."""
        entries, self._entries = self._entries, {}
        return [resource for _, resource, _ in entries.values()]

    def __len__(self) -> int:
        return len(self._entries)

    async def _close_at_shutdown(self, key: int, resource: T) -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            entries = self._entries  # one dict throughout: another thread's release() swaps it
            entry = entries.get(key)
            if entry is not None and entry[1] is resource:
                entries.pop(key, None)
            await self._aclose(resource)

    def _forget_stopped_loops(self) -> None:
        for key, (ref, _, _) in list(self._entries.items()):
            loop = ref()
            if loop is None or loop.is_closed():
                self._entries.pop(key, None)


def _running_loop() -> asyncio.AbstractEventLoop:
    # Imported here, not at the top: a driver that holds a PerLoop costs no asyncio import
    # until async code runs (which has imported it already).
    import asyncio

    return asyncio.get_running_loop()


def close_outside_loops(resources: Iterable[T], aclose: Callable[[T], Awaitable[object]]) -> None:
    """Close released resources from synchronous code: each on a loop of its own, since
    the loop that opened it is gone (a resource still open on a running loop is closed
    by that loop's shutdown). Errors are suppressed: the sockets went with their loop.

    Raises :class:`~mcs.errors.ConfigurationError` when called inside a running loop,
    where the driver's ``aclose`` must be awaited instead."""
    import asyncio

    for resource in resources:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            with contextlib.suppress(Exception):

                async def closing(resource: T = resource) -> None:
                    await aclose(resource)

                asyncio.run(closing())
        else:
            raise ConfigurationError(_INSIDE_A_LOOP)


__all__ = ["PerLoop", "close_outside_loops"]
