"""Calls against real servers: the four kinds, bounded streams, the stream capability, every
well-known type and a recursive message round-tripped, every status, deadlines, metadata,
health, a dead peer and the reconnection after it."""

from __future__ import annotations

import asyncio
import json

import grpc
import pytest
from grpc_servers import Running, lab_servicer, serve
from mcs_grpc import GrpcDriver

from mcs.errors import ErrorCode, ExecutionError, ToolCallError, ToolTimeoutError

EVERYTHING = {
    "text": "héllo", "small": -5, "big": "-9223372036854775808", "unsignedBig": "18446744073709551615",
    "ratio": 2.5, "flag": True, "blob": "AAEC/w==", "color": "GREEN", "tags": ["a", "b"],
    "counts": {"x": 1}, "namesById": {"12": "twelve"}, "choiceNumber": 7, "maybe": 0,
    "inner": {"note": "in"}, "inners": [{"note": "1"}, {"note": "2"}],
    "when": "2024-05-01T12:30:45.123Z", "howLong": "3.500s",
    "data": {"k": [1, "two", None, {"n": True}]}, "anyValue": [1, "x"], "list": [1.5, "y", False],
    "packed": {"@type": "type.googleapis.com/mcs.test.Inner", "note": "packed"},
    "mask": "text,inner.note", "nothing": {},
    "wDouble": 1.25, "wFloat": 0.5, "wInt64": "-42", "wUint64": "42", "wInt32": -7, "wUint32": 7,
    "wBool": False, "wString": "", "wBytes": "eA==",
}


@pytest.fixture
def lab_driver(lab: Running):
    with GrpcDriver(lab.target, include_defaults=False, max_stream_messages=5) as driver:
        yield driver


@pytest.fixture
def examples_driver(examples: Running):
    with GrpcDriver(examples.target) as driver:
        yield driver


def test_every_well_known_type_and_field_kind_round_trips(lab_driver: GrpcDriver) -> None:
    echoed = lab_driver.call_tool("Lab_Echo", EVERYTHING)
    assert echoed == EVERYTHING
    json.dumps(echoed)  # JSON-safe


def test_the_async_path_round_trips_the_same(lab_driver: GrpcDriver) -> None:
    assert asyncio.run(lab_driver.acall_tool("Lab_Echo", EVERYTHING)) == EVERYTHING


def test_a_driver_called_from_many_asyncio_runs_keeps_no_channel_of_a_finished_loop(lab_driver: GrpcDriver) -> None:
    for _ in range(15):  # one loop per call, as sync code calling async code often does
        assert asyncio.run(lab_driver.acall_tool("Lab_Echo", EVERYTHING)) == EVERYTHING
        assert lab_driver._caller is not None and len(lab_driver._caller._async) == 0  # closed with its loop


def test_a_recursive_message_round_trips_at_any_depth(lab_driver: GrpcDriver) -> None:
    tree: dict = {"label": "leaf"}
    for depth in range(30):
        tree = {"label": f"n{depth}", "children": [tree, {"label": "x"}]}
    assert lab_driver.call_tool("Lab_EchoTree", tree) == tree
    expr = {"op": {"operator": "+", "left": {"number": "1"}, "right": {"op": {"operator": "*", "left": {"number": "2"}}}}}
    assert lab_driver.call_tool("Lab_EchoExpr", expr) == expr


def test_defaults_are_shown_unless_switched_off(lab: Running) -> None:
    with GrpcDriver(lab.target) as driver:
        echoed = driver.call_tool("Lab_Echo", {"text": "x"})
    assert echoed["big"] == "0" and echoed["color"] == "COLOR_UNSPECIFIED" and echoed["tags"] == []
    assert echoed["nullValue"] is None and "maybe" not in echoed  # proto3 optional: only when set


def test_unary_server_client_and_bidi_calls_on_route_guide(examples_driver: GrpcDriver) -> None:
    feature = examples_driver.call_tool("RouteGuide_GetFeature", {"latitude": 407838351, "longitude": -746143763})
    assert feature == {"name": "Patriots Path, Mendham, NJ 07945, USA",
                       "location": {"latitude": 407838351, "longitude": -746143763}}
    listed = examples_driver.call_tool("RouteGuide_ListFeatures", {
        "lo": {"latitude": 400000000, "longitude": -750000000}, "hi": {"latitude": 420000000, "longitude": -730000000}})
    assert [f["name"] for f in listed["messages"]] == [name for name, *_ in __import__("grpc_servers").FEATURES]
    assert "truncated" not in listed
    summary = examples_driver.call_tool("RouteGuide_RecordRoute", {"messages": [
        {"latitude": 407838351, "longitude": -746143763}, {"latitude": 407838353, "longitude": -746143763}]})
    assert summary == {"pointCount": 2, "featureCount": 1, "distance": 2, "elapsedTime": 0}
    note = {"location": {"latitude": 1, "longitude": 1}, "message": "first"}
    chat = examples_driver.call_tool("RouteGuide_RouteChat", {"messages": [note, {**note, "message": "second"}]})
    assert chat == {"messages": [note]}


