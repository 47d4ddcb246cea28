"""Change notifications from a served driver to its connected clients.

The server listens to the driver (:meth:`mcs.ToolDriver.add_change_listener`) and, for
every client connection it has seen, sends ``notifications/tools/list_changed``,
``.../prompts/list_changed`` or ``.../resources/list_changed``; a resource's new content
(``kind="resource"``) becomes ``notifications/resources/updated`` for the connections
that subscribed to its URI (``resources/subscribe``). Connections are held weakly: one
that ends is forgotten. Stateless HTTP has no connection to notify, so the server does
not advertise these capabilities there.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import weakref
from typing import Any

logger = logging.getLogger("mcs_mcp.serving")


def connection_of(ctx: Any) -> Any:
    """The SDK's per-client ``Connection`` behind a request (it outlives the request)."""
    return getattr(ctx.session, "_connection", None)


class Subscribers:
    """The connections a server has seen, what each subscribed to, and the send loop."""

    def __init__(self) -> None:
        self._connections: weakref.WeakSet[Any] = weakref.WeakSet()
        self._subscriptions: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()
        self._pending: set[asyncio.Future[None]] = set()

    def seen(self, ctx: Any) -> None:
        """Remember the connection of a request being handled (and the loop serving it)."""
        connection = connection_of(ctx)
        if connection is None:
            return
        with self._lock:
            self._connections.add(connection)
            self._loop = asyncio.get_running_loop()

    def subscribe(self, ctx: Any, uri: str) -> None:
        connection = connection_of(ctx)
        if connection is not None:
            with self._lock:
                self._subscriptions.setdefault(connection, set()).add(uri)

    def unsubscribe(self, ctx: Any, uri: str) -> None:
        connection = connection_of(ctx)
        if connection is not None:
            with self._lock:
                self._subscriptions.get(connection, set()).discard(uri)

    def subscribed(self, ctx: Any) -> set[str]:
        connection = connection_of(ctx)
        with self._lock:
            return set(self._subscriptions.get(connection, set())) if connection is not None else set()

    def on_change(self, kind: str, uri: str | None) -> None:
        """The driver's change listener: callable from any thread."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return  # no client has connected yet: nobody to tell
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            task = loop.create_task(self.broadcast(kind, uri))
            self._pending.add(task)
            task.add_done_callback(self._pending.discard)
        else:
            future = asyncio.run_coroutine_threadsafe(self.broadcast(kind, uri), loop)
            future.add_done_callback(lambda f: f.exception() if not f.cancelled() else None)

    async def broadcast(self, kind: str, uri: str | None) -> None:
        """Send the notification for one change to every connection it concerns."""
        with self._lock:
            if kind == "resource":
                targets = [c for c, uris in self._subscriptions.items() if uri in uris]
            else:
                targets = list(self._connections)
        for connection in targets:
            try:
                if kind == "tools":
                    await connection.send_tool_list_changed()
                elif kind == "prompts":
                    await connection.send_prompt_list_changed()
                elif kind == "resources":
                    await connection.send_resource_list_changed()
                elif kind == "resource" and uri is not None:
                    await connection.send_resource_updated(uri)
            except Exception as exc:  # a client that went away is forgotten
                logger.debug("change notification not delivered: %s", exc)
                with self._lock:
                    self._connections.discard(connection)
                    self._subscriptions.pop(connection, None)
