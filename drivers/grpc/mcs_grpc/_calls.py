"""The four kinds of gRPC call, sync (``grpc``) and async (``grpc.aio``), with bounded streams.

A server stream (and the answer stream of a bidi call) is read until it ends, or until one of
the bounds cuts it: ``max_messages``, ``max_bytes`` (serialized size), or the time window.
A cut stream ends with a :class:`Cut` item whose text says what stopped it; a collected
result carries it as ``"truncated"``. The call is cancelled whenever reading stops early.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
import grpc.aio
from google.protobuf.descriptor import MethodDescriptor

from mcs.errors import ToolCallError
from mcs.event_loops import PerLoop
from mcs.pipeline import Invocation
from mcs_grpc._channel import ChannelSettings, MetadataProvider
from mcs_grpc._errors import rpc_error
from mcs_grpc._messages import to_message

#: The argument that holds the list of messages of a client-streaming or bidi call.
MESSAGES = "messages"
#: The argument that holds a request whose JSON form is not an object (a well-known type).
REQUEST = "request"


@dataclass(frozen=True, slots=True)
class Method:
    """One RPC as the driver calls it."""

    tool: str
    path: str  # "/pkg.Service/Method"
    descriptor: MethodDescriptor
    request_cls: Any
    response_cls: Any
    idempotent: bool
    wrapped: bool = False  # the request is given under REQUEST (not an object in JSON)
    #: ``arguments -> request`` without ``json_format`` for a flat request, or ``None``
    #: (``_messages.direct_builder``); it declines what it does not take as it is.
    direct_build: Callable[[Any], Any] | None = None
    #: ``response -> JSON`` without ``json_format`` for a flat response, or ``None``.
    direct_json: Callable[[Any], Any] | None = None

    @property
    def name(self) -> str:
        return self.path[1:]

    @property
    def client_streaming(self) -> bool:
        return bool(self.descriptor.client_streaming)

    @property
    def server_streaming(self) -> bool:
        return bool(self.descriptor.server_streaming)

    def build(self, arguments: dict[str, Any], pool: Any) -> Any:
        """The request message (or the list of them for a client stream)."""
        if self.client_streaming:
            return [self._one(item, pool) for item in arguments.get(MESSAGES, ())]
        return self._one(arguments, pool)

    def _one(self, value: Any, pool: Any) -> Any:
        if self.wrapped:
            value = value.get(REQUEST) if isinstance(value, dict) else value
        elif self.direct_build is not None:
            message = self.direct_build(value)
            if message is not None:
                return message
        return to_message(value, self.request_cls, pool, self.tool)

    def multicallable(self, channel: Any) -> Any:
        kinds = {
            (False, False): channel.unary_unary, (False, True): channel.unary_stream,
            (True, False): channel.stream_unary, (True, True): channel.stream_stream,
        }
        factory = kinds[(self.client_streaming, self.server_streaming)]
        return factory(
            self.path, request_serializer=self.request_cls.SerializeToString,
            response_deserializer=self.response_cls.FromString, _registered_method=True,
        )


@dataclass(frozen=True, slots=True)
class StreamBounds:
    max_messages: int = 100
    max_bytes: int = 1024 * 1024
    window: float | None = None

    def timeout(self, remaining: float | None) -> tuple[float | None, bool]:
        """The gRPC timeout of a stream, and whether it is the time window (not the deadline)."""
        if self.window is not None and (remaining is None or self.window < remaining):
            return self.window, True
        return remaining, False


@dataclass(frozen=True, slots=True)
class Cut:
    """The last item of a stream that a bound stopped."""

    text: str


def collected(items: Sequence[Any]) -> dict[str, Any]:
    """``{"messages": [...]}``, plus ``"truncated"`` when the stream was cut."""
    if items and isinstance(items[-1], Cut):
        return {MESSAGES: list(items[:-1]), "truncated": items[-1].text}
    return {MESSAGES: list(items)}


class _Budget:
    """What one stream may still return: each message becomes its JSON item, and a :class:`Cut`
    follows the item that reaches ``max_messages`` or replaces the one over ``max_bytes``."""

    def __init__(self, bounds: StreamBounds, to_json: Callable[[Any], Any]) -> None:
        self.bounds = bounds
        self.to_json = to_json
        self.count = 0
        self.size = 0

    def items(self, message: Any) -> tuple[Any, ...]:
        """The items to yield for ``message``; the stream stops when the last one is a Cut."""
        self.size += message.ByteSize()
        if self.size > self.bounds.max_bytes:
            return (Cut(f"[truncated: stopped after {self.count} messages, at the byte limit of "
                        f"{self.bounds.max_bytes} (max_stream_bytes); the stream holds more]"),)
        item = self.to_json(message)
        self.count += 1
        if self.count >= self.bounds.max_messages:
            return item, Cut(f"[truncated: stopped after {self.bounds.max_messages} messages "
                             "(max_stream_messages); the stream may hold more]")
        return (item,)

    def out_of_time(self) -> Cut:
        return Cut(f"[truncated: stopped after {self.count} messages, at the end of the "
                   f"{self.bounds.window:g} s time window (stream_window); the stream may hold more]")


class _SyncConnection:
    """The driver's one sync channel and its callables; replaced after ``UNAVAILABLE`` so the
    next call connects afresh instead of waiting out the old channel's reconnect backoff."""

    def __init__(self, settings: ChannelSettings) -> None:
        self._settings = settings
        self._lock = threading.Lock()
        self._channel: grpc.Channel | None = None
        self._callables: dict[str, Any] = {}

    def callable(self, method: Method) -> Any:
        found = self._callables.get(method.path)
        if found is None:
            with self._lock:
                if self._channel is None:
                    self._channel = self._settings.open()
                    self._callables = {}
                found = self._callables.get(method.path)
                if found is None:
                    found = method.multicallable(self._channel)
                    self._callables[method.path] = found
        return found

    def channel(self) -> grpc.Channel:
        with self._lock:
            if self._channel is None:
                self._channel = self._settings.open()
                self._callables = {}
            return self._channel

    def reset(self) -> None:
        """Forget the channel; calls still running on it finish, then it is collected."""
        with self._lock:
            self._channel = None
            self._callables = {}

    def close(self) -> None:
        with self._lock:
            channel, self._channel, self._callables = self._channel, None, {}
        if channel is not None:
            channel.close()


