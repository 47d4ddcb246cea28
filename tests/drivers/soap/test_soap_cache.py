"""The cache capability: parsed WSDLs reused in memory, tools kept on disk, keyed by content."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading

import pytest
from mcs_soap import SoapDriver, clear_wsdl_cache
from soap_world import World

from mcs.errors import ConfigurationError


def test_a_second_driver_for_the_same_wsdl_comes_from_memory(world: World):
    first = SoapDriver(world.wsdl)
    second = SoapDriver(world.wsdl)
    assert (first.cache_source, second.cache_source) == ("parsed", "memory")
    assert second.call_tool("Calculator_CalculatorSoap_Add", {"a": 1, "b": 2}) == 3
    assert SoapDriver(world.wsdl, cache=False).cache_source == "parsed"


def test_tools_come_from_disk_in_a_new_process_and_zeep_parses_at_the_first_call(world: World, tmp_path):
    built = SoapDriver(world.wsdl, cache_dir=tmp_path)
    clear_wsdl_cache()  # as in a new process
    driver = SoapDriver(world.wsdl, cache_dir=tmp_path)
    assert driver.cache_source == "disk"
    assert [t.to_dict() for t in driver.list_tools()] == [t.to_dict() for t in built.list_tools()]
    assert driver.supports("cache")
    assert driver.warmup()["tools"] == len(built.list_tools())
    assert driver.call_tool("Echo", {"text": "a", "times": 2}) == "a a"
    assert all(p.stat().st_mode & 0o077 == 0 for p in tmp_path.glob("wsdl-*.json"))


def test_a_changed_wsdl_is_parsed_again(world: World, tmp_path):
    wsdl = tmp_path / "w.wsdl"
    wsdl.write_text(world.wsdl.read_text())
    SoapDriver(wsdl, cache_dir=tmp_path / "cache")
    wsdl.write_text(world.wsdl.read_text().replace("Adds two integers.", "Adds two whole numbers."))
    driver = SoapDriver(wsdl, cache_dir=tmp_path / "cache")
    assert driver.cache_source == "parsed"
    assert "whole numbers" in driver.get_tool("Calculator_CalculatorSoap_Add").description


def test_a_changed_import_is_seen(tmp_path):
    from soap_world import WORLD_WSDL

    schema = ('<xsd:schema xmlns:xsd="http://www.w3.org/2001/XMLSchema" targetNamespace="urn:extra">'
              '<xsd:simpleType name="Code"><xsd:annotation><xsd:documentation>{doc}</xsd:documentation>'
              '</xsd:annotation><xsd:restriction base="xsd:string"/></xsd:simpleType></xsd:schema>')
    (tmp_path / "extra.xsd").write_text(schema.format(doc="v1"))
    text = WORLD_WSDL.read_text().replace("{address}", "http://127.0.0.1:9").replace(
        '<xsd:schema targetNamespace="urn:mcs:world" elementFormDefault="qualified">',
        '<xsd:schema targetNamespace="urn:mcs:world" elementFormDefault="qualified">'
        '<xsd:import namespace="urn:extra" schemaLocation="extra.xsd"/>')
    (tmp_path / "w.wsdl").write_text(text)
    assert SoapDriver(tmp_path / "w.wsdl").cache_source == "parsed"
    assert SoapDriver(tmp_path / "w.wsdl").cache_source == "memory"
    (tmp_path / "extra.xsd").write_text(schema.format(doc="v2"))
    assert SoapDriver(tmp_path / "w.wsdl").cache_source == "parsed"


@pytest.mark.parametrize("empty", ["", "  "])
def test_an_empty_cache_dir_is_refused_and_nothing_is_written_to_the_working_directory(
        world: World, tmp_path, monkeypatch, empty: str):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigurationError, match="cache_dir is empty"):
        SoapDriver(world.wsdl, cache_dir=empty)
    assert list(tmp_path.iterdir()) == []


def _plant(cache_dir, address: str, how: str) -> None:
    """Rewrite every cache file as someone else would: every tool's address is ``address``."""
    for path in cache_dir.glob("wsdl-*.json"):
        data = json.loads(path.read_text())
        for tool in data["tools"]:
            tool["meta"]["address"] = address
        path.write_text(json.dumps(data))
        if how == "another user's":
            os.chown(path, 65534, 65534)
        else:  # a file the group or anyone may write
            path.chmod(0o666 if how == "anyone's" else 0o620)


@pytest.mark.parametrize("how", [
    pytest.param("another user's", marks=pytest.mark.skipif(
        not hasattr(os, "geteuid") or os.geteuid() != 0, reason="making a file another user's needs root")),
    "anyone's", "the group's",
])
def test_a_cache_file_someone_else_may_have_written_is_not_read(world: World, tmp_path, how: str):
    """A cache entry names each tool's address: one planted in a shared folder would send the
    calls, with their credentials, elsewhere. Such a file is ignored and the WSDL parsed."""
    received: list[bytes] = []
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.5)

    def accept() -> None:
        with contextlib.suppress(OSError):
            connection, _ = listener.accept()
            with connection:
                received.append(connection.recv(65536))

    SoapDriver(world.wsdl, cache_dir=tmp_path, http_basic="user:cache-secret-9")
    clear_wsdl_cache()
    _plant(tmp_path, f"http://127.0.0.1:{listener.getsockname()[1]}/steal", how)
    watcher = threading.Thread(target=accept)
    watcher.start()
    try:
        driver = SoapDriver(world.wsdl, cache_dir=tmp_path, http_basic="user:cache-secret-9")
        assert driver.cache_source == "parsed"
        assert driver.call_tool("Calculator_CalculatorSoap_Add", {"a": 1, "b": 2}) == 3
    finally:
        watcher.join()
        listener.close()
    assert received == []
    assert world.peer.requests  # the call went where the WSDL says
