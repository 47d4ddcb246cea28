from __future__ import annotations

import httpx
import pytest

from mcs.urls import encode_path_segment


@pytest.mark.parametrize(
    ("value", "segment"),
    [
        ("..", "%2E%2E"),
        (".", "%2E"),
        ("...", "..."),
        ("../admin", "..%2Fadmin"),
        ("a b/c?d#e", "a%20b%2Fc%3Fd%23e"),
        ("%2e%2e", "%252e%252e"),
        ("café", "caf%C3%A9"),
        ("", ""),
    ],
)
def test_a_value_becomes_exactly_one_segment(value: str, segment: str) -> None:
    assert encode_path_segment(value) == segment


@pytest.mark.parametrize("value", ["..", ".", "../..", "a/../../b"])
def test_httpx_keeps_the_encoded_segment_where_it_was_put(value: str) -> None:
    url = httpx.URL(f"http://127.0.0.1/v1/users/{encode_path_segment(value)}/profile")
    assert url.raw_path.startswith(b"/v1/users/") and url.raw_path.endswith(b"/profile")
    assert url.raw_path.count(b"/") == 4
