"""`make bench`: run every benchmark module in this folder (or those named on the command line)."""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    here = Path(__file__).resolve().parent
    names = argv or sorted(
        m.name for m in pkgutil.iter_modules([str(here)]) if not m.name.startswith("_")
    )
    failed = 0
    for name in names:
        module = importlib.import_module(f"bench.{name}")
        run = getattr(module, "main", None)
        if run is None:
            continue
        print(f"\n===== bench/{name}.py =====", flush=True)
        started = time.perf_counter()
        try:
            run()
        except Exception as exc:  # one broken benchmark must not hide the others
            failed += 1
            print(f"bench/{name}.py failed: {type(exc).__name__}: {exc}")
        print(f"({time.perf_counter() - started:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
