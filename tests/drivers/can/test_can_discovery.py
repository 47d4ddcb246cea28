"""A large real database goes to discovery mode on its own (default ``token_budget``): Ford's
powertrain DBC from the corpus, one send tool per message, searched, described and called
through the meta-tools onto python-can's virtual bus."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import can
import cantools
import pytest
from can_support import DBC_CORPUS
from mcs_can import CanDriver

from mcs.errors import ErrorCode, ToolCallError

FORD = DBC_CORPUS / "opendbc" / "ford_lincoln_base_pt.dbc"
MESSAGE = "Lane_Assist_Data1"


@pytest.fixture(scope="module")
def channel() -> str:
    return f"mcs-discovery-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="module")
def ford(channel: str) -> Iterator[CanDriver]:
    """The Ford database with a send tool per message; only MESSAGE may be sent, and the bus is armed."""
    if not FORD.is_file():
        pytest.skip(f"the shared corpus is not beside the repository ({FORD.name} is missing)")
    with CanDriver(FORD, channel=channel, fd=True, send_tools="all", allow_send=[MESSAGE],
                   watchdog_timeout=None) as driver:
        driver.arm()
        yield driver


@pytest.fixture(scope="module")
def database(ford: CanDriver) -> Any:
    """The same database as cantools loads it, apart from the driver's copy."""
    return cantools.database.load_file(str(FORD), strict=False)


@pytest.fixture
def sniffer(channel: str) -> Iterator[can.BusABC]:
    bus = can.Bus(interface="virtual", channel=channel, fd=True)
    try:
        yield bus
    finally:
        bus.shutdown()


def first_allowed(schema: dict[str, Any]) -> Any:
    """A value the schema allows: its first enum value, else its minimum (the number branch of an anyOf)."""
    if "enum" in schema:
        return schema["enum"][0]
    if "anyOf" in schema:
        return first_allowed(next(s for s in schema["anyOf"] if s.get("type") in ("number", "integer")))
    return schema.get("minimum", 0)


def signal_values(schema: dict[str, Any]) -> dict[str, Any]:
    """One allowed value per signal of a send tool's input schema."""
    return {name: first_allowed(field) for name, field in schema["properties"].items()
            if name not in ("dry_run", "period_ms", "approval_token")}


def test_the_ford_database_is_described_in_discovery_mode_by_default(ford: CanDriver) -> None:
    description = ford.get_function_description()
    assert ford.token_budget == 8000
    assert "search_tools" in description and "describe_tool" in description
    assert f"send_{MESSAGE}" not in description  # not listed inline
    assert len(description) < 12_000
    assert len([tool for tool in ford.list_tools() if tool.name.startswith("send_")]) > 300


def test_search_describe_and_call_a_send_tool_through_the_meta_tools(
    ford: CanDriver, sniffer: can.BusABC, database: Any,
) -> None:
    found = ford.process_llm_response(json.dumps({"tool": "search_tools", "arguments": {"query": "lane assist data"}}))
    assert f"send_{MESSAGE}" in [tool["name"] for tool in found["tools"][:3]]
    described = ford.process_llm_response(
        json.dumps({"tool": "describe_tool", "arguments": {"name": f"send_{MESSAGE}"}}))
    assert "frame 0x3CA" in described["description"]
    signals = signal_values(described["input_schema"])
    assert "LaRefAng_No_Req" in signals
    result = ford.process_llm_response(
        json.dumps({"tool": "call_tool", "arguments": {"name": f"send_{MESSAGE}", "arguments": signals}}))
    assert result["sent"] is True
    frame = sniffer.recv(timeout=2)
    assert frame is not None and frame.arbitration_id == 0x3CA
    assert bytes(frame.data) == database.encode_message(MESSAGE, signals)


def test_a_message_off_the_allow_list_is_refused_through_call_tool_too(ford: CanDriver, sniffer: can.BusABC) -> None:
    signals = signal_values(ford.call_tool("describe_tool", {"name": "send_EPAS_INFO"})["input_schema"])
    with pytest.raises(ToolCallError) as refused:
        ford.process_llm_response(json.dumps(
            {"tool": "call_tool", "arguments": {"name": "send_EPAS_INFO", "arguments": signals}}))
    assert refused.value.code is ErrorCode.POLICY_DENIED and "allow-list" in refused.value.message
    assert sniffer.recv(timeout=0.2) is None
