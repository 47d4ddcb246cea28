"""Receiving: the notifier-fed history answers reads at once, monitors collect within a bounded
window and count, bus errors are reported, and nothing waits past the call's deadline."""

from __future__ import annotations

import itertools
import json
import threading
import time

import can
import pytest
from can_support import DEMO_DBC, drain
from mcs_can import CanDriver

from mcs.errors import ExecutionError, InvalidInputError

WHEELS = 0x100


def wheels(fl: float, fr: float = 0.0) -> can.Message:
    raw = round(fl * 100).to_bytes(2, "little") + round(fr * 100).to_bytes(2, "little") + bytes(4)
    return can.Message(arbitration_id=WHEELS, data=raw, is_extended_id=False)


def call(driver, tool: str, **arguments):
    return driver.process_llm_response(json.dumps({"tool": tool, "arguments": arguments}))


def wait_received(driver, count: int = 1, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = call(driver, "read", message="WheelSpeeds", count=count)
        if len(result.get("frames", ())) >= count:
            return
        time.sleep(0.005)
    pytest.fail("the driver did not receive the peer's frames")


def test_a_read_before_any_frame_says_nothing_was_received(make_driver) -> None:
    result = call(make_driver(), "read", message="WheelSpeeds")
    assert result["received"] is False and "no frame of WheelSpeeds" in result["note"]


def test_a_read_returns_the_latest_decoded_frame_with_its_timestamp(make_driver, peer) -> None:
    driver = make_driver()
    peer.send(wheels(12.5, 13.25))
    wait_received(driver)
    result = call(driver, "read", message="WheelSpeeds")
    [frame] = result["frames"]
    assert frame["signals"] == {"WheelSpeedFL": 12.5, "WheelSpeedFR": 13.25, "WheelSpeedRL": 0.0, "WheelSpeedRR": 0.0}
    assert frame["timestamp"] > 0 and 0 <= result["age_s"] < 60


def test_a_read_of_one_signal_gives_its_value_and_unit_over_the_last_frames(make_driver, peer) -> None:
    driver = make_driver()
    for speed in (10, 20, 30):
        peer.send(wheels(speed))
    wait_received(driver, 3)
    result = call(driver, "read", message="WheelSpeeds", signal="WheelSpeedFL", count=3)
    assert result["unit"] == "km/h"
    assert [f["value"] for f in result["frames"]] == [10, 20, 30]


def test_a_read_of_a_signal_the_message_lacks_names_its_signals(make_driver) -> None:
    with pytest.raises(InvalidInputError) as info:
        call(make_driver(), "read", message="WheelSpeeds", signal="Torque")
    assert "WheelSpeedFL" in info.value.message


def test_wait_s_returns_a_frame_that_arrives_while_waiting(make_driver, peer) -> None:
    driver = make_driver()
    timer = threading.Timer(0.05, lambda: peer.send(wheels(42)))
    timer.start()
    try:
        result = call(driver, "read", message="WheelSpeeds", signal="WheelSpeedFL", wait_s=5)
    finally:
        timer.join()
    assert result["frames"][-1]["value"] == 42


@pytest.mark.parametrize("tool", ["read", "monitor"])
def test_a_receive_never_waits_past_the_calls_deadline(make_driver, tool) -> None:
    driver = make_driver(timeout=0.3)
    started = time.monotonic()
    arguments = {"wait_s": 5} if tool == "read" else {"duration_s": 5}
    result = call(driver, tool, message="WheelSpeeds", **arguments)
    assert time.monotonic() - started < 1.0
    assert result.get("count", 0) == 0


@pytest.mark.parametrize("tool", ["read", "monitor"])
async def test_an_async_receive_answers_before_the_calls_deadline_instead_of_timing_out(make_driver, tool) -> None:
    # A read waited all the time the call had left, so the answer came after the deadline:
    # past it on the sync path, and as TIMEOUT instead of "no new frame" on the async one.
    driver = make_driver(timeout=0.3)
    arguments = {"wait_s": 5} if tool == "read" else {"duration_s": 5}
    for _ in range(3):
        started = time.monotonic()
        result = await driver.acall_tool(tool, {"message": "WheelSpeeds", **arguments})
        assert time.monotonic() - started < 0.3
        assert result.get("count", 0) == 0 and result.get("received", False) is False
        started = time.monotonic()
        driver.call_tool(tool, {"message": "WheelSpeeds", **arguments})
        assert time.monotonic() - started < 0.3


class Ecu:
    """The peer sends WheelSpeeds with FL = 1, 2, 3, ... every 10 ms until stopped."""

    def __init__(self, peer: can.BusABC) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(peer,))

    def _run(self, peer: can.BusABC) -> None:
        value = 1
        while not self._stop.wait(0.01):
            peer.send(wheels(value))
            value += 1

    def __enter__(self) -> Ecu:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def consecutive(values: list[float]) -> bool:
    return all(b - a == 1 for a, b in itertools.pairwise(values))


