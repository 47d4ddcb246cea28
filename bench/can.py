"""CAN driver benchmarks against cantools and python-can doing the same work, in the same run.

1. Load: the Ford/Lincoln DBC (807 KB, 331 messages), from the file to a ready driver (bus
   open, tools listed, description rendered, a send validator compiled), against cantools'
   own ``load_file`` on the same file. Each measurement runs in its own subprocess; the
   figure is the median over runs of the time from after the imports to ready, and the
   child's own peak RSS is read by a launcher (``bench._support.run_measured``). Bar: ratio <= 1.3.
2. Encode and send: ``process_llm_response`` on a recorded call of ``send_Lane_Assist_Data1``
   (7 signals: choices by name, scaled values) against cantools' ``encode_message`` plus
   python-can's ``send`` of the same frame, each on its own virtual bus with one sniffer.
   Ratio of medians, interleaved. Bar: <= 1.2. ``call_tool`` (no parsing) is shown beside it.
   2b. The floor: the same checks written inline for this one message, without the pipeline,
   against the same direct send in a loop of their own (no goal; see ``bench_floor``).
   2c. The stages of part 2's call, each timed on its own in one interleaved loop (no goal;
   see ``bench_stages``).

Run: ``python -m bench can`` (``make bench``).
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from bench._support import ROOT, SHARED, check, read_result, report_result, run_measured

FORD = SHARED / "corpus" / "dbc" / "opendbc" / "ford_lincoln_base_pt.dbc"
LOAD_RUNS = 3
CALLS = 3000
MESSAGE = "Lane_Assist_Data1"
SIGNALS = {
    "LkaActvStats_D2_Req": "LkaNoInterv", "LdwActvStats_D_Req": "LDW_Idle", "LdwActvIntns_D_Req": "None",
    "LaCurvature_No_Calc": 0.001, "LaRefAng_No_Req": 1.5, "LaRampType_B_Req": "Smooth",
    "LkaDrvOvrrd_D_Rq": "Level_0",
}


WARMUP = 200


def _interleaved(runners: dict[str, Any], calls: int, sniffers: list[Any], drain_every: int = 100) -> dict[str, float]:
    """Median microseconds of each runner, run in turn ``calls`` times after ``WARMUP``
    unmeasured rounds (each runner's caches as cold as the others leave them); the
    sniffers are drained every ``drain_every`` rounds so no receive queue grows."""
    timings: dict[str, list[float]] = {name: [] for name in runners}
    for index in range(calls + WARMUP):
        for name, run in runners.items():
            started = time.perf_counter()
            run()
            if index >= WARMUP:
                timings[name].append(time.perf_counter() - started)
        if index % drain_every == 0:
            for sniffer in sniffers:
                while sniffer.recv(0) is not None:
                    pass
    return {name: statistics.median(values) * 1e6 for name, values in timings.items()}


# ---------------------------------------------------------------------- children


def _child_ours(path: str) -> float:
    from mcs_can import CanDriver

    from mcs.tools import ToolCall

    started = time.perf_counter()
    driver = CanDriver(path, fd=True, allow_send=[MESSAGE], channel="mcs-bench-load")
    driver.list_tools()
    driver.get_function_description()
    driver.prepare(ToolCall(f"send_{MESSAGE}", dict(SIGNALS)))
    ready = time.perf_counter() - started
    driver.close()
    return ready


def _child_cantools(path: str) -> float:
    import cantools

    started = time.perf_counter()
    cantools.database.load_file(path)
    return time.perf_counter() - started


def _child(argv: list[str]) -> None:
    runner = {"ours": _child_ours, "cantools": _child_cantools}[argv[0]]
    report_result({"seconds": runner(argv[1])})


def _run_child(kind: str) -> dict[str, Any]:
    code, out, _, measured = run_measured([sys.executable, "-m", "bench.can", kind, str(FORD)], cwd=ROOT)
    result = read_result(out)
    if code != 0 or result is None:
        raise RuntimeError(f"the {kind} child failed with exit code {code}")
    result["peak_rss_mb"] = measured["peak_rss_mb"]  # the child's own, read by a launcher
    return result


# ---------------------------------------------------------------------- 1. load


def bench_load() -> None:
    print(f"\n-- 1. {FORD.name} ({FORD.stat().st_size // 1024} KB): file to ready driver vs cantools load_file "
          f"(median of {LOAD_RUNS} subprocess runs; bar ratio <= 1.3)")
    rows: dict[str, list[dict[str, Any]]] = {"ours": [], "cantools": []}
    for _ in range(LOAD_RUNS):
        for kind in rows:
            rows[kind].append(_run_child(kind))
    medians = {kind: statistics.median(r["seconds"] for r in runs) for kind, runs in rows.items()}
    peaks = {kind: max(r["peak_rss_mb"] for r in runs) for kind, runs in rows.items()}
    print(f"   {'mcs-can CanDriver ready':32} {medians['ours']:7.3f} s   peak RSS {peaks['ours']:6.0f} MB")
    print(f"   {'cantools load_file':32} {medians['cantools']:7.3f} s   peak RSS {peaks['cantools']:6.0f} MB")
    ratio = medians["ours"] / medians["cantools"]
    print(f"   ratio {ratio:.2f}  {check('Ford DBC file to ready driver vs cantools load_file', ratio, 1.3)}")


# ---------------------------------------------------------------------- 2. encode and send


@contextlib.contextmanager
def _driver_beside_direct(prefix: str) -> Iterator[tuple[Any, Any, Callable[[], None], list[Any]]]:
    """An armed driver sending ``MESSAGE`` on its own virtual bus, the direct send
    (cantools ``encode_message`` + python-can ``send``) on another, and a sniffer on each:
    ``(driver, message, direct, sniffers)``, all shut down on exit."""
    import can
    import cantools
    from mcs_can import CanDriver

    db = cantools.database.load_file(str(FORD))
    message = db.get_message_by_name(MESSAGE)
    ours_channel, bare_channel = f"{prefix}-{os.getpid()}-ours", f"{prefix}-{os.getpid()}-bare"
    driver = CanDriver(FORD, fd=True, allow_send=[MESSAGE], channel=ours_channel, tx_rate_limit=1e6,
                       tx_burst=1_000_000, watchdog_timeout=None)
    bare = can.Bus(interface="virtual", channel=bare_channel)
    sniffers = [can.Bus(interface="virtual", channel=c) for c in (ours_channel, bare_channel)]

    def direct() -> None:
        data = db.encode_message(MESSAGE, SIGNALS)
        bare.send(can.Message(arbitration_id=message.frame_id, is_extended_id=message.is_extended_frame,
                              is_fd=message.is_fd, bitrate_switch=message.is_fd, data=data))

    try:
        driver.arm()
        yield driver, message, direct, sniffers
    finally:
        driver.close()
        bare.shutdown()
        for sniffer in sniffers:
            sniffer.shutdown()


def bench_send(calls: int = CALLS) -> None:
    print(f"\n-- 2. encode and send {MESSAGE}: process_llm_response vs cantools encode_message + "
          "python-can send (bar <= 1.2)")
    response = json.dumps({"tool": f"send_{MESSAGE}", "arguments": SIGNALS})
    with _driver_beside_direct("mcs-bench") as (driver, _, direct, sniffers):

        def through_mcs() -> None:
            driver.process_llm_response(response)

        def without_parsing() -> None:
            driver.call_tool(f"send_{MESSAGE}", SIGNALS)

        direct()
        through_mcs()
        sent = [bytes(s.recv(1).data) for s in sniffers]
        assert sent[0] == sent[1], "the driver and cantools encoded different frames"
        medians = _interleaved({"mcs": through_mcs, "direct": direct, "call_tool": without_parsing}, calls, sniffers)
    print(f"   median process_llm_response          {medians['mcs']:8.1f} us")
    print(f"   median call_tool (no parsing)        {medians['call_tool']:8.1f} us")
    print(f"   median encode_message + bus.send     {medians['direct']:8.1f} us")
    ratio = medians["mcs"] / medians["direct"]
    print(f"   ratio {ratio:.2f}  {check('encode and send: process_llm_response vs encode_message + send', ratio, 1.2)}"
          f"; call_tool ratio {medians['call_tool'] / medians['direct']:.2f} ({calls} calls each, interleaved)")


def bench_floor(calls: int = CALLS) -> None:
    """The cheapest code that does what ``process_llm_response`` does for this call, written
    inline for this one message: read the JSON (pydantic's reader refuses lone surrogates, so
    no Unicode walk, as in the driver), check the call's shape and name, the schema checks
    (jsonschema_rs on the schema without its number bounds, the bounds in Python, as the
    driver's validator does), armed, allow-list, the transmit rate budget under
    the transmit lock, encode (without cantools' strict re-check, as the driver does),
    ``can.Message``, send with the deadline as timeout, and the frame described. No pipeline
    (context, invocation, hooks), no audit, no repair. What any driver doing the same checks
    costs at least; interleaved with the direct run, apart from part 2's loop."""
    import threading

    import can
    import cantools
    import pydantic_core
    from mcs_can import CanDriver

    from mcs.validation import _bounds_plan, compile_validator

    print(f"\n-- 2b. the floor: the same checks inlined, no pipeline ({calls} calls each, interleaved)")
    db = cantools.database.load_file(str(FORD))
    message = db.get_message_by_name(MESSAGE)
    tool_name = f"send_{MESSAGE}"
    response = json.dumps({"tool": tool_name, "arguments": SIGNALS})
    floor_channel, bare_channel = f"mcs-floor-{os.getpid()}-ours", f"mcs-floor-{os.getpid()}-bare"
    with CanDriver(FORD, fd=True, allow_send=[MESSAGE], channel="mcs-floor-schema", watchdog_timeout=None) as schema_of:
        tool = schema_of.get_tool(tool_name)
        assert tool is not None
        bounds, unbounded = _bounds_plan(compile_validator(tool.input_schema, tool=tool_name).schema)
    assert bounds is not None and unbounded is not None
    floor_bus = can.Bus(interface="virtual", channel=floor_channel)
    bare = can.Bus(interface="virtual", channel=bare_channel)
    sniffers = [can.Bus(interface="virtual", channel=c) for c in (floor_channel, bare_channel)]
    allowed = {(message.frame_id, bool(message.is_extended_frame), message.length)}
    lock = threading.RLock()
    budget = {"tokens": 1e6, "stamp": time.monotonic()}
    head = {"arbitration_id": message.frame_id, "id_hex": f"0x{message.frame_id:03X}", "is_extended_id": False,
            "is_fd": message.is_fd, "bitrate_switch": message.is_fd, "dlc": message.length}

    def floor() -> dict[str, Any]:
        value = pydantic_core.from_json(response)
        if type(value) is not dict or len(value) != 2 or value.get("tool") != tool_name:
            raise ValueError("not a call of this tool")
        arguments = value["arguments"]
        if type(arguments) is not dict:
            raise ValueError("bad arguments")
        for name, low, high in bounds:
            number = arguments.get(name)
            if type(number) in (float, int) and ((low is not None and number < low) or (high is not None and number > high)):
                raise ValueError(f"{name} out of range")
        if not unbounded.is_valid(arguments):
            raise ValueError("arguments do not fit the schema")
        deadline = time.monotonic() + 30.0
        data = message.encode(arguments, scaling=True, padding=False, strict=False)
        frame = can.Message(arbitration_id=message.frame_id, is_extended_id=False, is_fd=message.is_fd,
                            bitrate_switch=message.is_fd, data=data, check=False)
        with lock:
            if (frame.arbitration_id, frame.is_extended_id, frame.dlc) not in allowed:
                raise PermissionError("not on the allow-list")
            now = time.monotonic()
            budget["tokens"] = min(1e6, budget["tokens"] + (now - budget["stamp"]) * 1e6)
            budget["stamp"] = now
            if budget["tokens"] < 1.0:
                raise PermissionError("rate limit")
            floor_bus.send(frame, timeout=max(0.0, deadline - time.monotonic()))
            budget["tokens"] -= 1.0
        return {"sent": True, "message": MESSAGE, "frame": {**head, "data_hex": frame.data.hex()}}

    def direct() -> None:
        data = db.encode_message(MESSAGE, SIGNALS)
        bare.send(can.Message(arbitration_id=message.frame_id, is_extended_id=message.is_extended_frame,
                              is_fd=message.is_fd, bitrate_switch=message.is_fd, data=data))

    try:
        floor()
        direct()
        sent = [bytes(s.recv(1).data) for s in sniffers]  # type: ignore[union-attr]
        assert sent[0] == sent[1], "the floor and cantools encoded different frames"
        medians = _interleaved({"floor": floor, "direct": direct}, calls, sniffers)
    finally:
        for bus in (floor_bus, bare, *sniffers):
            bus.shutdown()
    print(f"   median floor (same checks inlined)   {medians['floor']:8.1f} us")
    print(f"   median encode_message + bus.send     {medians['direct']:8.1f} us")
    print(f"   ratio {medians['floor'] / medians['direct']:.2f}  (no goal: what part 2's bar leaves for parsing, "
          "checks and the pipeline)")


def bench_stages(calls: int = CALLS) -> None:
    """Where part 2's time goes: each stage of ``process_llm_response`` timed on its own, all
    interleaved in one loop with the whole call and the direct send (no goal; the stages
    run apart, so their sum differs from the whole by what joins them). "the send's own
    work" is the driver's send less what it shares with the direct run (signal values,
    encode, ``can.Message``, virtual-bus send), timed here as the shared part."""
    import can
    import pydantic_core

    from mcs import pipeline
    from mcs.context import new_context
    from mcs.parsing import read_known_call

    print(f"\n-- 2c. stages of part 2's call ({calls} calls each, interleaved; no goal)")
    tool_name = f"send_{MESSAGE}"
    response = json.dumps({"tool": tool_name, "arguments": SIGNALS})
    with _driver_beside_direct("mcs-stages") as (driver, _, direct, sniffers):
        driver.process_llm_response(response)  # the tool's plan made
        known = driver._known_names()
        tool = driver.get_tool(tool_name)
        assert tool is not None
        validator = driver._validator(tool)
        arguments = pydantic_core.from_json(response)["arguments"]
        invocation = pipeline.new_invocation(tool, arguments, new_context(), time.monotonic() + 3600.0, 3600.0,
                                             None, "")
        spec = driver._sendable[MESSAGE]

        def shared() -> None:
            data = spec.message.encode(spec.values_for(arguments, tool_name), scaling=True, padding=False,
                                       strict=False)
            driver.bus.send(can.Message(arbitration_id=spec.frame_id, is_extended_id=spec.is_extended,
                                        is_fd=spec.is_fd, bitrate_switch=spec.is_fd and driver.bitrate_switch,
                                        data=data, check=False))

        runners: dict[str, Any] = {
            "whole process_llm_response": lambda: driver.process_llm_response(response),
            "direct encode_message + bus.send": direct,
            # What the call runs: a canonical call of a known name is read in one frame.
            "reading the text (read_known_call)": lambda: read_known_call(response, known),
            "  of which pydantic_core.from_json": lambda: pydantic_core.from_json(response),
            # What the call runs: pydantic's reader vouched for the text (read_tool_calls), so no Unicode walk.
            "schema checks": lambda: validator.validate_valid_text(arguments),
            # What the call runs: a lane call without a context makes its context only when read.
            "context and Invocation": lambda: pipeline.new_invocation(
                tool, arguments, None, time.monotonic() + 30.0, 30.0, None, ""),
            "the driver's send": lambda: driver._send(invocation),
            "  its part shared with the direct run": shared,
        }
        medians = _interleaved(runners, calls, sniffers, drain_every=50)
    for name, median in medians.items():
        print(f"   median {name:38} {median:8.1f} us")
    own = medians["the driver's send"] - medians["  its part shared with the direct run"]
    parts = sum(medians[name] for name in ("reading the text (read_known_call)", "schema checks",
                                           "context and Invocation", "the driver's send"))
    print(f"   the send's own work {own:.1f} us; what joins the stages (whole less their sum) "
          f"{medians['whole process_llm_response'] - parts:.1f} us")


def main() -> None:
    if not FORD.is_file():
        print("bench/can.py: ../shared/corpus/dbc is not here; nothing to measure")
        return
    bench_load()
    bench_send()
    bench_floor()
    bench_stages()


if __name__ == "__main__":
    if len(sys.argv) >= 3:
        _child(sys.argv[1:])
    else:
        main()
