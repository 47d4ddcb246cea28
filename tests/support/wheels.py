"""Build the core's wheel and install it into a fresh virtual environment, as a user would.

uv is used when the environment has it (fast, cached), else ``build`` and pip.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import venv
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

#: What an installer prints when the package index cannot be reached.
UNREACHABLE = ("failed to fetch", "connection", "connect", "dns", "timed out", "network", "offline",
               "name or service not known", "temporary failure", "no matching distribution")


def uv() -> str | None:
    local = Path(sys.executable).parent / "uv"
    return str(local) if local.exists() else shutil.which("uv")


def build_core_wheel(out: Path) -> Path:
    """The ``mcs-framework`` wheel built from this checkout, in ``out``."""
    tool = uv()
    command = (
        [tool, "build", "--wheel", "--out-dir", str(out), str(REPO)]
        if tool
        else [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(REPO)]
    )
    subprocess.run(command, check=True, capture_output=True, timeout=300)
    wheels = sorted(out.glob("mcs_framework-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def new_venv(env: Path) -> Path:
    """A fresh virtual environment; returns its python."""
    venv.EnvBuilder(with_pip=uv() is None).create(env)
    return env / "bin" / "python"


def pip_install(python: Path, requirements: Sequence[str]) -> subprocess.CompletedProcess[str]:
    """Install ``requirements`` into ``python``'s environment: from the local cache first, then
    the package index. Returns the last attempt (its ``returncode`` says how it went)."""
    tool = uv()
    if tool:
        base = [tool, "pip", "install", "--python", str(python), *requirements]
        offline = subprocess.run([*base, "--offline"], capture_output=True, text=True, timeout=300)
        if offline.returncode == 0:
            return offline
        return subprocess.run(base, capture_output=True, text=True, timeout=300)
    return subprocess.run([str(python), "-m", "pip", "install", "--quiet", *requirements],
                          capture_output=True, text=True, timeout=300)


def index_unreachable(done: subprocess.CompletedProcess[str]) -> bool:
    """True when a failed install failed because the package index could not be reached."""
    text = done.stderr.lower()
    return done.returncode != 0 and any(word in text for word in UNREACHABLE)
