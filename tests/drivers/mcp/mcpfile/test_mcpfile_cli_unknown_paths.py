"""Paths a command names itself, where MCS cannot read them before the run.

A path read from a file (``x=$(cat list); cat -- "$x"``) or matched by a pattern a variable
holds (``p='!(notes.txt)'; cat -- $p`` with extglob) is not known until bash runs, and a
model's value can write that file; a path the command names after a symlink it makes on the
way (``ln -s -- . x; echo hi > out.txt``) is checked before the link exists. Known paths behind
a variable (``f=notes.txt; cat -- "$f"``) or after ``git -C`` are checked as literal ones.
Real bash, coreutils and git.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from mcpfile_support import SECRET, mcp_file, tool

from mcs.errors import ConfigurationError, PolicyDeniedError, ToolCallError

STRING = {"type": "string"}
LINK = tool("link", {"cli": {"command": "ln -s -- {target} {name}"}}, {"target": STRING, "name": STRING})


def outcome(driver: Any, arguments: dict[str, Any], name: str = "t") -> str:
    """The result or error text of tool ``name``, whichever the call gives."""
    try:
        return str(driver.call_tool(name, arguments))
    except ToolCallError as exc:
        return f"{exc.message} {exc.details}"


def two_tools(new_driver, write_file, work: Path, first: dict[str, Any], command: str) -> Any:
    """A driver for a file with ``first`` and a tool ``t`` running ``command`` (no value)."""
    return new_driver(write_file(mcp_file(first, tool("t", {"cli": {"command": command}}))), cli_cwd=work)


def linked_out(driver: Any, work: Path, name: str, target: str) -> None:
    """Make ``name`` a link to ``x/../<target>`` with the checked link tool: inside while ``x``
    does not exist; once ``x`` leads to ``.``, it leads to ``../<target>``, outside."""
    driver.call_tool("link", {"target": f"x/../{target}", "name": name})
    assert not (work / "x").exists()


@pytest.mark.parametrize("command", [
    "printf '%s\\n' {path} > list; x=$(cat list); cat -- \"$x\"",
    "printf '%s\\n' {path} > list; cat -- \"$(cat list)\"",
    "printf '%s\\n' {path} > list; read -r f < list; cat -- \"$f\"",
    "printf '%s\\n' {path} > list; while read -r f; do head -n 5 -- \"$f\"; done < list",
    "printf '%s\\n' {path} > list; grep -h -e MARKER -- $(cat list)",
    "printf '%s\\n' {path} > list; x=$(cat list); [ -s \"$x\" ] && cat < \"$x\"",
])
def test_a_path_read_from_a_file_a_value_wrote_is_refused_at_load(cli, outside: Path, command: str) -> None:
    with pytest.raises(ConfigurationError, match="not known before the run"):
        driver = cli(command, {"path": STRING})
        assert SECRET not in outcome(driver, {"path": str(outside / "secret")})


@pytest.mark.parametrize("reader", [
    'x=$(cat list); cat -- "$x"',
    "cat -- $(cat list)",
    'while read -r f; do cat -- "$f"; done < list',
])
def test_a_path_read_from_a_file_another_tool_wrote_is_refused_at_load(
    new_driver, write_file, work: Path, outside: Path, reader: str
) -> None:
    save = tool("save", {"cli": {"command": "printf '%s\\n' {path} > list"}}, {"path": STRING})
    with pytest.raises(ConfigurationError, match="not known before the run"):
        driver = two_tools(new_driver, write_file, work, save, reader)
        driver.call_tool("save", {"path": str(outside / "secret")})
        assert SECRET not in outcome(driver, {})


@pytest.mark.parametrize("command", [
    "shopt -s extglob; p='!(notes.txt)'; cat -- $p; echo {text}",
    "shopt -s extglob; p='@(link|notes.txt)'; grep -h -e MARKER -e inside -- $p; echo {text}",
    "p='l*'; cat -- $p; echo {text}",
    "shopt -s dotglob; p='*'; head -n 3 -- $p; echo {text}",
])
def test_a_pattern_a_variable_holds_is_refused_at_load(cli, outside: Path, command: str) -> None:
    # shopt is off the list (it changes how bash reads patterns): the operator vouches for it here
    with pytest.raises(ConfigurationError, match="not known before the run"):
        driver = cli(command, {"text": STRING}, cli_trusted_programs=["shopt"])
        assert SECRET not in outcome(driver, {"text": "x"})


@pytest.mark.parametrize("command", [
    "shopt -s extglob\ncat -- !(notes.txt); echo {text}",
    "shopt -s extglob\ncat -- @(link|notes.txt); echo {text}",
    "shopt -s extglob\ngrep -h -e MARKER -- +(l)ink; echo {text}",
])
def test_an_extglob_pattern_written_in_the_command_is_refused_at_load(cli, outside: Path, command: str) -> None:
    with pytest.raises(ConfigurationError, match="not valid bash"):
        driver = cli(command, {"text": STRING}, cli_trusted_programs=["shopt"])
        assert SECRET not in outcome(driver, {"text": "x"})


def test_a_path_read_through_a_variable_set_to_literal_text_is_checked(
    new_driver, write_file, work: Path, outside: Path
) -> None:
    driver = two_tools(new_driver, write_file, work, LINK, 'f=in.txt; cat -- "$f"')
    linked_out(driver, work, "in.txt", "outside/secret")
    driver.call_tool("link", {"target": ".", "name": "x"})
    with pytest.raises(PolicyDeniedError, match=r"in\.txt"):
        driver.call_tool("t", {})
    assert SECRET not in outcome(driver, {})


def test_a_path_read_through_a_variable_of_the_servers_environment_is_checked(
    new_driver, write_file, work: Path, outside: Path, monkeypatch
) -> None:
    monkeypatch.setenv("NOTES_FILE", "in.txt")
    driver = two_tools(new_driver, write_file, work, LINK, 'cat -- "$NOTES_FILE"')
    linked_out(driver, work, "in.txt", "outside/secret")
    driver.call_tool("link", {"target": ".", "name": "x"})
    with pytest.raises(PolicyDeniedError, match=r"in\.txt"):
        driver.call_tool("t", {})
    assert SECRET not in outcome(driver, {})


@pytest.mark.parametrize("reader", [
    "git -C sub diff --no-index -- ../in.txt ../notes.txt",
    "git -C . diff --no-index -- in.txt notes.txt",
])
def test_a_path_git_reads_after_git_c_is_checked_from_there(
    new_driver, write_file, work: Path, outside: Path, reader: str
) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    (work / "sub").mkdir()
    # git beside a tool that writes files is held to the operator's list: trusted here
    driver = new_driver(write_file(mcp_file(LINK, tool("t", {"cli": {"command": reader}}))), cli_cwd=work,
                        cli_trusted_programs=["git"])
    linked_out(driver, work, "in.txt", "outside/secret")
    driver.call_tool("link", {"target": ".", "name": "x"})
    with pytest.raises(PolicyDeniedError, match=r"in\.txt"):
        driver.call_tool("t", {})
    assert SECRET not in outcome(driver, {})


def test_known_paths_behind_variables_and_git_c_still_run(cli, work: Path, monkeypatch) -> None:
    monkeypatch.setenv("NOTES_FILE", "notes.txt")
    (work / "sub").mkdir()
    (work / "sub" / "more.txt").write_text("more text\n")
    monkeypatch.setenv("HOME", str(work / "sub"))
    driver = cli('f=notes.txt; cat -- "$f" "$NOTES_FILE" ~/../notes.txt; echo {text}', {"text": STRING})
    assert str(driver.call_tool("t", {"text": "done"})).count("inside text") == 3
    if shutil.which("git") is not None:
        diff = cli("git -C sub diff --no-index -- more.txt ../notes.txt; echo {text}", {"text": STRING})
        text = outcome(diff, {"text": "done"})
        assert "more text" in text and "inside text" in text


def test_a_write_through_two_links_the_command_makes_is_refused_at_load(cli, outside: Path) -> None:
    command = "ln -s -- .. a; ln -s -- a/outside b; echo {text} > b/victim"
    with pytest.raises(ConfigurationError, match="symlink on the way"):
        outcome(cli(command, {"text": STRING}), {"text": "overwritten"})
    assert (outside / "victim").read_text() == "original\n"


@pytest.mark.parametrize("command", [
    "ln -s -- . x; echo {text} > out.txt",
    "for n in 1; do echo {text} > out.txt; ln -sfn -- . x; done",
    "echo {text} | ln -s -- . x; echo {text} > out.txt",
])
def test_a_literal_write_after_a_link_the_command_makes_is_refused_at_load(
    new_driver, write_file, work: Path, outside: Path, command: str
) -> None:
    write = tool("write", {"cli": {"command": command}}, {"text": STRING})
    with pytest.raises(ConfigurationError, match="symlink on the way"):
        driver = new_driver(write_file(mcp_file(LINK, write)), cli_cwd=work)
        linked_out(driver, work, "out.txt", "outside/victim")
        outcome(driver, {"text": "overwritten"}, "write")
    assert (outside / "victim").read_text() == "original\n"


@pytest.mark.parametrize("command", ["ln -sfn -- . x; echo hi > out.txt", "ln -sfn -- . x && cat in.txt"])
def test_a_literal_path_after_a_link_is_refused_beside_a_tool_that_takes_values(
    new_driver, write_file, work: Path, outside: Path, command: str
) -> None:
    with pytest.raises(ConfigurationError, match="symlink on the way"):
        driver = two_tools(new_driver, write_file, work, LINK, command)
        linked_out(driver, work, "out.txt", "outside/victim")
        linked_out(driver, work, "in.txt", "outside/secret")
        assert SECRET not in outcome(driver, {})
    assert (outside / "victim").read_text() == "original\n"


def test_a_literal_write_beside_a_trusted_program_in_the_background_is_refused_at_load(cli) -> None:
    with pytest.raises(ConfigurationError, match="symlink on the way"):
        cli("nohup sleep 0 > /dev/null 2>&1 &\necho {text} > out.txt\nwait", {"text": STRING},
            cli_trusted_programs=["nohup"])


def test_a_literal_write_before_a_copy_still_runs(cli, work: Path) -> None:
    driver = cli("echo {text} > out.txt; cp -- out.txt copy.txt", {"text": STRING})
    driver.call_tool("t", {"text": "kept"})
    assert (work / "copy.txt").read_text() == "kept\n"


# ----------------------------------------------------------------------------- one rule for value paths


@pytest.mark.parametrize("command", [
    "(sleep 1; cat -- {path} >&2) | ln -s -- .. x",
    "(sleep 1; cat -- {path}) & ln -s -- .. x; wait",
    "cat -- {path} <<< \"$(ln -s -- .. x)\"",
    "A=\"$(ln -s -- .. x)\" cat -- {path}",
])
def test_a_value_read_beside_or_inside_a_link_the_command_makes_is_refused_at_load(
    cli, outside: Path, command: str
) -> None:
    # x/outside/secret is inside while x does not exist (as it is when the path is checked);
    # the ln of the same pipeline, job or substitution makes x lead to .. before cat opens it
    with pytest.raises(ConfigurationError, match="runs 'ln' before it or beside it"):
        assert SECRET not in outcome(cli(command, {"path": STRING}), {"path": "x/outside/secret"})


@pytest.mark.parametrize("command", [
    "(sleep 1; cp -- a {dst}) | ln -s -- .. x",
    "cp -- a {dst} <<< \"$(ln -s -- .. x)\"",
])
def test_a_value_write_beside_or_inside_a_link_the_command_makes_is_refused_at_load(
    cli, outside: Path, command: str
) -> None:
    with pytest.raises(ConfigurationError, match="runs 'ln' before it or beside it"):
        outcome(cli(command, {"dst": STRING}), {"dst": "x/outside/victim"})
        assert (outside / "victim").read_text() == "original\n", "cp wrote outside through the link"


@pytest.mark.parametrize("command", [
    "cat -- notes.txt <<< \"$(ln -sfn -- . x)\"; echo {text}",
    "A=\"$(ln -sfn -- . x)\" cat -- notes.txt; echo {text}",
])
def test_a_literal_read_after_a_link_made_inside_its_own_command_is_refused_at_load(
    new_driver, write_file, work: Path, outside: Path, command: str
) -> None:
    read = tool("t", {"cli": {"command": command.replace("notes.txt", "in.txt")}}, {"text": STRING})
    with pytest.raises(ConfigurationError, match="symlink on the way"):
        driver = new_driver(write_file(mcp_file(LINK, read)), cli_cwd=work)
        linked_out(driver, work, "in.txt", "outside/secret")
        assert SECRET not in outcome(driver, {"text": "x"})


def test_a_value_path_before_a_link_in_a_later_statement_still_runs(cli, work: Path) -> None:
    driver = cli("cat -- {path}; ln -s -- notes.txt l", {"path": STRING})
    assert "inside text" in outcome(driver, {"path": "notes.txt"})
    assert (work / "l").is_symlink()


# ----------------------------------------------------------------------------- cd to a known directory


#: (the change of directory, where the link lies below the working directory, the path read there)
CHANGES = {
    "cd ..": ("cd ..", "", "work/in.txt"),
    "cd an absolute directory": ("cd {work}/sub", "sub/", "in.txt"),
    "cd ~": ("cd ~", "sub/", "in.txt"),
    "cd ~/sub": ("cd ~/sub", "sub/", "in.txt"),
    "cd without a directory": ("cd", "sub/", "in.txt"),
    "cd sub then ../..": ("cd sub; cd ../..", "", "work/in.txt"),
}


@pytest.mark.parametrize("case", list(CHANGES))
def test_a_literal_read_after_a_cd_to_a_known_directory_is_checked_from_there(
    new_driver, write_file, work: Path, outside: Path, monkeypatch, case: str
) -> None:
    # checked from the working directory, the path read did not exist (inside, so it passed);
    # from the directory the cd names, it is a link (one an earlier call could leave) to the secret
    change, below, path = CHANGES[case]
    monkeypatch.setenv("HOME", str(work / "sub") if case in ("cd ~", "cd without a directory") else str(work))
    (work / "sub").mkdir()
    (work / below / "in.txt").symlink_to(outside / "secret")
    driver = two_tools(new_driver, write_file, work, LINK, f"{change.format(work=work)}; cat -- {path}")
    with pytest.raises(PolicyDeniedError, match=r"in\.txt"):
        driver.call_tool("t", {})
    assert SECRET not in outcome(driver, {})


def test_a_literal_read_after_a_cd_in_a_loop_is_refused_at_load(new_driver, write_file, work: Path) -> None:
    # each turn moves one directory further (sub, sub/sub, ...): no list of bases holds them all
    with pytest.raises(ConfigurationError, match="not known before the run"):
        two_tools(new_driver, write_file, work, LINK, "for n in 1 2; do cd sub; cat -- in.txt; done")


def test_a_literal_read_after_a_cd_to_a_known_directory_still_runs(
    new_driver, write_file, tmp_path: Path, work: Path, monkeypatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    (work / "sub").mkdir()
    (work / "sub" / "more.txt").write_text("more text\n")
    command = f"cd ..; cat -- work/notes.txt; cd {work}/sub; cat -- more.txt; cd ~/work; cat -- notes.txt"
    driver = two_tools(new_driver, write_file, work, LINK, command)
    text = outcome(driver, {})
    assert text.count("inside text") == 2 and "more text" in text

