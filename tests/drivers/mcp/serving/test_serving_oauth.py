"""OAuth 2.0 resource server: a test authorization server on loopback issuing real JWTs."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from mcs_mcp.serving import OAuthOptions, ServeOptions
from serving_helpers import SampleDriver
from serving_support import free_port, mcp_client, running, serve_driver
from support.oauth import AuthServer, running_auth_server

ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INIT = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}


def _call(name: str, request_id: int = 2) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": name, "arguments": {}}}


@pytest.fixture(scope="module")
def auth_server() -> Iterator[AuthServer]:
    with running_auth_server("test-key") as server:
        yield server


@pytest.fixture(scope="module")
def second_auth_server() -> Iterator[AuthServer]:
    with running_auth_server("second-key") as server:
        yield server


@pytest.fixture
def protected(auth_server: AuthServer) -> Iterator[tuple[str, SampleDriver]]:
    driver = SampleDriver()
    auth = OAuthOptions(authorization_servers=(auth_server.issuer,), jwks_uri=auth_server.jwks_uri)
    with serve_driver(driver, auth=auth) as url:
        yield url, driver


def _post(url: str, body: Any, token: str | None = None, **headers: str) -> httpx.Response:
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return httpx.post(url, content=json.dumps(body), headers={**ACCEPT, **headers}, timeout=10)


def test_no_token_gets_401_pointing_at_the_resource_metadata(protected: tuple[str, SampleDriver]) -> None:
    url, driver = protected
    response = _post(url, INIT)
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    port = url.split(":")[2].split("/")[0]
    assert f'resource_metadata="http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp"' in challenge
    assert driver.calls == []


def test_resource_metadata_names_the_resource_and_its_authorization_server(
    protected: tuple[str, SampleDriver], auth_server: AuthServer
) -> None:
    url, _ = protected
    origin = url.rsplit("/mcp", 1)[0]
    for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
        document = httpx.get(origin + path, timeout=10).json()
        assert document["resource"] == url
        assert document["authorization_servers"] == [auth_server.issuer]
        assert set(document["scopes_supported"]) >= {"admin", "reports:read"}


async def test_a_valid_token_works_and_its_subject_is_the_agent_id(
    protected: tuple[str, SampleDriver], auth_server: AuthServer
) -> None:
    url, _ = protected
    token = auth_server.token(audience=url, sub="alice")
    async with mcp_client(url, headers={"Authorization": f"Bearer {token}"}) as session:
        result = await session.call_tool("whoami", {})
    assert result.structured_content["agent_id"] == "alice"
    assert "header:authorization" not in result.structured_content["metadata"]
    assert token not in json.dumps(result.structured_content)


@pytest.mark.parametrize(("claims", "agent_id"), [({"client_id": "batch-job"}, "batch-job"),
                                                   ({"client_id": None, "azp": "reporting-app"}, "reporting-app")])
async def test_a_token_without_a_subject_names_its_client_as_the_agent_id(
    claims: dict[str, Any], agent_id: str, protected: tuple[str, SampleDriver], auth_server: AuthServer
) -> None:
    url, _ = protected
    token = auth_server.token(audience=url, sub=None, **claims)
    async with mcp_client(url, headers={"Authorization": f"Bearer {token}"}) as session:
        result = await session.call_tool("whoami", {})
    assert result.structured_content["agent_id"] == agent_id


async def test_tools_the_token_lacks_scopes_for_are_hidden(
    protected: tuple[str, SampleDriver], auth_server: AuthServer
) -> None:
    url, _ = protected
    reader = auth_server.token(audience=url, scope="reports:read")
    async with mcp_client(url, headers={"Authorization": f"Bearer {reader}"}) as session:
        names = {tool.name for tool in (await session.list_tools()).tools}
        assert "read_report" in names and "echo" in names
        assert "admin_reset" not in names
        prompts = {p.name for p in (await session.list_prompts()).prompts}
        assert "secret_prompt" not in prompts and "test_simple_prompt" in prompts
    admin = auth_server.token(audience=url, scope="admin reports:read")
    async with mcp_client(url, headers={"Authorization": f"Bearer {admin}"}) as session:
        assert "admin_reset" in {tool.name for tool in (await session.list_tools()).tools}
        assert (await session.call_tool("admin_reset", {})).content[0].text == "reset done"


def test_calling_a_tool_without_its_scope_is_403_insufficient_scope(
    protected: tuple[str, SampleDriver], auth_server: AuthServer
) -> None:
    url, driver = protected
    token = auth_server.token(audience=url, scope="reports:read")
    headers = {"MCP-Protocol-Version": "2025-06-18"}
    refused = _post(url, _call("admin_reset"), token, **headers)
    assert refused.status_code == 403
    challenge = refused.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and 'scope="admin"' in challenge
    batch = _post(url, [_call("echo", 3), _call("admin_reset", 4)], token, **headers)
    assert batch.status_code == 403
    allowed = _post(url, _call("read_report"), token, **headers)
    assert allowed.status_code == 200 and "the report" in allowed.text
    assert [name for name, _, _ in driver.calls] == ["read_report"]


def test_call_tool_needs_the_scopes_of_the_tool_it_calls(auth_server: AuthServer) -> None:
    driver = SampleDriver()
    driver.description_mode = "discovery"  # lists search_tools, describe_tool, call_tool
    driver.refresh_tools()
    auth = OAuthOptions(authorization_servers=(auth_server.issuer,), jwks_uri=auth_server.jwks_uri)
    headers = {"MCP-Protocol-Version": "2025-06-18"}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "call_tool", "arguments": {"name": "admin_reset", "arguments": {}}}}
    with serve_driver(driver, auth=auth) as url:
        reader = auth_server.token(audience=url, scope="reports:read")
        refused = _post(url, call, reader, **headers)
        assert refused.status_code == 403 and 'scope="admin"' in refused.headers["www-authenticate"]
        admin = auth_server.token(audience=url, scope="admin")
        allowed = _post(url, call, admin, **headers)
        assert allowed.status_code == 200 and "reset done" in allowed.text
    assert [name for name, _, _ in driver.calls] == ["admin_reset"]


def test_describe_tool_needs_the_scopes_of_the_tool_it_describes(auth_server: AuthServer) -> None:
    driver = SampleDriver()
    driver.description_mode = "discovery"
    driver.refresh_tools()
    auth = OAuthOptions(authorization_servers=(auth_server.issuer,), jwks_uri=auth_server.jwks_uri)
    headers = {"MCP-Protocol-Version": "2025-06-18"}
    describe = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "describe_tool", "arguments": {"name": "admin_reset"}}}
    with serve_driver(driver, auth=auth) as url:
        reader = auth_server.token(audience=url, scope="reports:read")
        # tools/list hides admin_reset from this token; describing it would show it whole
        refused = _post(url, describe, reader, **headers)
        assert refused.status_code == 403 and 'scope="admin"' in refused.headers["www-authenticate"]
        assert "Reset everything" not in refused.text
        own = {**describe, "params": {"name": "describe_tool", "arguments": {"name": "read_report"}}}
        assert "needs reports:read" in _post(url, own, reader, **headers).text
        admin = auth_server.token(audience=url, scope="admin")
        assert "Reset everything" in _post(url, describe, admin, **headers).text


def test_prompts_and_resources_need_their_scopes_too(
    protected: tuple[str, SampleDriver], auth_server: AuthServer
) -> None:
    url, _ = protected
    token = auth_server.token(audience=url, scope="")
    get = {"jsonrpc": "2.0", "id": 5, "method": "prompts/get", "params": {"name": "secret_prompt"}}
    refused = _post(url, get, token, **{"MCP-Protocol-Version": "2025-06-18"})
    assert refused.status_code == 403 and 'scope="admin"' in refused.headers["www-authenticate"]
    read = {"jsonrpc": "2.0", "id": 6, "method": "resources/read", "params": {"uri": "test://secret/42"}}
    refused = _post(url, read, token, **{"MCP-Protocol-Version": "2025-06-18"})
    assert refused.status_code == 403 and 'scope="admin"' in refused.headers["www-authenticate"]
    admin = auth_server.token(audience=url, scope="admin")
    allowed = _post(url, read, admin, **{"MCP-Protocol-Version": "2025-06-18"})
    assert allowed.status_code == 200 and "classified" in allowed.text


@pytest.mark.parametrize(
    "case",
    ["wrong_audience", "expired", "not_yet_valid", "wrong_issuer", "prefix_issuer", "alg_none",
     "hs256_with_public_key", "unknown_kid", "jku_header", "crit_header", "other_key", "garbage", "names_no_caller"],
)
def test_bad_tokens_are_refused_with_401(
    case: str, protected: tuple[str, SampleDriver], auth_server: AuthServer
) -> None:
    url, driver = protected
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public_pem = auth_server.key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    good = {"audience": url}
    tokens: dict[str, str] = {
        "wrong_audience": auth_server.token(audience="http://127.0.0.1:1/other"),
        "expired": auth_server.token(**good, lifetime=-600),
        "not_yet_valid": auth_server.token(**good, nbf=int(time.time()) + 600),
        "wrong_issuer": auth_server.token(**good, iss="https://as.example.evil"),
        "prefix_issuer": auth_server.token(**good, iss=auth_server.issuer + ".evil"),
        "alg_none": _unsigned(auth_server.issuer, url),
        "hs256_with_public_key": _hmac_with(public_pem, auth_server.issuer, url),
        "unknown_kid": auth_server.token(**good, headers={"kid": "nope"}),
        "jku_header": auth_server.token(**good, headers={"jku": "http://evil.example/jwks"}),
        "crit_header": auth_server.token(**good, headers={"crit": ["exp"], "exp": 1}),
        "other_key": auth_server.token(**good, key=other),
        "garbage": "not-a-jwt",
        "names_no_caller": auth_server.token(**good, sub=None, client_id=None),
    }
    response = _post(url, INIT, tokens[case])
    assert response.status_code == 401, response.text
    assert 'error="invalid_token"' in response.headers["www-authenticate"]
    assert "resource_metadata=" in response.headers["www-authenticate"]
    assert driver.calls == []


def test_a_token_in_the_query_string_is_refused(
    protected: tuple[str, SampleDriver], auth_server: AuthServer
) -> None:
    url, _ = protected
    token = auth_server.token(audience=url)
    response = httpx.post(url + "?access_token=" + token, content=json.dumps(INIT), headers=ACCEPT, timeout=10)
    assert response.status_code == 401


def test_unknown_kids_refresh_the_jwks_at_most_once_in_a_while(
    protected: tuple[str, SampleDriver], auth_server: AuthServer
) -> None:
    url, _ = protected
    before = len(auth_server.jwks_hits)
    for _ in range(5):
        bad = auth_server.token(audience=url, headers={"kid": "rotated-away"})
        assert _post(url, INIT, bad).status_code == 401
    assert len(auth_server.jwks_hits) - before <= 1


async def test_a_session_belongs_to_the_user_who_opened_it(auth_server: AuthServer) -> None:
    auth = OAuthOptions(authorization_servers=(auth_server.issuer,), jwks_uri=auth_server.jwks_uri)
    with serve_driver(SampleDriver(), auth=auth, stateless=False) as url:
        alice = auth_server.token(audience=url, sub="alice")
        bob = auth_server.token(audience=url, sub="bob")
        opened = _post(url, INIT, alice)
        session_id = opened.headers["mcp-session-id"]
        ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
        headers = {"mcp-session-id": session_id, "MCP-Protocol-Version": "2025-06-18"}
        assert _post(url, ping, bob, **headers).status_code == 404
        assert _post(url, ping, None, **headers).status_code == 401


def test_jwks_fetch_failure_is_a_401_not_a_crash(auth_server: AuthServer) -> None:
    dead = f"http://127.0.0.1:{free_port()}/jwks"
    auth = OAuthOptions(authorization_servers=(auth_server.issuer,), jwks_uri=dead, jwks_timeout=1.0)
    with serve_driver(SampleDriver(), auth=auth) as url:
        token = auth_server.token(audience=url)
        response = _post(url, INIT, token)
        assert response.status_code == 401
        assert "could not be fetched" in response.headers["www-authenticate"]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unsigned(issuer: str, audience: str) -> str:
    header = _b64(json.dumps({"alg": "none", "typ": "JWT", "kid": "test-key"}).encode())
    body = _b64(json.dumps({"iss": issuer, "aud": audience, "sub": "x", "exp": int(time.time()) + 300}).encode())
    return f"{header}.{body}."


def _hmac_with(secret: bytes, issuer: str, audience: str) -> str:
    import hashlib
    import hmac

    header = _b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": "test-key"}).encode())
    body = _b64(json.dumps({"iss": issuer, "aud": audience, "sub": "x", "exp": int(time.time()) + 300}).encode())
    signature = hmac.new(secret, f"{header}.{body}".encode(), hashlib.sha256).digest()
    return f"{header}.{body}.{_b64(signature)}"


async def test_without_jwks_uri_the_keys_are_discovered_from_the_issuer(auth_server: AuthServer) -> None:
    auth = OAuthOptions(authorization_servers=(auth_server.issuer,))
    with serve_driver(SampleDriver(), auth=auth) as url:
        token = auth_server.token(audience=url, sub="carol")
        async with mcp_client(url, headers={"Authorization": f"Bearer {token}"}) as session:
            assert (await session.call_tool("whoami", {})).structured_content["agent_id"] == "carol"


def test_extensions_can_declare_scopes_for_methods_they_add(auth_server: AuthServer) -> None:
    import mcp_types as types
    from mcs_mcp.serving import build_app, build_server

    def install(server: Any, driver: Any) -> None:
        async def reset(ctx: Any, params: Any) -> dict[str, Any]:
            return {"done": True}

        server.add_request_handler("x/reset", types.RequestParams, reset)
        server.mcs_catalog.add_scope_rule("x/reset", lambda params: ("admin",))

    auth = OAuthOptions(authorization_servers=(auth_server.issuer,), jwks_uri=auth_server.jwks_uri)
    options = ServeOptions(transport="streamablehttp", port=free_port(), auth=auth)
    app = build_app(build_server(SampleDriver(), options, extensions=[install]), options)
    with running(app, options) as url:
        call = {"jsonrpc": "2.0", "id": 1, "method": "x/reset", "params": {}}
        headers = {"MCP-Protocol-Version": "2025-06-18"}
        refused = _post(url, call, auth_server.token(audience=url, scope="reports:read"), **headers)
        assert refused.status_code == 403 and 'scope="admin"' in refused.headers["www-authenticate"]
        allowed = _post(url, call, auth_server.token(audience=url, scope="admin"), **headers)
        assert allowed.status_code == 200 and '"done":true' in allowed.text.replace(" ", "")


async def test_mcs_serve_with_tls_and_oauth_from_the_command_line(auth_server: AuthServer, tmp_path: Path) -> None:
    import os
    import ssl

    from serving_support import HERE, MCS, self_signed
    from support.servers import server_process

    cert_file, key_file = self_signed(tmp_path)
    port = free_port()
    serve = [MCS, "serve", "serving_helpers:SampleDriver", "--transport", "http", "--port", str(port),
             "-s", f"tls_cert={cert_file}", "-s", f"tls_key={key_file}",
             "-s", f"oauth_authorization_servers={auth_server.issuer}", "-s", f"oauth_jwks_uri={auth_server.jwks_uri}"]
    with server_process(serve, port, env={**os.environ, "PYTHONPATH": str(HERE)}):
        url = f"https://127.0.0.1:{port}/mcp"
        context = ssl.create_default_context(cafile=str(cert_file))
        unauthenticated = httpx.post(url, content=json.dumps(INIT), headers=ACCEPT, verify=context, timeout=10)
        assert unauthenticated.status_code == 401
        assert f"https://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp" in (
            unauthenticated.headers["www-authenticate"]
        )
        token = auth_server.token(audience=url, sub="dora", scope="admin")
        async with mcp_client(url, headers={"Authorization": f"Bearer {token}"}, verify=context) as session:
            assert (await session.call_tool("admin_reset", {})).content[0].text == "reset done"
            assert (await session.call_tool("whoami", {})).structured_content["agent_id"] == "dora"


async def test_mcp_file_s8_2_every_listed_authorization_server_is_trusted(
    auth_server: AuthServer, second_auth_server: AuthServer, tmp_path: Path
) -> None:
    from mcs_mcp.mcpfile import MCPFileDriver

    file = tmp_path / "protected.yaml"
    file.write_text(json.dumps({  # the format's section 8.2 example, on loopback
        "mcpFileVersion": "0.1.0", "name": "protected-server", "version": "1.0.0",
        "runtime": {"transportProtocol": "streamablehttp", "streamableHttpConfig": {
            "port": 8080,
            "auth": {"authorizationServers": [auth_server.issuer, second_auth_server.issuer],
                     "jwksUri": auth_server.jwks_uri}}},
        "tools": [{"name": "admin_tool", "description": "Administrative tool.", "requiredScopes": ["admin:write"],
                   "inputSchema": {"type": "object"},
                   "invocation": {"cli": {"command": "echo done"}}}],
    }))
    driver = MCPFileDriver(file)
    auth = ServeOptions.from_runtime_settings(driver.runtime_settings()).auth
    with serve_driver(driver, auth=auth) as url:
        for server in (auth_server, second_auth_server):
            token = server.token(audience=url, scope="admin:write", sub=server.kid)
            async with mcp_client(url, headers={"Authorization": f"Bearer {token}"}) as session:
                result = await session.call_tool("admin_tool", {})
            assert result.content[0].text.strip() == "done"
        forged = second_auth_server.token(audience=url, iss=auth_server.issuer)  # first's name, second's key
        assert _post(url, INIT, forged).status_code == 401
        stranger = second_auth_server.token(audience=url, iss="https://as.example.test")
        assert _post(url, INIT, stranger).status_code == 401
        origin = url.rsplit("/mcp", 1)[0]
        document = httpx.get(origin + "/.well-known/oauth-protected-resource/mcp", timeout=10).json()
        assert document["authorization_servers"] == [auth_server.issuer, second_auth_server.issuer]


async def test_mcp_file_s3_3_a_jwks_uri_alone_is_the_trusted_key_set(auth_server: AuthServer) -> None:
    with serve_driver(SampleDriver(), auth=OAuthOptions(jwks_uri=auth_server.jwks_uri)) as url:
        token = auth_server.token(audience=url, sub="dave")
        async with mcp_client(url, headers={"Authorization": f"Bearer {token}"}) as session:
            assert (await session.call_tool("whoami", {})).structured_content["agent_id"] == "dave"
        assert _post(url, INIT, auth_server.token(audience="https://elsewhere.test/mcp")).status_code == 401
        origin = url.rsplit("/mcp", 1)[0]
        document = httpx.get(origin + "/.well-known/oauth-protected-resource/mcp", timeout=10).json()
        assert "authorization_servers" not in document and document["resource"] == url


def test_mcp_file_s3_3_a_jwks_uri_that_belongs_to_no_listed_server_is_refused() -> None:
    from mcs_mcp.serving.auth import JWTVerifier

    auth = OAuthOptions(authorization_servers=("https://a.example.test", "https://b.example.test"),
                        jwks_uri="https://keys.example.test/jwks")
    with pytest.raises(ValueError, match="whose keys it holds is unclear"):
        JWTVerifier(auth, resource="http://127.0.0.1:1/mcp")


def test_a_jwks_uri_with_its_default_port_written_out_belongs_to_the_server_on_that_origin() -> None:
    from mcs_mcp.serving.auth import JWTVerifier

    auth = OAuthOptions(authorization_servers=("https://a.example.test", "https://b.example.test"),
                        jwks_uri="https://A.example.test:443/keys")
    verifier = JWTVerifier(auth, resource="http://127.0.0.1:1/mcp")
    assert verifier.key_sets["https://a.example.test"].uri == "https://A.example.test:443/keys"
    assert verifier.key_sets["https://b.example.test"].uri is None


async def test_with_several_trusted_servers_the_agent_id_names_the_issuer_of_its_subject(
    auth_server: AuthServer, second_auth_server: AuthServer
) -> None:
    from mcs.limits import RateLimit

    # A subject is unique only at its issuer: "alice" of one server is not "alice" of another.
    driver = SampleDriver(rate_limit=RateLimit(calls=2, period=3600))
    auth = OAuthOptions(authorization_servers=(auth_server.issuer, second_auth_server.issuer))
    with serve_driver(driver, auth=auth) as url:
        namesake = second_auth_server.token(audience=url, sub="alice")
        async with mcp_client(url, headers={"Authorization": f"Bearer {namesake}"}) as session:
            for _ in range(2):
                assert (await session.call_tool("whoami", {})).is_error is False
        alice = auth_server.token(audience=url, sub="alice")
        async with mcp_client(url, headers={"Authorization": f"Bearer {alice}"}) as session:
            result = await session.call_tool("whoami", {})
        assert result.is_error is False  # her budget was not spent by the other server's namesake
        assert result.structured_content["agent_id"] == f"{auth_server.issuer}#alice"
        assert [ctx.agent_id for _, _, ctx in driver.calls] == [f"{second_auth_server.issuer}#alice"] * 2 + [
            f"{auth_server.issuer}#alice"
        ]
