"""`make bench`: run every benchmark module in this folder (or those named on the command line).

Each figure a benchmark checks against its goal (``bench._support.check``) is printed beside
the goal, with OVER where it misses, and collected into a machine-readable summary written
to ``bench-results.json`` (``--json PATH`` to choose): per benchmark its seconds and whether
it failed, and every figure with its value, goal, unit and verdict.
"""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import platform
import sys
import time
from pathlib import Path

from bench import _support


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("names", nargs="*", help="benchmark modules to run (default: all)")
    parser.add_argument("--json", default="bench-results.json", help="where to write the summary")
    args = parser.parse_args(argv)
    here = Path(__file__).resolve().parent
    names = args.names or sorted(
        m.name for m in pkgutil.iter_modules([str(here)]) if not m.name.startswith("_")
    )
    failed = 0
    runs: dict[str, dict[str, object]] = {}
    for name in names:
        module = importlib.import_module(f"bench.{name}")
        run = getattr(module, "main", None)
        if run is None:
            continue
        print(f"\n===== bench/{name}.py =====", flush=True)
        _support.CURRENT["bench"] = name
        started = time.perf_counter()
        error = None
        try:
            run()
        except Exception as exc:  # one broken benchmark must not hide the others
            failed += 1
            error = f"{type(exc).__name__}: {exc}"
            print(f"bench/{name}.py failed: {error}")
        seconds = time.perf_counter() - started
        print(f"({seconds:.1f} s)", flush=True)
        runs[name] = {"seconds": round(seconds, 1), "error": error}
    over = [f for f in _support.FIGURES if not f["ok"]]
    summary = {
        "python": platform.python_version(), "machine": platform.machine(), "cores": _cores(),
        "benchmarks": runs, "figures": _support.FIGURES,
        "over": [f"{f['bench']}: {f['name']}" for f in over],
    }
    Path(args.json).write_text(json.dumps(summary, indent=2) + "\n")
    print(f"\n{len(_support.FIGURES)} figures checked against their goals, {len(over)} OVER; "
          f"summary written to {args.json}")
    for figure in over:
        print(f"  OVER  {figure['bench']}: {figure['name']} = {figure['value']:g} "
              f"(goal {'<=' if figure['kind'] == 'at most' else '>='} {figure['goal']:g})")
    return 1 if failed else 0


def _cores() -> int | None:
    import os

    return os.cpu_count()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
