"""Logging for a served driver: gen-mcp's ``loggingConfig``, and logs sent to the client.

Nothing here runs on import. :func:`configure_logging` is called by the ``mcs serve``
runner only (an application entry point), and undoes itself when the server stops.

``loggingConfig`` follows zap's ``Config``, and each field does what zap does:
``level``; ``encoding`` (``json``: one object per line; ``console``: one readable line);
``outputPaths`` (``stdout``, ``stderr``, file paths, ``file://`` URLs); ``errorOutputPaths``
(where errors of the logging itself go: a record that cannot be formatted or written);
``initialFields`` (added to every record); ``disableCaller`` (records carry their
``caller``, ``file.py:line``, unless set); ``development`` and ``disableStacktrace``
(records from ``error`` up, or from ``warn`` up in development, carry the stack of the
call that logged them, unless ``disableStacktrace``). zap's development mode also makes
``dpanic`` panic; Python has no such level, so ``dpanic`` logs as critical.

:class:`McpLogForwarder` sends the log records emitted *while a request is being
handled* (by the driver, its tools, the pipeline) to that request's client as MCP
``notifications/message``, filtered by the level the client chose with
``logging/setLevel`` (default: everything, as gen-mcp's ``enableMcpLogs`` does).
Records are tied to the request through a context variable, so concurrent clients
never see each other's logs. Records marked :data:`mcs.pipeline.OPERATOR_ONLY` (what the
pipeline logs about a failure: its text and stack) stay in the server's log.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import logging
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, Any

from mcs.pipeline import OPERATOR_ONLY
from mcs_mcp.serving.options import LoggingOptions, sink_path

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
# Libraries under the server whose records are never forwarded (transport internals).
_QUIET = ("mcp", "httpx", "httpx2", "httpcore", "uvicorn", "sse_starlette", "asyncio", "anyio", "starlette")


def python_level(level: str) -> int:
    return _GENMCP_LEVELS.get(level.lower(), logging.INFO)


def mcp_level(levelno: int) -> str:
    """The MCP level name of a Python level number."""
    chosen = "debug"
    for name, number in MCP_LEVELS.items():
        if levelno >= number:
            chosen = name
    return chosen


def caller_of(record: logging.LogRecord) -> str:
    """zap's short caller: ``folder/file.py:line`` of the code that logged."""
    folder = os.path.basename(os.path.dirname(record.pathname))
    return f"{folder}/{os.path.basename(record.pathname)}:{record.lineno}"


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ``ts``, ``level``, ``logger``, ``caller``, ``msg``, the
    initial fields, then ``error`` and ``stacktrace`` when the record has them."""

    def __init__(self, fields: Sequence[tuple[str, Any]] = (), *, caller: bool = True) -> None:
        super().__init__()
        self.fields = dict(fields)
        self.caller = caller

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": round(record.created, 3),
            "level": record.levelname.lower(),
            "logger": record.name,
        }
        if self.caller:
            out["caller"] = caller_of(record)
        out["msg"] = record.getMessage()
        for key, value in self.fields.items():
            out.setdefault(key, value)
        if record.exc_info and record.exc_info[0] is not None:
            out["error"] = f"{record.exc_info[0].__name__}: {record.exc_info[1]}"
        if record.stack_info:
            out["stacktrace"] = record.stack_info
        return json.dumps(out, ensure_ascii=False, default=str)


class ConsoleFormatter(logging.Formatter):
    """One readable line (time, level, logger, caller, message, initial fields as JSON),
    then the exception and the stack trace when the record has them."""

    def __init__(self, fields: Sequence[tuple[str, Any]] = (), *, caller: bool = True) -> None:
        super().__init__()
        self.fields = dict(fields)
        self.caller = caller

    def format(self, record: logging.LogRecord) -> str:
        line = f"{self.formatTime(record)} {record.levelname:<7} {record.name}"
        if self.caller:
            line += f" {caller_of(record)}"
        line += f": {record.getMessage()}"
        if self.fields:
            line += " " + json.dumps(self.fields, ensure_ascii=False, default=str)
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        if record.stack_info:
            line += "\n" + record.stack_info
        return line


class StackTraces(logging.Filter):
    """Attach the logging call's stack to records at ``level`` and above (zap's stacktraces)."""

    def __init__(self, level: int) -> None:
        super().__init__()
        self.level = level

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= self.level and not record.stack_info and not record.exc_info:
            frames = [f for f in traceback.extract_stack() if not _is_logging_frame(f.filename)]
            record.stack_info = "Stack (most recent call last):\n" + "".join(traceback.format_list(frames)).rstrip()
        return True


def _is_logging_frame(filename: str) -> bool:
    return filename == __file__ or os.path.dirname(filename) == os.path.dirname(logging.__file__)


class OutputHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """A stream handler whose own failures go to zap's ``errorOutputPaths``."""

    def __init__(self, stream: IO[str], errors: Sequence[IO[str]]) -> None:
        super().__init__(stream)
        self.errors = list(errors)

    def handleError(self, record: logging.LogRecord) -> None:
        failure = sys.exc_info()[1]
        text = (f"{time.strftime('%Y-%m-%dT%H:%M:%S')} logging error: could not write a record of "
                f"{record.name} ({type(failure).__name__}: {failure})\n")
        for stream in self.errors:
            with contextlib.suppress(Exception):
                stream.write(text)
                stream.flush()


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
            with contextlib.suppress(OSError):  # what a full disk kept was reported when written
                stream.close()


