"""The :class:`mcs.Session` a served tool gets: its MCP client, reached through the SDK.

``ctx.report_progress`` sends ``notifications/progress`` for the request's progress token
(nothing when the client sent none). ``ctx.sample``, ``ctx.elicit``, ``ctx.elicit_url`` and
``ctx.list_roots`` send ``sampling/createMessage``, ``elicitation/create`` and
``roots/list`` on the request's own stream and wait for the client's answer. They need a
session that can carry a server-to-client request: stdio, or streamable HTTP with
``-s stateful=true``. Stateless, or when the client did not declare the capability, they
raise :class:`~mcs.SessionUnavailableError` saying so.

``lifetime`` is the client's session as a whole (:class:`SessionLifetime`): a driver that
starts something meant to last only as long as its client (a periodic CAN send) registers
there what stops it, and it runs when the session ends: stdio closes, the HTTP session is
deleted or expires, the client goes away. Stateless serving has no session: ``None``.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata

from mcs.context import Elicited, Root, Sampled, Session
from mcs.errors import ExecutionError, SessionUnavailableError

logger = logging.getLogger("mcs_mcp.serving")

_CAPABILITY = {
    "sampling": types.ClientCapabilities(sampling=types.SamplingCapability()),
    "elicitation": types.ClientCapabilities(elicitation=types.ElicitationCapability()),
    "roots": types.ClientCapabilities(roots=types.RootsCapability()),
}


_LIFETIME_KEY = "mcs.session_lifetime"
_LIFETIME_LOCK = threading.Lock()  # a driver may ask from worker threads of one session at once


class SessionLifetime:
    """One client's MCP session, from its first call to its end.

    :meth:`on_end` callbacks run once, each on a worker thread, when the session ends
    (the SDK unwinds the connection's exit stack). Thread-safe: a driver registers from
    the worker thread its call runs on.
    """

    def __init__(self) -> None:
        self._callbacks: dict[str, Callable[[], None]] = {}
        self._lock = threading.Lock()
        self.ended = False

    def on_end(self, key: str, callback: Callable[[], None]) -> None:
        """Run ``callback`` when the session ends; once per ``key`` (a later registration
        under the same key is ignored). A session that already ended runs it at once."""
        with self._lock:
            if not self.ended:
                self._callbacks.setdefault(key, callback)
                return
        _run_logged(callback)

    async def end(self) -> None:
        """Run every registered callback (the connection's teardown calls this once)."""
        with self._lock:
            self.ended = True
            callbacks, self._callbacks = list(self._callbacks.values()), {}
        for callback in callbacks:
            await asyncio.to_thread(_run_logged, callback)


def _run_logged(callback: Callable[[], None]) -> None:
    try:
        callback()
    except Exception:  # one failing cleanup must not keep the others from running
        logger.exception("a session-end callback failed")


class McpSession(Session):
    """The caller's MCP client, for one request (built by the server for each call)."""

    kind = "mcp"

    def __init__(self, request_context: Any, *, stateless: bool) -> None:
        self._ctx = request_context
        self._stateless = stateless

    @property
    def lifetime(self) -> SessionLifetime | None:
        """The client's whole session (one per connection), or ``None`` when serving is
        stateless and every request is a session of its own."""
        if self._stateless:
            return None
        # The SDK's per-client Connection (its exit stack unwinds when the session ends), as
        # the server's log level reaches it: the request context does not expose it.
        connection = getattr(getattr(self._ctx, "session", None), "_connection", None)
        if connection is None:
            return None
        with _LIFETIME_LOCK:
            lifetime = connection.state.get(_LIFETIME_KEY)
            if lifetime is None:
                lifetime = connection.state[_LIFETIME_KEY] = SessionLifetime()
                connection.exit_stack.push_async_callback(lifetime.end)
        return lifetime  # type: ignore[no-any-return]

    # ----------------------------------------------------------------- progress and streams

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        try:
            await self._ctx.session.report_progress(progress, total, message)
        except Exception as exc:  # a client that went away must not fail the tool
            logger.debug("progress not delivered: %s", exc)

    async def close_stream(self) -> None:
        close = getattr(self._ctx, "close_sse_stream", None)
        if close is not None:
            await close()

    # ----------------------------------------------------------------- server-to-client requests

    def _require(self, feature: str, purpose: str) -> None:
        if self._stateless:
            raise SessionUnavailableError(
                f"This tool needs to {purpose} ({feature}), but this MCP server runs stateless, where a "
                "server cannot send requests to its client. Serve it with `-s stateful=true` "
                "(ServeOptions(stateless=False)) or over stdio.",
                details={"feature": feature, "session": "stateless"},
            )
        if not self._ctx.session.check_client_capability(_CAPABILITY[feature]):
            raise SessionUnavailableError(
                f"This tool needs to {purpose}, but the MCP client did not declare the {feature} "
                "capability. Use a client that supports it, or answer without this tool.",
                details={"feature": feature, "session": "mcp"},
            )

    async def _request(self, request: Any, result_type: type[Any], feature: str) -> Any:
        try:
            return await self._ctx.session.send_request(
                request, result_type, metadata=ServerMessageMetadata(related_request_id=self._ctx.request_id)
            )
        except MCPError as exc:
            raise ExecutionError(f"The MCP client refused the {feature} request: {exc.message}") from None

    async def sample(
        self,
        messages: str | Sequence[Mapping[str, Any]],
        *,
        max_tokens: int = 1000,
        system_prompt: str | None = None,
        temperature: float | None = None,
        stop_sequences: Sequence[str] | None = None,
        model_preferences: Mapping[str, Any] | None = None,
    ) -> Sampled:
        self._require("sampling", "ask the client's language model for a completion")
        items = [{"role": "user", "content": messages}] if isinstance(messages, str) else list(messages)
        sampling_messages = [
            types.SamplingMessage.model_validate({
                "role": item.get("role", "user"),
                "content": {"type": "text", "text": item["content"]} if isinstance(item.get("content"), str)
                else item["content"],
            })
            for item in items
        ]
        request = types.CreateMessageRequest(
            params=types.CreateMessageRequestParams(
                messages=sampling_messages,
                max_tokens=max_tokens,
                system_prompt=system_prompt,
                temperature=temperature,
                stop_sequences=list(stop_sequences) if stop_sequences is not None else None,
                model_preferences=types.ModelPreferences.model_validate(dict(model_preferences))
                if model_preferences is not None
                else None,
            )
        )
        result = await self._request(request, types.CreateMessageResult, "sampling")
        content = result.content
        text = content.text if isinstance(content, types.TextContent) else ""
        return Sampled(
            text=text,
            model=result.model,
            stop_reason=result.stop_reason,
            content=content.model_dump(by_alias=True, mode="json", exclude_none=True),
        )

    async def elicit(self, message: str, schema: Mapping[str, Any]) -> Elicited:
        self._require("elicitation", "ask the user for input")
        request = types.ElicitRequest(
            params=types.ElicitRequestFormParams(message=message, requested_schema=dict(schema))
        )
        return _elicited(await self._request(request, types.ElicitResult, "elicitation"))

    async def elicit_url(self, message: str, url: str, elicitation_id: str) -> Elicited:
        self._require("elicitation", "send the user to a web page")
        request = types.ElicitRequest(
            params=types.ElicitRequestURLParams(message=message, url=url, elicitation_id=elicitation_id)
        )
        return _elicited(await self._request(request, types.ElicitResult, "elicitation"))

    async def list_roots(self) -> list[Root]:
        self._require("roots", "read the client's roots")
        result = await self._request(types.ListRootsRequest(), types.ListRootsResult, "roots")
        return [Root(uri=str(root.uri), name=root.name) for root in result.roots]


def _elicited(result: types.ElicitResult) -> Elicited:
    return Elicited(action=result.action, content=dict(result.content) if result.content is not None else None)
