from __future__ import annotations

import httpx
import pytest

from mcs.urls import Origin, encode_path_segment, origin, same_origin


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


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://API.Example.org/v1", Origin("https", "api.example.org", 443)),
        ("HTTP://example.org:80/", Origin("http", "example.org", 80)),
        ("http://example.org:8080", Origin("http", "example.org", 8080)),
        ("http://[::1]:9000/x", Origin("http", "::1", 9000)),
        ("https://user:secret@example.org/", Origin("https", "example.org", 443)),
        ("https://bücher.example/", Origin("https", "bücher.example", 443)),
    ],
)
def test_the_origin_is_scheme_host_and_port_as_httpx_reads_them(url: str, expected: Origin) -> None:
    assert origin(url) == expected
    assert origin(httpx.URL(url)) == expected


@pytest.mark.parametrize("url", ["ftp://example.org/", "file:///etc/passwd", "ws://example.org/", "/relative/path",
                                 "http:///path", "http://[::1/", "http://example.org:8x/", "mailto:a@example.org"])
def test_a_url_that_is_not_http_with_a_host_has_no_origin(url: str) -> None:
    assert origin(url) is None


def test_an_origin_reads_as_a_url() -> None:
    assert str(origin("https://example.org/a")) == "https://example.org:443"
    assert str(origin("http://[::1]:8000/")) == "http://[::1]:8000"


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("https://example.org/a", "https://EXAMPLE.org:443/b?c#d"),
        ("http://example.org", "http://example.org:80/"),
        ("http://127.0.0.1:8000/?wsdl", "http://127.0.0.1:8000/soap"),
        ("https://xn--bcher-kva.example/", "https://bücher.example/"),
    ],
)
def test_urls_on_one_scheme_host_and_port_are_the_same_origin(first: str, second: str) -> None:
    assert same_origin(first, second) and same_origin(second, first)
    assert same_origin(httpx.URL(first), second)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("https://example.org/", "http://example.org/"),
        ("https://example.org/", "https://example.org:8443/"),
        ("https://example.org/", "https://api.example.org/"),
        ("https://example.org/", "https://example.org.evil.test/"),
        ("http://169.254.169.254/", "http://169.254.169.254:8080/"),
        ("http://example.org/", "ftp://example.org/"),
        ("ftp://example.org/", "ftp://example.org/"),
        ("http:///a", "http:///b"),
        ("http://example.org:8x/", "http://example.org:8x/"),
    ],
)
def test_another_scheme_host_or_port_is_another_origin(first: str, second: str) -> None:
    assert not same_origin(first, second) and not same_origin(second, first)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("http://localhost:8000/?wsdl", "http://127.0.0.1:8000/soap"),
        ("http://LOCALHOST:8000/", "http://127.0.0.1:8000/"),
        ("http://localhost:8000/", "http://[::1]:8000/"),
        ("https://127.0.0.1/", "https://[0:0:0:0:0:0:0:1]:443/"),
    ],
)
def test_the_loopback_hosts_are_one_host(first: str, second: str) -> None:
    assert same_origin(first, second) and same_origin(second, first)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("http://localhost:8000/", "http://127.0.0.1:8001/"),  # the port still counts
        ("http://localhost:8000/", "https://127.0.0.1:8000/"),  # and the scheme
        ("http://localhost/", "http://169.254.169.254/"),
        ("http://localhost/", "http://10.0.0.1/"),
        ("http://localhost/", "http://0.0.0.0/"),
        ("http://localhost/", "http://[::]/"),
        ("http://127.0.0.1:8000/", "http://127.0.0.2:8000/"),  # another loopback address, another server
        ("http://localhost:8000/", "http://127.8.9.10:8000/"),
        ("http://127.0.0.1/", "http://127.1/"),  # inet_aton spellings are not read
        ("http://127.0.0.1/", "http://2130706433/"),
        ("http://127.0.0.1/", "http://[::ffff:127.0.0.1]/"),
        ("http://127.0.0.1/", "http://localhost./"),
        ("http://127.0.0.1/", "http://app.localhost/"),
        ("http://127.0.0.1/", "http://localtest.me/"),  # a public name that resolves to 127.0.0.1
    ],
)
def test_only_the_loopback_hosts_themselves_are_one_host(first: str, second: str) -> None:
    assert not same_origin(first, second) and not same_origin(second, first)