def test_keyvaluestore_bidi_answers_each_key(examples_driver: GrpcDriver) -> None:
    result = examples_driver.process_llm_response(
        '{"tool": "KeyValueStore_GetValues", "arguments": {"messages": [{"key": "alpha"}, {"key": "beta"}, {"key": "zeta"}]}}')
    assert result == {"messages": [{"value": "1"}, {"value": "2"}, {"value": ""}]}


def test_helloworld_through_process_llm_response_in_an_openai_message(examples_driver: GrpcDriver) -> None:
    message = {"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {
        "name": "Greeter_SayHello", "arguments": json.dumps({"name": "Ada"})}}]}
    assert examples_driver.process_llm_response(message) == {"message": "Hello, Ada!"}


def test_a_long_stream_is_cut_at_the_message_count_with_a_marker(examples: Running) -> None:
    with GrpcDriver(examples.target, max_stream_messages=10) as driver:
        result = driver.call_tool("RouteGuide_ListFeatures", {"hi": {"longitude": 1000}})
    assert len(result["messages"]) == 10 and result["messages"][9]["name"] == "point 9"
    assert result["truncated"].startswith("[truncated: stopped after 10 messages (max_stream_messages)")


def test_a_stream_cut_by_a_bound_is_cancelled_on_the_server(lab: Running, lab_driver: GrpcDriver) -> None:
    result = lab_driver.call_tool("Lab_Ticks", {"count": 1000, "seconds": 0.02})
    assert len(result["messages"]) == 5
    assert lab.state.cancelled.wait(5), "the server saw the stream cancelled"


def test_a_stream_read_to_its_end_is_not_cancelled(lab: Running, lab_driver: GrpcDriver) -> None:
    assert lab_driver.call_tool("Lab_Ticks", {"count": 3}) == {"messages": [{"value": 1}, {"value": 2}, {"value": 3}]}
    assert not lab.state.cancelled.wait(0.2)


def test_a_stream_is_cut_at_the_byte_limit_with_a_marker(examples: Running) -> None:
    with GrpcDriver(examples.target, max_stream_bytes=100) as driver:
        result = driver.call_tool("RouteGuide_ListFeatures", {"hi": {"longitude": 1000}})
    assert 0 < len(result["messages"]) < 10
    assert "byte limit of 100 (max_stream_bytes)" in result["truncated"]


def test_a_slow_stream_is_cut_at_the_time_window_with_what_came(lab: Running) -> None:
    with GrpcDriver(lab.target, stream_window=1.0, timeout=10) as driver:
        result = driver.call_tool("Lab_Ticks", {"count": 50, "seconds": 0.2})
    assert 1 <= len(result["messages"]) < 50
    assert "1 s time window (stream_window)" in result["truncated"]


def test_a_deadline_exceeded_mid_stream_is_a_timeout_naming_what_arrived(lab: Running) -> None:
    with GrpcDriver(lab.target, timeout=1.0) as driver, pytest.raises(ToolTimeoutError) as info:
        driver.call_tool("Lab_Ticks", {"count": 50, "seconds": 0.2})
    error = info.value
    assert error.code is ErrorCode.TIMEOUT
    assert error.details["grpc_code"] == "DEADLINE_EXCEEDED" and error.details["received_messages"] >= 1
    assert error.details["retryable"] is True  # Ticks has no side effects


def test_the_async_stream_is_bounded_and_deadlined_the_same(lab: Running) -> None:
    async def run() -> tuple[dict, ToolCallError]:
        with GrpcDriver(lab.target, max_stream_messages=3, timeout=0.6) as driver:
            cut = await driver.acall_tool("Lab_Ticks", {"count": 10})
            with pytest.raises(ToolCallError) as info:
                await driver.acall_tool("Lab_Ticks", {"count": 2, "seconds": 5})
            await driver.aclose()
            return cut, info.value

    cut, error = asyncio.run(run())
    assert cut["messages"] == [{"value": 1}, {"value": 2}, {"value": 3}] and "max_stream_messages" in cut["truncated"]
    assert error.code is ErrorCode.TIMEOUT


