"""Across processes: the driver (in this process, or served by ``mcs serve can`` in its own) and
another node (can_peer.py, a real child process) on one python-can ``udp_multicast`` bus. What the peer saw comes back as JSON lines;
the tests assert on them. Skipped, with the reason, where the host cannot do IPv4 multicast."""

from __future__ import annotations

import json
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import can
import cantools
import pytest
from can_support import CRUISE, DEMO_DBC
from mcs_can import CanDriver
from support.mcp_http import served_over_http

from mcs.errors import ErrorCode, ToolCallError

GROUP = "239.74.163.2"
PEER = Path(__file__).with_name("can_peer.py")
WINDOW = 0.3  # how long the peer watches for a frame that must not come


def udp_port() -> int:
    """A UDP port nothing is bound to (free when asked)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def multicast() -> None:
    """Skip unless a frame sent to the IPv4 group comes back to this host."""
    try:
        bus = can.Bus(interface="udp_multicast", channel=GROUP, port=udp_port())
    except (can.CanError, OSError) as exc:
        pytest.skip(f"cannot join the IPv4 multicast group {GROUP} on this host ({exc}); "
                    "the cross-process CAN tests need IPv4 multicast")
    try:
        bus.send(can.Message(arbitration_id=0x7FF, data=b"probe", is_extended_id=False))
        echo = bus.recv(timeout=2.0)
    except (can.CanError, OSError) as exc:
        echo, reason = None, f"{type(exc).__name__}: {exc}"
    else:
        reason = "nothing came back within 2 s"
    finally:
        bus.shutdown()
    if echo is None or bytes(echo.data) != b"probe":
        pytest.skip(f"a datagram sent to the IPv4 multicast group {GROUP} does not come back on this host "
                    f"({reason}); the cross-process CAN tests need IPv4 multicast")


class PeerProcess:
    """can_peer.py in a child process, driven through its stdin and read through its JSON lines."""

    def __init__(self, port: int) -> None:
        self.process = subprocess.Popen(
            [sys.executable, str(PEER), GROUP, str(port), str(DEMO_DBC)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        self._records: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, name="can-peer-stdout", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._records.put(json.loads(line))
        self._records.put(None)

    def next(self, timeout: float = 10.0) -> dict[str, Any]:
        """The peer's next JSON line; fails the test on silence, an exit or an error record."""
        try:
            record = self._records.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"the peer said nothing within {timeout} s")
        if record is None:
            self.process.wait(timeout=5)
            assert self.process.stderr is not None
            pytest.fail(f"the peer exited ({self.process.returncode}): {self.process.stderr.read()}")
        assert record["event"] != "error", record["error"]
        return record

    def tell(self, op: str, **arguments: Any) -> None:
        """Send a command without waiting for its answer (:meth:`next` reads it)."""
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"op": op, **arguments}) + "\n")
        self.process.stdin.flush()

    def watch(self, window_s: float) -> list[dict[str, Any]]:
        """The frames the peer received since the last watch and during ``window_s`` more seconds."""
        self.tell("watch", window_s=window_s)
        record = self.next()
        assert record["event"] == "seen"
        return list(record["frames"])

    def send(self, message: str, values: list[dict[str, Any]], **timing: float) -> list[dict[str, Any]]:
        """Have the peer send ``message`` once per values dict; the frames it sent."""
        self.tell("send", message=message, values=values, **timing)
        record = self.next()
        assert record["event"] == "sent"
        return list(record["frames"])

    def stop(self) -> None:
        try:
            self.tell("quit")
            self.process.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        finally:
            self._reader.join(timeout=5)
            for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
                if stream is not None:
                    stream.close()


@pytest.fixture
def port(multicast: None) -> int:
    return udp_port()


@pytest.fixture
def peer(port: int) -> Iterator[PeerProcess]:
    """The peer, started and ready (its bus open) before the test runs; stopped after."""
    process = PeerProcess(port)
    try:
        assert process.next() == {"event": "ready"}
        yield process
    finally:
        process.stop()


@pytest.fixture
def udp_driver(make_driver: Callable[..., CanDriver], port: int) -> Callable[..., CanDriver]:
    """CanDrivers on the demo database, on the peer's udp_multicast bus (no watchdog)."""

    def make(**options: Any) -> CanDriver:
        options.setdefault("watchdog_timeout", None)
        return make_driver(interface="udp_multicast", channel=GROUP, bus_options={"port": port}, **options)

    return make


@pytest.fixture(scope="module")
def database() -> Any:
    """The demo database as cantools loads it, apart from the driver's copy."""
    return cantools.database.load_file(str(DEMO_DBC))


