"""The core's contract suite (mcs.testing), run over the SOAP driver against the loopback peer,
with and without a prefix."""

from __future__ import annotations

import json

import pytest
from mcs_soap import SoapDriver
from soap_world import World

testing = pytest.importorskip("mcs.testing", reason="the core's contract suite (mcs.testing) is not installed")


class TestSoapDriverContract(testing.DriverContractTests):  # type: ignore[name-defined,misc]
    @pytest.fixture(params=[None, "geo"], ids=["no-prefix", "prefix"])
    def driver(self, request, world: World):
        with SoapDriver(world.wsdl, prefix=request.param) as driver:
            yield driver

    @pytest.fixture
    def valid_call(self, driver: SoapDriver):
        name = self.exposed_name(driver, "FullCountryInfo")
        return json.dumps({"tool": name, "arguments": {"sCountryISOCode": "NL"}})

    def test_valid_call_gives_what_the_service_holds(self, driver: SoapDriver, valid_call: str) -> None:
        result = driver.process_llm_response(valid_call)
        assert result["sCapitalCity"] == "Amsterdam"
        assert result["Languages"]["tLanguage"][1] == {"sISOCode": "FY", "sName": "Frisian"}
