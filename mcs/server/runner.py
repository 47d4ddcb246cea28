"""Run a backend: uvicorn for HTTP and WebSocket, or the STDIO loop."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable

from mcs.server.backend import Backend


def serve(backend: Backend, *, transport: str, host: str = "127.0.0.1", port: int = 8000,
          log_level: str = "warning", allowed_hosts: Iterable[str] = (),
          allowed_origins: Iterable[str] = ()) -> None:
    """Serve ``backend`` until interrupted (or until end of input on STDIO).

    Over HTTP, ``Host`` and ``Origin`` are checked (:mod:`mcs.server.origins`): bound to
    loopback only the loopback names pass; ``allowed_hosts`` / ``allowed_origins`` widen that.
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
    uvicorn.run(app, host=host, port=port, log_level=log_level,
                ws_max_size=max(backend.max_body_bytes * 2, 1 << 20))
