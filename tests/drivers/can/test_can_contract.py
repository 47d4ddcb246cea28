"""The core's contract suite (mcs.testing) over the CAN driver on python-can's virtual bus."""

from __future__ import annotations

import json

import pytest
from can_support import CRUISE, DEMO_DBC
from mcs_can import CanDriver

from mcs.testing import DriverContractTests


class TestCanDriverContract(DriverContractTests):
    @pytest.fixture(params=[None, "car"], ids=["no-prefix", "prefix"])
    def driver(self, request: pytest.FixtureRequest, channel: str):
        with CanDriver(DEMO_DBC, channel=channel, allow_send=["CruiseCommand"], prefix=request.param) as driver:
            yield driver

    @pytest.fixture
    def valid_call(self, driver: CanDriver) -> str:
        # A dry run encodes the frame for real and runs every check but arming: the same on both paths.
        name = self.exposed_name(driver, "send_CruiseCommand")
        return json.dumps({"tool": name, "arguments": {**CRUISE, "dry_run": True}})

    def test_valid_call_returns_the_exact_frame(self, driver: CanDriver, valid_call: str) -> None:
        result = driver.process_llm_response(valid_call)
        assert result["dry_run"] is True and result["sent"] is False
        assert result["frame"]["data_hex"] == "5002f401"
