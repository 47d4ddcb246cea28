"""Pipeline overhead: a no-op tool through MCS against calling the function directly.

Bar: the median overhead of parse + validate + policy + hooks is at most 50 µs.

Measured, each with one policy and one start/end hook registered on the driver:
* ``process_llm_response(canonical JSON)``: parse, resolve, validate, policy, hooks, call;
* ``call_tool(name, args)``: the same without parsing;
each with ``timeout=None`` (the call runs on the caller's thread) and with the default
``timeout=30`` (a sync tool runs on a worker thread so the deadline can be enforced).
The baseline is the plain Python call ``noop(a=1, b="x")`` in the same run; for the
default-deadline rows it is the same call handed to a ``ThreadPoolExecutor`` and awaited
with a timeout, which is what enforcing any deadline on a synchronous function costs, so
the bar measures what the pipeline adds on top of the hand-off.
"""

from __future__ import annotations

import concurrent.futures
import json
from collections.abc import Callable
from typing import Any

from bench._support import median_us
from mcs import AgentContext, FunctionDriver, PolicyDecision, tool

BAR_US = 50.0
ROUNDS = 2000
WARMUP = 200


@tool
def noop(a: int, b: str = "x") -> None:
    """Do nothing."""


def _driver(timeout: float | None) -> FunctionDriver:
    driver = FunctionDriver([noop], timeout=timeout)
    driver.add_policy(lambda ctx, name, args: PolicyDecision.allow())
    driver.on_execute_start(lambda event: None)
    driver.on_execute_end(lambda event: None)
    return driver


def _median_us(run: Callable[[], Any]) -> float:
    return median_us(run, ROUNDS, warmup=WARMUP)


def measure() -> dict[str, float]:
    """Median microseconds per call for the baseline and each MCS path."""
    response = json.dumps({"tool": "noop", "arguments": {"a": 1, "b": "x"}})
    context = AgentContext(agent_id="bench")
    results = {"direct call": _median_us(lambda: noop.func(a=1, b="x"))}
    with concurrent.futures.ThreadPoolExecutor() as pool:
        results["direct call on a worker, with a timeout"] = _median_us(
            lambda: pool.submit(noop.func, a=1, b="x").result(timeout=30)
        )
    for label, timeout in (("timeout=None", None), ("timeout=30 (default)", 30.0)):
        driver = _driver(timeout)
        results[f"process_llm_response, {label}"] = _median_us(
            lambda d=driver: d.process_llm_response(response, context=context)  # type: ignore[misc]
        )
        results[f"call_tool, {label}"] = _median_us(
            lambda d=driver: d.call_tool("noop", {"a": 1, "b": "x"}, context=context)  # type: ignore[misc]
        )
    return results


def main() -> None:
    results = measure()
    baselines = {None: results.pop("direct call"),
                 "default": results.pop("direct call on a worker, with a timeout")}
    print(f"{'path':<46} {'median µs':>10} {'overhead µs':>12}  bar {BAR_US:g} µs")
    print(f"{'direct call':<46} {baselines[None]:>10.2f} {'-':>12}")
    print(f"{'direct call on a worker, with a timeout':<46} {baselines['default']:>10.2f} {'-':>12}")
    for label, median in results.items():
        baseline = baselines["default" if "default" in label else None]
        overhead = median - baseline
        verdict = "ok" if overhead <= BAR_US else "OVER"
        print(f"{label:<46} {median:>10.2f} {overhead:>12.2f}  {verdict}")
    hop = baselines["default"] - baselines[None]
    parse = results["process_llm_response, timeout=None"] - results["call_tool, timeout=None"]
    print(f"of which: parsing {parse:.2f} µs; handing a call to a worker thread (any deadline on a "
          f"sync function) {hop:.2f} µs")
    print(f"({ROUNDS} rounds each after {WARMUP} warm-up calls; one policy, a start and an end hook; "
          "default-deadline rows measured over the worker-thread baseline)")

if __name__ == "__main__":
    main()
