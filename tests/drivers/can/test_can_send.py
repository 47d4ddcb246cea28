"""Sending: signals as named physical arguments become the exact frame a sniffer sees; bad input
sends nothing; periodic sends start, change and stop; the async path sends the same frame."""

from __future__ import annotations

import json
import threading
import time

import can
import cantools
import pytest
from can.interfaces.virtual import VirtualBus
from can_support import CRUISE, CRUISE_BYTES, collect, drain, frame_tuples
from cantools.database.can import Database, Message, Signal

from mcs.errors import ErrorCode, InvalidInputError, ToolCallError


def call(driver, tool: str, **arguments):
    return driver.process_llm_response(json.dumps({"tool": tool, "arguments": arguments}))


@pytest.fixture
def armed(make_driver):
    driver = make_driver(allow_send=["CruiseCommand", "DiagnosticRequest"], watchdog_timeout=None)
    driver.arm()
    return driver


def test_a_send_puts_the_exact_encoded_frame_on_the_bus(armed, sniffer) -> None:
    result = call(armed, "send_CruiseCommand", **CRUISE)
    assert result == {"sent": True, "message": "CruiseCommand", "frame": {
        "arbitration_id": 0x200, "id_hex": "0x200", "is_extended_id": False, "is_fd": False,
        "bitrate_switch": False, "dlc": 4, "data_hex": "5002f401"}}
    assert frame_tuples(drain(sniffer)) == [(0x200, False, 4, CRUISE_BYTES)]


def test_a_choice_by_name_and_by_number_encode_the_same(armed, sniffer) -> None:
    db = cantools.database.load_file(str(armed.database.source))
    call(armed, "send_CruiseCommand", TargetSpeed=30, Mode="Standby", Acceleration=-1.25)
    expected = db.encode_message("CruiseCommand", {"TargetSpeed": 30, "Mode": 1, "Acceleration": -1.25})
    assert [bytes(f.data) for f in drain(sniffer)] == [expected]


def test_a_multiplexed_message_sends_the_branch_its_multiplexer_selects(armed, sniffer) -> None:
    call(armed, "send_DiagnosticRequest", Service="EcuReset", ResetType="Soft")
    call(armed, "send_DiagnosticRequest", Service=34, DataIdentifier=0xF190)
    assert frame_tuples(drain(sniffer)) == [
        (0x18FF50E5, True, 8, bytes.fromhex("1103000000000000")),
        (0x18FF50E5, True, 8, bytes.fromhex("2290f10000000000")),
    ]


@pytest.mark.parametrize(("arguments", "field"), [
    ({**CRUISE, "TargetSpeed": 201}, "TargetSpeed"),
    ({**CRUISE, "Acceleration": -5.5}, "Acceleration"),
    ({**CRUISE, "Mode": "Turbo"}, "Mode"),
    ({**CRUISE, "TargetSpeed": "80; id"}, "TargetSpeed"),
    ({"TargetSpeed": 80, "Mode": "Active"}, "Acceleration"),
    ({**CRUISE, "Boost": 1}, "Boost"),
    ({**CRUISE, "arbitration_id": 0x7FF}, "arbitration_id"),
])
def test_invalid_signal_values_are_refused_naming_the_signal_and_send_nothing(armed, sniffer, arguments, field) -> None:
    with pytest.raises(InvalidInputError) as info:
        call(armed, "send_CruiseCommand", **arguments)
    assert field in info.value.message
    assert drain(sniffer) == []


@pytest.mark.parametrize(("arguments", "field"), [
    ({"Service": "EcuReset", "DataIdentifier": 1}, "DataIdentifier"),
    ({"Service": "EcuReset"}, "ResetType"),
    ({"ResetType": "Soft"}, "Service"),
])
def test_a_signal_outside_the_selected_branch_or_missing_from_it_is_refused(armed, sniffer, arguments, field) -> None:
    with pytest.raises(InvalidInputError) as info:
        call(armed, "send_DiagnosticRequest", **arguments)
    assert field in info.value.message
    assert drain(sniffer) == []


