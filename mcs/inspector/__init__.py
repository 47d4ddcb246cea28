"""``mcs inspect``: a local web page that shows what the model sees and what a call does.

For any driver built on :class:`mcs.ToolDriver` (a toolbox, a gen-mcp file, an MCP
server config...), the page lists the tools with the discovery search, shows each tool's
description as rendered for a chosen model template, its native exports and annotations,
runs calls through the full pipeline with the hook and policy events of each call,
reads a pasted model reply the way the driver would, and renders interface-declaring
servers (``media.player.v1``...) as real UIs.

    from mcs.inspector import InspectorServer

    with InspectorServer(driver) as server:   # 127.0.0.1, a free port, a random token
        print(server.url)

The page is served on 127.0.0.1 only; every request must carry the session token (the
first path segment of :attr:`InspectorServer.url`) and a loopback ``Host``, and any
``Origin`` must be the page's own. Needs the ``server`` extra (Starlette, uvicorn):
``pip install 'mcs-framework[server]'``.
"""

from __future__ import annotations

from mcs.inspector.session import Inspection

__all__ = ["Inspection", "InspectorServer"]


def __getattr__(name: str) -> object:
    # The web server needs the `server` extra: import it only when it is asked for.
    if name == "InspectorServer":
        from mcs.inspector.server import InspectorServer

        return InspectorServer
    raise AttributeError(f"module 'mcs.inspector' has no attribute {name!r}")
