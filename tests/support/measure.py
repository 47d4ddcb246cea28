"""Measuring a child process from outside: its peak memory, through ``wait4``."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parents[1]


def child_peak_rss_kib(script: str, *args: str, extra_path: tuple[Path, ...] = (), timeout: float = 120) -> tuple[int, str]:
    """Run ``script`` in a fresh Python; return its peak RSS in KiB, measured from outside
    (``wait4`` on the child), and its standard output."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(
            [sys.executable, "-c", script, *args], stdout=out, stderr=err, cwd=TESTS,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in (TESTS, *extra_path))},
        )
        reaped: list[tuple[int, int, Any]] = []
        waiter = threading.Thread(target=lambda: reaped.append(os.wait4(process.pid, 0)), daemon=True)
        waiter.start()
        waiter.join(timeout)
        if not reaped:
            process.kill()
            waiter.join(10)
            raise AssertionError(f"the child did not finish within {timeout} s")
        _, status, usage = reaped[0]
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if process.returncode != 0:
            raise AssertionError(f"the child failed ({process.returncode}): {err.read().decode()[-3000:]}")
        return int(usage.ru_maxrss), out.read().decode()
