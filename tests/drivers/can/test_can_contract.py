"""The core's contract suite (mcs.testing) over the CAN driver on python-can's virtual bus:
armed, so each valid call really puts its frame on the bus, where a sniffer sees it."""

from __future__ import annotations

import json

import can
import pytest
from can_support import CRUISE, DEMO_DBC, drain
from mcs_can import CanDriver

from mcs.testing import DriverContractTests


class TestCanDriverContract(DriverContractTests):
    @pytest.fixture(params=[None, "car"], ids=["no-prefix", "prefix"])
    def driver(self, request: pytest.FixtureRequest, channel: str):
        with CanDriver(DEMO_DBC, channel=channel, allow_send=["CruiseCommand"], prefix=request.param) as driver:
            driver.arm()
            yield driver

    @pytest.fixture
    def valid_call(self, driver: CanDriver) -> str:
        name = self.exposed_name(driver, "send_CruiseCommand")
        return json.dumps({"tool": name, "arguments": CRUISE})

    def test_valid_call_puts_exactly_its_frame_on_the_bus(
        self, driver: CanDriver, valid_call: str, sniffer: can.BusABC
    ) -> None:
        drain(sniffer)
        result = driver.process_llm_response(valid_call)
        assert result["sent"] is True and result["frame"]["data_hex"] == "5002f401"
        frames = drain(sniffer)
        assert [(f.arbitration_id, bytes(f.data).hex()) for f in frames] == [
            (result["frame"]["arbitration_id"], "5002f401")
        ]
