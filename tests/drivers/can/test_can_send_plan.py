"""The send plan: cantools' strict re-check is skipped only where the validated schema has
already proven what it checks, and everything that check refused is still refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from can_support import CRUISE, drain
from cantools.database.can import Database, Message, Signal
from mcs_can import CanDriver

from mcs.errors import InvalidInputError, PolicyDeniedError


def call(driver, tool: str, **arguments):
    return driver.process_llm_response(json.dumps({"tool": tool, "arguments": arguments}))


def _with_initial(raw_initial: int) -> Database:
    """One message whose ``Level`` (range 0..3) starts at ``raw_initial`` (the DBC's GenSigStartValue)."""
    signals = [
        Signal(name="Speed", start=0, length=8, minimum=0, maximum=200),
        Signal(name="Level", start=8, length=4, minimum=0, maximum=3, raw_initial=raw_initial),
    ]
    return Database([Message(frame_id=0x321, name="Command", length=2, signals=signals)])


def test_the_strict_recheck_is_skipped_only_for_plain_messages_whose_initial_values_cantools_accepts(make_driver) -> None:
    driver = make_driver(allow_send=["CruiseCommand", "DiagnosticRequest"])
    assert driver._specs["CruiseCommand"].plan.strict is False
    assert driver._specs["DiagnosticRequest"].plan.strict is True  # multiplexed: cantools checks the branch
    assert make_driver(_with_initial(2))._specs["Command"].plan.strict is False
    assert make_driver(_with_initial(9))._specs["Command"].plan.strict is True


def test_an_initial_value_outside_its_range_is_still_refused_by_cantools_and_nothing_is_sent(make_driver, sniffer) -> None:
    driver = make_driver(_with_initial(9), allow_send=["Command"], watchdog_timeout=None)
    driver.arm()
    with pytest.raises(InvalidInputError, match=r"Command cannot be encoded: .*Level"):
        call(driver, "send_Command", Speed=10)
    assert call(driver, "send_Command", Speed=10, Level=1)["sent"] is True
    assert [bytes(f.data) for f in drain(sniffer)] == [bytes([10, 1])]


@pytest.mark.parametrize(("arguments", "field"), [
    ({**CRUISE, "TargetSpeed": 200.5}, "TargetSpeed"),
    ({**CRUISE, "TargetSpeed": -1}, "TargetSpeed"),
    ({**CRUISE, "Acceleration": 3.0001}, "Acceleration"),
    ({**CRUISE, "Acceleration": -5.0001}, "Acceleration"),
    ({**CRUISE, "Mode": "override"}, "Mode"),
    ({**CRUISE, "Mode": 4}, "Mode"),
])
def test_values_the_strict_check_refused_are_refused_by_the_schema_naming_the_signal(
    make_driver, sniffer, arguments, field,
) -> None:
    driver = make_driver(allow_send=["CruiseCommand"], watchdog_timeout=None)
    driver.arm()
    assert driver._specs["CruiseCommand"].plan.strict is False
    with pytest.raises(InvalidInputError) as info:
        call(driver, "send_CruiseCommand", **arguments)
    assert field in info.value.message
    assert drain(sniffer) == []


def test_the_configured_limits_and_the_safety_gates_still_refuse_on_the_fast_path(make_driver, sniffer) -> None:
    driver = make_driver(allow_send=["CruiseCommand"], limits={"CruiseCommand.TargetSpeed": {"maximum": 120}},
                         tx_rate_limit=1, tx_burst=1, watchdog_timeout=None)
    with pytest.raises(PolicyDeniedError, match="not armed"):
        call(driver, "send_CruiseCommand", **CRUISE)
    driver.arm()
    with pytest.raises(InvalidInputError, match="TargetSpeed"):
        call(driver, "send_CruiseCommand", **{**CRUISE, "TargetSpeed": 121})
    assert call(driver, "send_CruiseCommand", **CRUISE)["sent"] is True
    with pytest.raises(PolicyDeniedError, match="rate limit"):
        call(driver, "send_CruiseCommand", **CRUISE)
    everything = make_driver(send_tools="all", watchdog_timeout=None)
    everything.arm()
    with pytest.raises(PolicyDeniedError, match="allow-list"):
        call(everything, "send_CruiseCommand", **CRUISE)
    assert len(drain(sniffer)) == 1


def _plain_messages(path: Path) -> CanDriver:
    return CanDriver(path, strict=False, send_tools="all", channel=f"mcs-plan-{path.stem}", watchdog_timeout=None)


@pytest.mark.parametrize("name", ["opendbc/ford_lincoln_base_pt.dbc", "opendbc/tesla_can.dbc", "cantools/choices.dbc",
                                  "cantools/vehicle.dbc", "cantools/abs.dbc"])
def test_every_value_the_schema_admits_at_its_edges_passes_the_strict_check_it_replaces(corpus, name) -> None:
    """The proof behind skipping the strict check, on real databases: wherever it is skipped,
    each signal's schema admits only choice names cantools knows and numbers inside the range
    cantools checks, and cantools' strict check accepts the schema's own edges."""
    driver = _plain_messages(corpus / "dbc" / name)
    try:
        checked = 0
        for tool in driver.list_tools():
            if tool.meta.get("kind") != "send":
                continue
            spec = driver._specs[tool.meta["message"]]
            if spec.plan.strict:
                continue
            message = spec.message
            base = {s.name: s.initial if s.initial is not None else s.minimum or 0 for s in message.signals}
            for signal in message.signals:
                schema = tool.input_schema["properties"][signal.name]
                variants = schema.get("anyOf", [schema])
                for variant in variants:
                    if "enum" in variant:
                        assert set(variant["enum"]) <= {str(n) for n in (signal.choices or {}).values()}
                        continue
                    low, high = variant.get("minimum"), variant.get("maximum")
                    if signal.minimum is not None:
                        assert low is not None and low >= signal.minimum
                    if signal.maximum is not None:
                        assert high is not None and high <= signal.maximum
                    for edge in (low, high):
                        if edge is not None:
                            message.assert_signals_encodable({**base, signal.name: edge}, scaling=True)
                            checked += 1
        assert checked > 0
    finally:
        driver.close()


def test_a_send_that_gives_every_signal_sends_the_frame_the_general_path_builds(make_driver, sniffer) -> None:
    driver = make_driver(_with_initial(2), allow_send=["Command"], watchdog_timeout=None)
    driver.arm()
    assert call(driver, "send_Command", Speed=10, Level=2)["frame"]["data_hex"] == "0a02"  # every signal given
    assert call(driver, "send_Command", Speed=10)["frame"]["data_hex"] == "0a02"  # Level from its initial value
    dry = call(driver, "send_Command", Speed=10, Level=2, dry_run=True)  # a control beside the signals
    assert dry["frame"]["data_hex"] == "0a02" and dry["sent"] is False
    assert [bytes(f.data) for f in drain(sniffer)] == [bytes([10, 2])] * 2


def test_the_one_shot_budget_follows_the_periodic_reservations_as_they_start_and_stop() -> None:
    from mcs_can._safety import RateLimiter

    now = [0.0]
    limiter = RateLimiter(50, 1, clock=lambda: now[0])
    limiter.spend_one("send")
    limiter.reserve("Cruise", 25.0)  # 40 of 50 frames/s: 10 left for one-shot sends
    assert limiter.free_rate == 10.0
    now[0] += 0.05  # half a frame at 10 frames/s
    with pytest.raises(PolicyDeniedError, match=r"retry after 0\.050 s"):
        limiter.spend_one("send")
    limiter.release("Cruise")
    assert limiter.free_rate == 50.0
    now[0] += 0.01  # half a frame more at 50 frames/s: a whole one now
    limiter.spend_one("send")
    limiter.refund_one()  # a frame the bus did not take
    limiter.spend_one("send")
    limiter.reserve("Cruise", 20.0)
    limiter.release()
    assert limiter.free_rate == 50.0 and limiter.reserved == {}


def test_the_last_gate_refuses_a_kind_of_frame_every_time_and_describes_each_admitted_frame_by_its_own_bytes(
    make_driver, sniffer,
) -> None:
    everything = make_driver(allow_send=["CruiseCommand"], send_tools="all", watchdog_timeout=None)
    everything.arm()
    for _ in range(3):  # a refusal is never remembered as a pass
        with pytest.raises(PolicyDeniedError, match="allow-list"):
            call(everything, "send_SteeringTorque", Torque=1)
    first = call(everything, "send_CruiseCommand", **CRUISE)["frame"]
    second = call(everything, "send_CruiseCommand", **{**CRUISE, "TargetSpeed": 81})["frame"]
    assert first["data_hex"] != second["data_hex"]
    assert {k: v for k, v in first.items() if k != "data_hex"} == {k: v for k, v in second.items() if k != "data_hex"}
    assert [bytes(f.data).hex() for f in drain(sniffer)] == [first["data_hex"], second["data_hex"]]
