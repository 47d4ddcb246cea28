"""One background event loop thread that owns every MCP connection of the process.

MCP sessions are anyio objects bound to the loop and task that opened them. Keeping them
all on one daemon thread lets the sync API (``driver.call_tool``) and any caller's own
event loop share the same connections: both submit coroutines here and wait for them.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None


def background_loop() -> asyncio.AbstractEventLoop:
    """The shared loop, started on first use (a daemon thread named ``mcs-mcp-loop``)."""
    global _loop
    with _lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def run() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            threading.Thread(target=run, name="mcs-mcp-loop", daemon=True).start()
            ready.wait()
            _loop = loop
        return _loop


def submit(coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
    """Schedule ``coro`` on the background loop; returns a thread-safe future."""
    return asyncio.run_coroutine_threadsafe(coro, background_loop())


def run(coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
    """Run ``coro`` on the background loop and wait (from a thread that is not that loop).

    Raises:
        TimeoutError: ``timeout`` seconds passed; the coroutine is cancelled.
    """
    loop = background_loop()
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        coro.close()
        raise RuntimeError("mcs_mcp: a blocking call was made from the MCP loop thread itself")
    future = asyncio.run_coroutine_threadsafe(coro, loop)
    done, _ = concurrent.futures.wait([future], timeout=timeout)
    if not done:
        future.cancel()
        raise TimeoutError(f"no answer within {timeout:g} s")
    return future.result()


async def arun(coro: Coroutine[Any, Any, T]) -> T:
    """Await ``coro`` on the background loop from any other event loop (cancellation flows through)."""
    loop = background_loop()
    if asyncio.get_running_loop() is loop:
        return await coro
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, loop))
