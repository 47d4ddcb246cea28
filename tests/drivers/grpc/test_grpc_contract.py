"""The core's contract suite (mcs.testing) over the gRPC driver, against the lab server on loopback."""

from __future__ import annotations

import json

import pytest
from grpc_servers import Running
from mcs_grpc import GrpcDriver

from mcs.testing import DriverContractTests


class TestGrpcDriverContract(DriverContractTests):
    @pytest.fixture(params=[None, "lab"], ids=["no-prefix", "prefix"])
    def driver(self, request, lab: Running):
        with GrpcDriver(lab.target, prefix=request.param, include_defaults=False) as driver:
            yield driver

    @pytest.fixture
    def valid_call(self, driver: GrpcDriver):
        name = self.exposed_name(driver, "Lab_Echo")
        return json.dumps({"tool": name, "arguments": {"text": "hi", "big": "12345678901234567"}})

    def test_valid_call_gives_back_what_the_server_echoed(self, driver: GrpcDriver, valid_call: str) -> None:
        assert driver.process_llm_response(valid_call) == {"text": "hi", "big": "12345678901234567"}
