"""SECURITY.md E1-E7: the servers MCS runs (``mcs serve --protocol mcp`` and the RFC-0001
server), over real HTTP on loopback, with a real authorization server for OAuth.

Every refused request is checked for its status and for the tool that did not run.
"""

from __future__ import annotations

import base64
import json
import select
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from mcs_mcp.mcpfile.driver import MCPFileDriver
from mcs_mcp.serving import OAuthOptions, ServeOptions
from pydantic import BaseModel
from support.oauth import AuthServer, running_auth_server
from support.servers import HOST, uvicorn_on_loopback
from support.servers import free_port as _free_port

from mcs.server import McpServer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "drivers" / "mcp" / "serving"))
from serving_helpers import SampleDriver
from serving_support import serve_driver

ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
          "MCP-Protocol-Version": "2025-06-18"}


def _jsonrpc(method: str, params: dict[str, Any] | None = None, request_id: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}}


def _call(name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    return _jsonrpc("tools/call", {"name": name, "arguments": arguments or {}})


# ----------------------------------------------------------------------------- the servers


class Note(BaseModel):
    text: str


class Ack(BaseModel):
    ok: bool


def rfc0001_server(calls: list[str]) -> McpServer:
    server = McpServer(name="e-cases", version="1")

    @server.tool(name="note")
    def note(req: Note) -> Ack:
        calls.append(req.text)
        return Ack(ok=True)

    return server


@pytest.fixture(scope="module")
def rfc0001() -> Iterator[tuple[str, list[str]]]:
    import uvicorn

    calls: list[str] = []
    server = rfc0001_server(calls)
    config = uvicorn.Config(server.asgi_app(), log_level="critical", lifespan="off", ws="websockets-sansio")
    with uvicorn_on_loopback(config, timeout=10) as url:
        yield url, calls
    server.close()


@pytest.fixture(scope="module")
def mcp() -> Iterator[tuple[str, SampleDriver]]:
    driver = SampleDriver()
    with serve_driver(driver) as url:
        yield url, driver


@pytest.fixture(scope="module")
def auth_server() -> Iterator[AuthServer]:
    with running_auth_server() as server:
        yield server


@pytest.fixture(scope="module")
def protected(auth_server: AuthServer) -> Iterator[tuple[str, SampleDriver]]:
    driver = SampleDriver()
    auth = OAuthOptions(authorization_servers=(auth_server.issuer,), jwks_uri=auth_server.jwks_uri)
    with serve_driver(driver, auth=auth) as url:
        yield url, driver


def _raw_post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
    """POST with exactly these headers (``Host`` included), on a plain socket."""
    parts = httpx.URL(url)
    lines = [f"POST {parts.raw_path.decode()} HTTP/1.1", *(f"{k}: {v}" for k, v in headers.items()),
             f"Content-Length: {len(body)}", "Connection: close", "", ""]
    head = "\r\n".join(lines).encode("latin-1")
    with socket.create_connection((HOST, parts.port or 80), timeout=10) as sock:
        if len(body) > 1_000_000:
            sock.sendall(head)
            # A server may answer on the headers alone (413 for the declared length) and close.
            early, _, _ = select.select([sock], [], [], 0.2)
            if not early:
                sock.sendall(body)
        else:
            sock.sendall(head + body)
        data = b""
        try:
            while chunk := sock.recv(65536):
                data += chunk
        except ConnectionResetError:  # answered, then closed with our bytes unread
            if not data:
                raise
    status = int(data.split(b" ", 2)[1])
    return status, data.partition(b"\r\n\r\n")[2]


# ----------------------------------------------------------------------------- E1

E1_REFUSED = [
    ({"Host": "evil.example"}, 421),
    ({"Host": "evil.example:80", "Origin": "http://evil.example"}, 421),
    ({"Origin": "http://evil.example"}, 403),
    ({"Origin": "https://attacker.example"}, 403),
    ({"Origin": "null"}, 403),
]


@pytest.mark.parametrize(("headers", "status"), E1_REFUSED)
def test_e1_the_mcp_server_refuses_foreign_hosts_and_origins_before_anything_runs(
        mcp: tuple[str, SampleDriver], headers: dict[str, str], status: int) -> None:
    url, driver = mcp
    before = len(driver.calls)
    port = httpx.URL(url).port
    sent = {"Host": f"localhost:{port}", **ACCEPT, **headers}
    got, _ = _raw_post(url, json.dumps(_call("echo", {"text": "x"})).encode(), sent)
    assert got == status
    assert len(driver.calls) == before


@pytest.mark.parametrize(("headers", "status"), E1_REFUSED)
def test_e1_the_rfc0001_server_refuses_foreign_hosts_and_origins_before_anything_runs(
        rfc0001: tuple[str, list[str]], headers: dict[str, str], status: int) -> None:
    url, calls = rfc0001
    port = httpx.URL(url).port
    sent = {"Host": f"localhost:{port}", "Content-Type": "application/json", **headers}
    got, _ = _raw_post(url + "/mcp/execute", json.dumps({"tool": "note", "arguments": {"text": "x"}}).encode(), sent)
    assert got == status
    assert "x" not in calls


def test_e1_a_loopback_host_without_origin_is_served(mcp: tuple[str, SampleDriver],
                                                     rfc0001: tuple[str, list[str]]) -> None:
    url, _ = mcp
    port = httpx.URL(url).port
    got, body = _raw_post(url, json.dumps(_call("echo", {"text": "hi"})).encode(),
                          {"Host": f"localhost:{port}", **ACCEPT})
    assert got == 200 and b"hi" in body
    rurl, calls = rfc0001
    got, _ = _raw_post(rurl + "/mcp/execute", json.dumps({"tool": "note", "arguments": {"text": "ok"}}).encode(),
                       {"Host": f"127.0.0.1:{httpx.URL(rurl).port}", "Content-Type": "application/json"})
    assert got == 200 and "ok" in calls


async def test_e1_a_websocket_from_a_foreign_origin_is_refused(rfc0001: tuple[str, list[str]]) -> None:
    import websockets

    url, calls = rfc0001
    ws_url = url.replace("http://", "ws://") + "/mcp/ws"
    with pytest.raises(websockets.exceptions.InvalidStatus) as info:
        async with websockets.connect(ws_url, origin="https://attacker.example") as ws:  # type: ignore[arg-type]
            await ws.send(json.dumps({"id": "1", "tool": "note", "arguments": {"text": "ws"}}))
    assert info.value.response.status_code == 403
    assert "ws" not in calls


def test_e1_both_servers_bind_to_loopback_by_default() -> None:
    import inspect

    from mcs.server import runner

    assert ServeOptions().host == "127.0.0.1"
    assert inspect.signature(runner.serve).parameters["host"].default == "127.0.0.1"
    assert inspect.signature(McpServer.run).parameters["host"].default == "127.0.0.1"


# ----------------------------------------------------------------------------- E2


def test_e2_a_token_for_another_audience_or_none_gets_401_pointing_at_the_metadata(
        protected: tuple[str, SampleDriver], auth_server: AuthServer) -> None:
    url, driver = protected
    before = len(driver.calls)
    for token in (None, auth_server.token(audience="http://127.0.0.1:1/other", scope="admin")):
        headers = {**ACCEPT, **({"Authorization": f"Bearer {token}"} if token else {})}
        response = httpx.post(url, json=_call("echo", {"text": "x"}), headers=headers, timeout=10)
        assert response.status_code == 401
        assert 'resource_metadata="' in response.headers["www-authenticate"]
    assert len(driver.calls) == before
    origin = url.rsplit("/mcp", 1)[0]
    document = httpx.get(origin + "/.well-known/oauth-protected-resource/mcp", timeout=10).json()
    assert document["resource"] == url and document["authorization_servers"] == [auth_server.issuer]


# ----------------------------------------------------------------------------- E3


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _e3_tokens(auth: AuthServer, url: str) -> dict[str, str]:
    from cryptography.hazmat.primitives.asymmetric import rsa

    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    header = _b64(json.dumps({"alg": "none", "kid": "test-key"}).encode())
    body = _b64(json.dumps({"iss": auth.issuer, "aud": url, "sub": "x", "exp": 2**31}).encode())
    return {
        "alg_none": f"{header}.{body}.",
        "x5u_header": auth.token(audience=url, headers={"x5u": "http://127.0.0.1:9/cert.pem"}),
        "jwk_header": auth.token(audience=url, headers={"jwk": {"kty": "RSA", "n": "AQAB", "e": "AQAB"}}),
        "alg_differs_from_the_jwk": auth.token(audience=url, algorithm="PS256"),
        "signed_by_another_key": auth.token(audience=url, key=other),
        "expired": auth.token(audience=url, lifetime=-600),
        "issuer_with_a_suffix": auth.token(audience=url, iss=auth.issuer + ".evil"),
    }


@pytest.mark.parametrize("case", ["alg_none", "x5u_header", "jwk_header", "alg_differs_from_the_jwk",
                                  "signed_by_another_key", "expired", "issuer_with_a_suffix", "query_string"])
def test_e3_tokens_that_must_not_verify_get_401_and_nothing_runs(
        protected: tuple[str, SampleDriver], auth_server: AuthServer, case: str) -> None:
    url, driver = protected
    before = len(driver.calls)
    if case == "query_string":
        token = auth_server.token(audience=url)
        response = httpx.post(f"{url}?access_token={token}", json=_call("echo", {"text": "x"}), headers=ACCEPT,
                              timeout=10)
    else:
        token = _e3_tokens(auth_server, url)[case]
        response = httpx.post(url, json=_call("echo", {"text": "x"}),
                              headers={**ACCEPT, "Authorization": f"Bearer {token}"}, timeout=10)
    assert response.status_code == 401
    assert len(driver.calls) == before


@pytest.mark.parametrize("alg", ["ES256", "ES384", "PS256"])
def test_e3_a_token_whose_alg_does_not_fit_its_keys_type_gets_401_not_a_server_error(alg: str) -> None:
    # A JWKS without "alg" on its keys (as some authorization servers publish): the token's
    # header alone names the algorithm, so it must fit the key's type (RSA: RS*/PS*).
    with running_auth_server(declare_alg=False) as auth:
        driver = SampleDriver()
        options = OAuthOptions(authorization_servers=(auth.issuer,), jwks_uri=auth.jwks_uri,
                               algorithms=("RS256", "ES256", "ES384", "PS256"))
        with serve_driver(driver, auth=options) as url:
            header = _b64(json.dumps({"alg": alg, "kid": auth.kid, "typ": "JWT"}).encode())
            body = _b64(json.dumps({"iss": auth.issuer, "aud": url, "sub": "x", "exp": 2**31}).encode())
            forged = f"{header}.{body}.{_b64(b'not a signature')}"
            response = httpx.post(url, json=_call("echo", {"text": "x"}),
                                  headers={**ACCEPT, "Authorization": f"Bearer {forged}"}, timeout=10)
            assert response.status_code == 401
            assert 'error="invalid_token"' in response.headers["www-authenticate"]
            assert driver.calls == []
            valid = auth.token(audience=url)
            response = httpx.post(url, json=_call("echo", {"text": "ok"}),
                                  headers={**ACCEPT, "Authorization": f"Bearer {valid}"}, timeout=10)
            assert response.status_code == 200 and len(driver.calls) == 1


@pytest.mark.parametrize("answer", [503, 200])  # down, or up with no usable key
def test_e3_a_jwks_without_keys_is_fetched_at_most_once_in_a_while_not_once_per_token(
        auth_server: AuthServer, answer: int) -> None:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    hits: list[str] = []

    async def jwks(request: Any) -> JSONResponse:
        hits.append(request.url.path)
        return JSONResponse({"keys": []}, status_code=answer)

    app = Starlette(routes=[Route("/jwks", jwks)])
    with uvicorn_on_loopback(uvicorn.Config(app, log_level="critical", lifespan="off")) as keys_url:
        auth = OAuthOptions(authorization_servers=(auth_server.issuer,), jwks_uri=keys_url + "/jwks")
        driver = SampleDriver()
        with serve_driver(driver, auth=auth) as url:
            for _ in range(5):
                token = auth_server.token(audience=url)
                response = httpx.post(url, json=_call("echo", {"text": "x"}),
                                      headers={**ACCEPT, "Authorization": f"Bearer {token}"}, timeout=10)
                assert response.status_code == 401
    assert len(hits) == 1 and driver.calls == []


def test_e3_malformed_entries_in_the_jwks_are_skipped_and_its_good_key_still_verifies(auth_server: AuthServer) -> None:
    import uvicorn
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    good = json.loads(httpx.get(auth_server.jwks_uri, timeout=10).text)["keys"][0]
    unhashable_kid = {**good, "kid": ["test-key"]}

    async def jwks(request: Any) -> JSONResponse:
        return JSONResponse({"keys": ["not a key", 7, None, unhashable_kid, good]})

    app = Starlette(routes=[Route("/jwks", jwks)])
    with uvicorn_on_loopback(uvicorn.Config(app, log_level="critical", lifespan="off")) as keys_url:
        auth = OAuthOptions(authorization_servers=(auth_server.issuer,), jwks_uri=keys_url + "/jwks")
        driver = SampleDriver()
        with serve_driver(driver, auth=auth) as url:
            token = auth_server.token(audience=url)
            response = httpx.post(url, json=_call("echo", {"text": "x"}),
                                  headers={**ACCEPT, "Authorization": f"Bearer {token}"}, timeout=10)
    assert response.status_code == 200 and len(driver.calls) == 1


# ----------------------------------------------------------------------------- E4


@pytest.fixture(scope="module")
def files_server(auth_server: AuthServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """An MCP file with an open template that would match secret URIs too, and two guarded ones."""
    folder = tmp_path_factory.mktemp("files")
    log = folder / "reads.log"

    def template(name: str, uri: str, scopes: list[str]) -> dict[str, Any]:
        return {"name": name, "description": name, "uriTemplate": uri, "requiredScopes": scopes,
                "inputSchema": {"type": "object", "properties": {"id": {"type": "string"},
                                                                 "name": {"type": "string"}}},
                "invocation": {"cli": {"command": f"printf '%s\\n' {name} >> '{log}'; echo {name}-data"}}}

    data = {"mcpFileVersion": "0.1.0", "name": "files", "version": "1",
            "resourceTemplates": [template("public", "files://{name}", []),
                                  template("secret", "files://secret/{id}", ["admin"]),
                                  template("vault", "vault://item/{id}", ["admin"])],
            "tools": [{"name": "wipe", "description": "wipe", "requiredScopes": ["admin"],
                       "inputSchema": {"type": "object", "properties": {}},
                       "invocation": {"cli": {"command": f"printf 'wipe\\n' >> '{log}'"}}}]}
    path = folder / "files.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    auth = OAuthOptions(authorization_servers=(auth_server.issuer,), jwks_uri=auth_server.jwks_uri)
    driver = MCPFileDriver(path)
    driver.description_mode = "discovery"  # call_tool too: one more route to every tool
    driver.refresh_tools()
    with serve_driver(driver, auth=auth) as url:
        yield url, log
    driver.close()


@pytest.mark.parametrize("request_body", [
    _jsonrpc("resources/read", {"uri": "files://secret/42"}),
    _jsonrpc("resources/read", {"uri": "vault://item/"}),
    _jsonrpc("tools/call", {"name": "wipe", "arguments": {}}),
    _jsonrpc("tools/call", {"name": "resource_template_secret", "arguments": {"id": "42"}}),
    [_jsonrpc("resources/read", {"uri": "files://readme"}, 1),
     _jsonrpc("resources/read", {"uri": "files://secret/42"}, 2)],
    _jsonrpc("tools/call", {"name": "call_tool", "arguments": {"name": "wipe", "arguments": {}}}),
    _jsonrpc("tools/call", {"name": "call_tool", "arguments": {"name": " wipe ", "arguments": {}}}),
    _jsonrpc("tools/call", {"name": "call_tool", "arguments": {"name": "wipe", "arguments": "{}"}}),
    _jsonrpc("tools/call", {"name": "call_tool", "arguments": {"name": "resource_template_secret",
                                                               "arguments": {"id": "42"}}}),
], ids=["template-secret", "template-empty-variable", "tool", "template-as-tool", "batch", "call-tool",
        "call-tool-padded-name", "call-tool-string-arguments", "call-tool-template-as-tool"])
def test_e4_every_route_to_a_scoped_resource_or_tool_needs_its_scope(
        files_server: tuple[str, Path], auth_server: AuthServer, request_body: Any) -> None:
    url, log = files_server
    log.unlink(missing_ok=True)
    reader = auth_server.token(audience=url, scope="read")
    response = httpx.post(url, json=request_body, headers={**ACCEPT, "Authorization": f"Bearer {reader}"},
                          timeout=10)
    if response.status_code == 403:
        assert 'error="insufficient_scope"' in response.headers["www-authenticate"]
    else:  # refused inside the protocol: an error result, never the data
        assert response.status_code == 200 and "secret-data" not in response.text and "vault-data" not in response.text
        assert '"error"' in response.text or '"isError":true' in response.text
    assert not log.exists() or log.read_text().split() in ([], ["public"])


def test_e4_the_open_template_still_serves_its_own_uris(files_server: tuple[str, Path],
                                                        auth_server: AuthServer) -> None:
    url, _ = files_server
    reader = auth_server.token(audience=url, scope="read")
    response = httpx.post(url, json=_jsonrpc("resources/read", {"uri": "files://readme"}),
                          headers={**ACCEPT, "Authorization": f"Bearer {reader}"}, timeout=10)
    assert response.status_code == 200 and "public-data" in response.text


def test_e4_list_interfaces_shows_each_caller_only_the_tools_its_token_may_see(auth_server: AuthServer) -> None:
    """The Interfaces layer's ``list_interfaces`` (method and tool) maps interface methods to
    tools: a tool the token lacks the scope for is not named there either, whoever asked first."""
    import dataclasses

    from mcs_mcp.interfaces.wire import install
    from mcs_mcp.serving import build_app, build_server
    from serving_support import running

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "drivers" / "mcp" / "interfaces"))
    from served_player import PlayerDriver

    class GuardedPlayer(PlayerDriver):
        def _list_tools(self) -> Any:
            return [dataclasses.replace(t, meta={**t.meta, "required_scopes": ["player"]})
                    if t.name in ("start", "hold", "loudness") else t for t in super()._list_tools()]

    auth = OAuthOptions(authorization_servers=(auth_server.issuer,), jwks_uri=auth_server.jwks_uri)
    options = ServeOptions(transport="streamablehttp", port=_free_port(), auth=auth, json_response=True)
    driver = GuardedPlayer()
    with running(build_app(build_server(driver, options, extensions=[install]), options), options) as url:
        def listing(scope: str) -> str:
            token = auth_server.token(audience=url, scope=scope)
            headers = {**ACCEPT, "Authorization": f"Bearer {token}"}
            method = httpx.post(url, json=_jsonrpc("list_interfaces", {}), headers=headers, timeout=10)
            tool = httpx.post(url, json=_call("list_interfaces"), headers=headers, timeout=10)
            assert method.status_code == 200 and tool.status_code == 200
            return method.text + tool.text

        everything = listing("player")  # the first caller may see every tool
        assert "media.player.v1" in everything and '"loudness"' in everything
        limited = listing("")
        for hidden in ('"start"', '"hold"', '"loudness"', "media.player.v1"):
            assert hidden not in limited
        assert '"multiply"' in limited


