"""The core's contract suite (mcs.testing), run over the REST driver against the loopback API,
with and without a ``prefix``."""

from __future__ import annotations

import json

import pytest
from mcs_rest import RestDriver
from rest_paths import PETSTORE
from rest_server import Running

testing = pytest.importorskip("mcs.testing", reason="the core's contract suite (mcs.testing) is not installed")


class TestRestDriverContract(testing.DriverContractTests):  # type: ignore[name-defined,misc]
    @pytest.fixture(params=[None, "pets"], ids=["no-prefix", "prefix"])
    def driver(self, request: pytest.FixtureRequest, api: Running):
        api.state.pets[1] = {"id": 1, "name": "Rex", "tag": "dog"}
        with RestDriver(PETSTORE, base_url=api.url + "/v1", prefix=request.param) as driver:
            yield driver

    @pytest.fixture
    def valid_call(self, driver: RestDriver) -> str:
        return json.dumps({"tool": self.exposed_name(driver, "showPetById"), "arguments": {"petId": "1"}})

    def test_valid_call_gives_the_pet_the_api_holds(self, driver: RestDriver, valid_call: str) -> None:
        assert driver.process_llm_response(valid_call) == {"id": 1, "name": "Rex", "tag": "dog"}

    def test_every_tool_name_carries_the_prefix_when_one_is_set(self, driver: RestDriver) -> None:
        tools = driver.list_tools()
        assert tools
        assert all(t.name == (f"{driver.prefix}_{t.unprefixed_name}" if driver.prefix else t.unprefixed_name) for t in tools)
