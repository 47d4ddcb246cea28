"""Only the page itself reaches the inspector: the session token, a loopback Host, its own Origin."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import httpx
import pytest
from support.slow_clients import SlowClient, request_head

import mcs
from mcs.inspector import InspectorServer
from mcs.server.connections import ConnectionLimits


@mcs.tool
def wipe(table: str) -> str:
    """Delete every row of a table."""
    calls.append(table)
    return "wiped"


calls: list[str] = []


@pytest.fixture
def server() -> Iterator[InspectorServer]:
    calls.clear()
    with InspectorServer(mcs.FunctionDriver([wipe], name="db")) as running:
        yield running


def test_the_url_carries_a_random_token_on_a_free_loopback_port(server: InspectorServer) -> None:
    with InspectorServer(mcs.FunctionDriver([wipe])) as other:
        assert other.token != server.token and len(server.token) >= 40
        assert other.port != server.port
    assert server.url == f"http://127.0.0.1:{server.port}/{server.token}/"
    assert httpx.get(server.url).status_code == 200


def test_requests_without_the_token_are_refused(server: InspectorServer) -> None:
    root = f"http://127.0.0.1:{server.port}"
    for path in ("/", "/api/tools", "/static/js/main.js", f"/{server.token[:-1]}/api/tools", f"/x{server.token}/api/tools"):
        answer = httpx.get(root + path)
        assert answer.status_code == 403, path
        assert server.token not in answer.text
    refused = httpx.post(f"{root}/api/call", json={"tool": "wipe", "arguments": {"table": "users"}, "confirmation": "0" * 64})
    assert refused.status_code == 403 and calls == []


def test_a_foreign_host_or_origin_is_refused_even_with_the_token(server: InspectorServer) -> None:
    own = {"Origin": f"http://127.0.0.1:{server.port}", "Sec-Fetch-Site": "same-origin"}
    write = {"tool": "wipe", "arguments": {"table": "users"}}
    asked = httpx.post(server.url + "api/call", json=write, headers=own)
    assert asked.status_code == 409 and calls == []
    body = {**write, "confirmation": asked.json()["confirmation"]}  # even a valid confirmation
    attempts = [
        {"Host": "evil.example"},                                     # DNS rebinding
        {"Host": f"evil.example:{server.port}"},
        {"Origin": "http://evil.example"},                            # a page elsewhere
        {"Origin": "null"},
        {"Origin": f"http://127.0.0.1:{server.port + 1}"},            # another local app
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
    ]
    for headers in attempts:
        answer = httpx.post(server.url + "api/call", json=body, headers=headers)
        assert answer.status_code == 403, headers
    assert calls == []
    assert httpx.post(server.url + "api/call", json=body, headers=own).json()["result"] == "wiped"
    assert httpx.get(server.url, headers={"Host": f"localhost:{server.port}"}).status_code == 200


def test_only_a_top_level_navigation_to_the_page_itself_may_come_from_another_site(server: InspectorServer) -> None:
    navigate = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
    assert httpx.get(server.url, headers=navigate).status_code == 200
    refused = [
        ("GET", server.url + "api/tools", navigate),
        ("GET", server.url + "?x=1", navigate),
        ("GET", server.url + "static/js/main.js", navigate),
        ("POST", server.url, navigate),
        ("GET", server.url, {**navigate, "Sec-Fetch-Dest": "iframe"}),
        ("GET", server.url, {**navigate, "Sec-Fetch-Mode": "cors"}),
        ("GET", server.url, {**navigate, "Host": "evil.example"}),
    ]
    for method, address, headers in refused:
        assert httpx.request(method, address, headers=headers).status_code == 403, (method, address, headers)
    assert calls == []


def test_answers_forbid_framing_sniffing_and_referrers(server: InspectorServer) -> None:
    headers = httpx.get(server.url).headers
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert "script-src 'self'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "no-referrer"
    assert httpx.get(server.url[:-1], follow_redirects=False).headers["location"] == f"/{server.token}/"


def test_it_listens_on_127_0_0_1_only(server: InspectorServer) -> None:
    with socket.create_connection(("127.0.0.1", server.port), timeout=2):
        pass
    # Bound to 0.0.0.0 it would answer on every loopback address (and every interface).
    with pytest.raises(OSError), socket.create_connection(("127.0.0.2", server.port), timeout=2):
        pass


def test_a_client_too_slow_to_send_its_request_is_cut_off() -> None:
    limits = ConnectionLimits(head_timeout=0.3, body_timeout=0.3)
    with InspectorServer(mcs.FunctionDriver([wipe], name="db"), limits=limits) as running, \
            SlowClient(running.port) as client:
        took = client.trickle(request_head("GET", f"/{running.token}/", running.port), every=0.05, within=3)
        assert client.closed_by_server and took < 1.5
        assert client.received.startswith(b"HTTP/1.1 408 ")
        assert httpx.get(running.url).status_code == 200  # and the page is still served
