"""Serve an :class:`~mcs.inspector.session.Inspection` on 127.0.0.1 with uvicorn.

The socket is bound before the app is built, so the port (a free one by default) is
known to the Host check and printed in :attr:`InspectorServer.url` with the token.
"""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType
from typing import Any

from mcs.errors import MissingDependencyError
from mcs.inspector.guard import new_token
from mcs.inspector.session import Inspection
from mcs.server.connections import ConnectionLimits, uvicorn_settings

HOST = "127.0.0.1"
_INSTALL = "pip install 'mcs-framework[server]'"


def _uvicorn() -> Any:
    try:
        import starlette  # noqa: F401  (the app needs it; say so before binding anything)
        import uvicorn
    except ImportError as exc:
        raise MissingDependencyError(
            f"mcs inspect needs {exc.name or 'starlette and uvicorn'}: {_INSTALL}", install=_INSTALL
        ) from None
    return uvicorn


class InspectorServer:
    """The inspector for ``driver`` (or an :class:`Inspection` of it) on ``127.0.0.1:port``.

    ``port=0`` (the default) takes a free port. Use it as a context manager (served on a
    background thread) or call :meth:`run` to serve in the foreground until interrupted.
    The driver is not closed here: whoever built it closes it. Slow clients are bounded
    as on every served endpoint (``limits``, default
    :class:`~mcs.server.connections.ConnectionLimits`).
    """

    def __init__(self, driver: Any, *, port: int = 0, token: str | None = None,
                 limits: ConnectionLimits | None = None) -> None:
        uvicorn = _uvicorn()
        from mcs.inspector.app import create_app

        self.inspection = driver if isinstance(driver, Inspection) else Inspection(driver)
        self.token = token or new_token()
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self._socket.bind((HOST, port))
        except OSError:
            self._socket.close()
            raise
        self.port: int = self._socket.getsockname()[1]
        app = create_app(self.inspection, token=self.token, port=self.port)
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                                **uvicorn_settings(limits))
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The page's address, token included: the only way in."""
        return f"http://{HOST}:{self.port}/{self.token}/"

    def run(self) -> None:
        """Serve in the foreground until interrupted (Ctrl-C, SIGTERM)."""
        self._server.run(sockets=[self._socket])

    def wait_started(self, timeout: float = 10.0) -> None:
        """Return once the server accepts requests (it was started by :meth:`start` or :meth:`run`)."""
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if self._thread is not None and not self._thread.is_alive():
                raise RuntimeError("the inspector server stopped while starting")
            if time.monotonic() > deadline:
                raise TimeoutError(f"the inspector did not start within {timeout:g} s")
            time.sleep(0.01)

    def start(self) -> str:
        """Serve on a background thread; returns :attr:`url` once requests are answered."""
        self._thread = threading.Thread(target=self.run, name="mcs-inspector", daemon=True)
        self._thread.start()
        self.wait_started()
        return self.url

    def stop(self) -> None:
        """Stop serving (waits for the background thread) and release the port."""
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        self._socket.close()

    def __enter__(self) -> InspectorServer:
        self.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        self.stop()