def test_a_monitor_collects_decoded_frames_and_stops_at_max_frames(make_driver, peer) -> None:
    driver = make_driver()
    with Ecu(peer):
        result = call(driver, "monitor", message="WheelSpeeds", duration_s=5, max_frames=3)
    assert result["count"] == 3 and result["truncated"] == "[truncated at max_frames=3]"
    assert consecutive([f["signals"]["WheelSpeedFL"] for f in result["frames"]])
    assert all(a["timestamp"] < b["timestamp"] for a, b in zip(result["frames"], result["frames"][1:], strict=False))
    assert result["window_s"] < 5


def test_a_monitor_ends_with_its_window_when_nothing_arrives(make_driver) -> None:
    started = time.monotonic()
    result = call(make_driver(), "monitor", message="WheelSpeeds", duration_s=0.1)
    assert result["count"] == 0 and result["frames"] == [] and "truncated" not in result
    assert time.monotonic() - started < 1.0


def test_the_stream_capability_yields_each_frame_as_it_arrives(make_driver, peer) -> None:
    driver = make_driver()
    assert driver.supports("stream")
    with Ecu(peer):
        items = list(driver.stream_call("monitor", {"message": "WheelSpeeds", "duration_s": 5, "max_frames": 2}))
    values = [item["signals"]["WheelSpeedFL"] for item in items]
    assert len(values) == 2 and consecutive(values)


async def test_the_async_stream_and_monitor_collect_without_blocking_the_loop(make_driver, peer) -> None:
    driver = make_driver()
    with Ecu(peer):
        streamed = [item["signals"]["WheelSpeedFL"] async for item in driver.astream_call(
            "monitor", {"message": "WheelSpeeds", "duration_s": 5, "max_frames": 2})]
        monitored = await driver.acall_tool("monitor", {"message": "WheelSpeeds", "duration_s": 5, "max_frames": 2})
    later = [f["signals"]["WheelSpeedFL"] for f in monitored["frames"]]
    assert len(streamed) == 2 and consecutive(streamed)
    assert len(later) == 2 and consecutive(later) and later[0] > streamed[-1]


def test_error_frames_are_counted_and_reported_with_the_values(make_driver, peer) -> None:
    driver = make_driver()
    peer.send(can.Message(is_error_frame=True))
    peer.send(wheels(5))
    wait_received(driver)
    result = call(driver, "read", message="WheelSpeeds")
    assert result["bus"]["error_frames"] == 1
    assert call(driver, "bus_status")["bus"]["error_frames"] == 1


def test_a_frame_that_does_not_decode_is_reported_with_its_bytes(make_driver, peer) -> None:
    driver = make_driver()
    peer.send(can.Message(arbitration_id=0x200, data=b"\x50", is_extended_id=False))  # CruiseCommand is 4 bytes
    deadline = time.monotonic() + 5
    while not call(driver, "read", message="CruiseCommand")["received"] and time.monotonic() < deadline:
        time.sleep(0.005)
    [frame] = call(driver, "read", message="CruiseCommand")["frames"]
    assert frame.get("data_hex") == "50" or "signals" in frame


def test_a_failed_bus_is_reported_then_reopened_by_the_next_call(make_driver, peer) -> None:
    driver = make_driver()
    driver.bus.shutdown()
    deadline = time.monotonic() + 5
    while driver.healthcheck()["status"] == "ok" and time.monotonic() < deadline:
        time.sleep(0.005)
    assert driver.healthcheck()["status"] == "error"
    result = call(driver, "read", message="WheelSpeeds")  # reopens the bus
    assert "closed bus" in result["bus"]["recovered_from"]
    peer.send(wheels(3))
    wait_received(driver)
    assert driver.healthcheck() == {"status": "ok"}


def test_a_bus_the_caller_owns_is_not_reopened_and_its_failure_is_an_execution_error(make_driver, channel) -> None:
    bus = can.Bus(interface="virtual", channel=channel)
    driver = make_driver(bus=bus)
    bus.shutdown()
    deadline = time.monotonic() + 5
    while driver.healthcheck()["status"] == "ok" and time.monotonic() < deadline:
        time.sleep(0.005)
    with pytest.raises(ExecutionError, match="bus failed"):
        call(driver, "read", message="WheelSpeeds")


def test_frames_of_unknown_ids_are_ignored(make_driver, peer, sniffer) -> None:
    driver = make_driver()
    peer.send(can.Message(arbitration_id=0x7AB, data=b"\x01", is_extended_id=False))
    peer.send(wheels(1))
    wait_received(driver)
    assert drain(sniffer)  # the peer's frames went out
    assert call(driver, "read", message="CruiseCommand")["received"] is False


async def test_async_with_shuts_the_bus_and_its_receiver_down_after_use(channel, peer) -> None:
    async with CanDriver(DEMO_DBC, channel=channel) as driver:
        link = driver._link
        peer.send(wheels(12.5))
        deadline = time.monotonic() + 5
        while not (await driver.acall_tool("read", {"message": "WheelSpeeds"}))["received"]:
            assert time.monotonic() < deadline, "the driver did not receive the peer's frame"
        assert link.notifier is not None and not link.bus._is_shutdown
    assert link.notifier is None and link.bus._is_shutdown
