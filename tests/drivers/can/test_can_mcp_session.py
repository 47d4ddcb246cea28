"""The CAN driver served over MCP to the official SDK client (streamable HTTP on loopback, with
sessions): a call the client cancels before it reaches the bus sends nothing, and a periodic
send stops when the client's session ends, unless the operator chose to keep it."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from pathlib import Path

import can
import pytest
from can_support import CRUISE, block_the_bus, collect, drain

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcp" / "serving"))
from serving_support import mcp_client, serve_driver

PERIOD_S = 0.05
MARGIN_S = 0.15


@pytest.mark.parametrize("arguments", [{"Torque": 5}, {"Torque": 5, "period_ms": 50}], ids=["once", "periodic"])
async def test_a_call_the_mcp_client_cancels_while_the_bus_is_busy_sends_nothing(
    congested, sniffer, arguments
) -> None:
    driver, bus = congested
    with serve_driver(driver, stateless=False) as url:
        async with mcp_client(url) as session:
            slow = block_the_bus(driver, bus)  # another caller's frame holds the bus for ~1 s
            call = asyncio.ensure_future(session.call_tool("send_SteeringTorque", arguments))
            await asyncio.sleep(0.3)
            call.cancel()  # the SDK client sends notifications/cancelled for it
            with pytest.raises(asyncio.CancelledError):
                await call
            await asyncio.to_thread(slow.join, 5.0)
            await asyncio.sleep(0.3)
            assert [f.arbitration_id for f in drain(sniffer)] == [0x200]  # only the other caller's frame
            assert (await session.call_tool("bus_status", {})).structured_content["periodic"] == {}


async def _start_periodic_and_leave(url: str, sniffer: can.BusABC) -> float:
    """A client starts a periodic send, sees it on the bus and ends its session; when it left."""
    async with mcp_client(url) as session:
        started = await session.call_tool("send_CruiseCommand", {**CRUISE, "period_ms": PERIOD_S * 1000})
        assert not started.is_error, started.content
        assert len(await asyncio.to_thread(collect, sniffer, 3)) == 3
    return time.monotonic()


async def test_a_periodic_send_stops_when_the_mcp_session_that_started_it_ends(make_driver, sniffer, caplog) -> None:
    driver = make_driver(allow_send=["CruiseCommand"], watchdog_timeout=None)
    driver.arm()
    with caplog.at_level(logging.INFO, logger="mcs_can.audit"), serve_driver(driver, stateless=False) as url:
        left = await _start_periodic_and_leave(url, sniffer)
        await asyncio.sleep(PERIOD_S + MARGIN_S)
        drain(sniffer)
        assert sniffer.recv(timeout=2 * PERIOD_S) is None, "a frame left after the session ended"
        assert time.monotonic() - left < 2.0
    assert driver.get_status()["periodic"] == {}
    assert driver.armed  # only the session's sends stop; arming stays the operator's
    stopped = [json.loads(r.getMessage()) for r in caplog.records if '"periodic_stopped"' in r.getMessage()]
    assert stopped and stopped[0]["stopped"] == ["CruiseCommand"]
    assert stopped[0]["reason"] == "the MCP session that started it ended"


async def test_a_session_that_ends_leaves_the_periodic_sends_of_another_session_running(
    make_driver, sniffer
) -> None:
    driver = make_driver(allow_send=["CruiseCommand", "SteeringTorque"], watchdog_timeout=None, tx_rate_limit=None)
    driver.arm()
    with serve_driver(driver, stateless=False) as url:
        async with mcp_client(url) as staying:
            await staying.call_tool("send_SteeringTorque", {"Torque": 5, "period_ms": 50})
            await _start_periodic_and_leave(url, sniffer)
            await asyncio.sleep(PERIOD_S + MARGIN_S)
            drain(sniffer)
            seen = await asyncio.to_thread(collect, sniffer, 3, 2.0)
            assert {f.arbitration_id for f in seen} == {0x300}
            assert set(driver.get_status()["periodic"]) == {"SteeringTorque"}


async def test_an_operator_may_keep_periodic_sends_after_the_session_ends(make_driver, sniffer) -> None:
    driver = make_driver(allow_send=["CruiseCommand"], watchdog_timeout=None, keep_periodic_after_session=True)
    driver.arm()
    with serve_driver(driver, stateless=False) as url:
        await _start_periodic_and_leave(url, sniffer)
        await asyncio.sleep(PERIOD_S + MARGIN_S)
        drain(sniffer)
        assert len(await asyncio.to_thread(collect, sniffer, 3, 2.0)) == 3
    assert set(driver.get_status()["periodic"]) == {"CruiseCommand"}
    driver.disarm()
