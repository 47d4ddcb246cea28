"""Credentials from the spec's security schemes, against the loopback API."""

from __future__ import annotations

import asyncio

import pytest
import yaml
from mcs_rest import RestDriver
from rest_paths import PETSTORE
from rest_server import Running

from mcs.errors import ConfigurationError, ExecutionError


@pytest.mark.parametrize(
    ("auth", "header", "expected"),
    [
        ({"bearer": "s3cret"}, "authorization", "Bearer s3cret"),
        ({"headerKey": "k3y"}, "x-api-key", "k3y"),
        ({"cookieKey": "c00kie"}, "cookie", "session=c00kie"),
        ({"basic": ("alice", "pw")}, "authorization", "Basic YWxpY2U6cHc="),
        ({"basic": "alice:pw"}, "authorization", "Basic YWxpY2U6cHc="),
    ],
)
def test_each_scheme_puts_its_credential_where_the_spec_says(api: Running, auth, header, expected):
    with RestDriver(PETSTORE, base_url=api.url + "/v1", auth=auth) as driver:
        assert driver.call_tool("secure", {})["ok"] is True
    assert api.state.requests[-1].headers[header] == expected


def test_an_api_key_in_the_query(api: Running):
    with RestDriver(PETSTORE, base_url=api.url + "/v1", auth={"queryKey": "k3y"}) as driver:
        assert driver.call_tool("secure", {})["ok"] is True
    assert api.state.requests[-1].query == "api_key=k3y"


def test_without_credentials_the_401_reaches_the_llm_as_an_execution_error(api: Running):
    with RestDriver(PETSTORE, base_url=api.url + "/v1") as driver, pytest.raises(ExecutionError) as info:
        driver.call_tool("secure", {})
    assert info.value.details["status"] == 401
    assert "not authorised" in info.value.message


def test_oauth_client_credentials_fetches_caches_and_refreshes_the_token(api: Running):
    auth = {"oauth": {"client_id": "app", "client_secret": "appsecret", "scopes": ["pets:read"]}}
    with RestDriver(PETSTORE, base_url=api.url + "/v1", auth=auth) as driver:
        # the server rejects the first token (as if revoked): the driver refreshes once
        assert driver.call_tool("oauthOnly", {}) == {"ok": True, "auth": "Bearer oauth-2"}
        assert driver.call_tool("oauthOnly", {}) == {"ok": True, "auth": "Bearer oauth-2"}
    assert api.state.tokens_issued == 2
    token_requests = [r for r in api.state.requests if r.path == "/oauth/token"]
    assert len(token_requests) == 2
    assert b"scope=pets%3Aread" in token_requests[0].body


async def test_oauth_on_the_async_path(api: Running):
    auth = {"oauth": {"client_id": "app", "client_secret": "appsecret"}}
    driver = RestDriver(PETSTORE, base_url=api.url + "/v1", auth=auth)
    try:
        assert (await driver.acall_tool("oauthOnly", {}))["auth"] == "Bearer oauth-2"
    finally:
        await driver.aclose()


def test_wrong_oauth_client_secret_is_reported_without_the_secret(api: Running):
    auth = {"oauth": {"client_id": "app", "client_secret": "wrong-secret"}}
    with RestDriver(PETSTORE, base_url=api.url + "/v1", auth=auth) as driver, pytest.raises(ExecutionError) as info:
        driver.call_tool("oauthOnly", {})
    assert "refused the client credentials" in info.value.message
    assert "wrong-secret" not in info.value.message


def test_an_oauth_token_endpoint_sending_a_compression_bomb_is_refused_within_a_bounded_read(api: Running):
    import resource

    auth = {"oauth": {"client_id": "app", "client_secret": "appsecret", "token_url": api.url + "/oauth/bomb"}}
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with RestDriver(PETSTORE, base_url=api.url + "/v1", auth=auth) as driver, pytest.raises(ExecutionError) as info:
        driver.call_tool("oauthOnly", {})
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert "more than 65536 bytes" in info.value.message
    assert (after - before) < 100_000  # KiB: far below the 256 MiB the bomb inflates to
    assert [r.path for r in api.state.requests] == ["/oauth/bomb"]


