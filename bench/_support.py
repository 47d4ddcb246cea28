"""What several benchmarks share: a free loopback port, a server process for the length of a
block, the median time of a call, o200k_base read offline from the shared tokenizer file,
a child's peak memory read from outside it, an environment in which children cache their
bytecode, and :func:`check`, which records each figure with its goal for the summary
``make bench`` writes as JSON (:func:`no_goal` records a figure that has no goal).

The tests have their own helpers (tests/support); the benchmarks do not import the test tree.
"""

from __future__ import annotations

import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT / ".." / "shared"
O200K_FILE = SHARED / "tokenizers" / "o200k_base.tiktoken"
HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[Any] | None = None, timeout: float = 30.0) -> None:
    """Return once something accepts connections on ``port``; fail early if ``process`` exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the benchmark server exited with {process.returncode}")
        try:
            with socket.create_connection((HOST, port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"the benchmark server did not listen on port {port}")


@contextmanager
def server_process(
    argv: Sequence[str | Path],
    port: int,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    quiet: bool = True,
) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``argv`` (a server that listens on ``port``) for the block; stop it after.

    ``quiet`` sends its output to /dev/null; otherwise it shares the benchmark's.
    """
    output = subprocess.DEVNULL if quiet else None
    process = subprocess.Popen([str(arg) for arg in argv], env=env, cwd=cwd, stdout=output, stderr=output)
    try:
        wait_for_port(port, process)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def median_us(fn: Callable[[], object], runs: int, *, warmup: int = 0) -> float:
    """The median wall time of ``fn()`` over ``runs`` calls (after ``warmup`` untimed ones), in µs."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1e6


def o200k() -> Any:
    """A ``tiktoken.Encoding`` for o200k_base: from ``O200K_FILE`` offline when it is there
    (no download, no cache lookup), else as tiktoken finds it."""
    import tiktoken

    if not O200K_FILE.is_file():
        return tiktoken.get_encoding("o200k_base")
    import tiktoken.load
    import tiktoken_ext.openai_public as public

    ranks = tiktoken.load.load_tiktoken_bpe(str(O200K_FILE))
    original = public.load_tiktoken_bpe
    public.load_tiktoken_bpe = lambda *args, **kwargs: ranks
    try:
        spec = public.o200k_base()
    finally:
        public.load_tiktoken_bpe = original
    return tiktoken.Encoding(**spec)


# ---------------------------------------------------------------------- figures and goals

#: Every figure checked in this process, in order, for the JSON summary (``bench/__main__.py``).
FIGURES: list[dict[str, Any]] = []
#: The benchmark module running now; ``bench/__main__.py`` sets it.
CURRENT = {"bench": ""}


def check(
    name: str, value: float, goal: float, *, unit: str = "x", kind: Literal["at most", "at least"] = "at most",
    item: str | None = None,
) -> str:
    """Record ``value`` against its goal and return the text to print beside it:
    ``"(goal <= 1.2) ok"`` or ``"(goal <= 1.2) OVER"``. ``item`` names the issue item or
    bar the figure answers to, for the summary."""
    ok = value <= goal if kind == "at most" else value >= goal
    FIGURES.append({
        "bench": CURRENT["bench"], "name": name, "value": round(value, 4), "goal": goal, "unit": unit,
        "kind": kind, "ok": ok, **({"item": item} if item else {}),
    })
    sign = "<=" if kind == "at most" else ">="
    shown = f"{goal:g}x" if unit == "x" else f"{goal:g} {unit}"
    return f"(goal {sign} {shown}) {'ok' if ok else 'OVER'}"


def no_goal(name: str, value: float, *, unit: str = "x", item: str | None = None) -> str:
    """Record ``value``, a figure no document sets a goal for, and return ``"(no goal)"`` to
    print beside it. It goes into the summary with ``goal`` null and is never OVER."""
    FIGURES.append({
        "bench": CURRENT["bench"], "name": name, "value": round(value, 4), "goal": None, "unit": unit,
        "kind": None, "ok": True, **({"item": item} if item else {}),
    })
    return "(no goal)"


# ---------------------------------------------------------------------- children measured from outside


# Started directly from the benchmark process, a child inherits the benchmark's high-water
# mark (Linux carries it across fork or vfork and exec): its ru_maxrss, read from inside or
# with wait4 from the parent, is at least the benchmark's own peak. A minimal launcher (a
# fresh interpreter, about 10 MB) starts the child and waits for it, so the figure is the
# child's own peak.
_LAUNCHER = """
import json, os, sys
pid = os.posix_spawnp(sys.argv[2], sys.argv[2:], os.environ)
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as out:
    json.dump({"peak_rss_mb": usage.ru_maxrss / 1024, "cpu_s": usage.ru_utime + usage.ru_stime}, out)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def bytecode_cached_env() -> dict[str, str]:
    """This process's environment less ``PYTHONDONTWRITEBYTECODE``, for children timed from
    process start: a child writes the bytecode of what it imports, so the next one reads it,
    as from an installed package. With the variable set, every module edited since its
    bytecode was last written is compiled again by each child, which moves a from-start
    figure with the checkout's history instead of with the code."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


#: What a measured child writes before its result (JSON), the last thing on its stdout.
RESULT_MARKER = "@@RESULT@@"


def report_result(result: Any) -> None:
    """In a measured child: write ``result`` as JSON after :data:`RESULT_MARKER`."""
    import json

    sys.stdout.write("\n" + RESULT_MARKER + json.dumps(result))


def read_result(out: str) -> dict[str, Any] | None:
    """The result a child wrote with :func:`report_result`; ``None`` when it wrote none."""
    import json

    at = out.rfind(RESULT_MARKER)
    return None if at < 0 else dict(json.loads(out[at + len(RESULT_MARKER):]))


def run_measured(argv: Sequence[str | Path], *, cwd: Path | None = None, env: Mapping[str, str] | None = None,
                 timeout: float = 300.0) -> tuple[int, str, str, dict[str, float]]:
    """Run ``argv`` to its end; its exit code, stdout, stderr and what the kernel measured
    of it from outside: ``peak_rss_mb`` (its own high-water mark, not its parent's),
    ``cpu_s`` (user + system) and ``wall_s``. ``env`` defaults to
    :func:`bytecode_cached_env` (every measured child caches its bytecode).

    Raises:
        subprocess.TimeoutExpired: it ran longer than ``timeout`` (it is killed).
    """
    import json
    import tempfile

    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "rusage.json"
        launcher = subprocess.Popen(
            [sys.executable, "-c", _LAUNCHER, str(report), *(str(a) for a in argv)],
            cwd=cwd, env=bytecode_cached_env() if env is None else env,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        )
        try:
            out, err = launcher.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(launcher.pid, signal.SIGKILL)  # the launcher and the child it started
            launcher.communicate()
            raise
        measured: dict[str, float] = json.loads(report.read_text()) if report.is_file() else {
            "peak_rss_mb": 0.0, "cpu_s": 0.0}
    measured["wall_s"] = time.perf_counter() - started
    return launcher.returncode, out.decode(errors="replace"), err.decode(errors="replace"), measured