@dataclass
class _AsyncConnection:
    """One ``grpc.aio`` channel for one event loop (aio channels belong to their loop)."""

    settings: ChannelSettings
    channel: grpc.aio.Channel
    callables: dict[str, Any] = field(default_factory=dict)
    retiring: set[asyncio.Task[None]] = field(default_factory=set)

    def callable(self, method: Method) -> Any:
        found = self.callables.get(method.path)
        if found is None:
            found = method.multicallable(self.channel)
            self.callables[method.path] = found
        return found

    def reset(self) -> None:
        old, self.channel, self.callables = self.channel, self.settings.open_async(), {}
        task = asyncio.get_running_loop().create_task(old.close(grace=5.0))
        self.retiring.add(task)
        task.add_done_callback(self.retiring.discard)

    async def close(self) -> None:
        await self.channel.close()
        for task in list(self.retiring):
            task.cancel()


async def _close_connection(connection: _AsyncConnection) -> None:
    await connection.close()


class Caller:
    """Runs calls for a driver: one sync channel, one aio channel per event loop."""

    def __init__(
        self, settings: ChannelSettings, *, pool: Any, metadata: MetadataProvider,
        bounds: StreamBounds, to_json: Callable[[Any], Any], wait_for_ready: bool,
    ) -> None:
        self.settings = settings
        self.pool = pool
        self.metadata = metadata
        self.bounds = bounds
        self.to_json = to_json
        # Only passed when set: gRPC takes a slower path for any explicit value.
        self.wait_for_ready = True if wait_for_ready else None
        self.sync = _SyncConnection(settings)
        # one aio channel per event loop, closed by that loop's shutdown
        self._async: PerLoop[_AsyncConnection] = PerLoop(_close_connection)

    # ------------------------------------------------------------------ errors

    def _failed(self, error: grpc.RpcError, method: Method, invocation: Invocation,
                received: int | None = None, connection: Any = None) -> ToolCallError:
        mapped = rpc_error(
            error, tool=invocation.tool.name, method=method.name, idempotent=method.idempotent,
            extra=None if received is None else {"received_messages": received}, secrets=self.metadata.secrets(),
        )
        if mapped.details.get("grpc_code") == "UNAVAILABLE" and connection is not None:
            connection.reset()
        return mapped

    # ------------------------------------------------------------------ sync

    def call(self, method: Method, invocation: Invocation) -> Any:
        """The result of one call: the response as JSON, or the collected stream."""
        if method.server_streaming:
            return collected(list(self.stream(method, invocation)))
        request = method.build(invocation.arguments, self.pool)
        function = self.sync.callable(method)
        try:
            response = function(
                iter(request) if method.client_streaming else request,
                timeout=invocation.remaining(), metadata=self.metadata.current(),
                wait_for_ready=self.wait_for_ready,
            )
        except grpc.RpcError as error:
            raise self._failed(error, method, invocation, connection=self.sync) from None
        return (method.direct_json or self.to_json)(response)

    def stream(self, method: Method, invocation: Invocation) -> Iterator[Any]:
        """The messages of a server stream as JSON, ending with a :class:`Cut` when cut."""
        request = method.build(invocation.arguments, self.pool)
        timeout, windowed = self.bounds.timeout(invocation.remaining())
        call = self.sync.callable(method)(
            iter(request) if method.client_streaming else request,
            timeout=timeout, metadata=self.metadata.current(), wait_for_ready=self.wait_for_ready,
        )
        budget = _Budget(self.bounds, method.direct_json or self.to_json)
        try:
            for message in call:
                items = budget.items(message)
                yield from items
                if isinstance(items[-1], Cut):
                    return
        except grpc.RpcError as error:
            if windowed and error.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                yield budget.out_of_time()
                return
            raise self._failed(error, method, invocation, budget.count, connection=self.sync) from None
        finally:
            call.cancel()

    # ------------------------------------------------------------------ async

    async def _connection(self) -> _AsyncConnection:
        connection = self._async.current()
        if connection is None:
            connection = await self._async.add(_AsyncConnection(self.settings, self.settings.open_async()))
        return connection

    async def _metadata(self) -> Any:
        if self.metadata.is_static:
            return self.metadata.current()
        return await asyncio.to_thread(self.metadata.current)

    async def acall(self, method: Method, invocation: Invocation) -> Any:
        if method.server_streaming:
            return collected([item async for item in self.astream(method, invocation)])
        request = method.build(invocation.arguments, self.pool)
        connection = await self._connection()
        metadata = await self._metadata()
        try:
            response = await connection.callable(method)(
                _aiter(request) if method.client_streaming else request,
                timeout=invocation.remaining(), metadata=metadata, wait_for_ready=self.wait_for_ready,
            )
        except grpc.RpcError as error:
            raise self._failed(error, method, invocation, connection=connection) from None
        return (method.direct_json or self.to_json)(response)

    async def astream(self, method: Method, invocation: Invocation) -> AsyncIterator[Any]:
        request = method.build(invocation.arguments, self.pool)
        connection = await self._connection()
        metadata = await self._metadata()
        timeout, windowed = self.bounds.timeout(invocation.remaining())
        call = connection.callable(method)(
            _aiter(request) if method.client_streaming else request,
            timeout=timeout, metadata=metadata, wait_for_ready=self.wait_for_ready,
        )
        budget = _Budget(self.bounds, method.direct_json or self.to_json)
        try:
            async for message in call:
                items = budget.items(message)
                for item in items:
                    yield item
                if isinstance(items[-1], Cut):
                    return
        except grpc.RpcError as error:
            if windowed and error.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                yield budget.out_of_time()
                return
            raise self._failed(error, method, invocation, budget.count, connection=connection) from None
        finally:
            call.cancel()

    # ------------------------------------------------------------------ closing

    def close(self) -> None:
        """Close the sync channel; an async one closes with its event loop (or :meth:`aclose`)."""
        self.sync.close()
        self._async.release()

    async def aclose(self) -> None:
        """Close the sync channel and the async channel of the running event loop."""
        self.sync.close()
        await self._async.aclose_current()


async def _aiter(items: Sequence[Any]) -> AsyncIterator[Any]:
    for item in items:
        yield item
