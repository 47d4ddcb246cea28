"""`make demo-mcp` (python -m mcs_mcp.demo): a bridged SDK server and a gen-mcp file, on loopback."""

from __future__ import annotations

import json
import os
from urllib.parse import urlsplit

import httpx
import pytest
from mcs_mcp import demo
from mcs_mcp.client_driver import MCPDriver
from support.slow_clients import SlowClient

from mcs.server.connections import ConnectionLimits


def _results(out: str, header: str) -> list[object]:
    return [json.loads(part.split("\n\n")[0]) for part in out.split(f"== Result of the real {header} ==\n")[1:]]


def test_the_demo_prints_both_prompts_and_the_results_of_the_real_calls(capsys: pytest.CaptureFixture[str]) -> None:
    demo.main()
    out = capsys.readouterr().out
    assert out.count("== System prompt for gpt-4o ==") == 2
    assert "# Tools of units" in out and "type to_fahrenheit" in out and "type to_miles" in out
    assert "# Tools of weather-station" in out and "type get_weather" in out
    assert _results(out, "MCP call") == [70.7]
    assert _results(out, "HTTP call made by the file's tool") == [{"city": "Lisbon", "celsius": 21.5, "sky": "sunny"}]


def test_the_demo_leaves_the_environment_as_it_found_it() -> None:
    assert demo.WEATHER_API_VARIABLE not in os.environ
    demo.main()
    assert demo.WEATHER_API_VARIABLE not in os.environ


def test_the_demo_mcp_server_answers_a_real_client_and_stops_after_use() -> None:
    with demo.serve_mcp_server() as url, MCPDriver(url=url) as driver:
        assert driver.call_tool("to_miles", {"kilometres": 16.09344}) == 10.0
    with pytest.raises(httpx.ConnectError):
        httpx.post(url, json={})


def test_the_demo_mcp_server_closes_a_silent_connection_at_the_head_deadline() -> None:
    # It ran a bare uvicorn: a client that sent nothing was held until it left.
    limits = ConnectionLimits(head_timeout=0.3)
    with demo.serve_mcp_server(limits=limits) as url, SlowClient(int(urlsplit(url).port or 0)) as silent:
        took = silent.wait_closed(within=3)
        assert silent.closed_by_server and took < 1.5
        assert silent.received.startswith(b"HTTP/1.1 408 ")


def test_the_weather_api_answers_404_for_an_unknown_city_and_stops_after_use() -> None:
    with demo.serve_weather_api() as base_url:
        assert httpx.get(f"{base_url}/weather/Oslo").json()["sky"] == "snow"
        assert httpx.get(f"{base_url}/weather/Atlantis").status_code == 404
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{base_url}/weather/Oslo")
