"""mcs.http pieces the HTTP-speaking drivers share."""

from __future__ import annotations

import httpx

from mcs.http import retry_after


def test_retry_after_reads_seconds_and_http_dates_and_ignores_the_rest() -> None:
    assert retry_after(httpx.Headers({"Retry-After": " 7 "})) == 7.0
    assert retry_after(httpx.Headers({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"})) == 0.0  # past: no wait
    future = retry_after(httpx.Headers({"Retry-After": "Fri, 01 Jan 2100 00:00:00 GMT"}))
    assert future is not None and future > 365 * 24 * 3600
    assert retry_after(httpx.Headers({"Retry-After": "soon"})) is None
    assert retry_after(httpx.Headers({"Retry-After": "  "})) is None
    assert retry_after(httpx.Headers()) is None
