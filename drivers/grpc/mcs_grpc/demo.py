"""`make demo-grpc`: a real gRPC round trip through the driver, with no network and no API key.

It serves a tiny weather service (``demo.proto``) with server reflection on a free loopback
port, loads the gRPC driver from that server's reflection, prints the system prompt a model
would get, feeds recorded LLM answers to ``process_llm_response``, which makes the real gRPC
calls (a unary one and a server stream), prints the results, and stops the server.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent import futures
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import grpc
from grpc_reflection.v1alpha import reflection

from mcs_grpc._catalog import Catalog
from mcs_grpc._protoc import compile_protos
from mcs_grpc.driver import GrpcDriver

PROTO = Path(__file__).with_name("demo.proto")
MODEL = "gpt-4o"
RECORDED_ANSWERS = [
    '{"tool": "Weather_GetForecast", "arguments": {"city": "Paris", "days": 2}}',
    '<tool_call>{"name": "Weather_WatchTemperature", "arguments": {"city": "Oslo", "days": 3}}</tool_call>',
]
_SKIES = ["sunny", "light rain", "cloudy", "windy"]


@contextmanager
def serve_weather() -> Iterator[str]:
    """Serve the demo weather service (with reflection) on a free loopback port; yield its target."""
    catalog = Catalog(compile_protos([PROTO]).file)
    pool = catalog.pool
    request_cls = catalog.message_class(pool.FindMessageTypeByName("mcs.demo.ForecastRequest"))
    day_cls = catalog.message_class(pool.FindMessageTypeByName("mcs.demo.Day"))
    forecast_cls = catalog.message_class(pool.FindMessageTypeByName("mcs.demo.Forecast"))

    def day(city: str, offset: int) -> Any:
        return day_cls(offset=offset, sky=_SKIES[(len(city) + offset) % len(_SKIES)],
                       high_celsius=round(12.0 + len(city) * 0.7 + offset, 1))

    def get_forecast(request: Any, context: grpc.ServicerContext) -> Any:
        if not 1 <= request.days <= 7:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "days must be between 1 and 7")
        return forecast_cls(city=request.city, days=[day(request.city, n) for n in range(1, request.days + 1)])

    def watch(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
        for offset in range(1, max(1, request.days) + 1):
            yield day(request.city, offset)

    handler = grpc.method_handlers_generic_handler("mcs.demo.Weather", {
        "GetForecast": grpc.unary_unary_rpc_method_handler(
            get_forecast, request_deserializer=request_cls.FromString, response_serializer=forecast_cls.SerializeToString),
        "WatchTemperature": grpc.unary_stream_rpc_method_handler(
            watch, request_deserializer=request_cls.FromString, response_serializer=day_cls.SerializeToString),
    })
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    server.add_generic_rpc_handlers((handler,))
    reflection.enable_server_reflection(["mcs.demo.Weather", reflection.SERVICE_NAME], server, pool=pool)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.stop(grace=None).wait(10)


def main() -> None:
    with serve_weather() as target, GrpcDriver(target) as driver:
        print(f"== Demo gRPC server on {target} (from {PROTO.name}, loaded by server reflection) ==\n")
        print(f"== System prompt for {MODEL} ==\n{driver.get_driver_system_message(MODEL)}\n")
        for answer in RECORDED_ANSWERS:
            print(f"== Recorded LLM output ==\n{answer}\n")
            result = driver.process_llm_response(answer)
            if result is answer:
                print("== No tool call found in that output ==\n")
                continue
            print(f"== Result of the real gRPC call ==\n{json.dumps(result, indent=2)}\n")


if __name__ == "__main__":
    main()