# ----------------------------------------------------------------------------- E5


def test_e5_the_inbound_bearer_never_reaches_a_driver_or_a_downstream(
        protected: tuple[str, SampleDriver], auth_server: AuthServer) -> None:
    url, driver = protected
    token = auth_server.token(audience=url)
    response = httpx.post(url, json=_call("whoami"), headers={**ACCEPT, "Authorization": f"Bearer {token}"},
                          timeout=10)
    assert response.status_code == 200
    assert token not in response.text
    name, _, context = driver.calls[-1]
    assert name == "whoami" and "header:authorization" not in context.metadata
    assert token not in json.dumps(dict(context.metadata))


@pytest.mark.parametrize("header", ["X-Api-Key", "Api-Key", "X-Auth-Token", "Cookie", "Proxy-Authorization"])
def test_e5_an_inbound_credential_header_never_reaches_a_driver(mcp: tuple[str, SampleDriver], header: str) -> None:
    url, driver = mcp
    secret = "inbound-credential-7f3a"
    response = httpx.post(url, json=_call("whoami"), headers={**ACCEPT, header: secret, "X-Tenant": "acme"},
                          timeout=10)
    assert response.status_code == 200 and secret not in response.text
    name, _, context = driver.calls[-1]
    assert name == "whoami" and context.metadata["header:x-tenant"] == "acme"  # other headers still come through
    assert secret not in json.dumps(dict(context.metadata))


