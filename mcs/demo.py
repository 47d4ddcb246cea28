"""The embedded default driver and the `make demo` round trip (no network, no API key),
and :func:`serve_on_loopback`, which the drivers' demos and peers serve their APIs with."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from mcs.functions import FunctionDriver, tool

_FORECASTS = {"paris": (18.5, "light rain"), "tokyo": (24.0, "clear"), "berlin": (12.0, "cloudy")}


@tool
def get_weather(city: str, unit: str = "celsius") -> dict[str, Any]:
    """Current weather for a city (a fixed table: Paris, Tokyo, Berlin)."""
    temperature, sky = _FORECASTS.get(city.lower(), (20.0, "unknown"))
    if unit == "fahrenheit":
        temperature = round(temperature * 9 / 5 + 32, 1)
    return {"city": city, "temperature": temperature, "unit": unit, "sky": sky}


@tool
def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


@contextmanager
def serve_on_loopback(
    handler: type[BaseHTTPRequestHandler], *, poll_interval: float = 0.5,
    server_class: type[ThreadingHTTPServer] | None = None,
) -> Iterator[str]:
    """Serve ``handler`` on a free loopback port from a thread for the block; yields the base
    URL (``http://127.0.0.1:PORT``, no slash). ``server_class``: a ``ThreadingHTTPServer``
    (the default) or a subclass of it. The server is shut down and its port freed after;
    request threads are daemons."""
    from http.server import ThreadingHTTPServer

    server = (server_class or ThreadingHTTPServer)(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": poll_interval}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class DemoDriver(FunctionDriver):
    """An in-memory driver with two tools, registered as ``functions``."""

    def __init__(self, *, name: str = "functions", **options: Any) -> None:
        super().__init__([get_weather, add], name=name, **options)


def main() -> None:
    import json

    driver = DemoDriver()
    model = "claude-3-5-sonnet"
    print(f"== System prompt for {model} ==\n{driver.get_driver_system_message(model)}\n")
    llm_output = '{"tool": "get_weather", "arguments": {"city": "Paris"}}'
    print(f"== Recorded LLM output ==\n{llm_output}\n")
    from mcs.parsing import parse_tool_calls

    print(f"== Parsed ==\n{parse_tool_calls(llm_output)}\n")
    print(f"== Result ==\n{json.dumps(driver.process_llm_response(llm_output))}")


if __name__ == "__main__":
    main()