async def test_an_oauth_token_endpoint_bomb_is_refused_on_the_async_path(api: Running):
    auth = {"oauth": {"client_id": "app", "client_secret": "appsecret", "token_url": api.url + "/oauth/bomb"}}
    driver = RestDriver(PETSTORE, base_url=api.url + "/v1", auth=auth)
    try:
        with pytest.raises(ExecutionError) as info:
            await driver.acall_tool("oauthOnly", {})
        assert "more than 65536 bytes" in info.value.message
    finally:
        await driver.aclose()


@pytest.mark.parametrize(
    ("auth", "headers", "secrets"),
    [
        ({"bearer": "wrong-bearer-token"}, None, ["wrong-bearer-token"]),
        ({"headerKey": "wrong-header-key"}, None, ["wrong-header-key"]),
        ({"queryKey": "wrong query+key"}, None, ["wrong query+key", "wrong%20query%2Bkey", "wrong+query%2Bkey"]),
        ({"cookieKey": "wrong-cookie"}, None, ["wrong-cookie"]),
        ({"basic": ("alice", "wrong-password")}, None, ["wrong-password", "YWxpY2U6d3JvbmctcGFzc3dvcmQ="]),
        ({}, {"Authorization": "Token configured-token"}, ["configured-token"]),
    ],
)
async def test_credentials_echoed_in_an_error_body_never_reach_the_model(api: Running, auth, headers, secrets):
    driver = RestDriver(PETSTORE, base_url=api.url + "/v1", auth=auth, headers=headers)
    try:
        with pytest.raises(ExecutionError) as info:
            await asyncio.to_thread(driver.call_tool, "secure", {})
        with pytest.raises(ExecutionError) as async_info:
            await driver.acall_tool("secure", {})
    finally:
        await driver.aclose()
    assert "received" in info.value.message  # the server did echo what it was sent
    for error in (info.value, async_info.value):
        text = f"{error.message} {error.details} {error}"
        assert "[redacted]" in text
        for secret in secrets:
            assert secret not in text


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_credentials_written_as_character_references_in_an_html_page_never_reach_the_model(api: Running, use_async):
    key, token = "wrong-key/42", "wrong-token-42"
    headers = {"X-Error-Page": "as-html", "X-Api-Key": key}
    with RestDriver(PETSTORE, base_url=api.url + "/v1", auth={"bearer": token}, headers=headers) as driver, \
            pytest.raises(ExecutionError) as info:
        if use_async:
            asyncio.run(driver.acall_tool("secure", {}))
        else:
            driver.call_tool("secure", {})
    text = f"{info.value.message} {info.value.details}"
    assert "Denied: key [redacted], [redacted]" in text
    assert key not in text and token not in text and "&#" not in text


def test_credentials_for_an_undeclared_scheme_are_a_configuration_error():
    with pytest.raises(ConfigurationError) as info:
        RestDriver(PETSTORE, auth={"nope": "x"})
    assert "nope" in str(info.value) and "bearer" in str(info.value)


def test_credentials_for_a_spec_without_schemes_are_pointed_at_headers():
    spec = yaml.safe_load(PETSTORE.read_text())
    del spec["components"]["securitySchemes"]
    with pytest.raises(ConfigurationError) as info:
        RestDriver(spec, auth={"bearer": "s3cret"})
    assert str(info.value) == (
        "auth names the security scheme 'bearer', which the spec does not declare (declared: none); "
        "send a credential the spec does not describe with headers={...}"
    )


def test_static_headers_are_sent_with_every_request(api: Running):
    with RestDriver(PETSTORE, base_url=api.url + "/v1", headers={"X-Client": "mcs"}) as driver:
        driver.call_tool("listPets", {})
    assert api.state.requests[-1].headers["x-client"] == "mcs"


def test_a_token_you_hold_goes_through_an_oauth2_scheme_as_a_bearer(api: Running):
    with RestDriver(PETSTORE, base_url=api.url + "/v1", auth={"oauth": "ghp_personal_token"}) as driver:
        assert driver.call_tool("oauthOnly", {}) == {"ok": True, "auth": "Bearer ghp_personal_token"}
    assert not [r for r in api.state.requests if r.path == "/oauth/token"], "no token was fetched"


def test_a_token_you_hold_goes_through_an_open_id_connect_scheme(api: Running):
    spec = yaml.safe_load(PETSTORE.read_text())
    spec["components"]["securitySchemes"]["oidc"] = {
        "type": "openIdConnect", "openIdConnectUrl": "https://id.example.com/.well-known/openid-configuration",
    }
    spec["paths"]["/secure"]["get"]["security"] = [{"oidc": []}]
    with RestDriver(spec, base_url=api.url + "/v1", auth={"oidc": "s3cret"}) as driver:
        assert driver.call_tool("secure", {})["auth"] == "Bearer s3cret"


