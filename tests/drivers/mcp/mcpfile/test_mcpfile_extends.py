"""``invocationBases`` and ``extends``: order of operations, shapes, refusals."""

from __future__ import annotations

import pytest
from mcs_mcp.mcpfile.extends import resolve

from mcs.errors import ConfigurationError

BASES = {
    "users": {"http": {"method": "GET", "url": "https://api.example/v1/users",
                       "headers": {"Accept": "application/json", "X-Team": "a"}}},
    "git": {"cli": {"command": "git {operation} {verbose}",
                    "templateVariables": {"verbose": {"format": "--verbose", "omitIfFalse": True}}}},
}


def run(extends: dict) -> tuple[str, dict]:
    return resolve({"extends": extends}, BASES, where="tool 't'")


def test_no_operation_uses_the_base_as_is() -> None:
    assert run({"from": "users"}) == ("http", BASES["users"]["http"])


def test_extend_concatenates_strings_and_merges_maps() -> None:
    kind, config = run({"from": "users", "extend": {"url": "/{userId}", "headers": {"X-Team": "b", "X-New": "1"}}})
    assert kind == "http"
    assert config["url"] == "https://api.example/v1/users/{userId}"
    assert config["headers"] == {"Accept": "application/json", "X-Team": "b", "X-New": "1"}


def test_override_replaces_and_skips_zero_values() -> None:
    _, config = run({"from": "users", "override": {"method": "DELETE", "url": "", "headers": {"Only": "this"}}})
    assert config["method"] == "DELETE"
    assert config["url"] == "https://api.example/v1/users"
    assert config["headers"] == {"Only": "this"}


def test_remove_empties_strings_and_deletes_keys_given_as_list_or_map() -> None:
    _, config = run({"from": "users", "remove": {"url": "anything", "headers": ["X-Team"]}})
    assert config["url"] == "" and config["headers"] == {"Accept": "application/json"}
    _, config = run({"from": "users", "remove": {"headers": {"Accept": ""}}})
    assert config["headers"] == {"X-Team": "a"}


def test_remove_runs_before_extend() -> None:
    _, config = run({"from": "users", "remove": {"url": "x"}, "extend": {"headers": {"A": "1"}}})
    assert config["url"] == ""
    _, config = resolve(
        {"extends": {"from": "api", "remove": {"headers": ["X"]}, "extend": {"url": "/simple"}}},
        {"api": {"http": {"method": "GET", "url": "https://h/{endpoint}", "headers": {"X": "1"}}}},
        where="t",
    )
    assert config["url"] == "https://h/{endpoint}/simple" and config["headers"] == {}


def test_one_operation_per_field() -> None:
    with pytest.raises(ConfigurationError, match="'url' is modified by several operations"):
        run({"from": "users", "extend": {"url": "/x"}, "override": {"url": "https://other"}})


def test_cli_template_variables_merge_and_command_extends() -> None:
    kind, config = run({"from": "git", "extend": {"command": " {repoUrl}"},
                        "override": {"templateVariables": {"operation": {"format": "clone"}}}})
    assert kind == "cli"
    assert config["command"] == "git {operation} {verbose} {repoUrl}"
    assert config["templateVariables"] == {"operation": {"format": "clone"}}


def test_unknown_base_and_cycles_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="unknown invocation base 'nope'"):
        run({"from": "nope"})
    cyclic = {"a": {"extends": {"from": "b"}}, "b": {"extends": {"from": "a"}}}
    with pytest.raises(ConfigurationError, match="cycle"):
        resolve({"extends": {"from": "a"}}, cyclic, where="t")


def test_bases_may_extend_bases() -> None:
    bases = {**BASES, "admins": {"extends": {"from": "users", "extend": {"url": "/admins"}}}}
    _, config = resolve({"extends": {"from": "admins", "override": {"method": "POST"}}}, bases, where="t")
    assert config["url"] == "https://api.example/v1/users/admins" and config["method"] == "POST"


def test_wrong_shapes_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="must be a string"):
        run({"from": "users", "extend": {"url": ["/x"]}})
    with pytest.raises(ConfigurationError, match="cannot be extended"):
        resolve({"extends": {"from": "p", "extend": {"bodyAsArray": True}}},
                {"p": {"http": {"method": "POST", "url": "https://h"}}}, where="t")


def test_the_base_is_not_modified() -> None:
    run({"from": "users", "extend": {"headers": {"Z": "1"}}})
    assert BASES["users"]["http"]["headers"] == {"Accept": "application/json", "X-Team": "a"}
