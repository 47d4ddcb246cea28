"""HTTPS with a self-signed certificate made for the test."""

from __future__ import annotations

import ssl
from pathlib import Path

import httpx
import pytest
from mcs_mcp.serving import ServeOptions, TLSOptions, build_app, build_server
from mcs_mcp.serving.http import uvicorn_config
from serving_helpers import SampleDriver
from serving_support import mcp_client, self_signed, serve_driver
from support.servers import free_port

from mcs.errors import ConfigurationError


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return self_signed(tmp_path_factory.mktemp("tls"))


async def test_the_sdk_client_talks_to_the_server_over_https(certificate: tuple[Path, Path]) -> None:
    cert_file, key_file = certificate
    tls = TLSOptions(str(cert_file), str(key_file))
    with serve_driver(SampleDriver(), tls=tls) as url:
        assert url.startswith("https://127.0.0.1:")
        context = ssl.create_default_context(cafile=str(cert_file))
        async with mcp_client(url, verify=context) as session:
            result = await session.call_tool("add", {"a": 20, "b": 22})
        assert result.structured_content == {"sum": 42}


def test_plain_http_and_untrusted_clients_are_not_served(certificate: tuple[Path, Path]) -> None:
    cert_file, key_file = certificate
    with serve_driver(SampleDriver(), tls=TLSOptions(str(cert_file), str(key_file))) as url:
        with pytest.raises(httpx.ConnectError):
            httpx.post(url, json={}, timeout=5)  # default trust store does not know the cert
        with pytest.raises(httpx.HTTPError):
            httpx.post(url.replace("https://", "http://"), json={}, timeout=5)


def test_tls_files_that_cannot_be_loaded_are_a_configuration_error(tmp_path: Path) -> None:
    options = ServeOptions(port=free_port(), tls=TLSOptions(str(tmp_path / "missing.crt"), str(tmp_path / "missing.key")))
    with pytest.raises(ConfigurationError, match=r"cannot load the TLS certificate .*missing\.crt"):
        uvicorn_config(build_app(build_server(SampleDriver(), options), options), options)
