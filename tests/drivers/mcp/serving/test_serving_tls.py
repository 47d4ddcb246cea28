"""HTTPS with a self-signed certificate made for the test."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from mcs_mcp.serving import TLSOptions
from serving_helpers import SampleDriver
from serving_support import mcp_client, serve_driver


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("tls")
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "server.crt", folder / "server.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_file, key_file


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