def test_each_declared_scheme_is_listed_with_the_option_that_sets_it():
    with RestDriver(PETSTORE, auth={"bearer": "s3cret"}) as driver:
        options = {o.name: o for o in driver.auth_options()}
    assert set(options) == {"bearer", "basic", "headerKey", "queryKey", "cookieKey", "oauth"}
    assert options["bearer"].configured and not options["oauth"].configured
    assert options["headerKey"].kind == "apiKey in header X-API-Key"
    assert options["oauth"].option == (
        "-o auth='{\"oauth\": \"TOKEN\" or {\"client_id\": \"...\", \"client_secret\": \"...\"}}'"
    )


def test_an_oauth2_credential_of_the_wrong_shape_says_what_fits():
    with pytest.raises(ConfigurationError, match="give the access token as a string, or"):
        RestDriver(PETSTORE, auth={"oauth": ["app", "secret"]})


class _Tokens:
    """A token source as a user writes one: hands out the next token of a list, counting calls."""

    def __init__(self, *tokens: object) -> None:
        self.tokens = list(tokens)
        self.calls = 0

    def __call__(self) -> object:
        self.calls += 1
        return self.tokens[min(self.calls, len(self.tokens)) - 1]


def test_a_callable_gives_the_token_and_is_called_again_after_a_401(api: Running):
    tokens = _Tokens("oauth-1", "fresh")  # the server refuses oauth-1, as if revoked
    with RestDriver(PETSTORE, base_url=api.url + "/v1", auth={"oauth": tokens}) as driver:
        assert driver.call_tool("oauthOnly", {}) == {"ok": True, "auth": "Bearer fresh"}
        assert driver.call_tool("oauthOnly", {})["auth"] == "Bearer fresh"
    assert tokens.calls == 2
    assert [r.headers.get("authorization") for r in api.state.requests] == ["Bearer oauth-1", "Bearer fresh", "Bearer fresh"]


def test_a_callable_with_an_expiry_is_called_again_once_the_token_runs_out(api: Running):
    lasting, expiring = _Tokens(("s3cret", 3600)), _Tokens(("s3cret", 1))  # 1 s is inside the refresh margin
    for tokens in (lasting, expiring):
        with RestDriver(PETSTORE, base_url=api.url + "/v1", auth={"bearer": tokens}) as driver:
            driver.call_tool("secure", {})
            driver.call_tool("secure", {})
    assert (lasting.calls, expiring.calls) == (1, 2)


def test_a_callable_gives_an_api_key_too(api: Running):
    with RestDriver(PETSTORE, base_url=api.url + "/v1", auth={"headerKey": lambda: "k3y"}) as driver:
        assert driver.call_tool("secure", {})["ok"] is True
    assert api.state.requests[-1].headers["x-api-key"] == "k3y"


async def test_an_async_callable_is_awaited_on_the_async_path(api: Running):
    async def token() -> str:
        return "s3cret"

    driver = RestDriver(PETSTORE, base_url=api.url + "/v1", auth={"bearer": token})
    try:
        assert (await driver.acall_tool("secure", {}))["auth"] == "Bearer s3cret"
    finally:
        await driver.aclose()


def test_a_failing_callable_is_an_execution_error_that_does_not_repeat_its_message(api: Running):
    def broken() -> str:
        raise RuntimeError("vault said: token=hunter2")

    with RestDriver(PETSTORE, base_url=api.url + "/v1", auth={"bearer": broken}) as driver, \
            pytest.raises(ExecutionError) as info:
        driver.call_tool("secure", {})
    with RestDriver(PETSTORE, base_url=api.url + "/v1", auth={"bearer": lambda: ""}) as empty, \
            pytest.raises(ExecutionError, match="no usable token"):
        empty.call_tool("secure", {})
    assert "RuntimeError" in info.value.message and "hunter2" not in info.value.message
    assert api.state.requests == []


def test_a_callable_for_basic_auth_is_refused_at_load():
    with pytest.raises(ConfigurationError, match="takes no callable"):
        RestDriver(PETSTORE, auth={"basic": lambda: "alice:pw"})
