"""The server's environment does not change how bash reads a command MCS checked.

bash takes its options from ``SHELLOPTS`` and ``BASHOPTS`` in its environment, sources the
file ``BASH_ENV`` names, defines the functions ``BASH_FUNC_name%%`` holds, and reads patterns
by ``GLOBIGNORE``. MCS checks a command as bash reads it with none of them: with ``keyword``
an argument ``NAME={x}`` became the program's environment, with ``globstar`` a pattern matched
deeper than its links were checked, and a function ``cat`` ran in place of the program. Real
bash, coreutils and git.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from mcpfile_support import SECRET, git_repository_with_a_change

from mcs.errors import ConfigurationError, ToolCallError

STRING = {"type": "string"}


def outcome(driver: Any, arguments: dict[str, Any]) -> str:
    try:
        return str(driver.call_tool("t", arguments))
    except ToolCallError as exc:
        return f"{exc.message} {exc.details}"


def test_shellopts_keyword_does_not_turn_an_argument_into_the_programs_environment(
    cli, work: Path, monkeypatch
) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    git_repository_with_a_change(work)
    monkeypatch.setenv("SHELLOPTS", "keyword")
    # with set -k, GIT_EXTERNAL_DIFF={x} is an assignment for git: git diff ran the value
    outcome(cli("git diff GIT_EXTERNAL_DIFF={x}"), {"x": "touch MARKER"})
    assert not (work / "MARKER").exists()


def test_bashopts_globstar_does_not_match_deeper_than_the_links_checked(
    cli, work: Path, outside: Path, monkeypatch
) -> None:
    (work / "d" / "e").mkdir(parents=True)
    (work / "d" / "e" / "c.txt").symlink_to(outside / "secret")
    monkeypatch.setenv("BASHOPTS", "globstar")
    # without globstar, **/*.txt matches one directory down, where the check looked
    assert SECRET not in outcome(cli("cat -- **/*.txt; echo {x}"), {"x": "done"})


@pytest.mark.parametrize("name", ["SHELLOPTS", "BASHOPTS"])
def test_no_option_of_the_servers_environment_reaches_bash(cli, monkeypatch, name: str) -> None:
    options = {"SHELLOPTS": "allexport:keyword:noglob:nounset:xtrace:posix",
               "BASHOPTS": "extglob:globstar:nullglob:dotglob:failglob:nocaseglob:expand_aliases"}
    monkeypatch.setenv(name, options[name])
    # bash lists the options it runs with in SHELLOPTS and BASHOPTS
    shown = outcome(cli('echo "$SHELLOPTS:$BASHOPTS" {x}'), {"x": "listed"})
    lines = [line for line in shown.splitlines() if line.endswith(" listed") and not line.startswith("+")]
    assert len(lines) == 1, shown
    for option in options[name].split(":"):
        assert option not in lines[0].split()[0].split(":"), shown


def test_bash_env_is_not_sourced(cli, work: Path, tmp_path: Path, monkeypatch) -> None:
    script = tmp_path / "startup.sh"
    script.write_text(f"touch {work / 'MARKER'}\n")
    monkeypatch.setenv("BASH_ENV", str(script))
    assert "done" in outcome(cli("echo {x}"), {"x": "done"})
    assert not (work / "MARKER").exists()


def test_a_function_of_the_servers_environment_does_not_replace_a_program(cli, work: Path, monkeypatch) -> None:
    monkeypatch.setenv("BASH_FUNC_cat%%", "() { touch MARKER; }")
    assert "inside text" in outcome(cli("cat -- notes.txt; echo {x}"), {"x": "done"})
    assert not (work / "MARKER").exists()


def test_globignore_does_not_change_what_a_pattern_matches(cli, work: Path, outside: Path, monkeypatch) -> None:
    # a GLOBIGNORE that is set turns dotglob on: * then matched .hidden, a link the check skipped
    (work / ".hidden").symlink_to(outside / "secret")
    monkeypatch.setenv("GLOBIGNORE", "nothing")
    assert SECRET not in outcome(cli("cat -- *; echo {x}"), {"x": "done"})


@pytest.mark.parametrize("option", ["-k", "-o keyword", "-ek", "+B", "-P", "-o posix", "-H"])
def test_a_set_option_that_changes_how_bash_reads_the_command_is_refused_beside_a_value(
    cli, work: Path, option: str
) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    git_repository_with_a_change(work)
    with pytest.raises(ConfigurationError, match=r"runs set with|posix mode"):
        outcome(cli(f"set {option}; git diff GIT_EXTERNAL_DIFF={{x}}"), {"x": "touch MARKER"})
    assert not (work / "MARKER").exists()


@pytest.mark.parametrize("options", ["-e", "-euo pipefail", "-x", "+x", "-o errexit -o nounset", "-f", "-C",
                                     "-- a b", "-o"])
def test_set_options_that_keep_the_command_as_checked_still_run(cli, options: str) -> None:
    assert "done" in outcome(cli(f"set {options}; echo {{x}}"), {"x": "done"})