def configure_logging(options: LoggingOptions, *, stdio: bool = False) -> Callable[[], None]:
    """Install the configured outputs on the root logger; returns the undo function.

    ``output_paths`` and ``error_output_paths``: ``stderr``, ``stdout`` or files (appended
    to; ``file://`` URLs too). Over stdio the protocol owns stdout, so ``stdout`` is
    written to stderr instead. See the module doc for the other fields.
    """
    installed = _Installed()
    level = python_level(options.level)
    caller = not options.disable_caller
    formatter: logging.Formatter = (
        JsonFormatter(options.initial_fields, caller=caller) if options.encoding == "json"
        else ConsoleFormatter(options.initial_fields, caller=caller)
    )
    errors = [_open(path, stdio, installed) for path in options.error_output_paths or ("stderr",)]
    stacks = None if options.disable_stacktrace else StackTraces(
        logging.WARNING if options.development else logging.ERROR)
    for path in options.output_paths or ("stderr",):
        handler = OutputHandler(_open(path, stdio, installed), errors)
        handler.setLevel(level)
        handler.setFormatter(formatter)
        if stacks is not None:
            handler.addFilter(stacks)
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


def _open(path: str, stdio: bool, installed: _Installed) -> IO[str]:
    if path == "stderr" or (path == "stdout" and stdio):
        return sys.stderr
    if path == "stdout":
        return sys.stdout
    stream = open(sink_path(path), "a", encoding="utf-8")  # noqa: SIM115 - closed by undo()
    installed.streams.append(stream)
    return stream


# ----------------------------------------------------------------------------- to the client


@dataclass
class _RequestLogs:
    send: Callable[[str, str, Any], Any]  # (level, logger, data) -> awaitable
    min_level: int
    loop: asyncio.AbstractEventLoop
    pending: list[Any] = field(default_factory=list)
    owner: Any = None  # the forwarder capturing; another server's forwarder leaves it alone


_current: contextvars.ContextVar[_RequestLogs | None] = contextvars.ContextVar(
    "mcs_serving_request_logs", default=None
)


class _AsBefore(logging.Filter):
    """Passes what the root logger's old level would have let through (for its handlers)."""

    def __init__(self, root_level: int) -> None:
        super().__init__()
        self.root_level = root_level

    def filter(self, record: logging.LogRecord) -> bool:
        logger: logging.Logger | None = logging.getLogger(record.name)
        root = logging.getLogger()
        while logger is not None and logger is not root:
            if logger.level:
                return record.levelno >= logger.level
            logger = logger.parent
        return record.levelno >= self.root_level


class McpLogForwarder(logging.Handler):
    """Sends records emitted inside :meth:`capture` to the request's client."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)

    def emit(self, record: logging.LogRecord) -> None:
        target = _current.get()
        if target is None or target.owner is not self or record.levelno < target.min_level:
            return  # with two servers in one process, each record goes out once
        if record.name.startswith(("mcp.", "httpx", "httpcore", "uvicorn", "sse_starlette")) or record.name == "mcp":
            return  # the transport's own chatter would recurse or leak internals
        if getattr(record, OPERATOR_ONLY, False):
            return  # a failure's text and stack: the client has the error result, not these
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
        state = _RequestLogs(send=send, min_level=min_level, loop=asyncio.get_running_loop(), owner=self)
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
        """Forward records while serving, whatever level the console logs at.

        What a client receives is decided by its ``logging/setLevel``, not by the
        server's console level, so the root logger lets every record through while the
        server runs; the handlers already on it keep filtering at the old level (the
        console is no louder), and the transport libraries keep their own level (their
        debug chatter is never forwarded anyway). All of it is undone on exit.
        """
        root = logging.getLogger()
        saved_root = root.level
        as_before = _AsBefore(saved_root)
        handlers = list(root.handlers)
        saved_quiet: list[logging.Logger] = []
        for name in _QUIET:
            quiet = logging.getLogger(name)
            if quiet.level == logging.NOTSET:
                saved_quiet.append(quiet)
                quiet.setLevel(root.getEffectiveLevel())
        for handler in handlers:
            handler.addFilter(as_before)
        root.setLevel(logging.DEBUG)
        root.addHandler(self)
        try:
            yield
        finally:
            root.removeHandler(self)
            root.setLevel(saved_root)
            for handler in handlers:
                handler.removeFilter(as_before)
            for quiet in saved_quiet:
                quiet.setLevel(logging.NOTSET)
