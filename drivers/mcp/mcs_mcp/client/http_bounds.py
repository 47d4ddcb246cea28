"""HTTP clients for MCP servers that bound what one message may hold.

Over streamable HTTP the SDK reads a JSON response whole (``aread()``), and the legacy
HTTP+SSE transport reads the body of every POST it makes the same way: a hostile or broken
server could send gigabytes and the client held them all while the waiting call sat until
its deadline. :func:`bound_messages` installs a response hook on the ``httpx2`` client the
bridge builds, so every response body is counted as it arrives, per chunk, beneath the SDK
(whose parsing stays its own):

* a body that is not an event stream is one message: a ``Content-Length`` over
  ``max_message_bytes`` is refused before any of the body is read, and so is a body (chunked,
  or without a length) once more than ``max_message_bytes`` have arrived;
* an event stream (a successful ``text/event-stream`` answer to a request that asked for
  one) carries many messages: each event (its lines as sent, up to the blank line that ends
  it) may hold up to ``max_message_bytes``, however long the stream. Any other body is read
  whole by the SDK (a redirect's, an error's, the legacy transport's POST answer), so it is one
  message whatever its ``Content-Type`` says;
* a compressed body (``Content-Encoding``) is counted as it is decoded, by ``httpx2``'s own
  decoders, so a small body that inflates past the bound is refused too.

On refusal the body is not read further, the connection is closed, and ``on_refused`` is
told why in one line naming the server, the size and ``max_message_bytes`` (the bridge
turns that into the error every waiting call gets at once), as
:func:`~mcs_mcp.client.stdio.bounded_stdio_client` does over stdio.
"""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator, Awaitable, Callable

import httpx2

from mcs_mcp.client.stdio import too_long

logger = logging.getLogger(__name__)

#: Where an SSE event ends: a line terminator (CRLF, LF or CR) right after another.
_EVENT_END = re.compile(rb"\n\n|\n\r|\r\r")


class MessageTooLong(httpx2.ReadError):
    """A response held a message longer than ``max_message_bytes``; it was not read further."""


def bound_messages(
    client: httpx2.AsyncClient, *, max_message_bytes: int, server: str,
    on_refused: Callable[[str], None] | None = None,
) -> httpx2.AsyncClient:
    """Make every response ``client`` receives refuse a message longer than ``max_message_bytes``
    (see the module docstring); ``server`` names the server in the reason. Returns ``client``."""

    def refuse(size: int, how: str) -> MessageTooLong:
        reason = too_long(server, max_message_bytes, f"{size} {how}")
        logger.warning("%s", reason)
        if on_refused is not None:
            on_refused(reason)
        return MessageTooLong(reason)

    async def hook(response: httpx2.Response) -> None:
        events = _read_as_events(response)
        encoded = any(v.strip().lower() != "identity"
                      for v in response.headers.get_list("content-encoding", split_commas=True))
        if not events and not encoded:
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > max_message_bytes:
                raise refuse(int(declared), "announced by Content-Length")
        stream = response.stream
        assert isinstance(stream, httpx2.AsyncByteStream)  # an AsyncClient's response
        source: AsyncIterable[bytes] = stream
        close: Callable[[], Awaitable[None]] = stream.aclose
        if encoded:
            # Decode here with httpx2's own decoders, so the bound counts what the SDK would hold.
            raw = httpx2.Response(response.status_code, headers=response.headers, stream=stream,
                                  request=response.request)
            source, close = raw.aiter_bytes(), raw.aclose
            del response.headers["content-encoding"]
            response.headers.pop("content-length", None)
        response.stream = _BoundedStream(source, close, max_message_bytes, events, refuse)

    client.event_hooks["response"].append(hook)
    return client


def _read_as_events(response: httpx2.Response) -> bool:
    """Whether the SDK reads ``response`` as an event stream (per event) rather than whole.

    Only a successful answer to a request that asked for events is: the body of a redirect
    (drained when followed), of an error, or of the legacy transport's POST is read whole
    whatever its ``Content-Type`` says, and JSON may hold blank lines.
    """
    return (response.is_success
            and "text/event-stream" in response.request.headers.get("accept", "").lower()
            and response.headers.get("content-type", "").partition(";")[0].strip().lower() == "text/event-stream")


class _BoundedStream(httpx2.AsyncByteStream):
    """``source``'s chunks, passed on as they come, counted per message (see the module docstring)."""

    def __init__(self, source: AsyncIterable[bytes], close: Callable[[], Awaitable[None]], bound: int,
                 events: bool, refuse: Callable[[int, str], MessageTooLong]) -> None:
        self._source = source
        self._close = close
        self._bound = bound
        self._events = events
        self._refuse = refuse

    async def __aiter__(self) -> AsyncIterator[bytes]:
        bound = self._bound
        held = 0  # bytes of the current message (of the current event, in an event stream)
        last = 0  # the previous chunk's last byte, for an event end split between two chunks
        source = aiter(self._source)
        try:
            async for chunk in source:
                if not chunk:
                    continue
                if not self._events:
                    held += len(chunk)
                    if held > bound:
                        raise self._refuse(held, "so far")
                else:
                    if (last == 10 and chunk[0] in (10, 13)) or (last == 13 and chunk[0] == 13):
                        held = 0
                    if held + len(chunk) <= bound:  # no event here can pass the bound: find where the last one ends
                        end = max(chunk.rfind(b"\n\n"), chunk.rfind(b"\n\r"), chunk.rfind(b"\r\r"))
                        held = held + len(chunk) if end < 0 else len(chunk) - end - 2
                    else:
                        start = 0
                        for match in _EVENT_END.finditer(chunk):
                            if held + match.start() - start > bound:
                                raise self._refuse(held + match.start() - start, "in one event")
                            held, start = 0, match.end()
                        held += len(chunk) - start
                        if held > bound:
                            raise self._refuse(held, "in one event so far")
                    last = chunk[-1]
                yield chunk
        finally:
            if isinstance(source, AsyncGenerator):  # the decoding one: closed now, not when collected
                await source.aclose()

    async def aclose(self) -> None:
        await self._close()


def bounded_client_factory(
    *, max_message_bytes: int, server: str, on_refused: Callable[[str], None] | None = None,
) -> Callable[..., httpx2.AsyncClient]:
    """An SDK ``httpx_client_factory`` (as ``sse_client`` takes) whose clients are bounded
    by :func:`bound_messages`."""
    from mcp.shared._httpx_utils import create_mcp_http_client

    def factory(headers: dict[str, str] | None = None, timeout: httpx2.Timeout | None = None,
                auth: httpx2.Auth | None = None) -> httpx2.AsyncClient:
        return bound_messages(create_mcp_http_client(headers=headers, timeout=timeout, auth=auth),
                              max_message_bytes=max_message_bytes, server=server, on_refused=on_refused)

    return factory


__all__ = ["MessageTooLong", "bound_messages", "bounded_client_factory"]
