"""SECURITY.md F1: a path policy judges the forms a tool may expand a path into, not only
the path as written: ``~`` (the home folder) and ``$VARIABLE`` references."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mcs.context import AgentContext
from mcs.errors import PolicyDeniedError
from mcs.functions import FunctionDriver
from mcs.policies import path_policy, path_within


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``data/`` (the allowed root, the working folder) and a home folder beside it holding a key."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "notes.txt").write_text("notes")
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("KEYS", str(home / ".ssh"))
    monkeypatch.chdir(tmp_path / "data")
    return tmp_path


def _expanding_reader(root: Path, reads: list[str]) -> FunctionDriver:
    def read_file(path: str) -> str:
        """Read a file (``~`` and ``$VARS`` expanded, as many file tools do)."""
        real = Path(os.path.expandvars(path)).expanduser()
        reads.append(str(real))
        return real.read_text()

    driver = FunctionDriver([read_file], name="files")
    driver.add_policy(path_policy([root / "data"]))
    return driver


@pytest.mark.parametrize("path", ["~/.ssh/id_ed25519", "~", "$HOME/.ssh/id_ed25519", "${KEYS}/id_ed25519",
                                  "$KEYS/id_ed25519"])
def test_a_path_a_tool_would_expand_out_of_the_root_is_denied(tree: Path, path: str) -> None:
    reads: list[str] = []
    driver = _expanding_reader(tree, reads)
    answer = json.dumps({"tool": "read_file", "arguments": {"path": path}})
    with pytest.raises(PolicyDeniedError, match="must name a path under"):
        driver.process_llm_response(answer, context=AgentContext(agent_id="reader"))
    assert reads == []


def test_a_plain_path_inside_the_root_still_reads(tree: Path) -> None:
    reads: list[str] = []
    driver = _expanding_reader(tree, reads)
    answer = json.dumps({"tool": "read_file", "arguments": {"path": "notes.txt"}})
    assert driver.process_llm_response(answer) == "notes"
    assert path_within(str(tree / "data" / "notes.txt"), [tree / "data"])
