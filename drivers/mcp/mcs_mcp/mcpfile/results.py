"""What an invocation returns, and the shared helpers for incoming headers and env values."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mcs.content import Binary
from mcs.errors import ExecutionError

HEADER_PREFIX = "header:"
#: Incoming headers that carry credentials; never copied into commands, and into
#: outbound requests only when the driver is told to forward credentials.
CREDENTIAL_HEADERS = frozenset(
    {"authorization", "cookie", "proxy-authorization", "x-api-key", "api-key", "x-auth-token"}
)


@dataclass(frozen=True, slots=True)
class InvokeResult:
    """The outcome of one HTTP request or command.

    ``text`` is the body (or the command's output); ``structured`` is set when the body
    is a JSON object; ``binary`` when it is not text; ``truncated`` tells that the body was
    cut at the size cap.
    """

    text: str
    structured: dict[str, Any] | None = None
    mime_type: str | None = None
    truncated: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict)
    #: A body that is not text (an image, a PDF...), whole as base64; ``text`` is then its base64 too.
    binary: Binary | None = None

    def value(self) -> Any:
        """The raw tool result: a binary body's :class:`~mcs.content.Binary`, the JSON object
        when there is one, else the text."""
        if self.binary is not None:
            return self.binary
        return self.structured if self.structured is not None else self.text


def incoming_header(metadata: Mapping[str, str], name: str, *, tool: str) -> str:
    """The incoming request header ``name`` (from ``AgentContext.metadata``).

    Raises:
        ExecutionError: the header is absent; the message says when headers exist at all.
    """
    value = metadata.get(HEADER_PREFIX + name.lower())
    if value:
        return value
    if name.lower() in CREDENTIAL_HEADERS:
        raise ExecutionError(
            f"{tool} forwards the caller's {name!r} header, and this call's context carries none "
            f"(AgentContext.metadata['{HEADER_PREFIX}{name.lower()}']). Credential forwarding works "
            "only when an application calls the driver itself: an MCP server built by mcs serve "
            "never hands a caller's credentials to a driver (MCP forbids token passthrough).",
            tool=tool,
        )
    if not any(key.startswith(HEADER_PREFIX) for key in metadata):
        raise ExecutionError(
            f"{tool} needs the incoming HTTP header {name!r}, which exists only when this server "
            "is reached over streamable HTTP (not stdio or a direct call).",
            tool=tool,
        )
    raise ExecutionError(f"{tool} needs the incoming HTTP header {name!r}, which the request did not send.", tool=tool)


def env_value(name: str, *, tool: str) -> str:
    """The server's environment variable ``name``.

    Raises:
        ExecutionError: it is not set (gen-mcp refuses the call too).
    """
    value = os.environ.get(name)
    if value is None:
        raise ExecutionError(
            f"{tool} cannot run: the server's environment variable {name} is not set.", tool=tool
        )
    return value
