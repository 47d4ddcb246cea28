"""`mcs inspect TARGET`: a driver, a gen-mcp file, an mcpServers file or a toolbox, served until stopped."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from inspect_support import inspect_process, mcp_servers_file
from mcs_rest.demo import SPEC

ROOT = Path(__file__).resolve().parents[2]


def _mcs(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mcs.cli", *args], capture_output=True, text=True, timeout=60)


def test_it_serves_a_named_driver_and_prints_a_tokened_loopback_url(shop: str) -> None:
    with inspect_process(["rest", "-o", f"spec={SPEC}", "-o", f"base_url={shop}"]) as (process, url):
        overview = httpx.get(url + "api/overview", timeout=30).json()
        assert (overview["driver"]["name"], overview["tools"]) == ("demo_petstore", 3)
        process.terminate()
        assert process.wait(timeout=30) == 0
    assert url.startswith("http://127.0.0.1:")


def test_it_serves_a_gen_mcp_file(corpus: Path) -> None:
    files = sorted((corpus / "genmcp" / "testdata").rglob("*.yaml"))
    target = next(f for f in files if "mcpFileVersion: 0.1.0" in f.read_text(encoding="utf-8") and "http" in f.read_text(encoding="utf-8"))
    with inspect_process([str(target)]) as (_, url):
        assert httpx.get(url + "api/overview", timeout=30).json()["driver"]["protocol"]


def test_it_serves_an_mcp_servers_file_and_reads_its_interfaces(tmp_path: Path) -> None:
    config = mcp_servers_file(tmp_path, tmp_path / "calls.jsonl")
    with inspect_process([str(config)]) as (_, url):
        found = httpx.get(url + "api/interfaces", timeout=60).json()
        assert [v["interface"] for v in found["interfaces"]][:2] == ["media.player.v1", "filesystem.navigator.v1"]


def test_it_serves_a_toolbox(tmp_path: Path, shop: str) -> None:
    box = tmp_path / "toolbox.yaml"
    box.write_text(f"drivers:\n  pets: {{driver: rest, spec: {SPEC}, base_url: '{shop}'}}\n  demo: {{driver: functions}}\n")
    with inspect_process(["-c", str(box)]) as (_, url):
        names = {row["name"] for row in httpx.get(url + "api/tools", timeout=30).json()["tools"]}
        assert {"addPet", "listPets"} <= names and len(names) > 3


def test_it_serves_a_module_of_tool_functions(tmp_path: Path) -> None:
    (tmp_path / "kitchen_tools.py").write_text(
        "import mcs\n\n@mcs.tool(annotations={'readOnlyHint': True})\n"
        "def boil(minutes: int) -> str:\n    'Boil water.'\n    return f'boiled {minutes} min'\n"
    )
    with inspect_process(["kitchen_tools"], cwd=tmp_path) as (_, url):
        ran = httpx.post(url + "api/call", json={"tool": "boil", "arguments": {"minutes": 3}}, timeout=30).json()
        assert ran["result"] == "boiled 3 min"


def test_options_of_a_file_target_are_checked_against_the_drivers_signature(corpus: Path) -> None:
    files = sorted((corpus / "genmcp" / "testdata").rglob("*.yaml"))
    target = next(f for f in files if "mcpFileVersion: 0.1.0" in f.read_text(encoding="utf-8"))
    done = subprocess.run([sys.executable, "-m", "mcs.cli", "inspect", str(target), "-o", "no_such_option=1"],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 2 and "no_such_option" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(("args", "words"), [
    ([], "name a driver"),
    (["no-such-driver"], "no MCS driver named 'no-such-driver'"),
    (["README.md"], "neither a gen-mcp file"),
    (["rest", "-c", "box.yaml"], "not both"),
    (["functions", "--port", "70000"], "--port must be between"),
])
def test_bad_targets_get_one_clear_line_and_exit_2(args: list[str], words: str) -> None:
    done = subprocess.run([sys.executable, "-m", "mcs.cli", "inspect", *args], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert done.returncode == 2, done.stderr
    assert words in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_it_is_listed_in_the_command_line_help() -> None:
    assert "inspect" in _mcs("--help").stdout
    assert "--open" in _mcs("inspect", "--help").stdout


def test_open_never_puts_the_token_on_a_browser_command_line(tmp_path: Path, shop: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Any local user can read a process's command line (ps, /proc/PID/cmdline).
    seen = tmp_path / "browser-argv.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >> "{seen}"\n')
    browser.chmod(0o755)
    monkeypatch.setenv("BROWSER", f"{browser} %s")
    with inspect_process(["rest", "-o", f"spec={SPEC}", "-o", f"base_url={shop}", "--open"]) as (_, url):
        token = url.rstrip("/").rsplit("/", 1)[1]
        deadline = time.monotonic() + 30
        while not seen.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        argv = seen.read_text(encoding="utf-8").split()
        assert argv and token not in " ".join(argv)
        # What the browser opens is a file only its owner can read, leading to the page.
        opened = Path(argv[-1].removeprefix("file://"))
        assert opened.stat().st_mode & 0o077 == 0
        assert url in opened.read_text(encoding="utf-8")
    assert not opened.exists()
