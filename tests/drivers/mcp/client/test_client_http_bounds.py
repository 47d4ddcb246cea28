"""An HTTP MCP server cannot grow the bridge without bound: over streamable HTTP and the
legacy HTTP+SSE transport, a message longer than ``max_message_bytes`` (a JSON body, one SSE
event) is never held whole; the session ends with a reason every waiting call hears at once
(``mcs_mcp.client.http_bounds``). Many small events on one stream are fine: the bound is per
message."""

from __future__ import annotations

import asyncio
import gzip
import json
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import uvicorn
from mcs_mcp.client_driver import MCPDriver
from support.servers import asgi_body, uvicorn_on_loopback

from mcs.errors import ExecutionError

BOUND = 64 * 1024
REFUSED = f"more than {BOUND} bytes"

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

TOOLS = ["json", "json_stalled", "json_gzip", "sse_endless", "sse_many", "sse_one", "hang", "events_read_whole"]


#: Small events, four times ``BOUND`` bytes of them: fine in an event stream, not in a body read whole.
MANY_EVENTS = b"event: message\ndata: {}\n\n" * (4 * BOUND // 25)


def _answer(ident: Any, text: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "result": {
        "content": [{"type": "text", "text": text}]}}).encode()


def _answer_of(ident: Any, size: int) -> bytes:
    """A tools/call answer of exactly ``size`` bytes of JSON."""
    return _answer(ident, "x" * (size - len(_answer(ident, ""))))


def _event(message: bytes) -> bytes:
    return b"event: message\ndata: " + message + b"\n\n"


