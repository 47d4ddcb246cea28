"""Helpers for the serving tests: real servers on free loopback ports, real SDK clients."""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx2
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[3]
MCS = Path(sys.executable).with_name("mcs")

sys.path.insert(0, str(HERE))

from mcs_mcp.serving import ServeOptions, build_app, build_server  # noqa: E402
from mcs_mcp.serving.http import uvicorn_config  # noqa: E402
from support.servers import free_port, running_uvicorn  # noqa: E402
from support.servers import wait_for_port as wait_for_port  # noqa: E402  (kept importable from here)


@contextlib.contextmanager
def running(app: Any, options: ServeOptions) -> Iterator[str]:
    """Serve ``app`` with uvicorn on a thread; yields the endpoint URL."""
    with running_uvicorn(uvicorn_config(app, options)):
        yield options.url


@contextlib.contextmanager
def serve_driver(driver: Any, **option_fields: Any) -> Iterator[str]:
    options = ServeOptions(transport="streamablehttp", port=free_port(), **option_fields)
    with running(build_app(build_server(driver, options), options), options) as url:
        yield url


@contextlib.asynccontextmanager
async def mcp_client(
    url: str, *, headers: dict[str, str] | None = None, verify: Any = True, **session_kwargs: Any
) -> AsyncIterator[ClientSession]:
    """An initialized SDK client session over streamable HTTP."""
    async with (
        httpx2.AsyncClient(headers=headers, verify=verify, timeout=httpx2.Timeout(20.0)) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write, **session_kwargs) as session,
    ):
        await session.initialize()
        yield session


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and localhost, and its key, as PEM files in ``folder``."""
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
