"""Bad requests get INVALID_INPUT with a clear status, never a 500, and the server keeps serving."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import BaseModel
from rfc0001_helpers import StdioClient, WsClient, running_app

from mcs.server import McpServer, tool


@pytest.fixture
def http(url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=url, timeout=10) as client:
        yield client


def _still_serving(http: httpx.Client) -> None:
    response = http.post("/mcp/execute", json={"tool": "echo", "arguments": {"text": "ok"}})
    assert response.status_code == 200 and response.json()["result"]["text"] == "ok"


JSON = {"content-type": "application/json"}


@pytest.mark.parametrize(("body", "fragment"), [
    (b"{not json", "not valid JSON"),
    (b"\xff\xfe", "not valid UTF-8"),
    (b"[1, 2]", "got an array"),
    (b'{"tool": 3}', "'tool' must be a non-empty string"),
    (b'{"tool": "echo", "argument": {}}', "Unknown key(s) 'argument'"),
    (b"[" * 2000 + b"]" * 2000, "nested too deeply"),
    (b"", "not valid JSON"),
    (b'{"tool": "echo", "arguments": {"text": "a", "times": NaN}}', "not valid JSON"),
    (b'{"tool": "echo", "arguments": {"text": "a", "times": -Infinity}}', "not valid JSON"),
    (b'{"tool": "echo", "arguments": {"text": "a", "times": 1e999}}', "not valid JSON"),
])
def test_malformed_bodies_are_invalid_input(http: httpx.Client, body: bytes, fragment: str) -> None:
    response = http.post("/mcp/execute", content=body, headers=JSON)
    assert response.status_code in (400, 413)
    assert response.json()["error"] == "INVALID_INPUT"
    assert fragment in response.json()["message"]
    _still_serving(http)


def test_an_oversized_body_is_413_invalid_input(http: httpx.Client) -> None:
    body = json.dumps({"tool": "echo", "arguments": {"text": "x" * 10_000}})
    response = http.post("/mcp/execute", content=body, headers=JSON)
    assert response.status_code == 413
    assert response.json() == {"error": "INVALID_INPUT", "message": "The request body exceeds 4096 bytes."}
    _still_serving(http)


def test_an_oversized_chunked_body_is_413_too(http: httpx.Client) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"tool": "echo", "arguments": {"text": "'
        for _ in range(10):
            yield b"x" * 1000
        yield b'"}}'

    response = http.post("/mcp/execute", content=chunks(), headers=JSON)
    assert response.status_code == 413
    assert response.json()["error"] == "INVALID_INPUT"


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded",
                                          "application/json; charset=latin-1"])
def test_a_wrong_content_type_is_415_invalid_input(http: httpx.Client, content_type: str | None) -> None:
    headers = {"content-type": content_type} if content_type else {}
    response = http.post("/mcp/execute", content=b'{"tool": "echo"}', headers=headers)
    assert response.status_code == 415
    assert response.json()["error"] == "INVALID_INPUT"
    assert "Content-Type must be application/json" in response.json()["message"]
    assert len(response.headers["x-request-id"]) == 32


def test_json_with_a_utf8_charset_is_accepted(http: httpx.Client) -> None:
    response = http.post("/mcp/execute", content=b'{"tool": "echo", "arguments": {"text": "\xc3\xa9"}}',
                         headers={"content-type": "application/json; charset=UTF-8"})
    assert response.status_code == 200 and response.json()["result"]["text"] == "é"


@pytest.mark.parametrize(("headers", "fragment"), [
    ({"x-agent-id": "a" * 300}, "X-Agent-Id must be a string of 1 to 256"),
    ({"x-request-id": "has spaces"}, "X-Request-Id must be 1 to 128"),
    ({"x-agent-meta-bad.key": "v"}, "Agent metadata key"),
])
def test_bad_identity_headers_are_invalid_input(http: httpx.Client, headers: dict[str, str],
                                                fragment: str) -> None:
    response = http.post("/mcp/execute", json={"tool": "echo", "arguments": {"text": "x"}},
                         headers=headers)
    assert response.status_code == 400
    assert response.json()["error"] == "INVALID_INPUT" and fragment in response.json()["message"]


def test_unknown_paths_and_methods_answer_in_the_error_shape(http: httpx.Client) -> None:
    missing = http.get("/nope")
    assert missing.status_code == 404 and missing.json()["error"] == "INVALID_INPUT"
    wrong = http.get("/mcp/execute")
    assert wrong.status_code == 405 and wrong.json()["error"] == "INVALID_INPUT"
    assert http.post("/mcp/capabilities").status_code == 405


def test_every_answer_carries_a_request_id_header(http: httpx.Client) -> None:
    given = http.get("/mcp/capabilities", headers={"x-request-id": "cap-1"})
    assert given.headers["x-request-id"] == "cap-1"
    fresh = http.post("/mcp/execute", json={"tool": "nope"})
    assert len(fresh.headers["x-request-id"]) == 32


def test_websocket_frames_that_cannot_be_read_get_an_error_reply(url: str) -> None:
    with ExitStack() as stack:
        client = WsClient(url)
        stack.callback(client.close)
        client.ws.send("{broken")
        reply = json.loads(client.ws.recv(timeout=10))
        assert reply["id"] is None and reply["status"] == 400
        assert reply["body"]["error"] == "INVALID_INPUT"
        client.ws.send(json.dumps({"id": "x", "method": "execute", "tool": "echo",
                                   "arguments": {"text": "y" * 5000}}))
        reply = json.loads(client.ws.recv(timeout=10))
        assert reply["status"] == 413 and reply["body"]["error"] == "INVALID_INPUT"
        client.ws.send(json.dumps({"id": 9, "method": "delete"}))
        reply = json.loads(client.ws.recv(timeout=10))
        assert reply["id"] == 9 and "'method' must be" in reply["body"]["message"]
        status, body = client.capabilities()
        assert status == 200 and body["server"] == "sample"


@pytest.mark.parametrize("transport", ["websocket", "stdio"])
@pytest.mark.parametrize("frame_id", [b"NaN", b"Infinity", b"-Infinity", b"1e999"])
def test_a_frame_id_json_cannot_carry_gets_an_error_reply_and_the_server_keeps_serving(
    url: str, tmp_path: Path, transport: str, frame_id: bytes
) -> None:
    frame = b'{"id": ' + frame_id + b', "method": "execute", "tool": "echo", "arguments": {"text": "a"}}'
    with ExitStack() as stack:
        client: WsClient | StdioClient
        if transport == "stdio":
            client = StdioClient(tmp_path / "audit.jsonl")
            stack.callback(client.close)
            reply = client.send_raw(frame + b"\n")
        else:
            client = WsClient(url)
            stack.callback(client.close)
            client.ws.send(frame.decode())
            reply = json.loads(client.ws.recv(timeout=10))
        assert reply["id"] is None and reply["status"] == 400
        assert reply["body"]["error"] == "INVALID_INPUT" and "not valid JSON" in reply["body"]["message"]
        status, _, body = client.execute("echo", {"text": "still"})
        assert status == 200 and body["result"]["text"] == "still"


def test_websocket_handshake_headers_are_the_default_context(url: str) -> None:
    from websockets.sync.client import connect

    ws_url = url.replace("http://", "ws://") + "/mcp/ws"
    with connect(ws_url, additional_headers={"X-Agent-Id": "ws-agent"}) as ws:
        ws.send(json.dumps({"id": 1, "method": "execute", "tool": "echo", "arguments": {"text": "a"}}))
        assert json.loads(ws.recv(timeout=10))["body"]["result"]["agent_id"] == "ws-agent"
        ws.send(json.dumps({"id": 2, "method": "execute", "tool": "echo", "arguments": {"text": "a"},
                            "context": {"agent_id": "frame-agent"}}))
        assert json.loads(ws.recv(timeout=10))["body"]["result"]["agent_id"] == "frame-agent"


def test_stdio_lines_that_cannot_be_read_get_an_error_reply(tmp_path: Path) -> None:
    client = StdioClient(tmp_path / "audit.jsonl")
    try:
        reply = client.send_raw(b"not json\n")
        assert reply["status"] == 400 and reply["body"]["error"] == "INVALID_INPUT"
        reply = client.send_raw(b"x" * 10_000 + b"\n")
        assert reply["status"] == 413 and reply["body"]["error"] == "INVALID_INPUT"
        status, body = client.capabilities()
        assert status == 200 and body["version"] == "1.2.3"
    finally:
        client.close()


def test_a_client_that_disconnects_mid_body_does_not_hurt_the_server(url: str, http: httpx.Client) -> None:
    import socket

    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as raw:
        raw.sendall(b"POST /mcp/execute HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    b"Content-Length: 1000\r\n\r\n{\"tool\": \"ec")
    assert http.get("/mcp/capabilities").status_code == 200
    _still_serving(http)


def test_a_websocket_handshake_with_bad_identity_is_refused(url: str) -> None:
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    ws_url = url.replace("http://", "ws://") + "/mcp/ws"
    with pytest.raises(InvalidStatus) as info, connect(ws_url, additional_headers={"X-Request-Id": "bad id"}):
        pass
    assert info.value.response.status_code == 403


class _Anything(BaseModel):
    data: Any = None


class _Done(BaseModel):
    done: bool


def _store_server(ran: list[Any]) -> McpServer:
    @tool(name="store", timeout_ms=10_000, idempotent=False)
    def store(req: _Anything) -> _Done:
        ran.append(req.data)
        return _Done(done=True)

    server = McpServer(name="deep", version="1")
    server.add_tool(store)
    return server


@pytest.mark.parametrize("depth", [128, 300, 900])
def test_arguments_nested_too_deeply_are_invalid_input_and_nothing_runs(depth: int) -> None:
    ran: list[Any] = []
    server = _store_server(ran)
    body = b'{"tool": "store", "arguments": {"data": ' + b"[" * depth + b"]" * depth + b"}}"
    try:
        with running_app(server.asgi_app()) as base, httpx.Client(base_url=base, timeout=10) as client:
            response = client.post("/mcp/execute", content=body, headers=JSON)
            assert response.status_code == 400, response.text
            assert response.json()["error"] == "INVALID_INPUT"
            assert "nested too deeply" in response.json()["message"]
            assert ran == []
            deepest = b'{"tool": "store", "arguments": {"data": ' + b"[" * 127 + b"]" * 127 + b"}}"
            assert client.post("/mcp/execute", content=deepest, headers=JSON).status_code == 200
            assert len(ran) == 1
    finally:
        server.close()


@pytest.mark.parametrize("depth", [230, 300, 900])
def test_arguments_past_pydantics_nesting_limit_are_invalid_input_in_process(depth: int) -> None:
    ran: list[Any] = []
    server = _store_server(ran)
    data: Any = []
    for _ in range(depth):
        data = [data]
    try:
        outcome = server.execute("store", {"data": data})
    finally:
        server.close()
    assert outcome.status == 400 and outcome.body()["error"] == "INVALID_INPUT"
    assert "nested too deeply" in outcome.body()["message"] and ran == []


class _BrokenCapabilities:
    """A backend whose capabilities document fails to build (a bug in the server)."""

    def __init__(self, server: McpServer) -> None:
        self.server = server
        self.name, self.version, self.max_body_bytes = server.name, server.version, server.max_body_bytes
        self.execute, self.aexecute = server.execute, server.aexecute

    def capabilities(self) -> dict[str, Any]:
        raise RuntimeError("the document could not be built")


def test_a_server_failure_answers_500_over_websocket_and_stdio_as_over_http() -> None:
    import io

    from mcs.server.app import create_app
    from mcs.server.stdio import serve_stdio

    ran: list[Any] = []
    server = _store_server(ran)
    backend = _BrokenCapabilities(server)
    frames = [{"id": 1, "method": "capabilities"}, {"id": 2, "method": "execute", "tool": "store"}]
    try:
        with running_app(create_app(backend)) as base:
            assert httpx.get(base + "/mcp/capabilities").status_code == 500
            ws = WsClient(base)
            try:
                over_ws = [ws.call(frame) for frame in frames]
            finally:
                ws.close()
        out = io.BytesIO()
        serve_stdio(backend, io.BytesIO("".join(json.dumps(f) + "\n" for f in frames).encode()), out)
        over_stdio = [json.loads(line) for line in out.getvalue().decode().splitlines()]
    finally:
        server.close()
    for replies in (over_ws, over_stdio):
        assert [(r["id"], r["status"]) for r in replies] == [(1, 500), (2, 200)]
        assert replies[0]["body"] == {"error": "EXECUTION_ERROR",
                                      "message": "The server failed unexpectedly; nothing was returned."}
