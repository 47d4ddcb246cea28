"""Payload bytes: JSON payloads are compact UTF-8 JSON, and what is not JSON is refused."""

from __future__ import annotations

import json
from typing import Any

import pytest
from mcs_mqtt._codec import Codec

from mcs.errors import InvalidInputError

JSON = Codec("application/json")


@pytest.mark.parametrize("value", [
    {"n": 1, "label": "hall é ✓", "levels": [1, 2.5, None, True, False], "nested": {"a": [{"b": "\u2028"}]}},
    "plain text", 0, -3.25, None, True, [], {}, {"quote": "\"\\\n\t"},
])
def test_json_payloads_are_the_compact_utf8_json_of_the_value(value: Any) -> None:
    expected = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
    assert JSON.encode(value, "tool") == expected
    assert JSON.encode(value, "tool") == expected  # the shared encoder keeps nothing between values


@pytest.mark.parametrize("value", [float("nan"), {"t": float("inf")}, [1, float("-inf")]])
def test_nan_and_infinity_are_refused_as_not_json(value: Any) -> None:
    with pytest.raises(InvalidInputError, match="payload is not valid JSON"):
        JSON.encode(value, "tool")


def test_a_payload_that_contains_itself_is_refused_and_the_next_one_still_encodes() -> None:
    cycle: dict[str, Any] = {}
    cycle["self"] = cycle
    with pytest.raises(InvalidInputError, match="payload is not valid JSON"):
        JSON.encode(cycle, "tool")
    assert JSON.encode({"self": "fine"}, "tool") == b'{"self":"fine"}'