def model_call(tool: str, **arguments: Any) -> str:
    return json.dumps({"tool": tool, "arguments": arguments})


def call(driver: CanDriver, tool: str, **arguments: Any) -> Any:
    return driver.process_llm_response(model_call(tool, **arguments))


def without_timestamp(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in frame.items() if k != "timestamp"} for frame in frames]


def expected_frame(database: Any, message: str, values: dict[str, Any]) -> dict[str, Any]:
    """The frame cantools encodes for ``values``, as the peer reports frames (no timestamp)."""
    spec = database.get_message_by_name(message)
    data = database.encode_message(message, values)
    return {"arbitration_id": spec.frame_id, "is_extended_id": spec.is_extended_frame, "dlc": len(data),
            "data_hex": data.hex(), "is_fd": False, "bitrate_switch": False, "is_remote_frame": False,
            "is_error_frame": False}


def wheel_values(*front_left: float) -> list[dict[str, float]]:
    return [{"WheelSpeedFL": fl, "WheelSpeedFR": fl + 0.25, "WheelSpeedRL": 1.5, "WheelSpeedRR": 2.0}
            for fl in front_left]


def wait_for_frames(driver: CanDriver, message: str, count: int, timeout: float = 5.0) -> dict[str, Any]:
    """The driver's read of the last ``count`` frames, once it has received that many."""
    deadline = time.monotonic() + timeout
    while True:
        result = call(driver, "read", message=message, count=count)
        if len(result.get("frames", ())) >= count or time.monotonic() > deadline:
            return dict(result)
        time.sleep(0.01)


# ------------------------------------------------------------------ sending


def test_a_disarmed_driver_refuses_to_send_and_the_peer_sees_no_frame(peer, udp_driver) -> None:
    driver = udp_driver(allow_send=["CruiseCommand"])
    with pytest.raises(ToolCallError) as refused:
        call(driver, "send_CruiseCommand", **CRUISE)
    assert refused.value.code is ErrorCode.POLICY_DENIED and "not armed" in refused.value.message
    assert peer.watch(WINDOW) == []


@pytest.mark.parametrize(("message", "values"), [
    ("CruiseCommand", CRUISE),
    ("DiagnosticRequest", {"Service": "EcuReset", "ResetType": "Soft"}),
], ids=["standard-id", "extended-id-multiplexed"])
def test_an_armed_send_reaches_the_peer_as_exactly_the_frame_cantools_encodes(
    peer, udp_driver, database, message, values,
) -> None:
    driver = udp_driver(allow_send=[message])
    driver.arm()
    before = time.time()
    result = call(driver, f"send_{message}", **values)
    frames = peer.watch(WINDOW)
    expected = expected_frame(database, message, values)
    assert result["sent"] is True and result["frame"]["data_hex"] == expected["data_hex"]
    assert without_timestamp(frames) == [expected]
    assert before <= frames[0]["timestamp"] <= time.time()


def test_a_message_not_on_the_allow_list_is_refused_and_the_peer_sees_none(peer, udp_driver) -> None:
    driver = udp_driver(allow_send=["CruiseCommand"], send_tools="all")
    driver.arm()
    with pytest.raises(ToolCallError) as refused:
        call(driver, "send_SteeringTorque", Torque=1.5)
    assert refused.value.code is ErrorCode.POLICY_DENIED and "allow-list" in refused.value.message
    assert peer.watch(WINDOW) == []


def test_a_periodic_send_reaches_the_peer_until_disarm_and_no_frame_after(peer, udp_driver, database) -> None:
    driver = udp_driver(allow_send=["CruiseCommand"])
    driver.arm()
    call(driver, "send_CruiseCommand", **CRUISE, period_ms=20)
    running = peer.watch(0.25)
    assert len(running) >= 3
    assert {json.dumps(frame) for frame in without_timestamp(running)} == {
        json.dumps(expected_frame(database, "CruiseCommand", CRUISE))}
    driver.disarm()
    disarmed_at = time.time()
    settling = peer.watch(0.1)
    assert len([frame for frame in settling if frame["timestamp"] > disarmed_at]) <= 1  # one in flight at most
    assert peer.watch(WINDOW) == []  # the count stopped growing
    assert driver.get_status()["periodic"] == {}


# ------------------------------------------------------------------ receiving


def test_a_read_returns_the_latest_decoded_values_the_peer_sent(peer, udp_driver) -> None:
    driver = udp_driver()
    values = wheel_values(12.5, 13.75, 20.0)
    sent = peer.send("WheelSpeeds", values, interval_s=0.01)
    result = wait_for_frames(driver, "WheelSpeeds", count=3)
    assert [frame["signals"] for frame in result["frames"]] == values
    for received, original in zip(result["frames"], sent, strict=True):
        assert 0 <= received["timestamp"] - original["timestamp"] < 2.0
    latest = call(driver, "read", message="WheelSpeeds", signal="WheelSpeedFL")
    assert latest["unit"] == "km/h" and [frame["value"] for frame in latest["frames"]] == [20.0]


