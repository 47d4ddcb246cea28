"""Checking that a process is gone (a zombie counts as gone: it is dead, awaiting its reaper)."""

from __future__ import annotations

import os
import time
from pathlib import Path


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
