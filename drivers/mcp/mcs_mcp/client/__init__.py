"""The MCP client side of the bridge: connections, config files, pinning.

Public pieces: :class:`ServerSpec` (how to reach a server), :func:`load_config`
(an ``mcpServers`` JSON file), :class:`PinStore` / :class:`HeldTool` (tool pinning).
"""

from mcs_mcp.client.config import load_config
from mcs_mcp.client.connection import Connection, Endpoint, ServerError, ServerGone, ServerSpec
from mcs_mcp.client.pinning import HeldTool, PinStore

__all__ = ["Connection", "Endpoint", "HeldTool", "PinStore", "ServerError", "ServerGone", "ServerSpec", "load_config"]
