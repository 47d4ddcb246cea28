"""Serve any MCS driver, toolbox or gen-mcp file as a real MCP server (official SDK).

    from mcs_mcp.serving import ServeOptions, build_server, build_app, serve

``build_server(driver, options)`` gives the SDK's low-level ``Server``;
``build_app(server, options)`` the Starlette app for streamable HTTP (Host/Origin
checks, OAuth resource server, RFC 9728 metadata); ``serve(driver, options)`` runs it
over stdio or HTTP. ``mcs serve`` (:mod:`mcs_mcp.serving.cli`) is the command line.
"""

from mcs_mcp.serving.events import MemoryEventStore
from mcs_mcp.serving.http import build_app
from mcs_mcp.serving.options import LoggingOptions, OAuthOptions, ServeOptions, TLSOptions
from mcs_mcp.serving.runner import serve
from mcs_mcp.serving.server import build_server

__all__ = [
    "LoggingOptions",
    "MemoryEventStore",
    "OAuthOptions",
    "ServeOptions",
    "TLSOptions",
    "build_app",
    "build_server",
    "serve",
]
