"""SOAP driver benchmarks, beside zeep doing the same work in the same run.

1. Load: every corpus WSDL, each in its own child process (seconds from before the import
   to tools listed and the system prompt rendered; the child's own peak RSS read from
   outside it by a launcher, ``bench._support.run_measured``).
2. vboxweb (1,158 operations): our load vs zeep's own ``Client(wsdl)`` (bar <= 1.3x), and a
   second load from the cache: in memory (same process) and from disk (a new process),
   each against zeep's ``Client`` (bar <= 0.2x). Medians of alternating child runs. Every
   child ends with the same thing ready: zeep's client built, or our driver with its tools
   listed and its system prompt (function description inside) rendered. Two clocks per
   child, both printed:

   * from process start: imports included (zeep's, or ours: the mcs core and what the
     load uses);
   * the load alone: from after importing what the load uses (zeep for zeep's client and
     for our parse, none for a disk-cache hit; ``mcs_soap``, and pydantic and the prompt
     templates with YAML, which ``import mcs_soap`` leaves for first use) to ready.

3. Call overhead: ``process_llm_response`` vs a bare ``zeep.Client`` calling the same
   operation on the same loopback peer (ratio of medians, bar <= 1.15).

Run: ``python -m bench soap`` (``make bench``).
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._support import ROOT, SHARED, check, read_result, report_result, run_measured

WSDL_DIR = SHARED / "corpus" / "wsdl"
VBOX = WSDL_DIR / "gowsdl" / "vboxweb.wsdl"
RUNS = int(os.environ.get("SOAP_BENCH_RUNS", "5"))


# ---------------------------------------------------------------------- children


def _child(kind: str, path: str, cache_dir: str | None) -> dict[str, Any]:
    """One measurement, run in a fresh process: ``seconds`` from before the first import,
    ``load`` from after the imports the load uses, both to the same thing ready."""
    started = time.perf_counter()
    if kind == "import-mcs":
        import mcs  # noqa: F401

        return {"seconds": time.perf_counter() - started, "load": 0.0}
    if kind == "zeep":
        import zeep

        imported = time.perf_counter()
        client = zeep.Client(path)
        count = sum(len(p.binding._operations) for s in client.wsdl.services.values() for p in s.ports.values())
        done = time.perf_counter()
        return {"seconds": done - started, "load": done - imported, "tools": count}
    from mcs_soap import SoapDriver, WsdlError

    # The disk cache goes only to the temporary folder the benchmark made, never the working directory.
    assert cache_dir is None or os.path.isabs(cache_dir), f"cache_dir {cache_dir!r} is not an absolute path"
    # What every load uses and `import mcs_soap` leaves for first use: pydantic (the driver's
    # meta) and the prompt templates with their YAML (mcs.prompts imports yaml only when it
    # reads a template); imported here so "load" is the load alone.
    import yaml  # noqa: F401

    from mcs import DriverMeta, prompts  # noqa: F401

    if cache_dir is None:
        import zeep  # the parse imports it
    imported = time.perf_counter()
    try:
        driver = SoapDriver(path, cache_dir=cache_dir)
        tools = driver.list_tools()
        driver.get_driver_system_message()  # renders the function description inside
        done = time.perf_counter()
        if kind == "ours-twice":  # a second driver in the same process: from the memory cache
            again = time.perf_counter()
            driver = SoapDriver(path, cache_dir=cache_dir)
            tools = driver.list_tools()
            driver.get_driver_system_message()
            twice = time.perf_counter() - again
            return {"seconds": twice, "load": twice, "source": driver.cache_source, "tools": len(tools)}
    except WsdlError as exc:
        return {"error": str(exc).split(": ", 1)[-1][:90]}
    return {"seconds": done - started, "load": done - imported, "tools": len(tools), "source": driver.cache_source,
            "zeep_imported": "zeep" in sys.modules}


def _run_child(kind: str, path: Path, cache_dir: str | None = None) -> dict[str, Any]:
    """Run one measurement in a child; its own peak RSS (``bench._support.run_measured``).
    Children write and read bytecode whatever this process's environment says, so that each
    compiles no module (``bench._support.bytecode_cached_env``)."""
    argv = [sys.executable, "-m", "bench.soap", kind, str(path), cache_dir or ""]
    code, output, _, measured = run_measured(argv, cwd=ROOT)
    result = read_result(output)
    if code != 0 or result is None:
        return {"error": f"child exited {code}"}
    result["peak_rss_mb"] = measured["peak_rss_mb"]
    return result


# ---------------------------------------------------------------------- 1. every corpus WSDL


def bench_corpus() -> None:
    print("\n-- 1. every corpus WSDL: from process start to tools listed and the system prompt rendered"
          " (a child process each; seconds, peak RSS)")
    for path in sorted(WSDL_DIR.rglob("*.wsdl")):
        result = _run_child("ours", path, None)
        name = path.relative_to(WSDL_DIR).as_posix()
        if "error" in result:
            print(f"   {name:50} refused with a clear error: {result['error']}")
        else:
            print(f"   {name:50} {result['tools']:>5} tools {result['seconds']:6.2f} s {result['peak_rss_mb']:6.0f} MB")


# ---------------------------------------------------------------------- 2. vboxweb and the cache


def _line(label: str, rows: list[dict[str, Any]], zeep: tuple[float, float] | None, bar: float | None) -> None:
    """One row: medians of both clocks, peak RSS, and each ratio to zeep's with its goal."""
    seconds = statistics.median(r["seconds"] for r in rows)
    load = statistics.median(r["load"] for r in rows)
    peak = max(r["peak_rss_mb"] for r in rows)
    text = f"   {label:30} {seconds:6.3f} s {load:7.3f} s {peak:5.0f} MB"
    if zeep is not None and bar is not None:
        start_ratio, load_ratio = seconds / zeep[0], load / zeep[1]
        text += (f"   ratio {start_ratio:5.3f} / {load_ratio:5.3f}"
                 f"   from start {check(f'vboxweb {label} / zeep Client(wsdl), from process start', start_ratio, bar, item='18')}"
                 f", load alone {check(f'vboxweb {label} / zeep Client(wsdl), load alone', load_ratio, bar, item='18')}")
    print(text)


