"""The RFC-0001 server SDK: ``McpServer``, ``@tool``, policies, hooks, a wire protocol.

    from mcs.server import McpServer, tool, AgentContext, PolicyDecision, ToolMetadata

Importing this package needs only the core; serving over HTTP or WebSocket needs the
``server`` extra (``pip install 'mcs-framework[server]'``), asked for when it is used. The wire
protocol is specified in ``docs/rfc0001.md``. Only the names in ``__all__`` are public.
"""

from mcs.context import AgentContext, PolicyDecision
from mcs.pipeline import ExecutionEvent
from mcs.server.backend import DriverBackend
from mcs.server.connections import ConnectionLimits
from mcs.server.server import McpServer
from mcs.server.tools import ServerTool, ToolDefinitionError, ToolMetadata, tool
from mcs.server.wire import Outcome

__all__ = [
    "AgentContext",
    "ConnectionLimits",
    "DriverBackend",
    "ExecutionEvent",
    "McpServer",
    "Outcome",
    "PolicyDecision",
    "ServerTool",
    "ToolDefinitionError",
    "ToolMetadata",
    "tool",
]
