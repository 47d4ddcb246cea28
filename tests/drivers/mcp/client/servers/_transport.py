"""How the test servers of this folder are started: ``--http PORT`` serves streamable HTTP,
``--sse PORT`` the legacy HTTP+SSE transport, neither stdio (each script imports this as a
sibling: its folder is the first entry of ``sys.path``)."""

from __future__ import annotations

import argparse

from mcp.server.mcpserver import MCPServer


def serve_as_asked(server: MCPServer) -> None:
    """Run ``server`` on the transport the command line names (stdio by default)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=None, help="serve streamable HTTP on this port")
    parser.add_argument("--sse", type=int, default=None, help="serve the legacy HTTP+SSE transport on this port")
    args = parser.parse_args()
    if args.http is not None:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    elif args.sse is not None:
        server.run("sse", host="127.0.0.1", port=args.sse)
    else:
        server.run("stdio")