def bench_vboxweb() -> None:
    print(f"\n-- 2. vboxweb.wsdl (1,158 operations), medians of {RUNS} alternating child runs each")
    print("   ready = zeep's client built / our tools listed and system prompt (with the description) rendered")
    print(f"   {'':30} {'from start':>8} {'load alone':>9} {'peak':>6}   ratios to zeep's: from start / load alone")
    rows: dict[str, list[dict[str, Any]]] = {"zeep": [], "ours": [], "disk": [], "memory": [], "import-mcs": []}
    with tempfile.TemporaryDirectory() as cache_dir:
        filled = _run_child("ours", VBOX, cache_dir)  # fills the disk cache: builds and writes every schema
        _run_child("zeep", VBOX)  # writes the bytecode of what zeep's client alone imports
        _run_child("ours", VBOX, cache_dir)  # and of what a disk-cache load alone imports
        for _ in range(RUNS):  # alternate, so load on the machine hits every kind alike
            rows["zeep"].append(_run_child("zeep", VBOX))
            rows["ours"].append(_run_child("ours", VBOX))
            rows["disk"].append(_run_child("ours", VBOX, cache_dir))
            rows["memory"].append(_run_child("ours-twice", VBOX))
            rows["import-mcs"].append(_run_child("import-mcs", VBOX))
    for kind, expected in (("ours", "parsed"), ("disk", "disk"), ("memory", "memory")):
        sources = {r.get("source") for r in rows[kind]}
        assert sources == {expected}, f"{kind}: the driver came from {sources}, not {expected!r}"
    zeep = (statistics.median(r["seconds"] for r in rows["zeep"]), statistics.median(r["load"] for r in rows["zeep"]))
    _line("zeep Client(wsdl)", rows["zeep"], None, None)
    _line("SoapDriver, no cache", rows["ours"], zeep, 1.3)
    _line("new process, disk cache", rows["disk"], zeep, 0.2)
    _line("second driver, memory cache", rows["memory"], zeep, 0.2)
    print(f"   {'(import mcs, the core, alone)':30} {statistics.median(r['seconds'] for r in rows['import-mcs']):6.3f} s"
          f"{'':18}   {statistics.median(r['seconds'] for r in rows['import-mcs']) / zeep[0]:5.3f} of zeep's from start")
    print(f"   {'(first load, filling the cache)':30} {filled['seconds']:6.3f} s {filled['load']:7.3f} s"
          f" {filled['peak_rss_mb']:5.0f} MB   one run; every schema built and written")
    imported = sum(bool(r["zeep_imported"]) for r in rows["disk"])
    print(f"   The disk-cache loads imported zeep in {imported} of {len(rows['disk'])} runs. The memory-cache row"
          " times a second driver in the process that built the first (no imports).")


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
    print(f"   ratio {a / b:.3f} {check('SOAP call, process_llm_response / zeep Client', a / b, 1.15, item='18')}"
          f"  ({iterations} calls each, interleaved)")


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
        report_result(result)
    else:
        main()
