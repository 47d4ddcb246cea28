"""Messages that share a frame id (and id kind): each keeps the frames it may be, told apart
by their length where the lengths differ; a frame that fits several messages is decoded as
each, and a read or monitor says which others it may be. A peer on python-can's virtual bus
sends the frames."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import can
import pytest
from mcs_can import CanDriver

SHARED = 0x200

# Status and Mirror are both 8 bytes on 0x200: an 8-byte frame there is either. Alarm is
# 2 bytes on 0x200: a 2-byte frame is Alarm only. Other is alone on 0x201.
DBC = """VERSION ""


NS_ :

BS_:

BU_: ECU


BO_ 512 Status: 8 ECU
 SG_ Temperature : 0|16@1+ (0.1,0) [0|6553.5] "degC" Vector__XXX

BO_ 512 Alarm: 2 ECU
 SG_ Code : 0|8@1+ (1,0) [0|255] "" Vector__XXX

BO_ 512 Mirror: 8 ECU
 SG_ Pressure : 0|16@1+ (1,0) [0|65535] "kPa" Vector__XXX

BO_ 513 Other: 8 ECU
 SG_ Level : 0|8@1+ (1,0) [0|255] "" Vector__XXX
"""


@pytest.fixture
def database(tmp_path: Path) -> Path:
    path = tmp_path / "shared.dbc"
    path.write_text(DBC)
    return path


def call(driver: CanDriver, tool: str, **arguments: object) -> dict:
    return driver.process_llm_response(json.dumps({"tool": tool, "arguments": arguments}))


def frame(data: bytes, arbitration_id: int = SHARED) -> can.Message:
    return can.Message(arbitration_id=arbitration_id, data=data, is_extended_id=False)


def received(driver: CanDriver, message: str, count: int = 1) -> dict:
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        result = call(driver, "read", message=message, count=count)
        if len(result.get("frames", ())) >= count:
            return result
        time.sleep(0.005)
    pytest.fail(f"the driver did not receive {count} frame(s) of {message}")


def test_a_read_gives_the_frame_of_its_own_length_not_the_last_on_the_id(make_driver, peer, database) -> None:
    driver = make_driver(database)
    peer.send(frame(b"\x07\x00"))  # Alarm, code 7
    peer.send(frame(bytes([0xE8, 0x03, 0, 0, 0, 0, 0, 0])))  # Status 100.0 degC, or Mirror 1000 kPa
    status = received(driver, "Status")
    alarm = call(driver, "read", message="Alarm", count=5)
    assert [f["signals"] for f in alarm["frames"]] == [{"Code": 7}]
    assert "may_also_be" not in alarm["frames"][0]
    [seen] = status["frames"]
    assert seen["signals"] == {"Temperature": 100.0} and seen["may_also_be"] == ["Mirror"]


def test_a_frame_that_fits_two_messages_is_decoded_as_each_and_says_so(make_driver, peer, database) -> None:
    driver = make_driver(database)
    peer.send(frame(bytes([0x10, 0x27, 0, 0, 0, 0, 0, 0])))
    status, mirror = received(driver, "Status"), received(driver, "Mirror")
    assert status["frames"][0]["signals"] == {"Temperature": 1000.0}
    assert mirror["frames"][0]["signals"] == {"Pressure": 10000}
    assert mirror["frames"][0]["may_also_be"] == ["Status"]
    assert status["shares_frame_with"] == ["Alarm", "Mirror"]
    assert mirror["shares_frame_with"] == ["Alarm", "Status"]
    assert call(driver, "read", message="Alarm")["received"] is False


def test_a_frame_of_no_sharers_length_may_be_any_of_them(make_driver, peer, database) -> None:
    driver = make_driver(database)
    peer.send(frame(b"\x05\x00\x00\x00"))  # 4 bytes: no message on 0x200 is 4 bytes long
    alarm = received(driver, "Alarm")
    assert alarm["frames"][0]["signals"] == {"Code": 5}
    assert alarm["frames"][0]["may_also_be"] == ["Mirror", "Status"]


def test_a_message_alone_on_its_id_reads_as_before(make_driver, peer, database) -> None:
    driver = make_driver(database)
    peer.send(frame(bytes([9, 0, 0, 0, 0, 0, 0, 0]), arbitration_id=0x201))
    other = received(driver, "Other")
    assert other["frames"][0] == {"timestamp": other["frames"][0]["timestamp"], "signals": {"Level": 9}}
    assert "shares_frame_with" not in other


def test_a_monitor_collects_only_the_frames_its_message_may_be(make_driver, peer, database) -> None:
    driver = make_driver(database)

    def send() -> None:
        for index in range(3):
            peer.send(frame(bytes([index + 1, 0, 0, 0, 0, 0, 0, 0])))
            peer.send(frame(bytes([index + 10, 0])))

    timer = threading.Timer(0.1, send)
    timer.start()
    try:
        result = call(driver, "monitor", message="Alarm", duration_s=2, max_frames=3)
    finally:
        timer.join()
    assert [f["signals"]["Code"] for f in result["frames"]] == [10, 11, 12]
    assert result["shares_frame_with"] == ["Mirror", "Status"]
