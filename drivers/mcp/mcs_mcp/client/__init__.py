"""The MCP client side of the bridge: connections, config files, pinning, handlers, OAuth.

Public pieces: :class:`ServerSpec` (how to reach a server), :func:`load_config`
(an ``mcpServers`` JSON file), :class:`PinStore` / :class:`HeldTool` (tool pinning),
:func:`elicit_defaults` (an ``on_elicit`` that accepts forms with their defaults), and
for the OAuth authorization-code flow :func:`browser_authorize`, :func:`headless_authorize`,
:class:`FileTokenStorage` and :class:`MemoryTokenStorage`.
"""

from mcs_mcp.client.config import load_config
from mcs_mcp.client.connection import Connection, Endpoint, ServerError, ServerGone, ServerSpec
from mcs_mcp.client.handlers import ClientHandlers, elicit_defaults
from mcs_mcp.client.oauth import (
    FileTokenStorage,
    MemoryTokenStorage,
    browser_authorize,
    headless_authorize,
)
from mcs_mcp.client.pinning import HeldTool, PinStore

__all__ = [
    "ClientHandlers",
    "Connection",
    "Endpoint",
    "FileTokenStorage",
    "HeldTool",
    "MemoryTokenStorage",
    "PinStore",
    "ServerError",
    "ServerGone",
    "ServerSpec",
    "browser_authorize",
    "elicit_defaults",
    "headless_authorize",
    "load_config",
]