# ----------------------------------------------------------------------------- E6


async def test_e6_behind_oauth_the_agent_is_the_tokens_never_the_name_the_client_gives(auth_server: AuthServer) -> None:
    """A verified token without ``sub`` (client-credentials tokens often have none) names its
    client (``client_id``): the ``clientInfo.name`` a client declares at initialize is not an
    identity, so it cannot pass an agent allow-list as someone else."""
    import time

    import jwt
    from mcp import types
    from serving_support import mcp_client

    auth = OAuthOptions(authorization_servers=(auth_server.issuer,), jwks_uri=auth_server.jwks_uri)
    driver = SampleDriver()
    with serve_driver(driver, auth=auth, stateless=False) as url:
        now = int(time.time())
        token = jwt.encode({"iss": auth_server.issuer, "aud": url, "iat": now, "exp": now + 300,
                            "client_id": "svc-reports"}, auth_server.key, algorithm="RS256",
                           headers={"kid": auth_server.kid})
        async with mcp_client(url, headers={"Authorization": f"Bearer {token}"},
                              client_info=types.Implementation(name="admin", version="1")) as session:
            result = await session.call_tool("whoami", {})
    assert not result.is_error
    assert [context.agent_id for name, _, context in driver.calls if name == "whoami"] == ["svc-reports"]




