"""Processes in tests: checking that one is gone (a zombie counts as gone: it is dead,
awaiting its reaper), and running one from several threads at once."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def process_gone(pid: int, within: float = 3.0) -> bool:
    """Whether ``pid`` is gone or a zombie within ``within`` seconds (polled)."""
    deadline = time.monotonic() + within
    while True:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except FileNotFoundError:
            return True
        if stat.split(")")[-1].split()[0] == "Z":
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def assert_process_gone(pid: int, within: float = 3.0) -> None:
    """Fail (and kill the survivor) unless ``pid`` ends within ``within`` seconds."""
    if not process_gone(pid, within):
        os.kill(pid, 9)
        raise AssertionError(f"process {pid} survived")


#: One process started at a time (they still run side by side): CPython 3.11 starts children
#: with vfork() outside the GIL, and two threads doing so at once failed an exec with EFAULT
#: ("Bad address") in one run of the suite.
_STARTING = threading.Lock()


def run_captured(argv: Sequence[str | Path], *, timeout: float, **options: Any) -> subprocess.CompletedProcess[str]:
    """``subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **options)``,
    with the start of the process serialised across threads; the child is killed and
    ``TimeoutExpired`` raised when it outlives ``timeout``."""
    with _STARTING:
        process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **options)
    with process:
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            raise
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
