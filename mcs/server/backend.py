"""What the transports serve: an :class:`McpServer`, or any core driver (``mcs serve``).

Transports only need :class:`Backend`: a name, a version, a body limit, the
capabilities document and a blocking ``execute`` that never raises a tool error.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from mcs import pipeline
from mcs.context import AgentContext
from mcs.driver import ToolDriver
from mcs.errors import InvalidInputError, ToolNotFoundError
from mcs.server.tools import ToolMetadata
from mcs.server.wire import DEFAULT_MAX_BODY_BYTES, PROTOCOL_VERSION, Outcome
from mcs.tools import Tool


class Backend(Protocol):
    """The surface transports use (implemented by :class:`~mcs.server.McpServer`)."""

    name: str
    version: str
    max_body_bytes: int

    def capabilities(self) -> dict[str, Any]: ...

    def execute(
        self, tool: str, arguments: Mapping[str, Any] | None = None,
        context: AgentContext | None = None,
    ) -> Outcome: ...


class DriverBackend:
    """Serve any :class:`~mcs.ToolDriver` (a toolbox too) over the RFC-0001 wire protocol.

    The driver's own pipeline applies (its validation, policies, hooks, timeout); tool
    names must match exactly. Each tool's ``timeout_ms`` is the driver's timeout
    (``0`` when it has none); ``idempotent`` comes from the tool's ``idempotentHint``
    (or ``readOnlyHint``) annotation and is ``False`` when the spec does not say.
    """

    def __init__(
        self, driver: ToolDriver, *, name: str | None = None, version: str | None = None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    ) -> None:
        self.driver = driver
        self.name = name or driver.meta.name
        self.version = version or driver.meta.version
        self.max_body_bytes = max_body_bytes

    def _metadata(self, tool: Tool) -> ToolMetadata:
        timeout = self.driver.timeout
        hints = tool.annotations
        idempotent = hints.get("idempotentHint", hints.get("readOnlyHint", False))
        return ToolMetadata(
            name=tool.name,
            description=tool.description or None,
            input_schema=dict(tool.input_schema),
            output_schema=dict(tool.output_schema or {}),
            timeout_ms=int(timeout * 1000) if timeout else 0,
            idempotent=bool(idempotent),
        )

    def capabilities(self) -> dict[str, Any]:
        return {
            "server": self.name,
            "version": self.version,
            "description": None,
            "protocol": PROTOCOL_VERSION,
            "tools": [self._metadata(t).model_dump(mode="json") for t in self.driver.list_tools()],
        }

    def execute(
        self, tool: str, arguments: Mapping[str, Any] | None = None,
        context: AgentContext | None = None,
    ) -> Outcome:
        context = context or AgentContext()
        try:
            if not isinstance(arguments, Mapping):
                raise InvalidInputError("'arguments' must be a JSON object.", tool=tool)
            if tool not in {t.name for t in self.driver.list_tools()}:
                names = ", ".join(t.name for t in self.driver.list_tools()[:20])
                raise ToolNotFoundError(
                    f"There is no tool named {tool!r}. Available tools: {names}.", tool=tool
                )
            result = self.driver.call_tool(tool, dict(arguments), context=context)
        except Exception as exc:
            return Outcome(tool, context.request_id, error=pipeline.map_exception(exc, tool))
        from mcs.cli import to_jsonable

        return Outcome(tool, context.request_id, result=to_jsonable(result))