async def test_async_with_closes_the_aio_channel_of_the_running_loop(lab: Running) -> None:
    async with GrpcDriver(lab.target) as driver:
        assert await driver.acall_tool("Lab_Ticks", {"count": 2}) == {"messages": [{"value": 1}, {"value": 2}]}
        assert driver._caller is not None
        connection = driver._caller._async.current()
        assert connection is not None and connection.channel.get_state() is not grpc.ChannelConnectivity.SHUTDOWN
    assert connection.channel.get_state() is grpc.ChannelConnectivity.SHUTDOWN
    assert len(driver._caller._async) == 0


def test_the_stream_capability_yields_messages_as_they_come_and_ends_with_the_marker(lab_driver: GrpcDriver) -> None:
    assert lab_driver.supports("stream") and lab_driver.supports("healthcheck")
    items = list(lab_driver.stream_call("Lab_Ticks", {"count": 8}))
    assert items[:5] == [{"value": n} for n in range(1, 6)]
    assert "max_stream_messages" in items[5]["truncated"] and len(items) == 6
    assert list(lab_driver.stream_call("Lab_Echo", {"text": "one"})) == [{"text": "one"}]


def test_closing_a_stream_early_cancels_the_call(lab: Running, lab_driver: GrpcDriver) -> None:
    stream = lab_driver.stream_call("Lab_Ticks", {"count": 1000, "seconds": 0.05})
    assert next(stream) == {"value": 1}
    stream.close()
    assert lab.state.cancelled.wait(5)


def test_the_async_stream_capability(lab_driver: GrpcDriver) -> None:
    async def run() -> list:
        return [item async for item in lab_driver.astream_call("Lab_Ticks", {"count": 2})]

    assert asyncio.run(run()) == [{"value": 1}, {"value": 2}]


STATUSES = [code for code in grpc.StatusCode if code is not grpc.StatusCode.OK]


@pytest.mark.parametrize("code", STATUSES, ids=[c.name for c in STATUSES])
def test_every_status_maps_once_with_its_details(lab_driver: GrpcDriver, code: grpc.StatusCode) -> None:
    with pytest.raises(ToolCallError) as info:
        lab_driver.call_tool("Lab_Fail", {"code": code.name, "details": "because"})
    error = info.value
    expected = ErrorCode.TIMEOUT if code is grpc.StatusCode.DEADLINE_EXCEEDED else ErrorCode.EXECUTION_ERROR
    assert error.code is expected
    assert error.details == {"grpc_code": code.name, "grpc_status": code.value[0], "grpc_details": "because",
                             "method": "mcs.test.Lab/Fail", "retryable": False}
    assert error.message.startswith(f"mcs.test.Lab/Fail failed with gRPC status {code.name}.")
    assert "Server said: because" in error.message and "Traceback" not in error.message


def test_a_server_error_on_the_async_path_maps_the_same(lab_driver: GrpcDriver) -> None:
    with pytest.raises(ExecutionError) as info:
        asyncio.run(lab_driver.acall_tool("Lab_Fail", {"code": "NOT_FOUND", "details": "no such thing"}))
    assert info.value.details["grpc_code"] == "NOT_FOUND"


def test_a_value_json_format_refuses_is_invalid_input_before_any_call(lab: Running, lab_driver: GrpcDriver) -> None:
    from mcs.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match="Invalid arguments for Lab_Echo"):
        lab_driver.call_tool("Lab_Echo", {"big": "99999999999999999999999"})
    assert lab.state.calls["Echo"] == 0


def test_static_metadata_is_sent_with_every_call(lab: Running) -> None:
    with GrpcDriver(lab.target, metadata={"authorization": "Bearer s3cret", "x-team": "blue"}) as driver:
        seen = driver.call_tool("Lab_Whoami", {})
        assert seen["authorization"] == "Bearer s3cret" and seen["x-team"] == "blue"
        assert asyncio.run(driver.acall_tool("Lab_Whoami", {}))["x-team"] == "blue"


