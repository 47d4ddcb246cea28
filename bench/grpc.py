"""gRPC driver benchmarks, against the bare stubs grpcio-tools generates, in the same run.

1. Load: from nothing to tools listed and ready to call, in a subprocess each (seconds from
   before the import, the child's own peak RSS read by a launcher, ``bench._support.run_measured``): by server reflection of
   the corpus examples, and from the googleapis pubsub protos (compile included).
2. Unary call: ``process_llm_response`` for ``Greeter/SayHello`` versus the generated stub's
   ``SayHello`` on the same channel kind (ratio of medians, bar <= 1.2).
3. Server streaming of 1,000 messages: ``process_llm_response`` for ``RouteGuide/ListFeatures``
   (every message turned into JSON) versus ``list(stub.ListFeatures(...))`` (bar <= 1.3).

The server runs in its own process (``python -m bench.grpc serve PORT``), so the client's
measurements do not share a GIL with it. Run: ``python -m bench grpc`` (``make bench``).
"""

from __future__ import annotations

import contextlib
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench._support import (
    HOST,
    ROOT,
    SHARED,
    check,
    free_port,
    read_result,
    report_result,
    run_measured,
    server_process,
)

PROTO = SHARED / "corpus" / "proto"
EXAMPLES = PROTO / "grpc-examples"
GOOGLEAPIS = PROTO / "googleapis"
STREAM = 1000


def _generated(proto: str) -> tuple[Any, Any]:
    import grpc

    sys.path.insert(0, str(EXAMPLES))
    try:
        return grpc.protos_and_services(proto)
    finally:
        sys.path.remove(str(EXAMPLES))


# ---------------------------------------------------------------------- the server process


def _serve(port: int) -> None:
    from concurrent import futures

    import grpc
    from grpc_reflection.v1alpha import reflection

    hello, hello_services = _generated("helloworld.proto")
    route, route_services = _generated("route_guide.proto")

    class Greeter(hello_services.GreeterServicer):  # type: ignore[misc,name-defined]
        def SayHello(self, request: Any, context: Any) -> Any:
            return hello.HelloReply(message=f"Hello, {request.name}!")

    class RouteGuide(route_services.RouteGuideServicer):  # type: ignore[misc,name-defined]
        def ListFeatures(self, request: Any, context: Any) -> Any:
            for index in range(request.hi.longitude):
                yield route.Feature(name=f"feature {index}", location=route.Point(latitude=index, longitude=-index))

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    hello_services.add_GreeterServicer_to_server(Greeter(), server)
    route_services.add_RouteGuideServicer_to_server(RouteGuide(), server)
    reflection.enable_server_reflection(
        ["helloworld.Greeter", "routeguide.RouteGuide", reflection.SERVICE_NAME], server)
    server.add_insecure_port(f"{HOST}:{port}")
    server.start()
    server.wait_for_termination()


# ---------------------------------------------------------------------- 1. load


def _child_load(kind: str, where: str) -> None:
    started = time.perf_counter()
    from mcs_grpc import GrpcDriver

    from mcs.tools import ToolCall

    if kind == "reflection":
        driver = GrpcDriver(where)
    else:
        root = Path(where)
        driver = GrpcDriver(proto=root / "google/pubsub/v1/pubsub.proto", include_paths=[root])
    tools = driver.list_tools()
    driver.get_function_description()
    with contextlib.suppress(Exception):  # ready to call: a validator compiled
        driver.prepare(ToolCall(tools[0].name, {}))
    report_result({"seconds": time.perf_counter() - started, "tools": len(tools)})


def _measure_child(args: list[str]) -> dict[str, Any]:
    """Run a child; its own report plus its own peak RSS (``bench._support.run_measured``)."""
    code, output, _, measured = run_measured([sys.executable, "-m", "bench.grpc", *args], cwd=ROOT)
    result = read_result(output)
    if code != 0 or result is None:
        return {"error": f"exit {code}"}
    result["peak_rss_mb"] = measured["peak_rss_mb"]
    return result


