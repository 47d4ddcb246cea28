"""Fixtures: the gen-mcp corpus, MCP files written on the fly, a recording HTTP server, a
HOME of the test's own, and a working directory for commands with a directory outside it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from mcpfile_support import SECRET, Recorder, mcp_file, tool

ROOT = Path(__file__).resolve().parents[4]
CORPUS = ROOT / ".." / "shared" / "corpus" / "genmcp"


@pytest.fixture
def corpus() -> Path:
    """The gen-mcp fixtures and reference; the test is skipped when the corpus is absent."""
    if not CORPUS.is_dir():
        pytest.skip("the shared gen-mcp corpus (../shared/corpus/genmcp) is not present")
    return CORPUS


@pytest.fixture
def write_file(tmp_path: Path) -> Callable[..., Path]:
    """Write a mapping (as YAML) or text to a file under tmp_path and return its path."""
    counter = iter(range(1000))

    def write(content: Any, name: str | None = None) -> Path:
        path = tmp_path / (name or f"mcpfile-{next(counter)}.yaml")
        path.write_text(content if isinstance(content, str) else yaml.safe_dump(content, sort_keys=False))
        return path

    return write


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    server = Recorder()
    yield server
    server.close()


@pytest.fixture
def new_driver() -> Iterator[Callable[..., Any]]:
    """Build MCPFileDrivers that are closed (HTTP pool released) after the test."""
    from mcs_mcp.mcpfile.driver import MCPFileDriver

    made: list[MCPFileDriver] = []

    def build(*args: Any, **kwargs: Any) -> MCPFileDriver:
        driver = MCPFileDriver(*args, **kwargs)
        made.append(driver)
        return driver

    yield build
    for driver in made:
        driver.close()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME of the test's own: ~/.gitconfig, ~/.config/git and ~/.jq are read from there."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return folder


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """The commands' working directory: ``notes.txt`` (``inside text``) and ``a`` (``model's text``)."""
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "notes.txt").write_text("inside text\n")
    (folder / "a").write_text("model's text\n")
    return folder


@pytest.fixture
def outside(tmp_path: Path, work: Path) -> Path:
    """A sibling of the working directory holding ``secret`` (:data:`SECRET`) and ``victim``
    (``original``), and symlinks to it inside: ``link`` to the secret, ``dirlink`` to the directory."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret").write_text(f"{SECRET}\n")
    (folder / "victim").write_text("original\n")
    (work / "link").symlink_to(folder / "secret")
    (work / "dirlink").symlink_to(folder)
    return folder


@pytest.fixture
def cli(new_driver, write_file, work: Path) -> Callable[..., Any]:
    """``cli(command, properties={"x": string}, **options)``: a driver of one CLI tool ``t``
    running ``command`` in :func:`work`."""
    def build(command: str, properties: dict[str, Any] | None = None, **options: Any) -> Any:
        invocation = {"cli": {"command": command}}
        schema = {"x": {"type": "string"}} if properties is None else properties
        return new_driver(write_file(mcp_file(tool("t", invocation, schema))), cli_cwd=work, **options)

    return build
