"""Real RFC-0001 servers on loopback, and a raw client per transport (for tests/server)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from support.servers import uvicorn_on_loopback
from websockets.sync.client import connect

from mcs.context import AgentContext
from mcs.server.wire import context_to_headers

HERE = Path(__file__).resolve().parent

from rfc0001_sample import build_server  # noqa: E402

__all__ = ["Audit", "HttpClient", "StdioClient", "WsClient", "build_server", "running_app"]


@contextmanager
def running_app(app: Any) -> Iterator[str]:
    """Serve an ASGI app with uvicorn on a free loopback port; yields its base URL."""
    config = uvicorn.Config(app, log_level="critical", lifespan="off", ws="websockets-sansio")
    with uvicorn_on_loopback(config, timeout=10) as url:
        yield url


def _context_dict(context: AgentContext | None) -> dict[str, Any] | None:
    if context is None:
        return None
    out: dict[str, Any] = {"agent_id": context.agent_id, "request_id": context.request_id}
    if context.model:
        out["model"] = context.model
    if context.metadata:
        out["metadata"] = dict(context.metadata)
    return out


class HttpClient:
    def __init__(self, url: str) -> None:
        self.client = httpx.Client(base_url=url, timeout=10)

    def capabilities(self) -> tuple[int, Any]:
        response = self.client.get("/mcp/capabilities")
        return response.status_code, response.json()

    def execute(self, tool: str, arguments: Any, context: AgentContext | None = None) -> tuple[int, str, Any]:
        headers = context_to_headers(context) if context else {}
        response = self.client.post("/mcp/execute", json={"tool": tool, "arguments": arguments},
                                    headers=headers)
        return response.status_code, response.headers["x-request-id"], response.json()

    def close(self) -> None:
        self.client.close()


class FrameClient:
    """Shared by WebSocket and STDIO: send a frame, read the reply with the same id."""

    def __init__(self) -> None:
        self.next_id = 0

    def _send(self, text: str) -> None:
        raise NotImplementedError

    def _recv(self) -> str:
        raise NotImplementedError

    def call(self, frame: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        frame = {"id": self.next_id, **frame}
        self._send(json.dumps(frame))
        reply = json.loads(self._recv())
        assert reply["id"] == self.next_id
        return reply

    def capabilities(self) -> tuple[int, Any]:
        reply = self.call({"method": "capabilities"})
        return reply["status"], reply["body"]

    def execute(self, tool: str, arguments: Any, context: AgentContext | None = None) -> tuple[int, str, Any]:
        frame: dict[str, Any] = {"method": "execute", "tool": tool, "arguments": arguments}
        if context is not None:
            frame["context"] = _context_dict(context)
        reply = self.call(frame)
        return reply["status"], reply["request_id"], reply["body"]


class WsClient(FrameClient):
    def __init__(self, url: str) -> None:
        super().__init__()
        self.stack = ExitStack()
        self.ws = self.stack.enter_context(connect(url.replace("http://", "ws://") + "/mcp/ws"))

    def _send(self, text: str) -> None:
        self.ws.send(text)

    def _recv(self) -> str:
        return str(self.ws.recv(timeout=10))

    def close(self) -> None:
        self.stack.close()


class StdioClient(FrameClient):
    def __init__(self, audit: Path) -> None:
        super().__init__()
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "rfc0001_sample.py"), str(audit)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )

    def send_raw(self, data: bytes) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()
        return json.loads(self._recv())

    def _send(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text.encode() + b"\n")
        self.proc.stdin.flush()

    def _recv(self) -> str:
        assert self.proc.stdout is not None
        return self.proc.stdout.readline().decode()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


class Audit:
    def __init__(self, path: Path) -> None:
        self.path = path

    def lines(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        return [json.loads(line) for line in self.path.read_text().splitlines()]

    def for_request(self, request_id: str) -> list[str]:
        return [line["hook"] for line in self.lines() if line["request_id"] == request_id]

    def errors(self, request_id: str) -> list[str]:
        return [line["error"] for line in self.lines()
                if line["request_id"] == request_id and "error" in line]
