"""SECURITY.md D3-D8 on python-can's virtual bus, with a second bus object as the sniffer that
asserts exactly which frames appeared, and that none did when a send was refused."""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import time

import pytest
from can_support import CRUISE, CRUISE_BYTES, collect, drain, frame_tuples
from cantools.database.can import Database, Message, Signal
from cantools.database.conversion import BaseConversion
from mcs_can import AllowedFrame, CanDriver, SignalLimit

from mcs.errors import (
    ConfigurationError,
    ErrorCode,
    InvalidInputError,
    PolicyDeniedError,
    ToolCallError,
)


def call(driver: CanDriver, tool: str, **arguments):
    return driver.process_llm_response(json.dumps({"tool": tool, "arguments": arguments}))


def wait_until(predicate, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.005)
    return predicate()


# ---------------------------------------------------------------------- D3: the allow-list scan

EXTENDED_SAMPLE = sorted({0x0, 0x7FF, 0x800, 0x1FFFFFFF, *range(0x1234, 0x1FFFFFFF, 0x1FFFFFFF // 61)})
FD_ID = 0x1ABCDEF0


def _scan_database() -> Database:
    def message(frame_id: int, extended: bool, length: int = 8, fd: bool = False) -> Message:
        prefix = "Ext" if extended else "Std"
        return Message(frame_id=frame_id, name=f"{prefix}{frame_id:X}{'Fd' if fd else ''}", length=length,
                       is_extended_frame=extended, is_fd=fd, signals=[Signal(name="Value", start=0, length=8)])

    messages = [message(i, False) for i in range(0x800)]
    messages += [message(i, True) for i in EXTENDED_SAMPLE if i != FD_ID]
    messages.append(message(FD_ID, True, length=12, fd=True))
    return Database(messages)


ALLOWED = [
    AllowedFrame(0x000), AllowedFrame(0x123), AllowedFrame(0x7FF),  # standard ids, any length the database gives
    AllowedFrame(0x1FFFFFFF, is_extended_id=True, dlc=8),
    AllowedFrame(0x200, is_extended_id=True),                       # wrong id kind: the database's 0x200 is standard
    AllowedFrame(0x300, dlc=4),                                     # wrong length: the database's 0x300 has 8 bytes
    AllowedFrame(FD_ID, is_extended_id=True, dlc=12),               # 12 bytes need CAN FD; this bus is classic
]
EXPECTED = [(0x000, False), (0x123, False), (0x7FF, False), (0x1FFFFFFF, True)]


def test_d3_every_standard_id_and_a_sample_of_extended_ids_only_allowed_frames_reach_the_bus(make_driver, sniffer) -> None:
    driver = make_driver(_scan_database(), allow_send=ALLOWED, send_tools="all", tx_rate_limit=None,
                         watchdog_timeout=None)
    driver.arm()
    assert driver.meta.capabilities and driver.list_tools()  # 2,048 + 62 send tools: discovery mode
    attempts = [(i, False) for i in range(0x800)] + [(i, True) for i in EXTENDED_SAMPLE]
    sent: list[tuple[int, bool]] = []
    for frame_id, extended in attempts:
        name = f"send_{'Ext' if extended else 'Std'}{frame_id:X}{'Fd' if frame_id == FD_ID else ''}"
        try:
            result = call(driver, name, Value=0x5A)
        except PolicyDeniedError as error:
            assert "allow-list" in error.message or "classic CAN" in error.message
            continue
        assert result["sent"] is True
        sent.append((frame_id, extended))
    assert sent == EXPECTED
    frames = drain(sniffer)
    assert [(f.arbitration_id, f.is_extended_id) for f in frames] == EXPECTED
    assert all(f.dlc == 8 and f.data[0] == 0x5A for f in frames)
    assert len(attempts) == 2048 + len(EXTENDED_SAMPLE)


def test_d3_by_default_nothing_may_be_sent_and_no_send_tool_is_offered(make_driver, sniffer) -> None:
    driver = make_driver(_scan_database(), watchdog_timeout=None)
    driver.arm()
    assert not [t for t in driver.list_tools() if t.meta.get("kind") == "send"]
    everything = make_driver(_scan_database(), send_tools="all", tx_rate_limit=None, watchdog_timeout=None)
    everything.arm()
    for frame_id in range(0x800):
        with pytest.raises(PolicyDeniedError, match="allow-list"):
            call(everything, f"send_Std{frame_id:X}", Value=1)
    assert drain(sniffer) == []


def test_d3_no_argument_can_name_an_arbitration_id(make_driver, sniffer) -> None:
    driver = make_driver(allow_send=["CruiseCommand"], watchdog_timeout=None)
    driver.arm()
    for extra in ({"arbitration_id": 0x7DF}, {"id": 0x7DF}, {"is_extended_id": True}, {"dlc": 64}):
        with pytest.raises(InvalidInputError):
            call(driver, "send_CruiseCommand", **CRUISE, **extra)
    assert drain(sniffer) == []


# Two messages on one frame: same arbitration id, id kind and length (a DBC may define both).
SHARED_FRAME_DBC = """VERSION ""

NS_ :

BS_:

BU_: ECU

BO_ 291 Lamp: 2 ECU
 SG_ Level : 0|8@1+ (1,0) [0|100] "%" Vector__XXX
 SG_ Blink : 8|8@1+ (1,0) [0|1] "" Vector__XXX

BO_ 291 Brake: 2 ECU
 SG_ Pressure : 0|16@1+ (1,0) [0|1000] "bar" Vector__XXX
"""
LAMP, BRAKE = {"Level": 50, "Blink": 1}, {"Pressure": 300}


@pytest.fixture
def shared_frame_dbc(tmp_path):
    path = tmp_path / "shared_frame.dbc"
    path.write_text(SHARED_FRAME_DBC)
    return path


@pytest.mark.parametrize("order", ["allowed first", "refused first"])
def test_d3_allowing_one_of_two_messages_on_one_frame_does_not_allow_the_other(
    make_driver, sniffer, shared_frame_dbc, order,
) -> None:
    driver = make_driver(shared_frame_dbc, allow_send=["Lamp"], send_tools="all", watchdog_timeout=None)
    driver.arm()
    for _ in range(2):  # neither verdict is remembered for the other message
        if order == "allowed first":
            assert call(driver, "send_Lamp", **LAMP)["sent"] is True
        with pytest.raises(PolicyDeniedError, match=r"Brake .*allow-list"):
            call(driver, "send_Brake", **BRAKE)
        if order == "refused first":
            assert call(driver, "send_Lamp", **LAMP)["sent"] is True
    assert frame_tuples(drain(sniffer)) == [(0x123, False, 2, bytes([50, 1]))] * 2
    allowed = driver.get_status()["allowed"]
    assert allowed == [{"arbitration_id": 0x123, "is_extended_id": False, "dlc": 2, "messages": ["Lamp"]}]
    offered = make_driver(shared_frame_dbc, allow_send=["Lamp"], watchdog_timeout=None)
    assert [t.name for t in offered.list_tools() if t.meta.get("kind") == "send"] == ["send_Lamp"]


@pytest.mark.parametrize("entry", [0x123, AllowedFrame(0x123, dlc=2)], ids=["id", "frame"])
def test_d3_an_id_or_a_frame_on_the_allow_list_allows_every_message_sent_on_it(
    make_driver, sniffer, shared_frame_dbc, entry,
) -> None:
    driver = make_driver(shared_frame_dbc, allow_send=[entry], watchdog_timeout=None)
    driver.arm()
    assert call(driver, "send_Lamp", **LAMP)["sent"] is True
    assert call(driver, "send_Brake", **BRAKE)["sent"] is True
    assert frame_tuples(drain(sniffer)) == [(0x123, False, 2, bytes([50, 1])), (0x123, False, 2, (300).to_bytes(2, "little"))]
    assert driver.get_status()["allowed"][0]["messages"] == ["Lamp", "Brake"]


@pytest.mark.parametrize("allowed", [["Lamp", "Brake"], ["Brake"], [0x123]], ids=["both", "other", "id"])
def test_d4_a_message_sharing_its_frame_with_a_limited_message_cannot_be_allowed(
    make_driver, sniffer, shared_frame_dbc, allowed,
) -> None:
    # Brake's frames carry Lamp's bits: Pressure 255 is Level 255 to a node that reads Lamp.
    with pytest.raises(ConfigurationError, match=r"Brake.*0x123.*Lamp"):
        driver = make_driver(shared_frame_dbc, allow_send=allowed, watchdog_timeout=None,
                             limits={"Lamp.Level": {"maximum": 50}})
        driver.arm()
        call(driver, "send_Brake", Pressure=255)
    assert drain(sniffer) == []


def test_d7_a_message_sharing_its_frame_with_a_high_risk_message_needs_approval_too(
    make_driver, sniffer, shared_frame_dbc,
) -> None:
    with pytest.raises(ConfigurationError, match=r"Brake.*0x123.*Lamp.*high_risk"):
        driver = make_driver(shared_frame_dbc, allow_send=["Lamp", "Brake"], high_risk=["Lamp"],
                             watchdog_timeout=None)
        driver.arm()
        call(driver, "send_Brake", **BRAKE)
    assert drain(sniffer) == []
    both = make_driver(shared_frame_dbc, allow_send=["Lamp", "Brake"], high_risk=["Lamp", "Brake"],
                       watchdog_timeout=None)
    both.arm()
    issued = call(both, "send_Brake", **BRAKE)
    assert issued["sent"] is False and drain(sniffer) == []
    assert call(both, "send_Brake", **BRAKE, approval_token=issued["approval_token"])["sent"] is True
    assert len(drain(sniffer)) == 1
    alone = make_driver(shared_frame_dbc, allow_send=["Brake"], high_risk=["Brake"], limits={"Brake.Pressure": {}},
                        watchdog_timeout=None)  # Lamp, not allowed and unprotected, sets no condition
    assert alone.allowed


# ---------------------------------------------------------------------- D4: value and rate limits


@pytest.fixture
def steering(make_driver):
    driver = make_driver(
        allow_send=["SteeringTorque", "CruiseCommand"], watchdog_timeout=None, tx_rate_limit=None,
        limits={"SteeringTorque.Torque": SignalLimit(minimum=-50, maximum=50, max_step=10),
                "CruiseCommand.Acceleration": {"max_rate": 2.0}},
    )
    driver.arm()
    return driver


def test_d4_the_schema_shows_the_configured_range_inside_the_databases(steering) -> None:
    torque = steering.get_tool("send_SteeringTorque").input_schema["properties"]["Torque"]
    assert (torque["minimum"], torque["maximum"]) == (-50, 50)


@pytest.mark.parametrize("value", [50.01, 300, -50.01, -300])
def test_d4_a_value_beyond_the_configured_limit_is_refused_in_both_signs(steering, sniffer, value) -> None:
    with pytest.raises(ToolCallError) as info:
        call(steering, "send_SteeringTorque", Torque=value)
    assert info.value.code in (ErrorCode.INVALID_INPUT, ErrorCode.POLICY_DENIED)
    assert "Torque" in info.value.message
    assert drain(sniffer) == []


def test_d4_a_jump_larger_than_the_step_limit_is_refused_in_both_signs(steering, sniffer) -> None:
    with pytest.raises(PolicyDeniedError, match="at most 10 per send"):
        call(steering, "send_SteeringTorque", Torque=50)  # 0 -> MAX in one step
    assert drain(sniffer) == []
    for value in (10, 20, 10, 0, -10, -20):
        call(steering, "send_SteeringTorque", Torque=value)
    with pytest.raises(PolicyDeniedError) as info:
        call(steering, "send_SteeringTorque", Torque=-35)
    assert info.value.details["last"] == -20
    with pytest.raises(PolicyDeniedError):
        call(steering, "send_SteeringTorque", Torque=-5)
    sent = [int.from_bytes(f.data, "little", signed=True) / 100 for f in drain(sniffer)]
    assert sent == [10, 20, 10, 0, -10, -20]


def _coarse_brake() -> Database:
    pressure = Signal(name="Pressure", start=0, length=16, conversion=BaseConversion.factory(scale=10, offset=0),
                      minimum=0, maximum=600000)
    return Database([Message(frame_id=0x123, name="Brake", length=2, signals=[pressure])])


@pytest.mark.parametrize(("limit", "asked", "refused", "allowed"), [
    ({"max_step": 14}, [4, 16], "encoded as 20", 10),  # 4 goes out as 0; 16 would go out as 20, a step of 20
    ({"maximum": 46}, [46], "encoded as 50", 40),   # 46 would go out as 50
])
def test_d4_the_limits_hold_for_the_value_the_frame_carries_not_the_value_asked(
        make_driver, sniffer, limit, asked, refused, allowed) -> None:
    # Pressure has a resolution of 10: the frame carries the nearest multiple of 10.
    driver = make_driver(_coarse_brake(), allow_send=["Brake"], watchdog_timeout=None, tx_rate_limit=None,
                         limits={"Brake.Pressure": limit})
    driver.arm()
    for value in asked[:-1]:
        call(driver, "send_Brake", Pressure=value)
    with pytest.raises(PolicyDeniedError, match=refused):
        call(driver, "send_Brake", Pressure=asked[-1])
    call(driver, "send_Brake", Pressure=allowed + 4)  # goes out as allowed
    sent = [int.from_bytes(f.data, "little") * 10 for f in drain(sniffer)]
    assert sent == [0] * (len(asked) - 1) + [allowed]


def test_d4_a_step_limit_below_the_signals_resolution_is_refused_at_load(make_driver) -> None:
    # Pressure moves in steps of 10: a max_step of 4 would hold it at its initial value forever.
    with pytest.raises(ConfigurationError, match="max_step 4 is below the signal's resolution 10"):
        make_driver(_coarse_brake(), allow_send=["Brake"], limits={"Brake.Pressure": {"max_step": 4}})
    make_driver(_coarse_brake(), allow_send=["Brake"], limits={"Brake.Pressure": {"max_step": 10}})


def _odometer() -> Database:
    return Database([Message(frame_id=0x131, name="Odometer", length=8,
                             signals=[Signal(name="Distance", start=0, length=64)])])


@pytest.mark.parametrize("step", [100, -100, 127])
def test_d4_a_step_limit_holds_exactly_for_integers_beyond_what_a_float_holds(make_driver, sniffer, step) -> None:
    # 2**60 + 100 is 2**60 as a float: compared as floats, the step looked like 0.
    base = 2**60
    driver = make_driver(_odometer(), allow_send=["Odometer"], watchdog_timeout=None, tx_rate_limit=None,
                         limits={"Odometer.Distance": {"initial": base, "max_step": 10}})
    driver.arm()
    with pytest.raises(PolicyDeniedError, match="at most 10 per send"):
        call(driver, "send_Odometer", Distance=base + step)
    for value in range(base + 10, base + 130, 10):  # within the step each time, to base + 120
        assert call(driver, "send_Odometer", Distance=value)["sent"] is True
    with pytest.raises(PolicyDeniedError, match="at most 10 per send"):
        call(driver, "send_Odometer", Distance=base + 120 + step)
    with pytest.raises(PolicyDeniedError, match="at most 10 per send"):  # 2**60 given as a float, 120 away
        driver.process_llm_response('{"tool": "send_Odometer", "arguments": {"Distance": 1152921504606846976.0}}')
    assert [int.from_bytes(f.data, "little") - base for f in drain(sniffer)] == list(range(10, 130, 10))


NAN = float("nan")


@pytest.mark.parametrize(("option", "value", "words"), [
    ("limits", {"SteeringTorque.Torque": {"maximum": 10, "max_step": 5, "initial": NAN}}, "initial"),
    ("limits", {"SteeringTorque.Torque": {"maximum": 10, "max_step": 5, "initial": float("inf")}}, "initial"),
    ("limits", {"SteeringTorque.Torque": {"minimum": NAN, "max_step": 5}}, "minimum"),
    ("limits", {"SteeringTorque.Torque": {"maximum": NAN}}, "maximum"),
    ("tx_burst", NAN, "tx_burst"),
    ("tx_burst", float("inf"), "tx_burst"),
    ("tx_rate_limit", float("inf"), "tx_rate_limit"),
], ids=["initial-nan", "initial-inf", "minimum-nan", "maximum-nan", "burst-nan", "burst-inf", "rate-inf"])
def test_d4_a_limit_that_is_not_a_finite_number_is_refused_at_load(make_driver, sniffer, option, value, words) -> None:
    # NaN compares false with everything: an initial value of NaN let the first send jump past
    # max_step, and a burst of NaN turned the transmit rate limit off.
    with pytest.raises(ConfigurationError, match=words):
        driver = make_driver(allow_send=["SteeringTorque"], watchdog_timeout=None, **{option: value})
        driver.arm()
        for _ in range(10):
            with contextlib.suppress(ToolCallError):
                call(driver, "send_SteeringTorque", Torque=10)
    assert drain(sniffer) == []


def test_d4_a_change_faster_than_the_rate_of_change_limit_is_refused(steering, sniffer) -> None:
    time.sleep(0.3)  # 0.3 s after arming at 2 m/s^2 per second: 0.5 m/s^2 from rest is within the rate
    call(steering, "send_CruiseCommand", **CRUISE)
    with pytest.raises(PolicyDeniedError, match="per second"):
        call(steering, "send_CruiseCommand", **{**CRUISE, "Acceleration": -4.5})
    assert len(drain(sniffer)) == 1


@pytest.mark.parametrize("acceleration", [-5, 3])
def test_d4_the_rate_of_change_limit_holds_for_the_first_send_after_arming(make_driver, sniffer, acceleration) -> None:
    # Only a rate limit: rest (0) to full braking or full acceleration right after arming is a
    # change of 5 or 3 m/s^2 within milliseconds, far beyond 2 m/s^2 per second.
    driver = make_driver(allow_send=["CruiseCommand"], watchdog_timeout=None, tx_rate_limit=None,
                         limits={"CruiseCommand.Acceleration": {"max_rate": 2.0}})
    driver.arm()
    with pytest.raises(PolicyDeniedError, match="per second"):
        call(driver, "send_CruiseCommand", **{**CRUISE, "Acceleration": acceleration})
    driver.disarm()
    driver.arm()  # after a disarm too: the actuator is back at rest
    with pytest.raises(PolicyDeniedError, match="per second"):
        call(driver, "send_CruiseCommand", **{**CRUISE, "Acceleration": acceleration})
    assert drain(sniffer) == []


def test_d4_one_shot_sends_cannot_move_a_message_away_from_its_running_periodic_send(steering, sniffer) -> None:
    # The periodic send keeps repeating 10; one-shot sends stepping 10 at a time to 50 would
    # put 10 and 50 on the bus in turn: a jump of 40 between frames under a max_step of 10.
    call(steering, "send_SteeringTorque", Torque=10, period_ms=20)
    for value in (20, 30, 40, 50):
        with pytest.raises(PolicyDeniedError, match="period_ms"):
            call(steering, "send_SteeringTorque", Torque=value)
    call(steering, "send_SteeringTorque", Torque=20, period_ms=20)  # changing the periodic send's value is checked
    time.sleep(0.1)
    call(steering, "stop_periodic")
    sent = [int.from_bytes(f.data, "little", signed=True) / 100 for f in drain(sniffer)]
    assert set(sent) == {10, 20}
    assert max(abs(b - a) for a, b in itertools.pairwise(sent)) <= 10


def test_d4_disarming_resets_the_last_values_to_rest(steering, sniffer) -> None:
    for value in (10, 20):
        call(steering, "send_SteeringTorque", Torque=value)
    steering.disarm()
    steering.arm()
    with pytest.raises(PolicyDeniedError, match="from 0"):
        call(steering, "send_SteeringTorque", Torque=25)
    assert len(drain(sniffer)) == 2


def test_d4_the_rate_limiter_refuses_beyond_its_budget_and_never_queues(make_driver, sniffer) -> None:
    driver = make_driver(allow_send=["CruiseCommand"], tx_rate_limit=50, tx_burst=5, watchdog_timeout=None)
    driver.arm()
    started = time.monotonic()
    sent = refused = 0
    for _ in range(200):  # as fast as possible: far beyond 50 frames/s
        try:
            call(driver, "send_CruiseCommand", **CRUISE)
            sent += 1
        except PolicyDeniedError as error:
            assert "rate limit" in error.message and error.details["retry_after_s"] > 0
            refused += 1
    elapsed = time.monotonic() - started
    assert sent + refused == 200
    assert 5 <= sent <= 5 + 50 * elapsed + 1
    assert len(drain(sniffer)) == sent
    assert elapsed < 2.0  # refused at once, not queued


def test_d4_periodic_sends_share_the_rate_budget(make_driver, sniffer) -> None:
    driver = make_driver(allow_send=["CruiseCommand", "DiagnosticRequest"], tx_rate_limit=50, watchdog_timeout=None)
    driver.arm()
    with pytest.raises(InvalidInputError, match="period_ms"):  # the schema's minimum: 1000 / 50 frames/s
        call(driver, "send_CruiseCommand", **CRUISE, period_ms=10)
    call(driver, "send_CruiseCommand", **CRUISE, period_ms=30)
    with pytest.raises(PolicyDeniedError, match="60 ms"):
        call(driver, "send_DiagnosticRequest", Service="EcuReset", ResetType="Hard", period_ms=30)
    call(driver, "stop_periodic")
    assert {f.arbitration_id for f in drain(sniffer)} <= {0x200}


@pytest.mark.parametrize("restart", ["stop_then_start", "change_the_period"])
def test_d4_restarting_a_periodic_send_spends_the_budget_of_its_first_frame(make_driver, sniffer, restart) -> None:
    # A periodic send's first frame leaves at once: starting, stopping and starting again (or
    # switching between two periods) must not send frames faster than the budget.
    driver = make_driver(allow_send=["SteeringTorque"], tx_rate_limit=1, tx_burst=1, watchdog_timeout=None)
    driver.arm()
    started = time.monotonic()
    refused, seen = 0, []
    for attempt in range(10):
        period = 1000 + attempt % 2 if restart == "change_the_period" else 1000
        try:
            call(driver, "send_SteeringTorque", Torque=1, period_ms=period)
            seen += collect(sniffer, 1, timeout=0.5)  # its first frame
        except PolicyDeniedError as error:
            assert "rate limit" in error.message
            refused += 1
        if restart == "stop_then_start":
            call(driver, "stop_periodic", message="SteeringTorque")
    elapsed = time.monotonic() - started
    call(driver, "stop_periodic")
    seen += drain(sniffer)
    assert refused > 0
    assert len(seen) <= 1 + int(elapsed) + 1  # the burst, what one frame a second refilled, one period's frame


# ---------------------------------------------------------------------- D5: silent until armed


def test_d5_a_fresh_driver_refuses_every_send_as_not_armed_and_sends_nothing(make_driver, sniffer) -> None:
    driver = make_driver(allow_send=["CruiseCommand", "SteeringTorque", "DiagnosticRequest"],
                         high_risk=["SteeringTorque"])
    attempts = [("send_CruiseCommand", CRUISE), ("send_SteeringTorque", {"Torque": 1}),
                ("send_DiagnosticRequest", {"Service": "EcuReset", "ResetType": "Hard"}),
                ("send_CruiseCommand", {**CRUISE, "period_ms": 100})]
    for tool, arguments in attempts:
        with pytest.raises(PolicyDeniedError) as info:
            call(driver, tool, **arguments)
        assert "not armed" in info.value.message and info.value.details == {"armed": False}
    assert driver.armed is False and drain(sniffer) == []
    status = call(driver, "bus_status")
    assert status["armed"] is False and status["listen_only"] == "driver"


@pytest.mark.parametrize("response", [
    '{"tool": "arm", "arguments": {}}',
    '{"tool": "can_arm", "arguments": {}}',
    '{"tool": "disarm", "arguments": {}}',
    '{"tool": "heartbeat", "arguments": {}}',
    '{"tool": "approve", "arguments": {"token": "x"}}',
    '{"tool": "bus_status", "arguments": {"armed": true}}',
    'driver.arm()',
])
def test_d5_no_tool_or_output_of_the_model_can_arm_the_driver(make_driver, response) -> None:
    driver = make_driver(allow_send=["CruiseCommand"], on_unknown_tool="error")
    names = {t.name for t in driver.list_tools()}
    assert not names & {"arm", "disarm", "heartbeat", "approve"}
    try:
        driver.process_llm_response(response)
    except ToolCallError as error:
        assert error.code in (ErrorCode.TOOL_NOT_FOUND, ErrorCode.INVALID_INPUT)
    assert driver.armed is False


def test_d5_arming_enables_only_the_configured_frames_and_disarm_is_immediate(make_driver, sniffer) -> None:
    driver = make_driver(allow_send=["CruiseCommand"], send_tools="all", watchdog_timeout=None)
    driver.arm()
    call(driver, "send_CruiseCommand", **CRUISE)
    with pytest.raises(PolicyDeniedError, match="allow-list"):
        call(driver, "send_SteeringTorque", Torque=1)
    call(driver, "send_CruiseCommand", **CRUISE, period_ms=20)
    assert len(collect(sniffer, 3)) == 3
    driver.disarm()
    drain(sniffer)  # what left before disarm() returned
    assert sniffer.recv(timeout=0.1) is None  # five periods later: nothing
    assert driver.get_status()["periodic"] == {}
    with pytest.raises(PolicyDeniedError, match="not armed"):
        call(driver, "send_CruiseCommand", **CRUISE)


# ---------------------------------------------------------------------- D6: dry run


def test_d6_a_dry_run_returns_the_exact_frame_sends_nothing_and_is_audited(make_driver, sniffer, caplog) -> None:
    driver = make_driver(allow_send=["CruiseCommand"])
    with caplog.at_level(logging.INFO, logger="mcs_can.audit"):
        result = call(driver, "send_CruiseCommand", **CRUISE, dry_run=True)
    assert result == {"dry_run": True, "sent": False, "message": "CruiseCommand", "armed": False, "frame": {
        "arbitration_id": 0x200, "id_hex": "0x200", "is_extended_id": False, "is_fd": False,
        "bitrate_switch": False, "dlc": 4, "data_hex": CRUISE_BYTES.hex()}}
    assert drain(sniffer) == []
    records = [json.loads(r.getMessage()) for r in caplog.records if r.name == "mcs_can.audit"]
    assert [r["event"] for r in records] == ["dry_run"]
    assert records[0]["frame"]["data_hex"] == CRUISE_BYTES.hex() and records[0]["tool"] == "send_CruiseCommand"


def test_d6_simulation_mode_turns_every_send_into_a_dry_run_even_when_armed(make_driver, sniffer) -> None:
    driver = make_driver(allow_send=["CruiseCommand"], dry_run=True, watchdog_timeout=None)
    driver.arm()
    assert call(driver, "send_CruiseCommand", **CRUISE)["dry_run"] is True
    assert call(driver, "send_CruiseCommand", **CRUISE, period_ms=100)["dry_run"] is True
    assert drain(sniffer) == [] and driver.get_status()["periodic"] == {}


def test_d6_a_dry_run_still_applies_the_allow_list_and_the_limits(make_driver, sniffer) -> None:
    driver = make_driver(send_tools="all", limits={"SteeringTorque.Torque": {"max_step": 1}})
    with pytest.raises(PolicyDeniedError, match="allow-list"):
        call(driver, "send_CruiseCommand", **CRUISE, dry_run=True)
    assert drain(sniffer) == []


# ---------------------------------------------------------------------- D7: approval bound to the frame


@pytest.fixture
def approving(make_driver):
    driver = make_driver(allow_send=["SteeringTorque"], high_risk=["SteeringTorque"], watchdog_timeout=None)
    driver.arm()
    return driver


def test_d7_the_first_call_returns_the_frame_and_a_token_and_sends_nothing(approving, sniffer) -> None:
    first = call(approving, "send_SteeringTorque", Torque=5)
    assert first["sent"] is False and first["approval_required"] is True
    assert first["frame"]["data_hex"] == "f401" and len(first["frame_sha256"]) == 64
    assert drain(sniffer) == []
    second = call(approving, "send_SteeringTorque", Torque=5, approval_token=first["approval_token"])
    assert second["sent"] is True
    assert frame_tuples(drain(sniffer)) == [(0x300, False, 2, bytes.fromhex("f401"))]


def test_d7_a_token_is_refused_for_a_changed_byte_and_is_then_spent(approving, sniffer) -> None:
    token = call(approving, "send_SteeringTorque", Torque=5)["approval_token"]
    with pytest.raises(PolicyDeniedError, match="differs"):
        call(approving, "send_SteeringTorque", Torque=5.01, approval_token=token)
    with pytest.raises(PolicyDeniedError, match="unknown or was already used"):
        call(approving, "send_SteeringTorque", Torque=5, approval_token=token)
    assert drain(sniffer) == []


def test_d7_a_token_cannot_be_replayed_after_use(approving, sniffer) -> None:
    token = call(approving, "send_SteeringTorque", Torque=5)["approval_token"]
    call(approving, "send_SteeringTorque", Torque=5, approval_token=token)
    with pytest.raises(PolicyDeniedError, match="already used"):
        call(approving, "send_SteeringTorque", Torque=5, approval_token=token)
    assert len(drain(sniffer)) == 1


def test_d7_a_token_for_one_send_does_not_approve_a_periodic_send(approving, sniffer) -> None:
    token = call(approving, "send_SteeringTorque", Torque=5)["approval_token"]
    with pytest.raises(PolicyDeniedError, match="differs"):
        call(approving, "send_SteeringTorque", Torque=5, period_ms=100, approval_token=token)
    assert drain(sniffer) == []


def test_d7_a_token_expires_after_its_ttl(make_driver, sniffer) -> None:
    driver = make_driver(allow_send=["SteeringTorque"], high_risk=["SteeringTorque"], approval_ttl=0.05,
                         watchdog_timeout=None)
    driver.arm()
    token = call(driver, "send_SteeringTorque", Torque=5)["approval_token"]
    assert wait_until(lambda: not driver.pending_approvals())
    with pytest.raises(PolicyDeniedError, match="expired"):
        call(driver, "send_SteeringTorque", Torque=5, approval_token=token)
    assert drain(sniffer) == []


def test_d7_with_operator_approval_the_token_works_only_after_the_operator_approved(make_driver, sniffer) -> None:
    driver = make_driver(allow_send=["SteeringTorque"], high_risk=["SteeringTorque"], operator_approval=True,
                         watchdog_timeout=None)
    driver.arm()
    token = call(driver, "send_SteeringTorque", Torque=5)["approval_token"]
    with pytest.raises(PolicyDeniedError, match="operator has not approved"):
        call(driver, "send_SteeringTorque", Torque=5, approval_token=token)
    [pending] = driver.pending_approvals()
    assert pending["frame"]["data_hex"] == "f401" and pending["approved"] is False
    assert driver.approve(token)["data_hex"] == "f401"
    assert call(driver, "send_SteeringTorque", Torque=5, approval_token=token)["sent"] is True
    assert len(drain(sniffer)) == 1
    with pytest.raises(KeyError):
        driver.approve(token)


# ---------------------------------------------------------------------- D8: watchdog, close, errors


def test_d8_without_heartbeats_the_watchdog_stops_periodic_sends_and_disarms(make_driver, sniffer, caplog) -> None:
    driver = make_driver(allow_send=["CruiseCommand"], watchdog_timeout=0.2)
    driver.arm()
    with caplog.at_level(logging.INFO, logger="mcs_can.audit"):
        call(driver, "send_CruiseCommand", **CRUISE, period_ms=20)
        assert len(collect(sniffer, 2)) == 2
        assert wait_until(lambda: not driver.armed, timeout=3)
    drain(sniffer)
    assert sniffer.recv(timeout=0.1) is None
    assert driver.get_status()["periodic"] == {}
    disarmed = [json.loads(r.getMessage()) for r in caplog.records if '"disarmed"' in r.getMessage()]
    assert disarmed and disarmed[0]["reason"].startswith("watchdog") and disarmed[0]["stopped"] == ["CruiseCommand"]


def test_d8_heartbeats_keep_the_driver_armed(make_driver) -> None:
    driver = make_driver(allow_send=["CruiseCommand"], watchdog_timeout=0.2)
    driver.arm()
    deadline = time.monotonic() + 0.5
    while time.monotonic() < deadline:
        driver.heartbeat()
        assert driver.armed
        time.sleep(0.02)
    assert driver.armed


def test_d8_closing_the_driver_stops_every_periodic_send(make_driver, sniffer) -> None:
    driver = make_driver(allow_send=["CruiseCommand"], watchdog_timeout=None)
    driver.arm()
    call(driver, "send_CruiseCommand", **CRUISE, period_ms=20)
    assert len(collect(sniffer, 2)) == 2
    driver.close()
    drain(sniffer)
    assert sniffer.recv(timeout=0.1) is None
    assert driver.armed is False


def test_d8_a_bus_failure_stops_periodic_sends_disarms_and_is_reported(make_driver, sniffer) -> None:
    driver = make_driver(allow_send=["CruiseCommand"], watchdog_timeout=None)
    driver.arm()
    call(driver, "send_CruiseCommand", **CRUISE, period_ms=20)
    assert len(collect(sniffer, 2)) == 2
    driver.bus.shutdown()  # the interface goes away under the driver
    assert wait_until(lambda: not driver.armed and driver.healthcheck()["status"] == "error", timeout=3)
    assert "closed bus" in driver.get_status()["bus"]["failure"]
    drain(sniffer)
    assert sniffer.recv(timeout=0.1) is None
    driver.arm()  # the operator re-arms: the bus is reopened first
    assert driver.healthcheck() == {"status": "ok"}
    call(driver, "send_CruiseCommand", **CRUISE)
    assert frame_tuples(drain(sniffer)) == [(0x200, False, 4, CRUISE_BYTES)]
