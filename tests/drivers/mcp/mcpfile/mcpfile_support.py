"""Helpers for the mcpfile tests: MCP file builders, a recording HTTP server and a git
repository with a change."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from support.servers import serving_http

#: What the ``outside`` fixture's ``secret`` holds: a command output showing it read outside.
SECRET = "MARKER-5f1c-secret"


def mcp_file(*tools: dict[str, Any], **top: Any) -> dict[str, Any]:
    """A minimal 0.1.0 file with the given tools."""
    data: dict[str, Any] = {"mcpFileVersion": "0.1.0", "name": "test-server", "version": "1.0.0"}
    data.update(top)
    if tools:
        data["tools"] = list(tools)
    return data


def tool(name: str, invocation: dict[str, Any], properties: dict[str, Any] | None = None,
         required: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties or {}}
    if required:
        schema["required"] = required
    return {"name": name, "description": f"{name} tool", "inputSchema": schema, "invocation": invocation, **extra}


@dataclass
class Recorded:
    method: str
    path: str  # raw path as sent, percent-encoding intact
    query: list[tuple[str, str]]
    raw_query: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Reply:
    status: int = 200
    body: bytes = b'{"ok": true}'
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    stream_forever: bool = False
    drip_interval: float = 0.0  # with stream_forever: one byte per interval


class Recorder:
    """A real HTTP server on 127.0.0.1 that records every request and answers per path."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        #: Per path: one reply, or a list answered in turn (the last one repeats).
        self.replies: dict[str, Reply | list[Reply]] = {}
        self.default = Reply()
        #: TCP connections accepted so far, and those still open.
        self.connections = 0
        self.open_connections = 0
        self._count_lock = threading.Lock()
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def setup(self) -> None:
                super().setup()
                with recorder._count_lock:
                    recorder.connections += 1
                    recorder.open_connections += 1

            def finish(self) -> None:
                try:
                    super().finish()
                finally:
                    with recorder._count_lock:
                        recorder.open_connections -= 1

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                split = urlsplit(self.path)
                recorder.requests.append(Recorded(
                    self.command, split.path, parse_qsl(split.query, keep_blank_values=True), split.query,
                    {k.lower(): v for k, v in self.headers.items()}, body,
                ))
                reply = recorder.reply_for(split.path)
                if reply.delay:
                    time.sleep(reply.delay)
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                if reply.stream_forever:
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    chunk = b"x" if reply.drip_interval else b"x" * 65536
                    try:
                        while True:
                            if reply.drip_interval:
                                time.sleep(reply.drip_interval)
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                            self.wfile.flush()
                    except (BrokenPipeError, ConnectionResetError):
                        return
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(reply.body)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _handle

        self._running = ExitStack()
        self.url = self._running.enter_context(serving_http(Handler, poll_interval=0.02))

    def reply_for(self, path: str) -> Reply:
        planned = self.replies.get(path, self.default)
        if isinstance(planned, Reply):
            return planned
        return planned.pop(0) if len(planned) > 1 else planned[0]

    @property
    def last(self) -> Recorded:
        assert self.requests, "the recorder received no request"
        return self.requests[-1]

    def wait_until_closed(self, timeout: float = 5.0) -> int:
        """Wait up to ``timeout`` s for every client connection to close; the number still open."""
        end = time.monotonic() + timeout
        while self.open_connections and time.monotonic() < end:
            time.sleep(0.01)
        return self.open_connections

    def close(self) -> None:
        self._running.close()


def git_repository_with_a_change(folder: Path) -> None:
    """``folder`` (existing) as the operator's repository: one tracked file, changed in the work tree."""
    def run(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args], check=True,
                       capture_output=True, cwd=folder)

    run("init", "-q", ".")
    (folder / "f").write_text("a\n")
    run("add", "f")
    run("commit", "-q", "-m", "first")
    (folder / "f").write_text("b\n")