def bench_load(target: str) -> None:
    print("\n-- 1. load to tools ready to call (subprocess each; seconds from before the import, peak RSS)")
    rows = [("reflection (helloworld + route_guide)", ["load", "reflection", target]),
            ("pubsub protos, compile included", ["load", "protos", str(GOOGLEAPIS)])]
    for label, args in rows:
        runs = [_measure_child(args) for _ in range(3)]
        good = [r for r in runs if "error" not in r]
        if not good:
            print(f"   {label:40} failed: {runs[0]['error']}")
            continue
        seconds = statistics.median(r["seconds"] for r in good)
        rss = max(r["peak_rss_mb"] for r in good)
        print(f"   {label:40} {good[0]['tools']:>3} tools {seconds:6.3f} s (median of {len(good)}) {rss:6.0f} MB")


# ---------------------------------------------------------------------- 2, 3. calls


def _interleaved(calls: dict[str, Callable[[], Any]], iterations: int) -> dict[str, float]:
    """The median seconds of each call, measured in turns so load changes hit them alike."""
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(iterations):
        for name, call in calls.items():
            started = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - started)
    return {name: statistics.median(values) for name, values in times.items()}


def _report(label: str, bare_label: str, ours: float, bare: float, bar: float, iterations: int, unit: str) -> None:
    scale = 1e6 if unit == "us" else 1e3
    print(f"   median process_llm_response {ours * scale:9.1f} {unit}")
    print(f"   median {bare_label:21} {bare * scale:9.1f} {unit}")
    ratio = ours / bare
    print(f"   {label}: ratio {ratio:.3f} {check(f'{label}: process_llm_response vs {bare_label}', ratio, bar)} "
          f"({iterations} calls each, interleaved)")


def bench_calls(target: str) -> None:
    import grpc
    from mcs_grpc import GrpcDriver

    hello, hello_services = _generated("helloworld.proto")
    route, route_services = _generated("route_guide.proto")
    channel = grpc.insecure_channel(target)
    greeter = hello_services.GreeterStub(channel)
    guide = route_services.RouteGuideStub(channel)
    with GrpcDriver(target, max_stream_messages=STREAM, max_stream_bytes=16 * 1024 * 1024) as driver:
        print("\n-- 2. unary SayHello: process_llm_response vs the generated stub (bar <= 1.2)")
        response = '{"tool": "Greeter_SayHello", "arguments": {"name": "bench"}}'
        request = hello.HelloRequest(name="bench")
        assert driver.process_llm_response(response) == {"message": greeter.SayHello(request).message}
        for _ in range(300):
            driver.process_llm_response(response)
            greeter.SayHello(request, timeout=30)
        iterations = 2000
        medians = _interleaved({
            "ours": lambda: driver.process_llm_response(response),
            "bare": lambda: greeter.SayHello(request, timeout=30),
            "call_tool": lambda: driver.call_tool("Greeter_SayHello", {"name": "bench"}),
        }, iterations)
        _report("unary", "stub.SayHello", medians["ours"], medians["bare"], 1.2, iterations, "us")
        print(f"   (driver.call_tool, the same call without parsing LLM output: {medians['call_tool'] * 1e6:.1f} us)")

        print(f"\n-- 3. server streaming of {STREAM} messages: process_llm_response vs list(stub.ListFeatures) (bar <= 1.3)")
        response = json.dumps({"tool": "RouteGuide_ListFeatures", "arguments": {"hi": {"longitude": STREAM}}})
        rectangle = route.Rectangle(hi=route.Point(longitude=STREAM))
        assert len(driver.process_llm_response(response)["messages"]) == STREAM
        for _ in range(5):
            driver.process_llm_response(response)
            list(guide.ListFeatures(rectangle, timeout=30))
        iterations = 60
        medians = _interleaved({
            "ours": lambda: driver.process_llm_response(response),
            "bare": lambda: list(guide.ListFeatures(rectangle, timeout=30)),
        }, iterations)
        _report("stream", "list(stub.ListFeatures)", medians["ours"], medians["bare"], 1.3, iterations, "ms")
    channel.close()


def main() -> None:
    if not EXAMPLES.is_dir():
        print("bench/grpc.py: ../shared/corpus/proto is not here; nothing to measure")
        return
    port = free_port()
    with server_process([sys.executable, "-m", "bench.grpc", "serve", str(port)], port, cwd=ROOT):
        target = f"{HOST}:{port}"
        bench_load(target)
        bench_calls(target)


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "serve":
        _serve(int(sys.argv[2]))
    elif len(sys.argv) >= 4 and sys.argv[1] == "load":
        _child_load(sys.argv[2], sys.argv[3])
    else:
        main()
