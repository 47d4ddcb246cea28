"""The Makefile's demo targets, read with `make -n` (nothing is installed or run)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def _dry_run(target: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["make", "-n", target], cwd=ROOT, capture_output=True, text=True,
                          timeout=60, check=False)


@pytest.mark.parametrize("driver", ["soap", "can", "grpc", "graphql", "mqtt", "mcp"])
def test_a_driver_demo_installs_no_system_package(driver: str) -> None:
    done = _dry_run(f"demo-{driver}")
    assert done.returncode == 0, done.stderr
    assert f"-m mcs_{driver}.demo" in done.stdout
    assert "system-deps" not in done.stdout and "apt-get" not in done.stdout


def test_a_target_without_a_demo_is_told_which_drivers_have_one() -> None:
    done = _dry_run("demo-nosuch")
    assert done.returncode == 2
    assert "no demo for 'nosuch'; the drivers with one: can graphql grpc mcp mqtt rest soap" in done.stderr
    assert "mcs_nosuch.demo" not in done.stdout
