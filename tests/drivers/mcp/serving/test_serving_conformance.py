"""The MCP project's official conformance suite, server side, against `mcs serve`.

The suite (``@modelcontextprotocol/conformance``, pinned to 0.1.13, the last release that
runs on Node 20) is installed with npm into ``.cache/conformance`` once. Without npm or
node, or when the registry cannot be reached, the module is skipped with the reason.
docs/serving.md lists the scenarios that do not apply to MCS drivers and why.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from serving_support import HERE, MCS, REPO
from support.servers import free_port, server_process

VERSION = "0.1.13"
CACHE = REPO / ".cache" / "conformance"
BINARY = CACHE / "node_modules" / ".bin" / "conformance"

APPLICABLE = [
    "server-initialize",
    "ping",
    "logging-set-level",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-with-logging",
    "tools-call-error",
    "json-schema-2020-12",
    "resources-list",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
    "dns-rebinding-protection",
]


def _installed_version() -> str | None:
    package = CACHE / "node_modules" / "@modelcontextprotocol" / "conformance" / "package.json"
    if not package.is_file():
        return None
    match = re.search(r'"version"\s*:\s*"([^"]+)"', package.read_text())
    return match.group(1) if match else None


@pytest.fixture(scope="module")
def conformance() -> Path:
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("the MCP conformance suite needs node and npm, which are not installed")
    if _installed_version() != VERSION or not BINARY.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        try:
            done = subprocess.run(
                ["npm", "install", "--prefix", str(CACHE), "--no-audit", "--no-fund", "--silent",
                 f"@modelcontextprotocol/conformance@{VERSION}"],
                capture_output=True, text=True, timeout=300,
            )
        except subprocess.TimeoutExpired:
            pytest.skip("npm could not install the conformance suite within 5 minutes (registry unreachable?)")
        if done.returncode != 0 or not BINARY.exists():
            pytest.skip(f"npm could not install @modelcontextprotocol/conformance@{VERSION}: "
                        f"{(done.stderr or done.stdout).strip()[-300:]}")
    return BINARY


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    port = free_port()
    serve = [MCS, "serve", "serving_helpers:SampleDriver", "--transport", "http",
             "--port", str(port), "-s", "log_level=warning"]
    with server_process(serve, port, env=dict(os.environ, PYTHONPATH=str(HERE))):
        yield f"http://localhost:{port}/mcp"


@pytest.mark.parametrize("scenario", APPLICABLE)
def test_scenario_passes(scenario: str, conformance: Path, served: str) -> None:
    done = subprocess.run(
        [str(conformance), "server", "--url", served, "--scenario", scenario],
        capture_output=True, text=True, timeout=90, cwd=CACHE,
    )
    output = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)
    summary = re.search(r"Passed: (\d+)/(\d+), (\d+) failed", output)
    assert done.returncode == 0, output[-2000:]
    assert summary is not None, output[-2000:]
    passed, total, failed = (int(g) for g in summary.groups())
    assert failed == 0 and total > 0 and passed == total, output[-2000:]