def _random_bits(session_id: str) -> int:
    """The most random bits an id can hold: its length times the bits of its alphabet
    (hex or base64url), less the 6 bits a version-4 UUID fixes."""
    import string
    import uuid

    bits = len(session_id) * (4 if all(c in string.hexdigits for c in session_id) else 6)
    try:
        fixed = 6 if uuid.UUID(session_id).version == 4 else 0
    except ValueError:
        fixed = 0
    return bits - fixed


def test_e6_a_session_is_bound_to_its_user_and_is_not_authentication(auth_server: AuthServer) -> None:
    auth = OAuthOptions(authorization_servers=(auth_server.issuer,), jwks_uri=auth_server.jwks_uri)
    with serve_driver(SampleDriver(), auth=auth, stateless=False) as url:
        alice = {"Authorization": f"Bearer {auth_server.token(audience=url, sub='alice')}"}
        bob = {"Authorization": f"Bearer {auth_server.token(audience=url, sub='bob')}"}
        init = _jsonrpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                       "clientInfo": {"name": "e6", "version": "1"}})
        opened = httpx.post(url, json=init, headers={**ACCEPT, **alice}, timeout=10)
        session = opened.headers["mcp-session-id"]
        assert session.isascii() and session.isprintable() and _random_bits(session) >= 128
        ping = _jsonrpc("ping")
        headers = {**ACCEPT, "mcp-session-id": session}
        assert httpx.post(url, json=ping, headers={**headers, **bob}, timeout=10).status_code == 404
        assert httpx.post(url, json=ping, headers=headers, timeout=10).status_code == 401
        assert httpx.delete(url, headers={**headers, **alice}, timeout=10).status_code in (200, 204)
        assert httpx.post(url, json=ping, headers={**headers, **alice}, timeout=10).status_code == 404


