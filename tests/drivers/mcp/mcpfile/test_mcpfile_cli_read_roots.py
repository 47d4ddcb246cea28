"""Where a listed program reads from a model's value stays inside the command's working
directory (or a directory the operator allows with ``cli_read_roots``).

``cat {file}`` with ``/proc/self/environ`` printed the server's environment (its API keys),
``head``, ``grep -r``, ``jq --rawfile``, ``git diff`` and ``< {file}`` printed any file the
server's user can read. Real bash, real coreutils, grep, jq and git.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from mcpfile_support import SECRET, mcp_file, tool

from mcs.errors import ConfigurationError, InvalidInputError, PolicyDeniedError, ToolCallError

STRING = {"type": "string"}
MARKER = SECRET


#: (command, the arguments that read a path, with the path as {path})
READERS: dict[str, tuple[str, dict[str, str]]] = {
    "cat": ("cat -- {file}", {"file": "{path}"}),
    "cat <": ("cat < {file}", {"file": "{path}"}),
    "head": ("head -n 5 -- {file}", {"file": "{path}"}),
    "tail": ("tail -n 5 {file}", {"file": "{path}"}),
    "sort": ("sort -- {file}", {"file": "{path}"}),
    "base64": ("base64 {file}", {"file": "{path}"}),
    "grep": ("grep -- {pattern} {file}", {"pattern": "MARKER", "file": "{path}"}),
    "grep -r": ("grep -r -e {pattern} -- {file}", {"pattern": "MARKER", "file": "{path}"}),
    "grep -f": ("grep -f {file} -- notes.txt", {"file": "{path}"}),
    "diff": ("diff -- {file} notes.txt", {"file": "{path}"}),
    "jq --rawfile": ("jq -n --rawfile v {file} '$v'", {"file": "{path}"}),
    "jq -R": ("jq -R . {file}", {"file": "{path}"}),
    "git diff --no-index": ("git diff --no-index -- {file} notes.txt", {"file": "{path}"}),
    "date -f": ("date -f {file}", {"file": "{path}"}),
}
SPELLINGS = {
    "absolute": lambda outside: str(outside / "secret"),
    "dot-dot": lambda outside: "../outside/secret",
    "symlink inside": lambda outside: "link",
    "through a linked directory": lambda outside: "dirlink/secret",
}


def arguments_for(template: dict[str, str], path: str) -> dict[str, str]:
    return {key: value.replace("{path}", path) for key, value in template.items()}


def outcome(driver: Any, arguments: dict[str, Any], name: str = "t") -> str:
    """The result or error text of tool ``name``, whichever the call gives."""
    try:
        return str(driver.call_tool(name, arguments))
    except ToolCallError as exc:
        return f"{exc.message} {exc.details}"


@pytest.mark.parametrize("spelling", list(SPELLINGS))
@pytest.mark.parametrize("reader", list(READERS))
def test_a_read_outside_the_working_directory_is_refused_and_the_secret_never_shows(
    cli, work: Path, outside: Path, reader: str, spelling: str
) -> None:
    command, template = READERS[reader]
    arguments = arguments_for(template, SPELLINGS[spelling](outside))
    driver = cli(command, dict.fromkeys(arguments, STRING))
    with pytest.raises(PolicyDeniedError) as error:
        driver.call_tool("t", arguments)
    assert "cli_read_roots" in error.value.message and str(work) in error.value.message
    assert MARKER not in outcome(driver, arguments)


@pytest.mark.parametrize("reader", list(READERS))
def test_the_servers_environment_never_shows_through_proc_self_environ(
    cli, work: Path, reader: str, monkeypatch
) -> None:
    monkeypatch.setenv("MCS_TEST_API_KEY", MARKER)
    command, template = READERS[reader]
    for path in ("/proc/self/environ", "/proc/thread-self/environ", "/dev/fd/0"):
        arguments = arguments_for(template, path)
        driver = cli(command, dict.fromkeys(arguments, STRING), cli_read_roots=["/"])
        with pytest.raises(PolicyDeniedError) as error:
            driver.call_tool("t", arguments)
        assert "cli_read_roots" in error.value.message
        assert MARKER not in outcome(driver, arguments)


def test_a_read_root_of_the_operator_is_read(cli, outside: Path) -> None:
    driver = cli("cat -- {file}", {"file": STRING}, cli_read_roots=str(outside))
    assert MARKER in str(driver.call_tool("t", {"file": str(outside / "secret")}))
    assert MARKER in str(driver.call_tool("t", {"file": "link"}))


def test_a_write_root_is_also_read(cli, outside: Path) -> None:
    driver = cli("cat -- {file}", {"file": STRING}, cli_write_roots=[str(outside)])
    assert MARKER in str(driver.call_tool("t", {"file": "../outside/secret"}))


@pytest.mark.parametrize("reader", list(READERS))
def test_a_file_inside_the_working_directory_is_read(cli, work: Path, reader: str) -> None:
    command, template = READERS[reader]
    (work / "sub").mkdir()
    (work / "sub" / "in.txt").write_text(f"{MARKER}\n")
    path = "./sub/../sub/in.txt"
    arguments = arguments_for(template, path)
    text = outcome(cli(command, dict.fromkeys(arguments, STRING)), arguments)
    assert "PolicyDenied" not in text and "cli_read_roots" not in text
    if reader not in ("date -f", "grep -f", "base64"):
        assert MARKER in text


def test_a_pattern_or_filter_value_is_data_not_a_path(cli, work: Path) -> None:
    (work / "paths.txt").write_text("/etc/passwd\n")
    grep = cli("grep -F -- {pattern} paths.txt", {"pattern": STRING})
    assert "/etc/passwd" in str(grep.call_tool("t", {"pattern": "/etc/passwd"}))
    jq = cli("jq -n --arg v {value} '$v'", {"value": STRING})
    assert "/etc/passwd" in str(jq.call_tool("t", {"value": "/etc/passwd"}))
    head = cli("head -n {count} -- notes.txt", {"count": STRING})
    assert "inside text" in str(head.call_tool("t", {"count": "1"}))


def test_an_appended_option_that_names_a_file_is_checked(cli, outside: Path) -> None:
    driver = cli("head -n 1 notes.txt", {"file": STRING})
    with pytest.raises(PolicyDeniedError):
        driver.call_tool("t", {"file": str(outside / "secret")})


@pytest.mark.parametrize("command", [
    "wc --files0-from={list}",
    "wc --files0 {list}",
    "du -L --files0-from={list}",
    "sort --files0-from={list}",
    "file -f {list}",
    "file -bf {list}",
    "md5sum -c {list}",
    "printf '%s' {list} | sha256sum --check",
])
def test_a_program_reading_the_files_a_list_names_takes_no_value(cli, command: str) -> None:
    with pytest.raises(ConfigurationError, match="reads the files a list names"):
        cli(command, {"list": STRING})


def test_a_list_a_value_names_cannot_lead_a_program_to_the_files_it_names_outside(
    cli, work: Path, outside: Path
) -> None:
    (work / "names").write_bytes(f"{outside / 'secret'}\0".encode())
    (work / "names.txt").write_text(f"{outside / 'secret'}\n")
    for command, value in (("wc --files0-from={list}", "names"), ("file -f {list}", "names.txt")):
        with pytest.raises(ConfigurationError):
            cli(command, {"list": STRING}).call_tool("t", {"list": value})


def test_a_program_that_takes_its_files_as_operands_still_reads_them(cli) -> None:
    assert "notes.txt" in str(cli("wc -l -- {file}", {"file": STRING}).call_tool("t", {"file": "notes.txt"}))
    assert "notes.txt" in str(cli("md5sum -- {file}", {"file": STRING}).call_tool("t", {"file": "notes.txt"}))


def test_a_value_reaching_a_read_through_a_variable_is_refused_at_load(cli) -> None:
    with pytest.raises(ConfigurationError, match="through a variable"):
        cli('f={file}; cat -- "$f"', {"file": STRING})


def test_a_read_after_a_cd_it_cannot_follow_is_refused_at_load(cli) -> None:
    with pytest.raises(ConfigurationError, match="changes directory"):
        cli("cd / && cat -- {file}", {"file": STRING})


def test_a_read_after_a_plain_cd_is_checked_from_there(cli, work: Path, outside: Path) -> None:
    (work / "sub").mkdir()
    (work / "sub" / "in.txt").write_text("sub text\n")
    driver = cli("cd sub && cat -- {file}", {"file": STRING})
    assert "sub text" in str(driver.call_tool("t", {"file": "in.txt"}))
    with pytest.raises(PolicyDeniedError):
        driver.call_tool("t", {"file": "../../outside/secret"})


def test_without_cli_cwd_a_server_in_the_home_directory_reads_nothing_a_value_names(
    new_driver, write_file, tmp_path: Path, monkeypatch
) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text(f"{MARKER}\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(home)
    driver = new_driver(write_file(mcp_file(tool("t", {"cli": {"command": "cat -- {file}"}}, {"file": STRING}))))
    with pytest.raises(PolicyDeniedError, match="cli_cwd"):
        driver.call_tool("t", {"file": ".ssh/id_rsa"})


def test_the_git_diff_of_two_files_outside_is_refused(cli, work: Path, outside: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    driver = cli("git diff -- {a} {b}", {"a": STRING, "b": STRING})
    with pytest.raises(PolicyDeniedError):
        driver.call_tool("t", {"a": "notes.txt", "b": str(outside / "secret")})


def test_read_roots_must_be_absolute(cli) -> None:
    with pytest.raises(ConfigurationError, match="cli_read_roots"):
        cli("cat -- {file}", {"file": STRING}, cli_read_roots=["relative/dir"])


def test_a_read_path_after_a_variable_of_the_servers_environment_is_checked_with_its_value(
    cli, work: Path, outside: Path, monkeypatch
) -> None:
    monkeypatch.setenv("DATA_DIR", f"{work}/")
    driver = cli('cat -- "$DATA_DIR"{name}', {"name": STRING})
    assert "inside text" in str(driver.call_tool("t", {"name": "notes.txt"}))
    with pytest.raises(PolicyDeniedError):
        driver.call_tool("t", {"name": "../outside/secret"})
    with pytest.raises(ConfigurationError, match="cannot tell what this word becomes"):
        cli('D=/; cat -- "$D"{name}', {"name": STRING})


LIST = {"type": "array", "items": STRING}


@pytest.mark.parametrize(("command", "items"), [
    ("grep -- {pattern} notes.txt", ["MARKER", "{secret}"]),
    ("grep -e {pattern} notes.txt", ["MARKER", "{secret}"]),
    ("grep --regexp={pattern} notes.txt", ["MARKER", "{secret}"]),
    ("head -n {pattern} notes.txt", ["5", "{secret}"]),
    ("jq -n --arg v {pattern} '$v'", ["a", "$ENV.MCS_TEST_API_KEY"]),
])
def test_a_list_where_a_reading_program_takes_data_is_refused_before_its_items_become_operands(
    cli, outside: Path, monkeypatch, command: str, items: list[str]
) -> None:
    monkeypatch.setenv("MCS_TEST_API_KEY", MARKER)
    arguments = {"pattern": [item.replace("{secret}", str(outside / "secret")) for item in items]}
    driver = cli(command, {"pattern": LIST})
    with pytest.raises(InvalidInputError, match="one word only"):
        driver.call_tool("t", arguments)
    assert MARKER not in outcome(driver, arguments)


def test_a_list_of_one_item_where_a_reading_program_takes_data_still_runs(cli) -> None:
    driver = cli("grep -- {pattern} notes.txt", {"pattern": LIST})
    assert "inside text" in str(driver.call_tool("t", {"pattern": ["inside"]}))
    files = cli("grep -h -- inside {files}", {"files": LIST})
    assert str(files.call_tool("t", {"files": ["notes.txt", "notes.txt"]})).count("inside text") == 2


@pytest.mark.parametrize("command", [
    "[ -e {file} ] && echo yes || echo no",
    "[ ! -f {file} ] && echo no || echo yes",
    "[ -n x -a -r {file} ] && echo yes || echo no",
    "test -s {file} && echo yes || echo no",
])
@pytest.mark.parametrize("spelling", list(SPELLINGS))
def test_a_test_of_a_file_outside_is_refused_and_does_not_tell_whether_it_exists(
    cli, outside: Path, command: str, spelling: str
) -> None:
    driver = cli(command, {"file": STRING})
    arguments = {"file": SPELLINGS[spelling](outside)}
    with pytest.raises(PolicyDeniedError, match="cli_read_roots"):
        driver.call_tool("t", arguments)
    assert "yes" not in outcome(driver, arguments)


def test_a_test_of_a_file_inside_or_of_a_string_still_runs(cli) -> None:
    assert "yes" in str(cli("[ -e {file} ] && echo yes", {"file": STRING}).call_tool("t", {"file": "notes.txt"}))
    same = cli("[ {mode} = fast ] && test -n {mode} && echo yes", {"mode": STRING})
    assert "yes" in str(same.call_tool("t", {"mode": "fast"}))


@pytest.mark.parametrize("command", [
    "grep -R -e {pattern} .",
    "grep -rR -- {pattern} .",
    "grep --dereference-recursive -- {pattern} {dir}",
    "ls -LR -- {dir}",
    "ls -lL {dir}",
    "du -aL -- {dir}",
    "du --dereference -a {dir}",
    "diff -r -- {dir} {pattern}",
    "cp -rL -- {dir} {pattern}",
])
def test_a_program_that_follows_symlinks_inside_a_directory_takes_no_value(
    cli, work: Path, outside: Path, command: str
) -> None:
    (work / "sub").mkdir()
    (work / "sub" / "link").symlink_to(outside)
    with pytest.raises(ConfigurationError, match="follows the symlinks"):
        driver = cli(command, {"pattern": STRING, "dir": STRING})
        arguments = {"pattern": "MARKER", "dir": "sub"}
        assert MARKER not in outcome(driver, arguments) and "secret" not in outcome(driver, arguments)


def test_programs_that_keep_links_as_links_inside_a_directory_still_run(cli, work: Path, outside: Path) -> None:
    (work / "sub").mkdir()
    (work / "sub" / "link").symlink_to(outside)
    (work / "sub" / "in.txt").write_text("MARKER inside\n")
    grep = cli("grep -r -- {pattern} {dir}", {"pattern": STRING, "dir": STRING})
    text = str(grep.call_tool("t", {"pattern": "MARKER", "dir": "sub"}))
    assert "MARKER inside" in text and "MARKER-5f1c" not in text
    listing = cli("ls -R -- {dir}", {"dir": STRING})
    assert "secret" not in str(listing.call_tool("t", {"dir": "sub"}))
    (work / "other").mkdir()
    diff = cli("diff -r --no-dereference -- {a} {b}", {"a": STRING, "b": STRING})
    assert MARKER not in outcome(diff, {"a": "sub", "b": "other"})


def linked_out(new_driver, write_file, work: Path, reader: str) -> Any:
    """A file with a tool that makes links and ``reader``, which reads a path it names itself;
    after two checked calls of the first, ``in.txt`` leads to ``../outside/secret`` (each
    target was inside when checked: ``x/../outside/secret`` while ``x`` did not exist, then
    ``x`` -> ``.``)."""
    path = write_file(mcp_file(
        tool("link", {"cli": {"command": "ln -s -- {target} {name}"}}, {"target": STRING, "name": STRING}),
        tool("read", {"cli": {"command": reader}}, {"text": STRING}),
    ))
    driver = new_driver(path, cli_cwd=work)
    driver.call_tool("link", {"target": "x/../outside/secret", "name": "in.txt"})
    driver.call_tool("link", {"target": ".", "name": "x"})
    assert (work / "in.txt").resolve() == work.parent / "outside" / "secret"
    return driver


@pytest.mark.parametrize("reader", [
    "cat in.txt",
    "grep -- {text} in.txt",
    "echo {text}; head -n 3 'in.txt'",
    "cat < in.txt; echo {text}",
    "[ -s in.txt ] && echo yes {text}",
    "mkdir -p sub && cd sub && cat ../in.txt",
])
def test_a_path_the_command_reads_itself_cannot_follow_a_link_an_earlier_call_left_outside(
    new_driver, write_file, work: Path, outside: Path, reader: str
) -> None:
    driver = linked_out(new_driver, write_file, work, reader)
    with pytest.raises(PolicyDeniedError, match=r"in\.txt"):
        driver.call_tool("read", {"text": "MARKER"})
    assert MARKER not in outcome(driver, {"text": "MARKER"}, "read")


def test_a_path_the_command_reads_itself_inside_or_outside_by_its_own_choice_still_runs(
    cli, work: Path, tmp_path: Path
) -> None:
    (tmp_path / "shared.txt").write_text("shared text\n")
    (work / "alias.txt").symlink_to("notes.txt")
    driver = cli(f"cat notes.txt alias.txt {tmp_path / 'shared.txt'}; echo {{text}}", {"text": STRING})
    text = str(driver.call_tool("t", {"text": "done"}))
    assert text.count("inside text") == 2 and "shared text" in text


@pytest.mark.parametrize(("command", "arguments"), [
    ("diff -- {a} {b}", {"a": "left", "b": "right"}),
    ("diff -- {a} left", {"a": "notes.txt"}),
])
def test_diff_of_a_directory_holding_a_link_outside_is_refused(
    cli, work: Path, outside: Path, command: str, arguments: dict[str, str]
) -> None:
    (work / "left").mkdir()
    (work / "right").mkdir()
    (work / "left" / "notes.txt").symlink_to(outside / "secret")
    (work / "right" / "notes.txt").write_text("other\n")
    driver = cli(command, dict.fromkeys(arguments, STRING))
    with pytest.raises(PolicyDeniedError, match="symlink"):
        driver.call_tool("t", arguments)
    assert MARKER not in outcome(driver, arguments)


def test_diff_of_directories_whose_links_stay_inside_still_runs(cli, work: Path) -> None:
    (work / "left").mkdir()
    (work / "right").mkdir()
    (work / "left" / "notes.txt").symlink_to(work / "notes.txt")
    (work / "right" / "notes.txt").write_text("other\n")
    text = outcome(cli("diff -- {a} {b}", {"a": STRING, "b": STRING}), {"a": "left", "b": "right"})
    assert "inside text" in text and "other" in text


@pytest.mark.parametrize("reader", [
    "cat *.txt; echo {text}",
    "grep -- {text} ?n.txt",
    "grep -h -- {text} */*.txt",
])
def test_a_pattern_the_command_reads_itself_cannot_match_a_link_an_earlier_call_left_outside(
    new_driver, write_file, work: Path, outside: Path, reader: str
) -> None:
    (work / "logs").mkdir()
    driver = linked_out(new_driver, write_file, work, reader)
    (work / "logs" / "in.txt").symlink_to("../in.txt")
    with pytest.raises(PolicyDeniedError, match="symlink"):
        driver.call_tool("read", {"text": "MARKER"})
    assert MARKER not in outcome(driver, {"text": "MARKER"}, "read")


def test_a_pattern_the_command_reads_itself_matching_files_inside_still_runs(cli, work: Path) -> None:
    (work / "more.txt").write_text("more text\n")
    (work / "alias.txt").symlink_to("notes.txt")
    text = str(cli("cat *.txt; echo {text}", {"text": STRING}).call_tool("t", {"text": "done"}))
    assert "inside text" in text and "more text" in text


def test_cdpath_of_the_servers_environment_does_not_move_a_checked_cd(
    cli, work: Path, outside: Path, monkeypatch
) -> None:
    (outside / "sub").mkdir()
    (outside / "sub" / "notes.txt").write_text(f"{MARKER}\n")
    (work / "sub").mkdir()
    (work / "sub" / "notes.txt").write_text("inside sub\n")
    monkeypatch.setenv("CDPATH", str(outside))
    text = outcome(cli("cd sub && cat -- {file}", {"file": STRING}), {"file": "notes.txt"})
    assert "inside sub" in text and MARKER not in text


@pytest.mark.parametrize("command", ["CDPATH={root} cd sub && cat -- {{file}}",
                                     "export CDPATH={root}; cd sub && cat -- {{file}}"])
def test_a_script_that_sets_cdpath_cannot_have_a_cd_followed(cli, outside: Path, command: str) -> None:
    with pytest.raises(ConfigurationError, match="changes directory"):
        cli(command.format(root=outside), {"file": STRING})


def test_posixly_correct_of_the_servers_environment_does_not_turn_an_option_value_into_a_file(
    cli, outside: Path, monkeypatch
) -> None:
    monkeypatch.setenv("POSIXLY_CORRECT", "1")
    driver = cli("head notes.txt -n {count}", {"count": STRING})
    arguments = {"count": str(outside / "secret")}
    assert MARKER not in outcome(driver, arguments)
    assert "inside text" in str(driver.call_tool("t", {"count": "1"}))


@pytest.mark.parametrize("command", ["POSIXLY_CORRECT=1 head notes.txt -n {count}",
                                     "export POSIXLY_CORRECT=y; head notes.txt -n {count}",
                                     "set -a; set -o posix; head notes.txt -n {count}"])
def test_a_script_that_sets_posixly_correct_takes_no_value(cli, command: str) -> None:
    with pytest.raises(ConfigurationError, match="POSIXLY_CORRECT"):
        cli(command, {"count": STRING})


@pytest.mark.parametrize("command", ["jq -n --args '$v' x --rawfile v {file}",
                                     "jq -n --jsonargs '$v' 1 --slurpfile v {file}"])
def test_a_jq_option_after_args_still_names_a_file_that_is_checked(cli, outside: Path, command: str) -> None:
    driver = cli(command, {"file": STRING})
    arguments = {"file": str(outside / "secret")}
    with pytest.raises(PolicyDeniedError, match="cli_read_roots"):
        driver.call_tool("t", arguments)
    assert MARKER not in outcome(driver, arguments)


def test_jq_positional_arguments_after_args_are_data(cli) -> None:
    driver = cli("jq -n -r --args '$ARGS.positional | join(\",\")' {items}", {"items": LIST})
    assert "/etc/passwd,b" in str(driver.call_tool("t", {"items": ["/etc/passwd", "b"]}))


@pytest.mark.parametrize("command", [
    "grep -e MARKER --color {path}",
    "grep -e MARKER --colour {path}",
    "diff --color {path} notes.txt",
    "diff --unified {path} notes.txt",
    "ls --color {path}",
    "du -a --time {path}",
    "df --output {path}",
])
def test_the_word_after_an_option_whose_value_is_optional_is_a_checked_path(
    cli, outside: Path, command: str
) -> None:
    reads_files = command.startswith(("grep", "diff"))
    arguments = {"path": str(outside / "secret") if reads_files else str(outside)}
    driver = cli(command, {"path": STRING})
    with pytest.raises(PolicyDeniedError, match="cli_read_roots"):
        driver.call_tool("t", arguments)
    assert MARKER not in outcome(driver, arguments)


def test_an_optional_value_written_with_equals_is_data(cli) -> None:
    driver = cli("grep --color=never -e {pattern} notes.txt", {"pattern": STRING})
    assert "inside text" in str(driver.call_tool("t", {"pattern": "inside"}))


@pytest.mark.parametrize("reader", ["grep -R MARKER .", "ls -LR .", "wc --files0-from=names"])
def test_a_tool_that_reads_past_checked_paths_is_refused_beside_a_tool_that_takes_values(
    new_driver, write_file, work: Path, outside: Path, reader: str
) -> None:
    (work / "names").write_bytes(b"in.txt\0")
    path = write_file(mcp_file(
        tool("link", {"cli": {"command": "ln -s -- {target} {name}"}}, {"target": STRING, "name": STRING}),
        tool("read", {"cli": {"command": reader}}),
    ))
    with pytest.raises(ConfigurationError, match="reads past the paths MCS checks"):
        driver = new_driver(path, cli_cwd=work)
        driver.call_tool("link", {"target": "x/../outside/secret", "name": "in.txt"})
        driver.call_tool("link", {"target": ".", "name": "x"})
        text = outcome(driver, {}, "read")
        assert MARKER not in text and "secret" not in text


def test_a_tool_that_searches_without_following_links_still_loads_beside_one_that_takes_values(
    new_driver, write_file, work: Path, outside: Path
) -> None:
    driver = linked_out(new_driver, write_file, work, "grep -r -h {text} .")
    text = outcome(driver, {"text": "MARKER"}, "read")
    assert MARKER not in text and "PolicyDenied" not in text


def test_a_link_the_operator_placed_is_read_once_its_target_is_a_read_root(cli, work: Path, outside: Path) -> None:
    (work / "config.txt").symlink_to(outside / "secret")
    with pytest.raises(PolicyDeniedError, match="cli_read_roots"):
        cli("cat config.txt; echo {text}", {"text": STRING}).call_tool("t", {"text": "x"})
    allowed = cli("cat config.txt; echo {text}", {"text": STRING}, cli_read_roots=[str(outside)])
    assert MARKER in str(allowed.call_tool("t", {"text": "x"}))


# ----------------------------------------------------------------------------- words after a redirection


@pytest.mark.parametrize("command", [
    "cat < notes.txt {file}",
    "head -n 5 < notes.txt -- {file}",
    "cat 2> /dev/null {file}",
    "cat <<EOF {file}\nhi\nEOF",
    "cp < /dev/null -- {file} copy.txt",
])
def test_a_value_after_a_redirection_is_refused_at_load(cli, work: Path, outside: Path, command: str) -> None:
    # bash passes the word to the program; tree-sitter-bash reads it as another target of the
    # redirection, so the read check never saw it: cat printed the secret
    with pytest.raises(ConfigurationError, match="follows a redirection"):
        text = outcome(cli(command, {"file": STRING}), {"file": str(outside / "secret")})
        assert SECRET not in text
        assert not (work / "copy.txt").exists(), "cp copied the secret in"


def test_a_value_removed_after_a_redirection_is_refused_at_load(cli, outside: Path) -> None:
    with pytest.raises(ConfigurationError, match="follows a redirection"):
        outcome(cli("rm < /dev/null -- {file}", {"file": STRING}), {"file": str(outside / "victim")})
        assert (outside / "victim").exists(), "rm deleted outside the working directory"


def test_redirections_after_the_arguments_still_run(cli, work: Path) -> None:
    driver = cli("cat -- {file} < /dev/null 2> /dev/null", {"file": STRING})
    assert "inside text" in outcome(driver, {"file": "notes.txt"})
