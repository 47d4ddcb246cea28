"""``-o key=value`` text typed by the driver's constructor, never guessed from how it looks."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import pytest

from mcs import FunctionDriver
from mcs.errors import ConfigurationError
from mcs.options import declared_keywords, typed_options


class Connector(FunctionDriver):
    def __init__(
        self,
        *,
        command: str | None = None,
        args: Sequence[str] = (),
        hosts: Iterable[str] | None = None,
        env: Mapping[str, str] | None = None,
        verify: bool | str = True,
        spec: str | os.PathLike[str] | Mapping[str, Any] | None = None,
        mode: Literal["fast", "safe"] = "safe",
        retries: int = 2,
        anything: Any = None,
        **options: Any,
    ) -> None:
        super().__init__(**options)


@pytest.mark.parametrize(("pair", "expected"), [
    ("command=false", "false"),
    ("command=123", "123"),
    ("args=[\"-y\", \"server\"]", ["-y", "server"]),
    ("hosts=[\"localhost\"]", ["localhost"]),
    ("env={\"TOKEN\": \"x\"}", {"TOKEN": "x"}),
    ("verify=false", False),
    ("verify=/etc/ca.pem", "/etc/ca.pem"),
    ("spec=openapi.yaml", "openapi.yaml"),
    ("spec={\"openapi\": \"3.1.0\"}", {"openapi": "3.1.0"}),
    ("mode=fast", "fast"),
    ("retries=5", 5),
    ("anything=[1, 2]", [1, 2]),
    ("anything=plain words", "plain words"),
    ("timeout=2.5", 2.5),
    ("timeout=null", None),
    ("name=math", "math"),
    ("validate-output=true", True),
])
def test_each_value_gets_the_type_its_keyword_declares(pair: str, expected: Any) -> None:
    [value] = typed_options(Connector, [pair]).values()
    assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize(("pair", "message"), [
    ("retries=many", "option retries='many': Connector expects int"),
    ("args=server", "option args='server': Connector expects Sequence[str]"),
    ("hosts=localhost", "option hosts='localhost': Connector expects Iterable[str] | None"),  # not l, o, c...
    ("hosts=[1]", "option hosts='[1]': Connector expects Iterable[str] | None"),
    ("nonsense=1", "Connector takes no option 'nonsense'; it takes: anything, args, circuit_breaker, command"),
    ("prompt_templates=x", "option prompt_templates='x': Connector expects"),
    ("justakey", "option 'justakey' is not key=value"),
])
def test_a_value_that_does_not_fit_is_a_one_line_configuration_error(pair: str, message: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        typed_options(Connector, [pair])
    assert message in str(info.value) and "\n" not in str(info.value)


def test_keywords_follow_options_forwarded_to_the_base_class() -> None:
    keywords, open_ended = declared_keywords(Connector)
    assert {"command", "functions", "name", "timeout", "prefix"} <= set(keywords)
    assert open_ended is False


def test_a_callable_that_takes_any_keyword_reads_json_when_it_parses() -> None:
    def factory(**options: Any) -> None: ...

    assert typed_options(factory, ["a=1", "b=x", "c=true"]) == {"a": 1, "b": "x", "c": True}
