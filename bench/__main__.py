"""`make bench`: run every benchmark module in this folder (or those named on the command line).

Each module runs in a fresh interpreter of its own, so no benchmark inherits another's
heap, imports or memory high-water mark. Each figure a benchmark checks against its goal
(``bench._support.check``) is printed beside the goal, with OVER where it misses, and
collected into a machine-readable summary written to ``bench-results.json`` (``--json
PATH`` to choose): per benchmark its seconds and exit status, and every figure with its
value, goal, unit and verdict (a figure recorded with ``bench._support.no_goal`` has no
goal: ``goal`` is null).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pkgutil
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import _support

ROOT = Path(__file__).resolve().parents[1]


def run_one(name: str, figures_path: str) -> int:
    """Run ``bench/<name>.py`` in this process; write the figures it checked to ``figures_path``."""
    module = importlib.import_module(f"bench.{name}")
    _support.CURRENT["bench"] = name
    try:
        module.main()
    finally:
        Path(figures_path).write_text(json.dumps(_support.FIGURES))
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("names", nargs="*", help="benchmark modules to run (default: all)")
    parser.add_argument("--json", default="bench-results.json", help="where to write the summary")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # internal: run one module, write its figures here
    args = parser.parse_args(argv)
    if args.one:
        return run_one(args.names[0], args.one)
    here = Path(__file__).resolve().parent
    names = args.names or sorted(
        m.name for m in pkgutil.iter_modules([str(here)]) if not m.name.startswith("_")
    )
    failed = 0
    runs: dict[str, dict[str, Any]] = {}
    figures: list[dict[str, Any]] = []
    for name in names:
        if not hasattr(importlib.import_module(f"bench.{name}"), "main"):
            continue
        print(f"\n===== bench/{name}.py =====", flush=True)
        started = time.perf_counter()
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
            figures_path = handle.name
        code = subprocess.call([sys.executable, "-m", "bench", "--one", figures_path, name], cwd=ROOT)
        try:
            checked = json.loads(Path(figures_path).read_text() or "[]")
        except ValueError:  # the benchmark died before it wrote its figures
            checked = []
        finally:
            os.unlink(figures_path)
        seconds = time.perf_counter() - started
        if code != 0:
            failed += 1
            print(f"bench/{name}.py failed (exit {code})")
        print(f"({seconds:.1f} s)", flush=True)
        figures.extend(checked)
        runs[name] = {"seconds": round(seconds, 1), "exit": code}
    over = [f for f in figures if not f["ok"]]
    summary = {
        "python": platform.python_version(), "machine": platform.machine(), "cores": os.cpu_count(),
        "benchmarks": runs, "figures": figures,
        "over": [f"{f['bench']}: {f['name']}" for f in over],
    }
    Path(args.json).write_text(json.dumps(summary, indent=2) + "\n")
    goals = sum(1 for f in figures if f["goal"] is not None)
    print(f"\n{goals} figures checked against their goals, {len(over)} OVER, {len(figures) - goals} with no goal; "
          f"summary written to {args.json}")
    for figure in over:
        print(f"  OVER  {figure['bench']}: {figure['name']} = {figure['value']:g} "
              f"(goal {'<=' if figure['kind'] == 'at most' else '>='} {figure['goal']:g})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