def test_e6_a_resumed_stream_replays_only_its_own_sessions_events(auth_server: AuthServer) -> None:
    """With resumable sessions (an event store), a ``Last-Event-ID`` from another user's
    session replays nothing of it: event ids were a shared counter, guessable, and streams
    were keyed by request id alone, so Bob's reconnect received Alice's tool results."""
    import re

    from mcs_mcp.serving import MemoryEventStore

    auth = OAuthOptions(authorization_servers=(auth_server.issuer,), jwks_uri=auth_server.jwks_uri)
    with serve_driver(SampleDriver(), auth=auth, stateless=False, event_store=MemoryEventStore()) as url:
        def opened(user: str) -> dict[str, str]:
            token = {"Authorization": f"Bearer {auth_server.token(audience=url, sub=user)}"}
            init = _jsonrpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                           "clientInfo": {"name": user, "version": "1"}})
            session = httpx.post(url, json=init, headers={**ACCEPT, **token}, timeout=10).headers["mcp-session-id"]
            headers = {**ACCEPT, **token, "mcp-session-id": session, "MCP-Protocol-Version": "2025-11-25"}
            httpx.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers, timeout=10)
            return headers

        alice, bob = opened("alice"), opened("bob")
        answer = httpx.post(url, json=_jsonrpc("tools/call", {"name": "echo", "arguments": {"text": "alice-secret-42"}},
                                               2), headers=alice, timeout=10)
        assert "alice-secret-42" in answer.text
        alice_ids = re.findall(r"^id: (\S+)", answer.text, flags=re.MULTILINE)
        assert alice_ids
        guesses = alice_ids + [i.rsplit(".", 1)[-1] for i in alice_ids] + [str(n) for n in range(1, 10)]
        for event_id in guesses:
            received = b""
            try:  # a stream the server keeps open has sent what it replays within the second
                with httpx.stream("GET", url, headers={**bob, "Last-Event-ID": event_id}, timeout=1) as replay:
                    for chunk in replay.iter_bytes():
                        received += chunk
            except httpx.ReadTimeout:
                pass
            assert b"alice-secret" not in received, event_id


