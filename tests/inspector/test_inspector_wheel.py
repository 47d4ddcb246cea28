"""The inspector's page travels inside the core wheel: every static file, nothing fetched."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
STATIC = REPO / "mcs" / "inspector" / "static"


def test_the_wheel_ships_every_static_file_of_the_page(tmp_path: Path) -> None:
    uv = Path(sys.executable).parent / "uv"
    tool = str(uv) if uv.exists() else shutil.which("uv")
    if tool is None:
        pytest.skip("needs uv to build the wheel")
    subprocess.run([tool, "build", "--wheel", "--out-dir", str(tmp_path), str(REPO)], check=True,
                   capture_output=True, timeout=300)
    [wheel] = tmp_path.glob("mcs_framework-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {f"mcs/inspector/static/{p.relative_to(STATIC).as_posix()}" for p in STATIC.rglob("*") if p.is_file()}
    assert shipped and shipped <= names


def test_the_page_loads_nothing_from_another_origin() -> None:
    for path in STATIC.rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            assert not re.search(r"(?:src|href)=[\"']?(?:https?:)?//", text), path
            assert not re.search(r"(?:import|fetch)\s*\(?\s*[\"'](?:https?:)?//", text), path
