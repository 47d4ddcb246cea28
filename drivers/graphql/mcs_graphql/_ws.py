"""Subscriptions over WebSocket with gql's websockets transport.

gql negotiates the sub-protocol: ``graphql-transport-ws`` (the graphql-ws library's) or
Apollo's older ``graphql-ws``. A stream is bounded four ways: ``max_events`` items, a time
``window`` (seconds), the call's deadline, and ``max_bytes`` per message (the websockets
library closes the connection on a larger one). It ends quietly at the count or the time
bound; the socket is closed in every case.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any

from gql import Client, GraphQLRequest
from gql.transport.exceptions import TransportError, TransportQueryError
from gql.transport.websockets import WebsocketsTransport

from mcs.errors import ExecutionError, ToolTimeoutError
from mcs.redaction import excerpt, scrubbed_logs
from mcs_graphql._results import shaped

_CONNECT = 10.0


async def subscribe(
    url: str, request: GraphQLRequest, *, headers: Mapping[str, str], max_events: int, window: float,
    deadline: float | None, max_bytes: int, tool: str, secrets: Sequence[str] = (),
) -> AsyncGenerator[Any, None]:
    """Yield each event's ``data`` (or ``{"data", "errors"}``) until a bound is reached;
    ``secrets`` (the credentials sent, :func:`mcs.redaction.credential_forms`) are scrubbed
    from the server's errors and from the libraries' logs."""
    with scrubbed_logs(lambda: secrets):  # websockets logs the request headers at DEBUG
        end = time.monotonic() + window
        if deadline is not None:
            end = min(end, deadline)
        connect = max(0.001, min(_CONNECT, end - time.monotonic()))
        transport = WebsocketsTransport(
            url=url, headers=dict(headers), connect_timeout=connect, ack_timeout=connect, close_timeout=1,
            connect_args={"max_size": max_bytes},
        )
        client: Any = Client(transport=transport, execute_timeout=None)  # gql's connect/close are untyped
        try:
            session = await client.connect_async()
        except (TransportError, OSError, TimeoutError) as exc:
            await _quietly_close(client)
            if isinstance(exc, TimeoutError):
                raise ToolTimeoutError(f"{tool}: the subscription endpoint did not accept the connection in time.", tool=tool) from None
            raise ExecutionError(
                f"{tool}: could not open the subscription ({type(exc).__name__}: {excerpt(str(exc), secrets, 200)}).",
                tool=tool,
            ) from None
        events = session.subscribe(request, get_execution_result=True)
        count = 0
        try:
            while count < max_events:
                left = end - time.monotonic()
                if left <= 0:
                    break
                try:
                    async with asyncio.timeout(left):
                        result = await anext(events)
                except (StopAsyncIteration, TimeoutError):
                    break
                except TransportQueryError as exc:
                    yield shaped(exc.data, list(exc.errors or []), tool, secrets)
                    break
                except TransportError as exc:
                    raise ExecutionError(
                        f"{tool}: the subscription failed ({excerpt(str(exc), secrets, 200)}).", tool=tool,
                    ) from None
                except Exception as exc:  # the websockets library's own errors: a closed or oversized stream
                    raise ExecutionError(
                        f"{tool}: the subscription stream broke ({type(exc).__name__}); a message may have passed "
                        f"{max_bytes} bytes.", tool=tool,
                    ) from None
                count += 1
                yield shaped(result.data, None, tool, secrets)  # data nested too deeply is an error
        finally:
            await events.aclose()
            await _quietly_close(client)


async def _quietly_close(client: Any) -> None:
    with contextlib.suppress(Exception):  # the connection may already be gone; nothing more to release
        await client.close_async()