# ----------------------------------------------------------------------------- E7

DEEP = b"[" * 100_000 + b"]" * 100_000
E7_BODIES: list[tuple[str, bytes, dict[str, str]]] = [
    ("invalid-json", b"{not json", {}),
    ("wrong-shape", b'{"jsonrpc": "2.0", "id": 1, "params": 3}', {}),
    ("unknown-method", json.dumps(_jsonrpc("no/such")).encode(), {}),
    ("bad-protocol-version", json.dumps(_call("echo", {"text": "x"})).encode(), {"MCP-Protocol-Version": "1999-01-01"}),
    ("deep-json", DEEP, {}),
    ("array-of-garbage", b"[1, 2, 3]", {}),
    ("too-large", b'{"x": "' + b"a" * (5 * 1024 * 1024) + b'"}', {}),
]


def _status_without_a_crash(url: str, body: bytes, extra: dict[str, str]) -> int:
    port = httpx.URL(url).port
    status, _ = _raw_post(url, body, {"Host": f"127.0.0.1:{port}", **ACCEPT, **extra})
    return status


@pytest.mark.parametrize(("name", "body", "extra"), E7_BODIES, ids=[b[0] for b in E7_BODIES])
def test_e7_malformed_and_oversized_input_gets_4xx_or_a_jsonrpc_error_never_a_crash(
        mcp: tuple[str, SampleDriver], protected: tuple[str, SampleDriver], auth_server: AuthServer,
        rfc0001: tuple[str, list[str]], name: str, body: bytes, extra: dict[str, str]) -> None:
    url, _ = mcp
    status = _status_without_a_crash(url, body, extra)
    assert status < 500 and (status >= 400 or name == "unknown-method"), status
    purl, _ = protected
    token = auth_server.token(audience=purl)
    pstatus = _status_without_a_crash(purl, body, {**extra, "Authorization": f"Bearer {token}"})
    assert pstatus < 500 and (pstatus >= 400 or name == "unknown-method"), pstatus  # finding 6: 4xx, not 500
    rurl, _ = rfc0001
    rstatus, answer = _raw_post(rurl + "/mcp/execute", body, {"Host": f"127.0.0.1:{httpx.URL(rurl).port}",
                                                              "Content-Type": "application/json"})
    assert 400 <= rstatus < 500 and json.loads(answer)["error"] in ("INVALID_INPUT", "TOOL_NOT_FOUND")
    # ... and each still answers a normal call at once
    assert httpx.post(url, json=_call("echo", {"text": "after"}), headers=ACCEPT, timeout=10).status_code == 200
    ok = httpx.post(rurl + "/mcp/execute", json={"tool": "note", "arguments": {"text": "after"}}, timeout=10)
    assert ok.status_code == 200


