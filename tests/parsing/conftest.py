"""Fixtures for the parser tests: the shared BFCL corpus, skipped when absent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
BFCL = ROOT / ".." / "shared" / "corpus" / "bfcl" / "v1"


class BfclOutputs:
    """Real model outputs of the BFCL v1 dump, looked up by model, category and id."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._cache: dict[tuple[str, str], dict[str, Any]] = {}

    def result(self, model: str, category: str, ident: str) -> Any:
        key = (model, category)
        if key not in self._cache:
            path = self.root / "model_outputs" / model / f"gorilla_openfunctions_v1_test_{category}_result.json"
            lines = path.read_text(encoding="utf-8").splitlines()
            self._cache[key] = {
                item["id"]: item["result"] for item in map(json.loads, filter(None, lines))
            }
        return self._cache[key][ident]


@pytest.fixture(scope="session")
def bfcl() -> BfclOutputs:
    """The BFCL v1 outputs of 36 models; skips when the shared corpus is not beside the repo."""
    if not BFCL.is_dir():
        pytest.skip(f"the shared BFCL corpus is not beside the repository ({BFCL})")
    return BfclOutputs(BFCL.resolve())
