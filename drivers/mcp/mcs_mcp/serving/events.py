"""Resumable streams for stateful streamable HTTP: an event store in memory.

With an event store (the SDK's ``EventStore`` interface; ``-s resumable=true`` uses
:class:`MemoryEventStore`), every SSE event the server sends gets an id, streams open
with a priming event (and the ``retry`` hint), and a client whose stream broke
reconnects with ``Last-Event-ID`` and receives what it missed, the call's result
included. A tool can let go of the connection during long work with
``await ctx.session.close_stream()``. Priming events and early closing need a client
of protocol version 2025-11-25 or later (older clients cannot resume).
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from typing import Any

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId


class MemoryEventStore(EventStore):
    """Keeps the last ``max_events`` events of every stream of this process, in memory.

    Events are lost when the process stops, and only this process can replay them: run
    one replica, or route a session's requests to the replica that holds it.
    """

    def __init__(self, max_events: int = 10_000) -> None:
        if max_events <= 0:
            raise ValueError("max_events must be positive")
        self.max_events = max_events
        self._events: OrderedDict[str, tuple[StreamId, Any]] = OrderedDict()
        self._ids = itertools.count(1)

    async def store_event(self, stream_id: StreamId, message: Any) -> EventId:
        event_id = f"{next(self._ids)}"
        self._events[event_id] = (stream_id, message)
        while len(self._events) > self.max_events:
            self._events.popitem(last=False)
        return event_id

    async def replay_events_after(self, last_event_id: EventId, send_callback: EventCallback) -> StreamId | None:
        found = self._events.get(last_event_id)
        if found is None:
            return None
        stream_id = found[0]
        after = False
        for event_id, (stream, message) in list(self._events.items()):
            if event_id == last_event_id:
                after = True
                continue
            if after and stream == stream_id and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream_id


class SessionEventStore(EventStore):
    """One session's view of an event store shared by every session of the server.

    The SDK's transports share the store, and stream ids are only request ids (``"2"``),
    so without this view a client reconnecting with another session's ``Last-Event-ID``
    received that session's messages (another user's tool results), and two sessions'
    streams with the same request id were replayed together. Here every stream and event
    id carries the session id: a ``Last-Event-ID`` of another session replays nothing.
    """

    def __init__(self, inner: EventStore, session_id: str) -> None:
        self._inner = inner
        self._events = f"{session_id}."
        self._streams = f"{session_id}/"

    async def store_event(self, stream_id: StreamId, message: Any) -> EventId:
        event_id = await self._inner.store_event(f"{self._streams}{stream_id}", message)
        return f"{self._events}{event_id}"

    async def replay_events_after(self, last_event_id: EventId, send_callback: EventCallback) -> StreamId | None:
        if not last_event_id.startswith(self._events):
            return None

        async def send(event: EventMessage) -> None:
            await send_callback(EventMessage(event.message, f"{self._events}{event.event_id}"))

        stream_id = await self._inner.replay_events_after(last_event_id.removeprefix(self._events), send)
        if stream_id is None or not str(stream_id).startswith(self._streams):
            return None
        return str(stream_id).removeprefix(self._streams)