def test_e7_a_client_that_disconnects_mid_body_leaves_the_servers_serving(
        mcp: tuple[str, SampleDriver], rfc0001: tuple[str, list[str]]) -> None:
    for url, path in ((mcp[0], ""), (rfc0001[0], "/mcp/execute")):
        target = httpx.URL(url + path)
        with socket.create_connection((HOST, target.port or 80), timeout=5) as sock:
            sock.sendall(f"POST {target.raw_path.decode()} HTTP/1.1\r\nHost: 127.0.0.1:{target.port}\r\n"
                         "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"jsonr".encode())
    assert httpx.post(mcp[0], json=_call("echo", {"text": "x"}), headers=ACCEPT, timeout=10).status_code == 200
    assert httpx.post(rfc0001[0] + "/mcp/execute", json={"tool": "note", "arguments": {"text": "y"}},
                      timeout=10).status_code == 200


HOSTILE_ENTRIES: list[tuple[str, Any, str]] = [
    ("not-an-object", "t", r"tools\[0\]"),
    ("no-name", {"description": "a tool"}, r"tools\[0\]\.name"),
    ("name-not-text", {"name": 5}, r"tools\[0\]\.name"),
    ("name-outside-the-alphabet", {"name": "a b/../c"}, r"tools\[0\]\.name"),
    ("schema-not-an-object", {"name": "t", "input_schema": "x"}, r"tools\[0\]\.input_schema"),
    ("output-schema-a-list", {"name": "t", "output_schema": [1]}, r"tools\[0\]\.output_schema"),
    ("description-not-text", {"name": "t", "description": 5}, r"tools\[0\]\.description"),
    ("timeout-not-a-number", {"name": "t", "timeout_ms": "x"}, r"tools\[0\]\.timeout_ms"),
    ("idempotent-not-a-flag", {"name": "t", "idempotent": "yes"}, r"tools\[0\]\.idempotent"),
]


@pytest.mark.parametrize(("case", "entry", "where"), HOSTILE_ENTRIES, ids=[e[0] for e in HOSTILE_ENTRIES])
def test_e7_a_hostile_rfc0001_capabilities_entry_is_a_configuration_error_naming_it(
        case: str, entry: Any, where: str) -> None:
    from support.hostile import HostilePeer

    from mcs.errors import ConfigurationError
    from mcs.server.client import RFC0001Driver

    with HostilePeer() as peer, RFC0001Driver(peer.url, timeout=2.0) as driver:
        peer.capabilities = {"protocol": "1.0", "tools": [entry]}
        with pytest.raises(ConfigurationError, match=where):
            driver.list_tools()
        assert driver.healthcheck()["status"] == "error"
        peer.capabilities = {"protocol": "1.0", "tools": [{"name": "t"}, {"name": "t", "description": "again"}]}
        with pytest.raises(ConfigurationError, match=r"tools\[1\].*'t' twice"):
            driver.list_tools()
        assert peer.count("/mcp/execute") == 0


@pytest.fixture(scope="module")
def completing_server(auth_server: AuthServer) -> Iterator[tuple[str, list[str]]]:
    """Functions served with OAuth: a scoped template and a scoped prompt, each with a completer
    that records that it ran (a completer may read a database or call an API)."""
    from mcs.function_prompts import prompt
    from mcs.function_resources import resource
    from mcs.functions import FunctionDriver

    ran: list[str] = []

    def vault_ids(value: str) -> list[str]:
        ran.append("vault ids")
        return ["vault-42", "vault-43"]

    def incidents(value: str) -> list[str]:
        ran.append("incidents")
        return ["INC-secret-1"]

    @resource("vault://{id}", name="vault", complete={"id": vault_ids}, meta={"required_scopes": ["admin"]})
    def vault(id: str) -> str:
        return f"vault {id}"

    @prompt(name="postmortem", complete={"incident": incidents}, meta={"required_scopes": ["admin"]})
    def postmortem(incident: str) -> str:
        return f"Write the postmortem of {incident}"

    auth = OAuthOptions(authorization_servers=(auth_server.issuer,), jwks_uri=auth_server.jwks_uri)
    with serve_driver(FunctionDriver([vault, postmortem], name="ops"), auth=auth) as url:
        yield url, ran


@pytest.mark.parametrize("ref", [{"type": "ref/resource", "uri": "vault://{id}"},
                                 {"type": "ref/prompt", "name": "postmortem"}], ids=["template", "prompt"])
def test_e4_completions_of_a_scoped_template_or_prompt_need_its_scope(
        completing_server: tuple[str, list[str]], auth_server: AuthServer, ref: dict[str, str]) -> None:
    url, ran = completing_server
    argument = "id" if ref["type"] == "ref/resource" else "incident"
    body = _jsonrpc("completion/complete", {"ref": ref, "argument": {"name": argument, "value": ""}})
    ran.clear()
    reader = auth_server.token(audience=url, scope="read")
    refused = httpx.post(url, json=body, headers={**ACCEPT, "Authorization": f"Bearer {reader}"}, timeout=10)
    assert refused.status_code == 403 and 'scope="admin"' in refused.headers["www-authenticate"]
    assert ran == [] and "vault-42" not in refused.text and "INC-secret" not in refused.text
    admin = auth_server.token(audience=url, scope="admin")
    allowed = httpx.post(url, json=body, headers={**ACCEPT, "Authorization": f"Bearer {admin}"}, timeout=10)
    assert allowed.status_code == 200 and ("vault-42" in allowed.text or "INC-secret-1" in allowed.text)
