"""What the bridge answers when a server asks its client something, and what it does with
the server's notifications.

The ``mcp`` driver's options, in MCS terms (the same types a served tool uses):

* ``on_elicit(message, schema)`` answers ``elicitation/create`` (form mode) and
  ``on_elicit_url(message, url, elicitation_id)`` the URL mode: return an
  :class:`mcs.Elicited`, a dict (accepted with that content) or ``None`` (declined);
* ``on_sample(messages, options)`` answers ``sampling/createMessage``: ``messages`` are
  ``[{"role", "content"}]`` (text as a string), ``options`` holds ``max_tokens``,
  ``system_prompt``, ``temperature``...; return the reply's text or an :class:`mcs.Sampled`;
* ``roots``: the roots to list (URIs or :class:`mcs.Root`), or a function returning them;
* ``on_log(level, logger, data)`` and ``on_progress(progress, total, message)`` observe the
  server's ``notifications/message`` and ``notifications/progress``.

Any of them may be a plain or an async function. Without ``on_elicit``/``on_sample``/
``roots`` the client does not declare the capability and refuses such requests (the
server's tool then reports it). A handler that raises refuses the request with its
message. Server log messages are also logged on ``mcs_mcp.client.server``, each on one
line (its data's ``repr``, so a line break in it cannot forge another record) and cut at
:data:`MAX_LOG_BYTES`; ``on_log`` gets the data as sent.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import mcp_types as types

from mcs.context import Elicited, Root, Sampled

server_logger = logging.getLogger("mcs_mcp.client.server")

#: A server's log message is written to ``mcs_mcp.client.server`` cut at this size.
MAX_LOG_BYTES = 4096

_PY_LEVELS = {
    "debug": logging.DEBUG, "info": logging.INFO, "notice": logging.INFO, "warning": logging.WARNING,
    "error": logging.ERROR, "critical": logging.CRITICAL, "alert": logging.CRITICAL, "emergency": logging.CRITICAL,
}


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def _refusal(feature: str, exc: Exception) -> types.ErrorData:
    return types.ErrorData(code=types.INVALID_REQUEST, message=f"{feature} refused by the client: {exc}")


@dataclass(frozen=True)
class ClientHandlers:
    """The driver's handlers (see the module docstring), turned into the SDK's callbacks."""

    on_elicit: Callable[..., Any] | None = None
    on_elicit_url: Callable[..., Any] | None = None
    on_sample: Callable[..., Any] | None = None
    roots: Sequence[str | Root] | Callable[[], Any] | None = None
    on_log: Callable[..., Any] | None = None
    on_progress: Callable[..., Any] | None = None
    server: str = "mcp"

    def client_options(self) -> dict[str, Any]:
        """Keyword arguments for ``mcp.Client``: only the callbacks that are backed."""
        options: dict[str, Any] = {"logging_callback": self._log}
        if self.on_elicit is not None or self.on_elicit_url is not None:
            options["elicitation_callback"] = self._elicit
        if self.on_sample is not None:
            options["sampling_callback"] = self._sample
        if self.roots is not None:
            options["list_roots_callback"] = self._roots
        return options

    async def _elicit(self, context: Any, params: Any) -> types.ElicitResult | types.ErrorData:
        try:
            if isinstance(params, types.ElicitRequestURLParams):
                if self.on_elicit_url is None:
                    return types.ErrorData(code=types.INVALID_REQUEST, message="URL elicitation is not supported")
                answer = await _maybe_await(self.on_elicit_url(params.message, params.url, params.elicitation_id))
            else:
                if self.on_elicit is None:
                    return types.ErrorData(code=types.INVALID_REQUEST, message="form elicitation is not supported")
                answer = await _maybe_await(self.on_elicit(params.message, dict(params.requested_schema)))
        except Exception as exc:
            return _refusal("elicitation", exc)
        if answer is None:
            return types.ElicitResult(action="decline")
        if isinstance(answer, Elicited):
            return types.ElicitResult(
                action=answer.action, content=dict(answer.content) if answer.content is not None else None
            )
        return types.ElicitResult(action="accept", content=dict(answer))

    async def _sample(self, context: Any, params: types.CreateMessageRequestParams) -> Any:
        messages = [{"role": m.role, "content": _sampling_content(m.content)} for m in params.messages]
        options = {
            "max_tokens": params.max_tokens, "system_prompt": params.system_prompt,
            "temperature": params.temperature, "stop_sequences": params.stop_sequences,
            "model_preferences": params.model_preferences.model_dump(exclude_none=True)
            if params.model_preferences is not None else None,
        }
        assert self.on_sample is not None
        try:
            reply = await _maybe_await(self.on_sample(messages, options))
        except Exception as exc:
            return _refusal("sampling", exc)
        sampled = reply if isinstance(reply, Sampled) else Sampled(text=str(reply))
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=sampled.text),
            model=sampled.model or "mcs-client",
            stop_reason=sampled.stop_reason or "endTurn",
        )

    async def _roots(self, context: Any) -> types.ListRootsResult | types.ErrorData:
        try:
            listed = await _maybe_await(self.roots()) if callable(self.roots) else self.roots
        except Exception as exc:
            return _refusal("roots", exc)
        roots = [r if isinstance(r, Root) else Root(uri=str(r)) for r in listed or ()]
        return types.ListRootsResult(roots=[types.Root.model_validate({"uri": r.uri, "name": r.name}) for r in roots])

    async def _log(self, params: types.LoggingMessageNotificationParams) -> None:
        level = str(params.level)
        # The server's text is written as its repr (line breaks, escapes and other unprintable
        # characters escaped), cut at MAX_LOG_BYTES: one line per message, none forged.
        server_logger.log(
            _PY_LEVELS.get(level, logging.INFO), "MCP server %s%s: %s",
            self.server, f" ({_one_line(params.logger, 200)})" if params.logger else "",
            _one_line(params.data, MAX_LOG_BYTES),
        )
        if self.on_log is not None:
            try:
                await _maybe_await(self.on_log(level, params.logger, params.data))
            except Exception:
                server_logger.exception("on_log raised")

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        if self.on_progress is not None:
            try:
                await _maybe_await(self.on_progress(progress, total, message))
            except Exception:
                server_logger.exception("on_progress raised")


def _one_line(value: Any, max_bytes: int) -> str:
    """``repr(value)`` (every unprintable character escaped), cut at ``max_bytes`` with a note."""
    text = repr(value)
    data = text.encode("utf-8", "backslashreplace")
    if len(data) <= max_bytes:
        return text
    return data[:max_bytes].decode("utf-8", "ignore") + f" [cut at {max_bytes} of {len(data)} bytes]"


def _sampling_content(content: Any) -> Any:
    """Text as a string; other blocks (or lists of them) as their JSON."""
    if isinstance(content, types.TextContent):
        return content.text
    if isinstance(content, list):
        return [_sampling_content(item) for item in content]
    return content.model_dump(by_alias=True, mode="json", exclude_none=True)


def elicit_defaults(message: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    """An ``on_elicit`` that accepts every form with the schema's defaults (for unattended runs)."""
    properties = schema.get("properties") or {}
    return {name: spec["default"] for name, spec in properties.items() if isinstance(spec, Mapping) and "default" in spec}
