"""SOAP driver benchmarks, beside zeep doing the same work in the same run.

1. Load: every corpus WSDL, each in its own child process (seconds from before the import
   to tools listed; the child's own peak RSS read by a launcher, ``bench._support.run_measured``).
2. vboxweb (1,158 operations): our load vs zeep's own ``Client(wsdl)`` (bar <= 1.3x), and a
   second load from the cache: in memory (same process) and from disk (a new process),
   each against zeep's ``Client`` (bar <= 0.2x). Medians of alternating child runs.
3. Call overhead: ``process_llm_response`` vs a bare ``zeep.Client`` calling the same
   operation on the same loopback peer (ratio of medians, bar <= 1.15).

Run: ``python -m bench soap`` (``make bench``).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._support import ROOT, SHARED, run_measured

WSDL_DIR = SHARED / "corpus" / "wsdl"
VBOX = WSDL_DIR / "gowsdl" / "vboxweb.wsdl"
RUNS = int(os.environ.get("SOAP_BENCH_RUNS", "5"))


# ---------------------------------------------------------------------- children


def _child(kind: str, path: str, cache_dir: str | None) -> dict[str, Any]:
    started = time.perf_counter()
    if kind == "zeep":
        import zeep

        client = zeep.Client(path)
        count = sum(len(p.binding._operations) for s in client.wsdl.services.values() for p in s.ports.values())
        return {"seconds": time.perf_counter() - started, "tools": count}
    from mcs_soap import SoapDriver, WsdlError

    try:
        driver = SoapDriver(path, cache_dir=cache_dir)
        if kind == "ours-twice":  # the second load in the same process comes from memory
            first = time.perf_counter() - started
            again = time.perf_counter()
            driver = SoapDriver(path, cache_dir=cache_dir)
            return {"seconds": time.perf_counter() - again, "first": first, "source": driver.cache_source,
                    "tools": len(driver.list_tools())}
        tools = driver.list_tools()
        driver.get_function_description()
    except WsdlError as exc:
        return {"error": str(exc).split(": ", 1)[-1][:90]}
    return {"seconds": time.perf_counter() - started, "tools": len(tools), "source": driver.cache_source}


def _run_child(kind: str, path: Path, cache_dir: str | None = None) -> dict[str, Any]:
    """Run one measurement in a child; its own peak RSS (``bench._support.run_measured``)."""
    argv = [sys.executable, "-m", "bench.soap", kind, str(path), cache_dir or ""]
    code, output, _, measured = run_measured(argv, cwd=ROOT)
    marker = output.rfind("@@RESULT@@")
    if code != 0 or marker < 0:
        return {"error": f"child exited {code}"}
    result: dict[str, Any] = json.loads(output[marker + len("@@RESULT@@"):])
    result["peak_rss_mb"] = measured["peak_rss_mb"]
    return result


# ---------------------------------------------------------------------- 1. every corpus WSDL


def bench_corpus() -> None:
    print("\n-- 1. every corpus WSDL: load to tools listed (child process each; seconds, peak RSS)")
    for path in sorted(WSDL_DIR.rglob("*.wsdl")):
        result = _run_child("ours", path, None)
        name = path.relative_to(WSDL_DIR).as_posix()
        if "error" in result:
            print(f"   {name:50} refused with a clear error: {result['error']}")
        else:
            print(f"   {name:50} {result['tools']:>5} tools {result['seconds']:6.2f} s {result['peak_rss_mb']:6.0f} MB")


# ---------------------------------------------------------------------- 2. vboxweb and the cache


def _median(kind: str, cache_dir: str | None = None, key: str = "seconds") -> tuple[float, float]:
    rows = [_run_child(kind, VBOX, cache_dir) for _ in range(RUNS)]
    return statistics.median(r[key] for r in rows), max(r["peak_rss_mb"] for r in rows)


def _verdict(ratio: float, bar: float) -> str:
    return "ok" if ratio <= bar else "OVER"


def bench_vboxweb() -> None:
    print(f"\n-- 2. vboxweb.wsdl (1,158 operations), medians of {RUNS} child runs each")
    zeep_s, zeep_mb, ours_s, ours_mb = [], [], [], []
    for _ in range(RUNS):  # alternate, so load on the machine hits both alike
        z = _run_child("zeep", VBOX)
        o = _run_child("ours", VBOX)
        zeep_s.append(z["seconds"])
        zeep_mb.append(z["peak_rss_mb"])
        ours_s.append(o["seconds"])
        ours_mb.append(o["peak_rss_mb"])
    z, o = statistics.median(zeep_s), statistics.median(ours_s)
    print(f"   zeep Client(wsdl)            {z:6.3f} s  {max(zeep_mb):5.0f} MB")
    print(f"   SoapDriver (no cache)        {o:6.3f} s  {max(ours_mb):5.0f} MB   ratio {o / z:.2f} (goal <= 1.3)  {_verdict(o / z, 1.3)}")
    memory, _ = _median("ours-twice")
    print(f"   second load, memory cache    {memory:6.3f} s            ratio {memory / z:.3f} (goal <= 0.2)  {_verdict(memory / z, 0.2)}")
    with tempfile.TemporaryDirectory() as cache_dir:
        _run_child("ours", VBOX, cache_dir)  # fills the disk cache
        disk, disk_mb = _median("ours", cache_dir)
    print(f"   new process, disk cache      {disk:6.3f} s  {disk_mb:5.0f} MB   ratio {disk / z:.3f} (goal <= 0.2)  {_verdict(disk / z, 0.2)}")


# ---------------------------------------------------------------------- 3. call overhead


def bench_call(iterations: int = 1500) -> None:
    import zeep
    from mcs_soap import SoapDriver
    from mcs_soap.demo import serve_calculator

    print("\n-- 3. Add on a loopback SOAP peer: process_llm_response vs a bare zeep.Client (goal <= 1.15)")
    response = '{"tool": "Add", "arguments": {"intA": 19, "intB": 23}}'
    with serve_calculator() as wsdl, SoapDriver(wsdl) as driver:
        client = zeep.Client(wsdl)
        assert driver.process_llm_response(response) == client.service.Add(intA=19, intB=23) == 42
        for _ in range(200):
            driver.process_llm_response(response)
            client.service.Add(intA=19, intB=23)
        ours, bare = [], []
        for _ in range(iterations):
            started = time.perf_counter()
            driver.process_llm_response(response)
            ours.append(time.perf_counter() - started)
            started = time.perf_counter()
            client.service.Add(intA=19, intB=23)
            bare.append(time.perf_counter() - started)
    a, b = statistics.median(ours), statistics.median(bare)
    print(f"   median process_llm_response {a * 1e6:8.0f} us")
    print(f"   median zeep Client call     {b * 1e6:8.0f} us")
    print(f"   ratio {a / b:.3f} (goal <= 1.15)  {_verdict(a / b, 1.15)}  ({iterations} calls each, interleaved)")


def main() -> None:
    if WSDL_DIR.is_dir():
        bench_corpus()
        bench_vboxweb()
    else:
        print("bench/soap.py: ../shared/corpus/wsdl is not here; only the call benchmark runs")
    bench_call()


if __name__ == "__main__":
    if len(sys.argv) >= 3:
        result = _child(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] else None)
        sys.stdout.write("\n@@RESULT@@" + json.dumps(result))
    else:
        main()
