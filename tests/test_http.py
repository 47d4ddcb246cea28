"""mcs.http pieces the HTTP-speaking drivers share."""

from __future__ import annotations

import httpx

from mcs.http import header_values, retry_after


def test_retry_after_reads_seconds_and_http_dates_and_ignores_the_rest() -> None:
    assert retry_after(httpx.Headers({"Retry-After": " 7 "})) == 7.0
    assert retry_after(httpx.Headers({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"})) == 0.0  # past: no wait
    future = retry_after(httpx.Headers({"Retry-After": "Fri, 01 Jan 2100 00:00:00 GMT"}))
    assert future is not None and future > 365 * 24 * 3600
    assert retry_after(httpx.Headers({"Retry-After": "soon"})) is None
    assert retry_after(httpx.Headers({"Retry-After": "  "})) is None
    assert retry_after(httpx.Headers()) is None


def test_header_values_read_as_headers_get_does_in_one_pass() -> None:
    headers = httpx.Headers([
        (b"Content-Type", b"application/json"), (b"X-Note", "caf\u00e9".encode()),
        (b"content-encoding", b"gzip"), (b"Content-Encoding", b"deflate"),
    ])
    names = ("content-type", "content-encoding", "x-note", "location")
    assert header_values(headers, *names) == [headers.get(name, "") for name in names]
    assert header_values(headers, "content-encoding", "location") == ["gzip, deflate", ""]
    assert header_values(httpx.Headers([(b"X-Latin", b"\xe9t\xe9")]), "x-latin") == ["\u00e9t\u00e9"]