def test_a_metadata_callable_is_asked_before_each_call(lab: Running) -> None:
    tokens = iter(["t1", "t2", "t3"])
    with GrpcDriver(lab.target, metadata=lambda: {"authorization": f"Bearer {next(tokens)}"}) as driver:
        first = driver.call_tool("Lab_Whoami", {})["authorization"]  # reflection at load had t1
        second = asyncio.run(driver.acall_tool("Lab_Whoami", {}))["authorization"]
    assert (first, second) == ("Bearer t2", "Bearer t3")


def test_a_failing_metadata_callable_stops_the_call_without_showing_values(lab: Running) -> None:
    def broken() -> dict:
        return {"authorization": "Bearer s3cret\r\nx-evil: 1"}

    from grpc_servers import LAB_PROTO

    with GrpcDriver(lab.target, proto=LAB_PROTO, metadata=broken) as driver, pytest.raises(ExecutionError) as info:
        driver.call_tool("Lab_Echo", {})
    assert "metadata" in info.value.message and "s3cret" not in info.value.message
    assert lab.state.calls["Echo"] == 0


def test_healthcheck_reads_grpc_health_v1(lab: Running, lab_driver: GrpcDriver) -> None:
    from grpc_health.v1 import health_pb2

    assert lab_driver.healthcheck() == {"status": "ok", "serving": "SERVING", "service": "", "target": lab.target}
    assert lab.health is not None
    lab.health.set("mcs.test.Lab", health_pb2.HealthCheckResponse.NOT_SERVING)
    assert lab_driver.healthcheck("mcs.test.Lab")["serving"] == "NOT_SERVING"
    assert lab_driver.healthcheck("mcs.test.Lab")["status"] == "error"


def test_healthcheck_without_the_health_service_reports_the_server_answering() -> None:
    with serve([lab_servicer], with_health=False) as running, GrpcDriver(running.target) as driver:
        report = driver.healthcheck()
    assert report["status"] == "ok" and report["serving"] is None


def test_a_dead_peer_is_a_clear_error_and_the_next_call_reconnects() -> None:
    with serve([lab_servicer]) as first:
        port = first.port
        driver = GrpcDriver(first.target, methods="Echo", include_defaults=False)
        assert driver.call_tool("Lab_Echo", {"text": "up"}) == {"text": "up"}
    with driver:
        with pytest.raises(ExecutionError) as info:
            driver.call_tool("Lab_Echo", {"text": "down"})
        assert info.value.details["grpc_code"] == "UNAVAILABLE"
        assert "unavailable" in info.value.message
        with serve([lab_servicer], port=port):
            assert driver.call_tool("Lab_Echo", {"text": "back"}) == {"text": "back"}
            assert asyncio.run(driver.acall_tool("Lab_Echo", {"text": "async"})) == {"text": "async"}


def test_a_driver_loaded_from_protos_without_a_target_says_so_on_call() -> None:
    from grpc_servers import LAB_PROTO

    with GrpcDriver(proto=LAB_PROTO) as driver, pytest.raises(ExecutionError, match="without a target"):
        driver.call_tool("Lab_Echo", {})


def test_cancelling_an_async_call_cancels_the_rpc(lab: Running, lab_driver: GrpcDriver) -> None:
    async def run() -> None:
        task = asyncio.ensure_future(lab_driver.acall_tool("Lab_Slow", {"seconds": 30}))
        for _ in range(500):  # until the server has the call
            if lab.state.calls["Slow"]:
                break
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(run())
    assert lab.state.cancelled.wait(5), "the server saw the call cancelled"


def test_discovery_mode_keeps_every_method_reachable_and_callable(lab: Running) -> None:
    with GrpcDriver(lab.target, description_mode="discovery", include_defaults=False) as driver:
        description = driver.get_function_description()
        assert "search_tools" in description and "choiceText" not in description  # no inline schemas
        found = driver.call_tool("search_tools", {"query": "tree"})
        assert "Lab_EchoTree" in json.dumps(found)
        described = driver.call_tool("describe_tool", {"name": "Lab_EchoTree"})
        assert "$defs" in json.dumps(described)
        assert driver.process_llm_response('{"tool": "Lab_EchoTree", "arguments": {"label": "r"}}') == {"label": "r"}


def test_large_services_go_to_discovery_mode_on_their_own(corpus) -> None:
    root = corpus / "proto" / "googleapis"
    with GrpcDriver(proto=root / "google/pubsub/v1/pubsub.proto", include_paths=[root]) as driver:  # default budget
        assert "search_tools" in driver.get_function_description()
        assert driver.get_tool("Publisher_Publish") is not None
