"""The official MCP conformance suite's client scenarios against the bridge's MCP client.

The suite (``@modelcontextprotocol/conformance@0.1.13``; later versions need Node 22) is
installed with npm into the ignored folder ``.cache/conformance`` at the repository root.
Applicable scenarios: ``initialize``, ``tools_call``, and the auth scenarios a client
holding credentials can meet (``client-credentials-basic``, ``client-credentials-jwt``);
the other auth scenarios need an interactive authorization-code flow, which the bridge
does not perform.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]
PACKAGE = "@modelcontextprotocol/conformance@0.1.13"
CACHE = ROOT / ".cache" / "conformance"
CLI = CACHE / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
CLIENT = Path(__file__).resolve().parent / "conformance_client.py"
SCENARIOS = ["initialize", "tools_call", "auth/client-credentials-basic", "auth/client-credentials-jwt"]


@pytest.fixture(scope="module")
def conformance_cli() -> Path:
    if CLI.is_file():
        return CLI
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        pytest.skip("npm/node is not installed: the official MCP conformance suite cannot run")
    CACHE.mkdir(parents=True, exist_ok=True)
    completed = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--prefix", str(CACHE), PACKAGE],
        capture_output=True, text=True, timeout=300,
    )
    if completed.returncode != 0 or not CLI.is_file():
        pytest.skip(f"could not install {PACKAGE} with npm: {completed.stderr.strip()[-300:]}")
    return CLI


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_official_client_scenario_passes(scenario: str, conformance_cli: Path, tmp_path: Path) -> None:
    node = shutil.which("node")
    assert node is not None
    command = shlex.join([sys.executable, str(CLIENT)])
    completed = subprocess.run(
        [node, str(conformance_cli), "client", "--command", command, "--scenario", scenario, "--timeout", "60000",
         "--output-dir", str(tmp_path / "results")],
        cwd=tmp_path, capture_output=True, text=True, timeout=180,
    )
    [checks_file] = list((tmp_path / "results").rglob("checks.json"))
    checks = json.loads(checks_file.read_text())
    failed = [c for c in checks if c["status"] not in ("SUCCESS", "INFO")]
    assert completed.returncode == 0 and not failed, (failed, completed.stdout[-2000:], completed.stderr[-2000:])
    assert any(c["status"] == "SUCCESS" for c in checks)