class RawMCP:
    """An MCP server written raw (an ASGI app) so it can misbehave, over streamable HTTP
    (``POST /mcp``) and HTTP+SSE (``GET /sse``, ``POST /messages``).

    It answers initialize and tools/list; a tools/call of the tool named ``T`` with
    ``{"size": N}`` answers as ``T`` says: ``json``: a JSON body of N bytes, chunked (with
    ``length``: with its Content-Length); ``json_stalled``: a Content-Length of N and 16
    bytes of body, then nothing; ``json_gzip``: N bytes of JSON, gzip-encoded;
    ``sse_endless``: one event whose data line has N bytes and never ends; ``sse_many``:
    N bytes of small log events, then the answer; ``sse_one``: the answer as one event of
    exactly N bytes, framing included; ``hang``: nothing at all; ``events_read_whole``:
    small events past the bound in a body the SDK reads whole (a redirect's; over HTTP+SSE
    the POST's).
    """

    def __init__(self) -> None:
        self.streams: dict[str, asyncio.Queue[bytes]] = {}
        self.called: list[str] = []  # the tools called, in order

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        assert scope["type"] == "http"
        if scope["method"] == "GET" and scope["path"] == "/sse":
            await self._legacy_stream(receive, send)
            return
        if scope["method"] != "POST":
            await _respond(send, 405, [], [b""])
            return
        request = json.loads(await asgi_body(receive))
        ident, method = request.get("id"), request.get("method")
        if scope["path"] == "/messages":  # legacy: answers go on the GET stream, or (json) in this body
            stream = self.streams[scope["query_string"].decode().partition("=")[2]]
            if method == "tools/call" and request["params"]["name"] == "json":
                await _respond(send, 202, [], _chunks(_answer_of(ident, request["params"]["arguments"]["size"])))
                return
            if method == "tools/call" and request["params"]["name"] == "events_read_whole":
                await _respond(send, 202, [(b"content-type", b"text/event-stream")], _chunks(MANY_EVENTS))
                return
            await _respond(send, 202, [], [b"Accepted"])
            if ident is not None:
                for event in self._answer_events(request):
                    await stream.put(event)
            return
        if ident is None:
            await _respond(send, 202, [], [b""])
            return
        if method != "tools/call":
            (message,) = self._answer_events(request)
            await _respond(send, 200, [(b"content-type", b"application/json")], [message])
            return
        tool, arguments = request["params"]["name"], request["params"].get("arguments") or {}
        self.called.append(tool)
        size = int(arguments.get("size", 0))
        json_type = (b"content-type", b"application/json")
        sse_type = (b"content-type", b"text/event-stream")
        if tool == "json":
            answer = _answer_of(ident, size)
            length = [(b"content-length", str(len(answer)).encode())] if arguments.get("length") else []
            await _respond(send, 200, [json_type, *length], _chunks(answer))
        elif tool == "json_stalled":
            await send({"type": "http.response.start", "status": 200,
                        "headers": [json_type, (b"content-length", str(size).encode())]})
            await send({"type": "http.response.body", "body": _answer(ident, "")[:16], "more_body": True})
            await _until_gone(receive)
        elif tool == "json_gzip":
            packed = gzip.compress(_answer_of(ident, size))
            await _respond(send, 200, [json_type, (b"content-encoding", b"gzip"),
                                       (b"content-length", str(len(packed)).encode())], [packed])
        elif tool == "sse_endless":
            await send({"type": "http.response.start", "status": 200, "headers": [sse_type]})
            for chunk in _chunks(b"event: message\ndata: " + b"x" * size):
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await _until_gone(receive)
        elif tool == "sse_many":
            log = _event(json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                                     "params": {"level": "debug", "data": "y" * 1000}}).encode())
            events = [log] * (size // len(log) + 1) + [_event(_answer(ident, "done"))]
            await _respond(send, 200, [sse_type], events)
        elif tool == "events_read_whole" and not scope["query_string"]:  # a redirect's body is read whole
            await _respond(send, 307, [(b"location", b"/mcp?again=1"), sse_type], _chunks(MANY_EVENTS))
        elif tool == "events_read_whole":
            await _respond(send, 200, [json_type], [_answer(ident, "followed")])
        elif tool == "sse_one":
            await _respond(send, 200, [sse_type], [_event(_answer_of(ident, size - len(_event(b""))))])
        else:  # hang
            await _until_gone(receive)

    def _answer_events(self, request: dict[str, Any]) -> list[bytes]:
        ident, method = request["id"], request["method"]
        if method == "initialize":
            result: dict[str, Any] = {"protocolVersion": request["params"]["protocolVersion"],
                                      "capabilities": {"tools": {}}, "serverInfo": {"name": "raw", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": [{"name": name, "inputSchema": {"type": "object"}} for name in TOOLS]}
        elif method == "tools/call":  # legacy transport: the answer as one event of the size asked
            size = request["params"]["arguments"]["size"]
            if request["params"]["name"] == "sse_endless":
                return [b"event: message\ndata: " + b"x" * size]
            return [_event(_answer_of(ident, size - len(_event(b""))))]
        else:
            result = {}
        return [json.dumps({"jsonrpc": "2.0", "id": ident, "result": result}).encode()]

    async def _legacy_stream(self, receive: Receive, send: Send) -> None:
        session = str(len(self.streams))
        queue = self.streams[session] = asyncio.Queue()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")]})
        await queue.put(b"event: endpoint\ndata: /messages?session_id=" + session.encode() + b"\n\n")
        gone = asyncio.ensure_future(_until_gone(receive))
        while not gone.done():
            got = asyncio.ensure_future(queue.get())
            await asyncio.wait([got, gone], return_when=asyncio.FIRST_COMPLETED)
            if not got.done():
                got.cancel()
                break
            data = got.result()
            if not data.endswith(b"\n\n"):
                data = data if data.startswith(b"event:") else _event(data)
            for chunk in _chunks(data):
                await send({"type": "http.response.body", "body": chunk, "more_body": True})


def _chunks(data: bytes, size: int = 16 * 1024) -> list[bytes]:
    return [data[i:i + size] for i in range(0, len(data), size)] or [b""]


async def _respond(send: Send, status: int, headers: list[tuple[bytes, bytes]], chunks: list[bytes]) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})
    for i, chunk in enumerate(chunks):
        await send({"type": "http.response.body", "body": chunk, "more_body": i < len(chunks) - 1})


async def _until_gone(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


@contextmanager
def raw_server(app: RawMCP | None = None) -> Iterator[str]:
    config = uvicorn.Config(app or RawMCP(), log_level="critical", lifespan="off")
    with uvicorn_on_loopback(config) as base:
        yield base


def _driver(base: str, *, sse: bool = False) -> MCPDriver:
    url = base + ("/sse" if sse else "/mcp")
    return MCPDriver(url=url, sse=sse, name="raw", timeout=20, max_message_bytes=BOUND)


def _assert_refused_at_the_bound(refused: pytest.ExceptionInfo[ExecutionError]) -> None:
    assert REFUSED in refused.value.message
    assert "max_message_bytes" in refused.value.message
    assert "'raw'" in refused.value.message  # the server is named


@pytest.mark.parametrize(("tool", "arguments"), [
    ("json", {"size": BOUND + 1}),
    ("json", {"size": BOUND + 1, "length": True}),
    ("json_gzip", {"size": 4 * BOUND}),
    ("sse_endless", {"size": 4 * BOUND}),
])
def test_a_message_past_the_bound_ends_the_session_and_the_next_call_opens_a_new_one(
        tool: str, arguments: dict[str, Any]) -> None:
    with raw_server() as base, _driver(base) as driver:
        with pytest.raises(ExecutionError) as refused:  # not ToolTimeoutError: the bound ended it
            driver.call_tool(tool, arguments)
        _assert_refused_at_the_bound(refused)
        assert driver.get_status()["servers"]["raw"]["gone"] == refused.value.message.partition("could not run: ")[2]
        assert driver.call_tool("json", {"size": 100})
        with pytest.raises(ExecutionError) as again:  # the new session is bounded as well
            driver.call_tool(tool, arguments)
        _assert_refused_at_the_bound(again)


def test_the_refusal_names_the_server_without_the_credentials_or_query_of_its_url() -> None:
    with raw_server() as base:
        host = base.removeprefix("http://")
        url = f"http://user:pw-s3cret@{host}/mcp?api_key=q-s3cret#f-s3cret"
        with (MCPDriver(url=url, name="raw", timeout=20, max_message_bytes=BOUND) as driver,
              pytest.raises(ExecutionError) as refused):
            driver.call_tool("json", {"size": BOUND + 1})
    _assert_refused_at_the_bound(refused)
    assert f"http://{host}/mcp" in refused.value.message and "s3cret" not in refused.value.message


def test_a_content_length_past_the_bound_is_refused_before_the_body_is_read() -> None:
    with raw_server() as base, _driver(base) as driver:
        with pytest.raises(ExecutionError) as refused:  # the body never comes: only the header can end it
            driver.call_tool("json_stalled", {"size": BOUND + 1})
        assert f"{BOUND + 1} announced by Content-Length" in refused.value.message


@pytest.mark.parametrize("tool", ["json", "sse_one"])
def test_a_message_of_exactly_the_bound_is_read(tool: str) -> None:
    with raw_server() as base, _driver(base) as driver:
        text = driver.call_tool(tool, {"size": BOUND})
        assert set(text) == {"x"} and len(text) > BOUND - 200
        assert set(driver.call_tool("json", {"size": 200})) == {"x"}  # and the session goes on


def test_many_small_events_past_the_bound_in_all_are_read() -> None:
    with raw_server() as base, _driver(base) as driver:
        assert driver.call_tool("sse_many", {"size": 4 * BOUND}) == "done"


async def test_a_refusal_fails_every_waiting_call_at_once() -> None:
    app = RawMCP()
    with raw_server(app) as base:
        driver = _driver(base)
        try:
            waiting = asyncio.ensure_future(driver.acall_tool("hang", {}))
            for _ in range(1000):  # until the server holds the call (a later call would fail anyway)
                if "hang" in app.called:
                    break
                await asyncio.sleep(0.01)
            assert "hang" in app.called and not waiting.done()
            with pytest.raises(ExecutionError) as refused:
                await driver.acall_tool("json", {"size": BOUND + 1})
            _assert_refused_at_the_bound(refused)
            with pytest.raises(ExecutionError) as heard:  # the server never answers it: only the refusal ends it
                await waiting
            _assert_refused_at_the_bound(heard)
        finally:
            await driver.aclose()


@pytest.mark.parametrize(("tool", "what"), [("json", "a POST's body"), ("sse_one", "one event"),
                                            ("sse_endless", "an event that never ends")])
def test_the_legacy_sse_transport_is_bounded_too(tool: str, what: str) -> None:
    with raw_server() as base, _driver(base, sse=True) as driver:
        with pytest.raises(ExecutionError) as refused:
            driver.call_tool(tool, {"size": 2 * BOUND})
        _assert_refused_at_the_bound(refused)


def test_the_legacy_sse_transport_reads_a_message_under_the_bound() -> None:
    with raw_server() as base, _driver(base, sse=True) as driver:
        assert set(driver.call_tool("sse_one", {"size": BOUND})) == {"x"}


@pytest.mark.parametrize("sse", [False, True], ids=["a redirect's body", "a legacy POST's body"])
def test_a_body_read_whole_is_one_message_even_when_it_says_it_is_an_event_stream(sse: bool) -> None:
    with raw_server() as base, _driver(base, sse=sse) as driver:
        with pytest.raises(ExecutionError) as refused:
            driver.call_tool("events_read_whole", {})
        _assert_refused_at_the_bound(refused)
