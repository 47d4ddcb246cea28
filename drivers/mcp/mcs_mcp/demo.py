"""`make demo-mcp`: real MCP round trips through both MCP drivers, with no network and no API key.

Part one bridges an MCP server: a small unit converter built with the official ``mcp``
SDK runs over streamable HTTP on a free loopback port, the ``mcp`` driver connects to it
and lists its tools, prints the system prompt a model would get, feeds a recorded LLM
answer to ``process_llm_response`` (a real ``tools/call``) and prints the result.

Part two loads a gen-mcp file (``demo_mcpfile.yaml``) with the ``mcpfile`` driver; its
tool is an HTTP request to a small weather API that the demo serves on loopback. The
same steps follow: prompt, recorded LLM answer, the real HTTP call, the result.

Everything the demo starts is stopped before it returns.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import uvicorn
from mcp.server.mcpserver import MCPServer

from mcs.demo import serve_on_loopback
from mcs.driver import ToolDriver
from mcs.server.connections import ConnectionLimits, uvicorn_settings
from mcs_mcp.client_driver import MCPDriver
from mcs_mcp.mcpfile.driver import MCPFileDriver

MCP_FILE = Path(__file__).with_name("demo_mcpfile.yaml")
#: The environment variable ``demo_mcpfile.yaml`` takes the weather API's base URL from.
WEATHER_API_VARIABLE = "MCS_DEMO_WEATHER_API"
MODEL = "gpt-4o"
#: Recorded LLM outputs: MCS JSON for the bridged server, Hermes/Qwen style for the file.
BRIDGE_ANSWER = '{"tool": "to_fahrenheit", "arguments": {"celsius": 21.5}}'
MCP_FILE_ANSWER = '<tool_call>{"name": "get_weather", "arguments": {"city": "Lisbon"}}</tool_call>'
WEATHER = {
    "lisbon": {"city": "Lisbon", "celsius": 21.5, "sky": "sunny"},
    "oslo": {"city": "Oslo", "celsius": -3.0, "sky": "snow"},
}


def unit_server() -> MCPServer:
    """The bridged MCP server: two conversion tools, built with the official SDK."""
    server = MCPServer("units", version="1.0.0", log_level="WARNING")  # the SDK sets up logging

    @server.tool(description="Convert a temperature from degrees Celsius to degrees Fahrenheit.")
    def to_fahrenheit(celsius: float) -> float:
        return round(celsius * 9 / 5 + 32, 2)

    @server.tool(description="Convert a distance from kilometres to miles.")
    def to_miles(kilometres: float) -> float:
        return round(kilometres / 1.609344, 3)

    return server


@contextmanager
def serve_mcp_server(timeout: float = 20.0, limits: ConnectionLimits | None = None) -> Iterator[str]:
    """Serve :func:`unit_server` over streamable HTTP on a free loopback port, with the
    bounds on slow clients every MCS endpoint has (``limits``, default
    :class:`~mcs.server.connections.ConnectionLimits`).

    Yields the endpoint's URL once the server answers; stops it (and frees the port) after.
    Raises RuntimeError when the server does not start within ``timeout`` seconds.
    """
    app = unit_server().streamable_http_app()
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, **uvicorn_settings(limits)))
    with closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        try:
            deadline = time.monotonic() + timeout
            while not server.started:
                if not thread.is_alive() or time.monotonic() > deadline:
                    raise RuntimeError("the demo MCP server did not start")
                time.sleep(0.01)
            yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
        finally:
            server.should_exit = True
            thread.join(10)


class _Weather(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: every answer carries Content-Length
    wbufsize = -1
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # keep the demo output clean
        pass

    def do_GET(self) -> None:
        prefix = "/weather/"
        city = unquote(self.path[len(prefix):]).lower() if self.path.startswith(prefix) else ""
        found = WEATHER.get(city)
        body = json.dumps(found if found is not None else {"error": f"no weather for {city!r}"}).encode()
        self.send_response(200 if found is not None else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def serve_weather_api() -> Iterator[str]:
    """Serve the weather API on a free loopback port; yield its base URL; stop it after."""
    with serve_on_loopback(_Weather) as url:
        yield url


@contextmanager
def _environment(name: str, value: str) -> Iterator[None]:
    """Set an environment variable inside the block; restore what was there after."""
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


def _round_trip(driver: ToolDriver, answer: str, call: str) -> None:
    print(f"== System prompt for {MODEL} ==\n{driver.get_driver_system_message(MODEL)}\n")
    print(f"== Recorded LLM output ==\n{answer}\n")
    result = driver.process_llm_response(answer)
    print(f"== Result of the real {call} ==\n{json.dumps(result, indent=2)}\n")


def main() -> None:
    with serve_mcp_server() as url, MCPDriver(url=url, name="units") as bridge:
        print(f"== MCP server 'units' (official SDK) on {url}, bridged by the mcp driver ==\n")
        _round_trip(bridge, BRIDGE_ANSWER, "MCP call")
    with serve_weather_api() as base_url, _environment(WEATHER_API_VARIABLE, base_url), \
            MCPFileDriver(MCP_FILE) as mcp_file:
        print(f"== gen-mcp file {MCP_FILE.name} (mcpfile driver); its tool calls the weather API on {base_url} ==\n")
        _round_trip(mcp_file, MCP_FILE_ANSWER, "HTTP call made by the file's tool")


if __name__ == "__main__":
    main()
