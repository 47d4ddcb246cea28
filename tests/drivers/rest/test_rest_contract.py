"""The core's contract suite (mcs.testing), run over the REST driver against the loopback API."""

from __future__ import annotations

import pytest
from mcs_rest import RestDriver
from rest_paths import PETSTORE
from rest_server import Running

testing = pytest.importorskip("mcs.testing", reason="the core's contract suite (mcs.testing) is not installed")


class TestRestDriverContract(testing.DriverContractTests):  # type: ignore[name-defined,misc]
    @pytest.fixture
    def driver(self, api: Running):
        api.state.pets[1] = {"id": 1, "name": "Rex", "tag": "dog"}
        with RestDriver(PETSTORE, base_url=api.url + "/v1") as driver:
            yield driver

    @pytest.fixture
    def valid_call(self):
        return '{"tool": "showPetById", "arguments": {"petId": "1"}}'

    def test_valid_call_gives_the_pet_the_api_holds(self, driver: RestDriver, valid_call: str) -> None:
        assert driver.process_llm_response(valid_call) == {"id": 1, "name": "Rex", "tag": "dog"}
