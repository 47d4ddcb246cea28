"""`make demo-can` (python -m mcs_can.demo) runs a real round trip on the virtual bus and prints it."""

from __future__ import annotations

import json

from mcs_can import demo


def test_the_demo_reads_is_refused_until_armed_then_reaches_the_ecu(capsys) -> None:
    demo.main()
    out = capsys.readouterr().out
    assert "== System prompt for gpt-4o ==" in out and "send_CruiseCommand" in out
    assert "== Refused (POLICY_DENIED) ==\nRefused: actuation is not armed." in out
    assert "0x200 [50 02 f4 01] {'TargetSpeed': 80, 'Mode': 'Active', 'Acceleration': 0.5}" in out
    assert "0x300 [c2 01] {'Torque': 4.5}" in out
    read = json.loads(out.split("== Result ==\n")[1].split("\n\n")[0])
    assert read["received"] is True and read["frames"][0]["signals"]["WheelSpeedFL"] >= 87.5
    token = out.split('"approval_token": "')[1].split('"')[0]
    assert f'"approval_token": "{token}"}}' in out  # the second call carried the token of the first


def test_the_demo_can_run_twice_in_one_process(capsys) -> None:
    demo.main()
    demo.main()
    assert capsys.readouterr().out.count("== The ECU received ==") == 4
