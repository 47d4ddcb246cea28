"""Logging for a served driver: gen-mcp's ``loggingConfig``, and logs sent to the client.

Nothing here runs on import. :func:`configure_logging` is called by the ``mcs serve``
runner only (an application entry point), and undoes itself when the server stops.

:class:`McpLogForwarder` sends the log records emitted *while a request is being
handled* (by the driver, its tools, the pipeline) to that request's client as MCP
``notifications/message``, filtered by the level the client chose with
``logging/setLevel`` (default: everything, as gen-mcp's ``enableMcpLogs`` does).
Records are tied to the request through a context variable, so concurrent clients
never see each other's logs.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, Any

from mcs_mcp.serving.options import LoggingOptions

# MCP (RFC 5424) levels, lowest first, and the Python level each starts at.
MCP_LEVELS: dict[str, int] = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO + 5,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL + 5,
    "emergency": logging.CRITICAL + 10,
}
_GENMCP_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "dpanic": logging.CRITICAL,
    "panic": logging.CRITICAL,
    "fatal": logging.CRITICAL,
    "critical": logging.CRITICAL,
}
LOGGER_NAMES = ("mcs", "mcs_mcp")


def python_level(level: str) -> int:
    return _GENMCP_LEVELS.get(level.lower(), logging.INFO)


def mcp_level(levelno: int) -> str:
    """The MCP level name of a Python level number."""
    chosen = "debug"
    for name, number in MCP_LEVELS.items():
        if levelno >= number:
            chosen = name
    return chosen


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ``ts``, ``level``, ``logger``, ``msg`` (+ ``error``)."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": round(record.created, 3),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        if record.exc_info and record.exc_info[0] is not None:
            out["error"] = f"{record.exc_info[0].__name__}: {record.exc_info[1]}"
        return json.dumps(out, ensure_ascii=False, default=str)


CONSOLE_FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"


@dataclass
class _Installed:
    handlers: list[logging.Handler] = field(default_factory=list)
    streams: list[IO[str]] = field(default_factory=list)
    levels: dict[str, int] = field(default_factory=dict)

    def undo(self) -> None:
        for name, level in self.levels.items():
            logging.getLogger(name).setLevel(level)
        for handler in self.handlers:
            for name in ("", *LOGGER_NAMES):
                logging.getLogger(name).removeHandler(handler)
            handler.close()
        for stream in self.streams:
            stream.close()


def configure_logging(options: LoggingOptions, *, stdio: bool = False) -> Callable[[], None]:
    """Install the configured outputs on the root logger; returns the undo function.

    ``output_paths``: ``stderr``, ``stdout`` or file paths (appended to). Over stdio the
    protocol owns stdout, so ``stdout`` is written to stderr instead.
    """
    installed = _Installed()
    level = python_level(options.level)
    formatter: logging.Formatter = (
        JsonFormatter() if options.encoding == "json" else logging.Formatter(CONSOLE_FORMAT)
    )
    for path in options.output_paths or ("stderr",):
        stream: IO[str]
        if path == "stderr" or (path == "stdout" and stdio):
            stream = sys.stderr
        elif path == "stdout":
            stream = sys.stdout
        else:
            stream = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed by undo()
            installed.streams.append(stream)
        handler = logging.StreamHandler(stream)
        handler.setLevel(level)
        handler.setFormatter(formatter)
        logging.getLogger().addHandler(handler)
        installed.handlers.append(handler)
    root = logging.getLogger()
    installed.levels[""] = root.level
    root.setLevel(level)
    if options.enable_mcp_logs:
        # Our own loggers produce every record, so the client can ask for debug;
        # the output handlers above still filter by the configured level.
        for name in LOGGER_NAMES:
            installed.levels[name] = logging.getLogger(name).level
            logging.getLogger(name).setLevel(logging.DEBUG)
    return installed.undo


# ----------------------------------------------------------------------------- to the client


@dataclass
class _RequestLogs:
    send: Callable[[str, str, Any], Any]  # (level, logger, data) -> awaitable
    min_level: int
    loop: asyncio.AbstractEventLoop
    pending: list[Any] = field(default_factory=list)


_current: contextvars.ContextVar[_RequestLogs | None] = contextvars.ContextVar(
    "mcs_serving_request_logs", default=None
)


class McpLogForwarder(logging.Handler):
    """Sends records emitted inside :meth:`capture` to the request's client."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)

    def emit(self, record: logging.LogRecord) -> None:
        target = _current.get()
        if target is None or record.levelno < target.min_level:
            return
        if record.name.startswith(("mcp.", "httpx", "httpcore", "uvicorn", "sse_starlette")):
            return  # the transport's own chatter would recurse or leak internals
        data: dict[str, Any] = {"message": record.getMessage()}
        coro = target.send(mcp_level(record.levelno), record.name, data)
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is target.loop:
            target.pending.append(target.loop.create_task(coro))
        else:
            target.pending.append(asyncio.run_coroutine_threadsafe(coro, target.loop))

    @contextmanager
    def capture(
        self, send: Callable[[str, str, Any], Any], min_level: int
    ) -> Iterator[_RequestLogs]:
        state = _RequestLogs(send=send, min_level=min_level, loop=asyncio.get_running_loop())
        token = _current.set(state)
        try:
            yield state
        finally:
            _current.reset(token)

    @staticmethod
    async def drain(state: _RequestLogs) -> None:
        """Wait for every notification of the request to be written (before its response)."""
        for item in state.pending:
            try:
                if isinstance(item, asyncio.Task):
                    await item
                else:
                    await asyncio.wrap_future(item)
            except Exception:  # a client that went away must not fail the call
                pass
        state.pending.clear()

    @contextmanager
    def installed(self) -> Iterator[None]:
        root = logging.getLogger()
        root.addHandler(self)
        try:
            yield
        finally:
            root.removeHandler(self)
