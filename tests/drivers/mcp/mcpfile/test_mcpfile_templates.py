"""The placeholder grammar, value formatting and RFC 6570 matching."""

from __future__ import annotations

import pytest
from mcs_mcp.mcpfile.templates import MISSING, format_scalar, lookup, parse_template
from mcs_mcp.mcpfile.uritemplate import UriTemplate

from mcs.errors import ConfigurationError


def test_placeholder_kinds() -> None:
    template = parse_template("a{x}b{user.name}c${HOME}d{env.PATH}e{headers.X-Id}", where="t")
    assert [(p.source, p.name) for p in template.placeholders] == [
        ("param", "x"), ("param", "user.name"), ("env", "HOME"), ("env", "PATH"), ("header", "X-Id"),
    ]
    assert template.params() == ("x", "user.name")
    assert [p for p in template.parts if isinstance(p, str)] == ["a", "b", "c", "d", "e", ""]


@pytest.mark.parametrize("text", ["{a", "a}", "${A", "{}", "${}", "{env.}", "{env.A-B}", "{headers.}"])
def test_malformed_templates(text) -> None:
    with pytest.raises(ConfigurationError):
        parse_template(text, where="t")


@pytest.mark.parametrize(
    ("value", "text"),
    [(True, "true"), (False, "false"), (1.5, "1.5"), (2.0, "2"), (3, "3"), (1e20, "1e+20"), ("s", "s"),
     ([1, "a"], '[1,"a"]'), ({"k": True}, '{"k":true}')],
)
def test_values_are_formatted_for_people_not_go(value, text) -> None:
    assert format_scalar(value) == text


def test_lookup_nested_and_missing() -> None:
    args = {"a": {"b": 1, "n": None}}
    assert lookup(args, "a.b") == 1
    assert lookup(args, "a.c") is MISSING and lookup(args, "a.n") is MISSING and lookup(args, "x.y") is MISSING


@pytest.mark.parametrize(
    ("template", "uri", "expected"),
    [
        ("weather://forecast/{city}/{date}", "weather://forecast/Paris/2025-01-01", {"city": "Paris", "date": "2025-01-01"}),
        ("file:///{+path}", "file:///etc/hosts", {"path": "etc/hosts"}),
        ("db://t{/table,id}", "db://t/users/7", {"table": "users", "id": "7"}),
        ("s://find{?q,limit}", "s://find?q=a%20b&limit=3", {"q": "a b", "limit": "3"}),
        ("x://{name}", "x://a%2Fb", {"name": "a/b"}),
    ],
)
def test_uri_templates_match(template, uri, expected) -> None:
    assert UriTemplate.parse(template).match(uri) == expected


def test_uri_templates_that_do_not_match_or_do_not_parse() -> None:
    assert UriTemplate.parse("weather://forecast/{city}").match("weather://other/x") is None
    assert UriTemplate.parse("x://{a}/{b}").variables == ("a", "b")
    for bad in ("x://{a", "x://a}", "x://{a b}", "x://{}"):
        with pytest.raises(ConfigurationError):
            UriTemplate.parse(bad)
