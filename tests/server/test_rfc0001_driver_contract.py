"""The core's contract suite (mcs.testing) over RFC0001Driver, against the sample server on loopback.

The driver is checked as loaded from the registry and again with a tool-name prefix.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

import mcs
from mcs.server.client import RFC0001Driver
from mcs.testing import DriverContractTests


class TestRFC0001DriverContract(DriverContractTests):
    @pytest.fixture(params=[None, "sample"], ids=["plain", "prefixed"])
    def driver(self, request: pytest.FixtureRequest, url: str) -> Iterator[RFC0001Driver]:
        driver = mcs.load_driver(
            "rfc0001", url=url, agent_id="contract-agent", model="gpt-4o", metadata={"tenant": "acme"},
            prefix=request.param,
        )
        assert isinstance(driver, RFC0001Driver)
        with driver:
            yield driver

    @pytest.fixture
    def valid_call(self, driver: RFC0001Driver) -> str:
        return json.dumps({"tool": self.exposed_name(driver, "echo"), "arguments": {"text": "ab", "times": "2"}})

    def assert_same_result(self, first: Any, second: Any) -> None:
        """The echo tool reports the request id, which each call generates afresh."""
        assert first["request_id"] and second["request_id"]
        assert {**first, "request_id": None} == {**second, "request_id": None}

    def test_valid_call_gives_the_servers_answer(self, driver: RFC0001Driver, valid_call: str) -> None:
        result = driver.process_llm_response(valid_call)
        assert {**result, "request_id": None} == {
            "text": "abab", "agent_id": "contract-agent", "model": "gpt-4o", "request_id": None, "tenant": "acme"
        }
