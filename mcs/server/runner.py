"""Run a backend: uvicorn for HTTP and WebSocket, or the STDIO loop."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable
from typing import Any

from mcs.server.backend import Backend
from mcs.server.connections import ConnectionLimits, uvicorn_settings


def serve(backend: Backend, *, transport: str, host: str = "127.0.0.1", port: int = 8000,
          log_level: str = "warning", allowed_hosts: Iterable[str] = (),
          allowed_origins: Iterable[str] = (), limits: ConnectionLimits | None = None) -> None:
    """Serve ``backend`` until interrupted (or until end of input on STDIO).

    Over HTTP, ``Host`` and ``Origin`` are checked (:mod:`mcs.server.origins`): bound to
    loopback only the loopback names pass; ``allowed_hosts`` / ``allowed_origins`` widen that.
    Slow and numerous clients are bounded by ``limits`` (default: :class:`ConnectionLimits`,
    see :mod:`mcs.server.connections`).
    """
    if transport == "stdio":
        from mcs.server.stdio import serve_stdio

        logging.basicConfig(level=log_level.upper(), stream=sys.stderr)
        serve_stdio(backend)
        return
    from mcs.server.server import require_server_extra

    require_server_extra(f"serving over {transport}")
    import uvicorn

    from mcs.server.app import create_app

    app = create_app(backend, host=host, allowed_hosts=allowed_hosts, allowed_origins=allowed_origins)
    config = uvicorn_config(app, host=host, port=port, log_level=log_level,
                            max_body_bytes=backend.max_body_bytes, limits=limits)
    uvicorn.Server(config).run()


def uvicorn_config(app: Any, *, host: str = "127.0.0.1", port: int = 8000, log_level: str = "warning",
                   max_body_bytes: int = 1 << 20, limits: ConnectionLimits | None = None) -> Any:
    """The ``uvicorn.Config`` :func:`serve` runs ``app`` with: WebSocket frames up to twice
    ``max_body_bytes`` (at least 1 MiB), and ``limits`` on slow and numerous clients.
    Needs the ``server`` extra."""
    import uvicorn

    return uvicorn.Config(app, host=host, port=port, log_level=log_level,
                          ws_max_size=max(max_body_bytes * 2, 1 << 20), **uvicorn_settings(limits))