def test_a_periodic_send_repeats_the_frame_changes_it_and_stops(armed, sniffer) -> None:
    started = call(armed, "send_CruiseCommand", **CRUISE, period_ms=20)
    assert started["sent"] is True and started["period_ms"] == 20
    assert armed.get_status()["periodic"]["CruiseCommand"]["period_ms"] == 20
    assert {bytes(f.data) for f in collect(sniffer, 3)} == {CRUISE_BYTES}
    call(armed, "send_CruiseCommand", **{**CRUISE, "TargetSpeed": 81}, period_ms=20)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        frame = sniffer.recv(timeout=1)
        if frame is not None and frame.data[0] == 81:
            break
    else:
        pytest.fail("the periodic send did not change its data")
    assert call(armed, "stop_periodic", message="CruiseCommand") == {"stopped": ["CruiseCommand"], "running": []}
    drain(sniffer)
    assert sniffer.recv(timeout=0.1) is None  # five periods: nothing more


def test_stop_periodic_without_a_message_stops_every_one(armed, sniffer) -> None:
    call(armed, "send_CruiseCommand", **CRUISE, period_ms=50)
    call(armed, "send_DiagnosticRequest", Service="EcuReset", ResetType="Hard", period_ms=50)
    result = call(armed, "stop_periodic")
    assert sorted(result["stopped"]) == ["CruiseCommand", "DiagnosticRequest"]
    drain(sniffer)
    assert sniffer.recv(timeout=0.1) is None


async def test_the_async_path_sends_the_same_frame(armed, sniffer) -> None:
    result = await armed.aprocess_llm_response(json.dumps({"tool": "send_CruiseCommand", "arguments": CRUISE}))
    assert result["frame"]["data_hex"] == CRUISE_BYTES.hex()
    assert frame_tuples(drain(sniffer)) == [(0x200, False, 4, CRUISE_BYTES)]


def _fd_database() -> Database:
    signal = Signal(name="Payload", start=0, length=8)
    return Database([Message(frame_id=0x123, name="Wide", length=12, signals=[signal], is_fd=True)])


def test_a_can_fd_frame_goes_out_with_its_length_and_flags_on_an_fd_bus(make_driver, sniffer) -> None:
    driver = make_driver(_fd_database(), fd=True, allow_send=["Wide"], watchdog_timeout=None)
    driver.arm()
    result = call(driver, "send_Wide", Payload=7)
    assert result["frame"]["is_fd"] is True and result["frame"]["bitrate_switch"] is True
    frames = drain(sniffer)
    assert [(f.is_fd, f.bitrate_switch, f.dlc, bytes(f.data)) for f in frames] == [(True, True, 12, bytes([7]) + bytes(11))]


@pytest.mark.parametrize("length", [9, 10, 13, 33, 63])
def test_a_can_fd_frame_of_a_length_can_fd_cannot_carry_is_refused(make_driver, sniffer, length) -> None:
    # A controller pads such a frame to the next CAN FD length: the bus would not carry the
    # frame the allow-list admitted and a dry run showed.
    signal = Signal(name="Payload", start=0, length=8)
    database = Database([Message(frame_id=0x124, name="Odd", length=length, signals=[signal], is_fd=True)])
    driver = make_driver(database, fd=True, allow_send=["Odd"], watchdog_timeout=None)
    driver.arm()
    for dry_run in (True, False):
        with pytest.raises(ToolCallError) as info:
            call(driver, "send_Odd", Payload=7, dry_run=dry_run)
        assert info.value.code is ErrorCode.POLICY_DENIED
        assert f"{length} bytes" in info.value.message and "12, 16, 20, 24, 32, 48 or 64" in info.value.message
    assert drain(sniffer) == []


