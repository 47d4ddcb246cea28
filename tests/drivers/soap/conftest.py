"""Fixtures for the SOAP driver: the loopback SOAP peer, world.wsdl written with its address."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mcs_soap import clear_wsdl_cache
from mcs_soap.peer import serve
from soap_world import WORLD_WSDL, World, world_peer


@pytest.fixture(scope="session")
def world_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    peer = world_peer()
    with serve(peer) as url:
        folder = tmp_path_factory.mktemp("world")
        wsdl = folder / "world.wsdl"
        wsdl.write_text(WORLD_WSDL.read_text().replace("{address}", url))
        yield World(peer, url, wsdl)


@pytest.fixture
def world(world_server: World) -> World:
    """The running peer with its recorder and raw answers cleared for this test."""
    world_server.peer.requests.clear()
    world_server.peer.raw.clear()
    world_server.peer.raw_headers.clear()
    return world_server


@pytest.fixture(autouse=True)
def _fresh_wsdl_cache() -> Iterator[None]:
    clear_wsdl_cache()
    yield
    clear_wsdl_cache()
