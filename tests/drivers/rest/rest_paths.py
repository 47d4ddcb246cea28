"""Paths the REST driver's tests share (a uniquely named module, importable from any test)."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
CORPUS = ROOT / ".." / "shared" / "corpus"
PETSTORE = HERE / "petstore.yaml"
NOTES = HERE / "notes.yaml"