def test_a_classic_frame_over_8_bytes_is_refused_on_an_fd_bus(make_driver, sniffer) -> None:
    signal = Signal(name="Payload", start=0, length=8)
    database = Database([Message(frame_id=0x125, name="Long", length=12, signals=[signal], is_fd=False)])
    driver = make_driver(database, fd=True, allow_send=["Long"], watchdog_timeout=None)
    driver.arm()
    with pytest.raises(ToolCallError) as info:
        call(driver, "send_Long", Payload=7)
    assert info.value.code is ErrorCode.POLICY_DENIED
    assert "Long is a classic CAN frame" in info.value.message  # not "this bus is classic CAN": it is FD
    assert drain(sniffer) == []


def test_a_can_fd_frame_is_refused_on_a_classic_bus(make_driver, sniffer) -> None:
    driver = make_driver(_fd_database(), allow_send=["Wide"], watchdog_timeout=None)
    driver.arm()
    with pytest.raises(ToolCallError) as info:
        call(driver, "send_Wide", Payload=7)
    assert info.value.code is ErrorCode.POLICY_DENIED and "classic CAN" in info.value.message
    assert drain(sniffer) == []


def test_a_send_tool_exists_only_for_allowed_messages_by_default(make_driver) -> None:
    driver = make_driver(allow_send=["CruiseCommand"])
    assert [t.name for t in driver.list_tools() if t.meta.get("kind") == "send"] == ["send_CruiseCommand"]
    assert [t.name for t in make_driver().list_tools()] == ["read", "monitor", "bus_status"]


def test_the_bus_settings_reach_python_can(make_driver, channel) -> None:
    driver = make_driver(bitrate=500_000, bus_options={"receive_own_messages": False})
    assert isinstance(driver.bus, can.BusABC) and driver.bus.channel_info.endswith(channel)


class _RefusingBus(VirtualBus):  # type: ignore[misc]
    """A virtual bus whose controller refuses every frame (a bus-off controller)."""

    def send(self, msg: can.Message, timeout: float | None = None) -> None:
        raise can.CanOperationError("bus off")


def test_a_frame_the_bus_refuses_disarms_and_gives_back_its_rate_token(make_driver, channel) -> None:
    bus = _RefusingBus(channel=channel)
    try:
        driver = make_driver(allow_send=["CruiseCommand"], watchdog_timeout=None, bus=bus, tx_burst=1,
                             tx_rate_limit=0.001)  # no refill within the test
        driver.arm()
        with pytest.raises(ToolCallError) as refused:
            call(driver, "send_CruiseCommand", **CRUISE)
        assert refused.value.code == ErrorCode.EXECUTION_ERROR
        assert "did not take the frame (CanOperationError: bus off)" in refused.value.message
        assert refused.value.details["frame"]["id_hex"] == "0x200"
        assert not driver.armed
        driver.arm()  # the one token of the burst was given back: the next refusal is the bus's again
        with pytest.raises(ToolCallError, match="did not take the frame"):
            call(driver, "send_CruiseCommand", **CRUISE)
    finally:
        bus.shutdown()


def test_a_send_leaves_the_callers_arguments_as_they_were(armed, sniffer) -> None:
    arguments = dict(CRUISE)  # every signal of the message: encoded from the validated dict itself
    armed.call_tool("send_CruiseCommand", arguments)
    assert arguments == CRUISE
    assert frame_tuples(drain(sniffer)) == [(0x200, False, 4, CRUISE_BYTES)]


def test_a_send_refused_under_the_transmit_lock_leaves_it_free(make_driver, sniffer) -> None:
    driver = make_driver(allow_send=["CruiseCommand"], watchdog_timeout=None, tx_burst=1,
                         tx_rate_limit=0.001)  # one frame, then refusals: no refill within the test
    driver.arm()
    call(driver, "send_CruiseCommand", **CRUISE)
    with pytest.raises(ToolCallError, match="rate limit"):
        call(driver, "send_CruiseCommand", **CRUISE)
    other = threading.Thread(target=driver.disarm)  # disarm takes the transmit lock
    other.start()
    other.join(timeout=10.0)
    assert not other.is_alive() and not driver.armed
    assert len(drain(sniffer)) == 1