def test_a_monitor_returns_only_frames_within_its_window_capped_at_max_frames(peer, udp_driver) -> None:
    driver = udp_driver()
    peer.send("WheelSpeeds", wheel_values(1.0, 2.0))  # before the window: in the history only
    wait_for_frames(driver, "WheelSpeeds", count=2)
    quiet = call(driver, "monitor", message="WheelSpeeds", duration_s=0.2)
    assert quiet["count"] == 0 and quiet["frames"] == [] and quiet["window_s"] < 1.0

    values = wheel_values(31.0, 32.0, 33.0, 34.0, 35.0)
    peer.tell("send", message="WheelSpeeds", values=values, delay_s=0.3, interval_s=0.02)
    opened = time.time()
    result = call(driver, "monitor", message="WheelSpeeds", duration_s=0.9, max_frames=3)
    closed = time.time()
    sent = peer.next()["frames"]
    assert result["count"] == 3 and result["truncated"] == "[truncated at max_frames=3]"
    assert [frame["signals"] for frame in result["frames"]] == values[:3]
    stamps = [frame["timestamp"] for frame in result["frames"]]
    assert opened <= stamps[0] < stamps[1] < stamps[2] <= closed
    assert all(stamp >= original["timestamp"] for stamp, original in zip(stamps, sent, strict=False))


def test_a_read_never_blocks_past_its_deadline_while_the_peer_is_silent(peer, udp_driver) -> None:
    driver = udp_driver(timeout=0.3)
    started = time.monotonic()
    result = call(driver, "read", message="WheelSpeeds", wait_s=5)
    assert time.monotonic() - started < 1.0
    assert result["received"] is False


# ------------------------------------------------------------------ the async path


async def test_the_async_path_refuses_disarmed_then_sends_one_frame_the_peer_sees(peer, udp_driver, database) -> None:
    driver = udp_driver(allow_send=["CruiseCommand"])
    with pytest.raises(ToolCallError) as refused:
        await driver.aprocess_llm_response(model_call("send_CruiseCommand", **CRUISE))
    assert refused.value.code is ErrorCode.POLICY_DENIED
    assert peer.watch(WINDOW) == []
    driver.arm()
    result = await driver.aprocess_llm_response(model_call("send_CruiseCommand", **CRUISE))
    assert result["sent"] is True
    assert without_timestamp(peer.watch(WINDOW)) == [expected_frame(database, "CruiseCommand", CRUISE)]


async def test_the_async_monitor_collects_what_the_peer_sends_in_its_window(peer, udp_driver) -> None:
    driver = udp_driver()
    values = wheel_values(41.0, 42.0)
    peer.tell("send", message="WheelSpeeds", values=values, delay_s=0.3, interval_s=0.02)
    result = await driver.aprocess_llm_response(model_call("monitor", message="WheelSpeeds", duration_s=0.9,
                                                           max_frames=2))
    peer.next()
    assert result["count"] == 2 and [frame["signals"] for frame in result["frames"]] == values


# ------------------------------------------------------------------ served


async def test_mcs_serve_can_over_streamable_http_reads_what_the_peer_sends_and_sends_nothing_disarmed(
    peer, port,
) -> None:
    args = ["can", "-o", f"dbc={DEMO_DBC}", "-o", "interface=udp_multicast", "-o", f"channel={GROUP}",
            "-o", f'bus_options={{"port": {port}}}', "-o", 'allow_send=["CruiseCommand"]']
    async with served_over_http(args) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert {"send_CruiseCommand", "read", "monitor", "bus_status", "stop_periodic"} <= set(tools)
        assert tools["send_CruiseCommand"].annotations.destructive_hint is True
        status = await session.call_tool("bus_status", {})
        assert status.structured_content["armed"] is False
        peer.tell("send", message="WheelSpeeds", values=wheel_values(42.5), delay_s=0.3, interval_s=0.0)
        reading = await session.call_tool("read", {"message": "WheelSpeeds", "wait_s": 5})
        assert peer.next()["event"] == "sent"
        assert not reading.is_error
        assert [frame["signals"] for frame in reading.structured_content["frames"]] == wheel_values(42.5)
        refused = await session.call_tool("send_CruiseCommand", CRUISE)
        assert refused.is_error and "not armed" in refused.content[0].text
        assert peer.watch(WINDOW) == []
