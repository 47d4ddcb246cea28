"""Where a listed program writes from a model's value stays inside the command's working
directory (or a directory the operator allows with ``cli_write_roots``).

``cp -- {src} {dst}`` wrote ``~/.bashrc``, ``rm -- {file}`` deleted anything the server's
user can, and the corpus's ``git clone {depth} {verbose} {repoUrl} {path}`` with
``path=~/.config/git`` made the cloned repository's ``config`` the user's git configuration.
Real bash, real coreutils, real git against a repository served over dumb HTTP on loopback.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcpfile_support import mcp_file, tool
from test_mcpfile_cli_egress import bare_repository, run_git, serving

from mcs.errors import ConfigurationError, PolicyDeniedError, ToolCallError

STRING = {"type": "string"}


#: (command, the arguments for a target path, the name in the outside directory it aims at)
WRITERS: dict[str, tuple[str, Callable[[str], dict[str, str]], str]] = {
    "cp": ("cp -- {src} {dst}", lambda target: {"src": "a", "dst": target}, "victim"),
    "mv": ("mv -- {src} {dst}", lambda target: {"src": "a", "dst": target}, "victim"),
    "ln -s": ("ln -s -- {src} {dst}", lambda target: {"src": "a", "dst": target}, "newlink"),
    "rm": ("rm -- {file}", lambda target: {"file": target}, "victim"),
    "rm -r": ("rm -r -- {file}", lambda target: {"file": target}, "victim"),
    "touch": ("touch -- {file}", lambda target: {"file": target}, "new"),
    "mkdir -p": ("mkdir -p -- {file}", lambda target: {"file": target}, "newdir/sub"),
    "cp -t": ("cp -t {dir} -- {src}", lambda target: {"src": "a", "dir": target.rsplit("/", 1)[0]}, "a"),
    "sort -o": ("sort -o {dst} -- {src}", lambda target: {"src": "a", "dst": target}, "victim"),
    "uniq": ("uniq -- {src} {dst}", lambda target: {"src": "a", "dst": target}, "victim"),
}
SPELLINGS = {
    "absolute": lambda outside, name: str(outside / name),
    "dot-dot": lambda outside, name: f"../outside/{name}",
    "symlink inside": lambda outside, name: f"dirlink/{name}",
}


def properties_of(arguments: dict[str, str]) -> dict[str, Any]:
    return dict.fromkeys(arguments, STRING)


def untouched(outside: Path) -> bool:
    return (sorted(p.name for p in outside.iterdir()) == ["secret", "victim"]
            and (outside / "victim").read_text() == "original\n")


@pytest.mark.parametrize("spelling", list(SPELLINGS))
@pytest.mark.parametrize("writer", list(WRITERS))
def test_a_write_target_outside_the_working_directory_is_refused_and_nothing_runs(
    cli, work: Path, outside: Path, writer: str, spelling: str
) -> None:
    command, arguments, name = WRITERS[writer]
    target = SPELLINGS[spelling](outside, name)
    args = arguments(target)
    driver = cli(command, properties_of(args))
    with pytest.raises(PolicyDeniedError) as error:
        driver.call_tool("t", args)
    message = error.value.message
    assert (args.get("dst") or args.get("file") or args.get("dir", "")) in message
    assert str(work) in message and "cli_write_roots" in message
    assert untouched(outside)
    assert (work / "a").read_text() == "model's text\n"  # mv did not take it either


@pytest.mark.parametrize("writer", list(WRITERS))
def test_a_write_target_inside_the_working_directory_runs(cli, work: Path, outside: Path, writer: str) -> None:
    command, arguments, name = WRITERS[writer]
    (work / "victim").write_text("original\n")
    (work / "x").mkdir()
    args = arguments(f"./x/../{name}" if writer != "cp -t" else "./x/a")
    cli(command, properties_of(args)).call_tool("t", args)
    assert untouched(outside)
    if writer in ("rm", "rm -r"):
        assert not (work / "victim").exists()
    elif writer == "cp -t":
        assert (work / "x" / "a").is_file()
    else:
        assert (work / name).exists() or (work / name).is_symlink()


def test_a_value_starting_with_a_tilde_is_a_directory_named_tilde_inside(cli, work: Path, tmp_path: Path,
                                                                         monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    cli("mkdir -p -- {file}", {"file": STRING}).call_tool("t", {"file": "~/.config/git"})
    assert (work / "~" / ".config" / "git").is_dir()
    assert not (tmp_path / "home").exists()


def test_the_operator_can_allow_another_directory_with_cli_write_roots(cli, work: Path, outside: Path) -> None:
    args = {"src": "a", "dst": str(outside / "victim")}
    with pytest.raises(PolicyDeniedError):
        cli("cp -- {src} {dst}", properties_of(args)).call_tool("t", args)
    cli("cp -- {src} {dst}", properties_of(args), cli_write_roots=[str(outside)]).call_tool("t", args)
    assert (outside / "victim").read_text() == "model's text\n"
    # the command line's form: a comma-separated string
    cli("touch -- {file}", {"file": STRING}, cli_write_roots=f"{outside},{work}").call_tool(
        "t", {"file": "../outside/new"})
    assert (outside / "new").is_file()
    # a root the operator allows does not widen to its parent
    with pytest.raises(PolicyDeniedError):
        cli("touch -- {file}", {"file": STRING}, cli_write_roots=[str(outside)]).call_tool(
            "t", {"file": str(outside.parent / "elsewhere")})
    assert not (outside.parent / "elsewhere").exists()


def test_cli_write_roots_takes_absolute_directories(cli) -> None:
    with pytest.raises(ConfigurationError) as error:
        cli("touch -- {file}", {"file": STRING}, cli_write_roots=["relative/dir"])
    assert "cli_write_roots" in str(error.value)


@pytest.mark.parametrize("command", ['d={file}; touch -- "$d"', 'touch -- "$(printf %s {file})"',
                                     'for f in {file}; do rm -- "$f"; done'])
def test_a_write_target_a_value_reaches_through_a_variable_is_refused_at_load(cli, command: str) -> None:
    with pytest.raises(ConfigurationError) as error:
        cli(command, {"file": STRING})
    assert "through a variable or a substitution" in str(error.value)


def test_a_literal_directory_around_the_value_is_joined_before_the_check(cli, work: Path, outside: Path) -> None:
    driver = cli("mkdir -p -- out/{file}", {"file": STRING})
    with pytest.raises(PolicyDeniedError):
        driver.call_tool("t", {"file": "../../outside/newdir"})
    assert untouched(outside)
    driver.call_tool("t", {"file": "../x"})  # out/../x is still inside
    assert (work / "x").is_dir()


# ----------------------------------------------------------------------------- git


@pytest.fixture
def served(tmp_path: Path) -> Path:
    (tmp_path / "served").mkdir()
    bare_repository(tmp_path / "served", files={"config": "[diff]\n\texternal = touch MARKER #\n"})
    return tmp_path / "served"


@pytest.mark.parametrize("spelling", list(SPELLINGS))
def test_a_clone_into_a_directory_outside_is_refused_before_git_runs(cli, served: Path, outside: Path,
                                                                     spelling: str) -> None:
    driver = cli("git clone -q {url} {path}", {"url": STRING, "path": STRING}, egress_allow=["localhost"])
    with serving(served) as (port, seen):
        with pytest.raises(PolicyDeniedError) as error:
            driver.call_tool("t", {"url": f"http://127.0.0.1:{port}/r.git",
                                   "path": SPELLINGS[spelling](outside, "git")})
        assert seen == []
    assert "cli_write_roots" in error.value.message
    assert untouched(outside)


def test_a_clone_with_no_directory_is_checked_where_the_url_names_it(cli, served: Path, work: Path,
                                                                     tmp_path: Path) -> None:
    empty = tmp_path / "empty-outside"
    empty.mkdir()
    (work / "r").symlink_to(empty)  # git clone .../r.git would clone into r/, that is, outside
    driver = cli("git clone -q {url}", {"url": STRING}, egress_allow=["localhost"])
    with serving(served) as (port, seen):
        with pytest.raises(PolicyDeniedError):
            driver.call_tool("t", {"url": f"http://127.0.0.1:{port}/r.git"})
        assert seen == []
        (work / "r").unlink()
        driver.call_tool("t", {"url": f"http://127.0.0.1:{port}/r.git"})
    assert list(empty.iterdir()) == []
    assert (work / "r" / "config").is_file()


def test_a_clone_of_a_url_ending_in_bundle_is_checked_where_git_puts_it(cli, tmp_path: Path, work: Path) -> None:
    # git strips ".bundle" only from a local bundle file; an http(s) URL ending in x.bundle
    # clones into x.bundle/ (MCS checked x and x.git, and git wrote through a symlink x.bundle)
    (tmp_path / "served").mkdir()
    bare_repository(tmp_path / "served", "x.bundle")
    empty = tmp_path / "empty-outside"
    empty.mkdir()
    (work / "x.bundle").symlink_to(empty)
    driver = cli("git clone -q -- {url}", {"url": STRING}, egress_allow=["localhost"])
    with serving(tmp_path / "served") as (port, seen):
        with pytest.raises(PolicyDeniedError) as error:
            driver.call_tool("t", {"url": f"http://127.0.0.1:{port}/x.bundle"})
        assert seen == []
        assert "x.bundle" in error.value.message
        (work / "x.bundle").unlink()
        driver.call_tool("t", {"url": f"http://127.0.0.1:{port}/x.bundle"})
    assert list(empty.iterdir()) == []
    assert (work / "x.bundle" / "README").is_file()


def test_a_property_appended_beside_template_variables_loads_and_the_clone_is_still_confined(
    new_driver, write_file, served: Path, work: Path, outside: Path
) -> None:
    # The corpus clone command with one more property, appended as --branch=value. A
    # templateVariables group numbers its placeholders apart from the others; the appended
    # argument's number was taken as len(...) of them, and loading failed with an IndexError.
    invocation = {"cli": {"command": "git clone {depth} {verbose} {repoUrl} {path}", "templateVariables": {
        "depth": {"format": "--depth {depth}"}, "verbose": {"format": "--verbose", "omitIfFalse": True}}}}
    properties = {"repoUrl": STRING, "depth": {"type": "integer"}, "verbose": {"type": "boolean"},
                  "path": STRING, "branch": STRING}
    driver = new_driver(write_file(mcp_file(tool("t", invocation, properties))), cli_cwd=work,
                        egress_allow=["localhost"])
    with serving(served) as (port, seen):
        url = f"http://127.0.0.1:{port}/r.git"
        with pytest.raises(PolicyDeniedError):
            driver.call_tool("t", {"repoUrl": url, "depth": 1, "path": str(outside / "git"), "branch": "main"})
        assert seen == []
        driver.call_tool("t", {"repoUrl": url, "verbose": True, "path": "repos/x"})  # (a dumb server: no --depth)
    assert untouched(outside)
    assert (work / "repos" / "x" / "config").is_file()


def test_the_corpus_clone_tool_refuses_gits_user_configuration_and_clones_inside(
    corpus: Path, new_driver, served: Path, work: Path, tmp_path: Path, monkeypatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    driver = new_driver(corpus / "testdata" / "pkg__mcpfile__testdata__full-demo.yaml", cli_cwd=work,
                        egress_allow=["localhost"])
    with serving(served) as (port, seen):
        url = f"http://127.0.0.1:{port}/r.git"
        for path in (str(home / ".config" / "git"), "../home/.config/git"):
            with pytest.raises(PolicyDeniedError):
                driver.call_tool("clone_repo", {"repoUrl": url, "path": path, "verbose": True})
        assert seen == []
        assert not (home / ".config").exists()
        driver.call_tool("clone_repo", {"repoUrl": url, "path": "repos/x"})
    assert (work / "repos" / "x" / "config").is_file()
    with pytest.raises(PolicyDeniedError):
        driver.call_tool("ensure_dir_exists", {"path": str(home / ".config")})
    assert not (home / ".config").exists()


@pytest.mark.parametrize("command", ["git log --output={file} -1", "git diff --output {file}",
                                     "git shortlog -s --output={file} HEAD", "git blame --output {file} -- a",
                                     "git blame --outp={file} -- a"])
def test_git_output_outside_the_working_directory_is_refused(cli, work: Path, outside: Path, command: str) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    run_git("init", "-q", ".", cwd=work)
    run_git("add", "a", cwd=work)
    run_git("commit", "-q", "-m", "first", cwd=work)
    (work / "a").write_text("changed\n")
    driver = cli(command, {"file": STRING})
    with pytest.raises(PolicyDeniedError):
        driver.call_tool("t", {"file": str(outside / "victim")})
    assert untouched(outside)


def test_git_init_into_a_directory_outside_is_refused(cli, work: Path, outside: Path) -> None:
    driver = cli("git init -q --bare -- {dir}", {"dir": STRING})
    with pytest.raises(PolicyDeniedError):
        driver.call_tool("t", {"dir": "../outside/git"})
    assert untouched(outside)
    driver.call_tool("t", {"dir": "repos/y.git"})
    assert (work / "repos" / "y.git" / "config").is_file()


def test_a_value_under_git_work_tree_is_a_write_target(cli, work: Path, outside: Path) -> None:
    run_git("init", "-q", ".", cwd=work)
    run_git("add", "a", cwd=work)
    run_git("commit", "-q", "-m", "first", cwd=work)
    driver = cli("git --work-tree={dir} checkout HEAD -- .", {"dir": STRING})
    with pytest.raises(PolicyDeniedError):
        driver.call_tool("t", {"dir": str(outside)})
    assert untouched(outside)
    (work / "copy").mkdir()
    driver.call_tool("t", {"dir": "copy"})
    assert (work / "copy" / "a").read_text() == "model's text\n"


# ----------------------------------------------------------------------------- cd


def test_a_relative_value_is_checked_from_each_directory_the_script_changes_to(cli, work: Path,
                                                                               outside: Path) -> None:
    (work / "sub").mkdir()
    driver = cli("cd sub && touch -- {file}", {"file": STRING})
    with pytest.raises(PolicyDeniedError):  # sub/../x is inside, but from sub, ../../outside/new is not
        driver.call_tool("t", {"file": "../outside/new"})
    assert untouched(outside)
    driver.call_tool("t", {"file": "new"})
    assert (work / "sub" / "new").is_file()


@pytest.mark.parametrize("command", ["cd /tmp && rm -- {file}", "cd .. && touch -- {file}",
                                     "cd && touch -- {file}", "cd - && touch -- {file}",
                                     'cd "$HOME" && touch -- {file}'])
def test_a_write_target_after_a_cd_mcs_cannot_follow_is_refused_at_load(cli, command: str) -> None:
    with pytest.raises(ConfigurationError) as error:
        cli(command, {"file": STRING})
    assert "changes directory" in str(error.value)


@pytest.mark.parametrize(("command", "name"), [("cp a", "target-directory"), ("sort a", "output"),
                                               ("ln -s a", "target-directory"), ("git log -1", "output"),
                                               ("git shortlog -s HEAD", "output"), ("git blame a", "output")])
def test_an_appended_argument_that_names_where_the_program_writes_is_checked(cli, work: Path, outside: Path,
                                                                             command: str, name: str) -> None:
    # a property no placeholder uses is appended as --name=value (gen-mcp's rule)
    run_git("init", "-q", ".", cwd=work)
    run_git("add", "a", cwd=work)
    run_git("commit", "-q", "-m", "first", cwd=work)
    driver = cli(command, {name: STRING})
    target = str(outside) if name == "target-directory" else str(outside / "victim")
    with pytest.raises(PolicyDeniedError) as error:
        driver.call_tool("t", {name: target})
    assert target in error.value.message
    assert untouched(outside)


async def test_the_async_path_refuses_a_write_target_outside_too(cli, work: Path, outside: Path) -> None:
    driver = cli("rm -r -- {file}", {"file": STRING})
    with pytest.raises(PolicyDeniedError):
        await driver.acall_tool("t", {"file": "dirlink/victim"})
    assert untouched(outside)


def test_each_word_of_a_list_value_is_checked(cli, work: Path, outside: Path) -> None:
    driver = cli("rm -f -- {files}", {"files": {"type": "array", "items": STRING}})
    with pytest.raises(PolicyDeniedError):
        driver.call_tool("t", {"files": ["a", str(outside / "victim")]})
    assert untouched(outside) and (work / "a").exists()
    driver.call_tool("t", {"files": ["a"]})
    assert not (work / "a").exists()


def test_mcs_serve_takes_cli_write_roots_as_an_option(work: Path, outside: Path, write_file) -> None:
    import argparse

    from mcs_mcp.serving.cli import resolve_target

    data = mcp_file(tool("t", {"cli": {"command": "cp -- {src} {dst}"}}, {"src": STRING, "dst": STRING}),
                    runtime={"transportProtocol": "stdio"})
    path = write_file(data)
    options = [f"cli_cwd={work}"]
    driver, _ = resolve_target(argparse.Namespace(target=str(path), option=options))
    with pytest.raises(PolicyDeniedError):
        driver.call_tool("t", {"src": "a", "dst": str(outside / "victim")})
    assert untouched(outside)
    driver, _ = resolve_target(argparse.Namespace(target=str(path), option=[*options, f"cli_write_roots={outside}"]))
    driver.call_tool("t", {"src": "a", "dst": str(outside / "victim")})
    assert (outside / "victim").read_text() == "model's text\n"


def test_a_path_through_proc_self_is_not_resolved_in_the_servers_own_process(cli, work: Path, outside: Path,
                                                                              monkeypatch) -> None:
    # /proc/self/cwd is the server's directory when MCS resolves it, the program's when it runs
    (work / "d1" / "d2").mkdir(parents=True)
    monkeypatch.chdir(work / "d1" / "d2")
    driver = cli("cp -- {src} {dst}", {"src": STRING, "dst": STRING})
    with pytest.raises(PolicyDeniedError):
        driver.call_tool("t", {"src": "a", "dst": "/proc/self/cwd/../outside/victim"})
    assert untouched(outside)


def test_uniq_writes_the_second_item_of_a_list_its_only_operand_takes(cli, work: Path, outside: Path) -> None:
    # uniq -- {files}: one operand in the file, two words at the call; the second is uniq's output
    # the operator lets commands read the outside directory, not write there
    driver = cli("uniq -- {files}", {"files": {"type": "array", "items": STRING}}, cli_read_roots=[str(outside)])
    with pytest.raises(PolicyDeniedError) as error:
        driver.call_tool("t", {"files": ["a", str(outside / "victim")]})
    assert "uniq" in error.value.message and "cli_write_roots" in error.value.message
    assert untouched(outside)
    assert driver.call_tool("t", {"files": [str(outside / "victim")]}) == "original\n"  # the input is only read
    driver.call_tool("t", {"files": [str(outside / "victim"), "copy"]})
    assert (work / "copy").read_text() == "original\n"


def test_a_path_git_writes_after_git_c_is_checked_from_the_directory_git_runs_in(cli, work: Path,
                                                                                 outside: Path) -> None:
    (work / "sub").mkdir()
    (work / "sub" / "away").symlink_to(outside)  # sub/away/new is outside; ./away/new would be inside
    driver = cli("git -C sub init -q -- {dir}", {"dir": STRING})
    with pytest.raises(PolicyDeniedError):
        driver.call_tool("t", {"dir": "away/new"})
    assert untouched(outside)
    driver.call_tool("t", {"dir": "repos/y"})
    assert (work / "sub" / "repos" / "y" / ".git").is_dir()


@pytest.mark.parametrize("directory", ["{outside}", "..", "$HOME", "sub/../.."])
def test_a_write_target_after_a_git_c_mcs_cannot_follow_is_refused_at_load(cli, outside: Path,
                                                                           directory: str) -> None:
    # git -C /elsewhere init {dir} created /elsewhere/{dir}, whatever the value
    with pytest.raises(ConfigurationError) as error:
        cli(f"git -C {directory.format(outside=outside)} init -q -- {{dir}}", {"dir": STRING})
    assert "changes directory with 'git -C" in str(error.value)


def test_a_command_that_may_check_out_a_symlink_before_a_checked_write_is_refused_at_load(
    cli, work: Path, outside: Path
) -> None:
    # the path d/{f} was checked before the script ran, when d was a directory; the revision
    # the model chose has d -> the outside directory, so rm deleted outside it
    run_git("init", "-q", ".", cwd=work)
    (work / "d").mkdir()
    (work / "d" / "victim").write_text("inside\n")
    run_git("add", "d", cwd=work)
    run_git("commit", "-q", "-m", "a directory", cwd=work)
    run_git("checkout", "-q", "-b", "linked", cwd=work)
    run_git("rm", "-q", "-r", "d", cwd=work)
    (work / "d").symlink_to(outside)
    run_git("add", "d", cwd=work)
    run_git("commit", "-q", "-m", "a link", cwd=work)
    run_git("checkout", "-q", "main", cwd=work)
    command = "git checkout -q {rev} && rm -- d/{f}"
    try:
        driver = cli(command, {"rev": STRING, "f": STRING})
    except ConfigurationError as error:
        assert "runs 'git checkout' before it" in str(error) and "split the command" in str(error)
    else:
        with contextlib.suppress(ToolCallError):
            driver.call_tool("t", {"rev": "linked", "f": "victim"})
        assert untouched(outside), "rm deleted outside the working directory through the checked-out link"
        pytest.fail(f"{command!r} loaded")
    for later in ("rm -- d/{f} && git checkout -q {rev}", "git checkout -q {rev}"):
        cli(later, {"rev": STRING, "f": STRING} if "{f}" in later else {"rev": STRING})
    with pytest.raises(ConfigurationError, match="runs 'ln' before it"):
        cli("for f in a b; do ln -s -- {src} l; touch -- l/{f}; done", {"src": STRING, "f": STRING})


# ----------------------------------------------------------------------------- links left by earlier calls


def chained_link(new_driver, write_file, work: Path, writer: str) -> Any:
    """A file with a tool that makes links and ``writer``, which writes to a path it names itself;
    after two checked calls of the first, ``out.txt`` leads to ``../victim`` (each target was
    inside when checked: ``x/../victim`` while ``x`` did not exist, then ``x`` -> ``.``)."""
    path = write_file(mcp_file(
        tool("link", {"cli": {"command": "ln -s -- {target} {name}"}}, {"target": STRING, "name": STRING}),
        tool("write", {"cli": {"command": writer}}, {"text": STRING}),
    ))
    driver = new_driver(path, cli_cwd=work)
    driver.call_tool("link", {"target": "x/../victim", "name": "out.txt"})
    driver.call_tool("link", {"target": ".", "name": "x"})
    assert (work / "out.txt").resolve() == work.parent / "victim"
    return driver


@pytest.mark.parametrize("writer", [
    "printf '%s\\n' {text} > out.txt",
    "printf '%s\\n' {text} >> 'out.txt'",
    "echo {text}; echo done &> out.txt",
    "cp -- a out.txt",
    "printf '%s\\n' {text} | sort -o out.txt",
    "printf '%s\\n' {text} | uniq - out.txt",
    "mkdir -p sub && cd sub && printf '%s\\n' {text} > ../out.txt",
])
def test_a_path_the_command_writes_itself_cannot_follow_a_link_an_earlier_call_left_outside(
    new_driver, write_file, work: Path, tmp_path: Path, writer: str
) -> None:
    driver = chained_link(new_driver, write_file, work, writer)
    with pytest.raises(PolicyDeniedError, match=r"out\.txt"):
        driver.call_tool("write", {"text": "written by the model"})
    assert not (tmp_path / "victim").exists()


def test_a_path_the_command_writes_itself_inside_the_working_directory_still_runs(
    new_driver, write_file, work: Path
) -> None:
    path = write_file(mcp_file(
        tool("link", {"cli": {"command": "ln -s -- {target} {name}"}}, {"target": STRING, "name": STRING}),
        tool("write", {"cli": {"command": "printf '%s\\n' {text} > out.txt"}}, {"text": STRING}),
    ))
    driver = new_driver(path, cli_cwd=work)
    driver.call_tool("link", {"target": "notes/today.txt", "name": "out.txt"})
    (work / "notes").mkdir()
    driver.call_tool("write", {"text": "hello"})
    assert (work / "notes" / "today.txt").read_text() == "hello\n"


def test_a_path_the_file_writes_outside_the_working_directory_is_its_own_choice(
    cli, work: Path, tmp_path: Path
) -> None:
    log = tmp_path / "tool.log"
    cli(f"printf '%s\\n' {{text}} >> {log}", {"text": STRING}).call_tool("t", {"text": "logged"})
    assert log.read_text() == "logged\n"


def test_a_clone_into_a_directory_the_file_names_cannot_follow_a_link_an_earlier_call_left_outside(
    new_driver, write_file, work: Path, tmp_path: Path
) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    (tmp_path / "served").mkdir()
    bare_repository(tmp_path / "served", files={"README": "served\n"})
    (tmp_path / "empty").mkdir()  # git clones into an existing empty directory, also through a link
    path = write_file(mcp_file(
        tool("link", {"cli": {"command": "ln -s -- {target} {name}"}}, {"target": STRING, "name": STRING}),
        tool("clone", {"cli": {"command": "git clone -q -- {repoUrl} repo"}}, {"repoUrl": STRING}),
    ))
    # git beside a tool that writes from values loads only where the operator trusts git
    driver = new_driver(path, cli_cwd=work, egress_allow=["localhost"], cli_trusted_programs=["git"])
    driver.call_tool("link", {"target": "x/../empty", "name": "repo"})
    driver.call_tool("link", {"target": ".", "name": "x"})
    with serving(tmp_path / "served") as (port, seen):
        with pytest.raises(PolicyDeniedError, match="repo"):
            driver.call_tool("clone", {"repoUrl": f"http://127.0.0.1:{port}/r.git"})
        assert seen == []
    assert list((tmp_path / "empty").iterdir()) == []


@pytest.mark.parametrize("command", ["sort -S 64K -T {dir} -- big | tail -n 1",
                                     "sort -S 64K --temporary-directory={dir} big | tail -n 1",
                                     "sort -S 64K --temp {dir} big | tail -n 1"])
def test_the_directory_sort_writes_its_temporary_files_in_is_checked(cli, work: Path, outside: Path,
                                                                    command: str) -> None:
    # sort spills its input into files there when it outgrows its buffer (and leaves them when
    # killed at the deadline); the directory's change time shows that it wrote
    (work / "big").write_text("".join(f"{n}\n" for n in range(200000)))
    before = outside.stat().st_mtime_ns
    driver = cli(command, {"dir": STRING})
    with pytest.raises(PolicyDeniedError):
        driver.call_tool("t", {"dir": str(outside)})
    assert outside.stat().st_mtime_ns == before
    (work / "tmp").mkdir()
    assert driver.call_tool("t", {"dir": "tmp"}) == "99999\n"


# ----------------------------------------------------------------------------- a working directory the operator did not choose


def notes_and_copy(new_driver, write_file, **options: Any) -> Any:
    path = write_file(mcp_file(
        tool("note", {"cli": {"command": "printf '%s\\n' {text} > note.txt"}}, {"text": STRING}),
        tool("copy", {"cli": {"command": "cp -- {src} {dst}"}}, {"src": STRING, "dst": STRING}),
    ))
    return new_driver(path, **options)


@pytest.mark.parametrize("where", ["home", "root"])
def test_a_value_cannot_write_the_users_start_up_files_when_the_server_runs_in_home_or_root(
    new_driver, write_file, home: Path, monkeypatch, where: str
) -> None:
    # with no cli_cwd, the working directory is the server's own; started from HOME (or from /,
    # as some MCP clients start servers) every start-up file is "inside" it
    monkeypatch.chdir(home if where == "home" else "/")
    driver = notes_and_copy(new_driver, write_file)
    if where == "home":
        driver.call_tool("note", {"text": "touch MARKER"})
    source = "note.txt" if where == "home" else str(home / "note.txt")
    (home / "note.txt").write_text("touch MARKER\n")
    target = ".bashrc" if where == "home" else str(home / ".bashrc")
    with pytest.raises(PolicyDeniedError, match="cli_cwd"):
        driver.call_tool("copy", {"src": source, "dst": target})
    assert not (home / ".bashrc").exists()


def test_an_operator_who_names_home_as_the_working_directory_chose_it(new_driver, write_file, home: Path) -> None:
    driver = notes_and_copy(new_driver, write_file, cli_cwd=home)
    driver.call_tool("note", {"text": "hello"})
    driver.call_tool("copy", {"src": "note.txt", "dst": ".notes"})
    assert (home / ".notes").read_text() == "hello\n"


@pytest.mark.parametrize("command", ["file -C -m {magic}", "file -bC -m {magic}", "file --compile -m {magic}",
                                     "file --comp -m {magic}"])
def test_file_compiling_a_magic_file_a_value_names_is_refused_at_load(cli, work: Path, outside: Path, tmp_path: Path,
                                                                     command: str) -> None:
    # file -C writes <name>.mgc into the working directory, through a symlink there
    (tmp_path / "magic").write_text("0\tstring\tHELLO\thello file\n")
    (work / "magic.mgc").symlink_to(outside / "victim")
    with pytest.raises(ConfigurationError, match="file -C"):
        cli(command, {"magic": STRING}).call_tool("t", {"magic": str(tmp_path / "magic")})
    assert untouched(outside)


def test_file_reading_with_a_magic_file_a_value_names_still_loads_and_runs(cli, work: Path, tmp_path: Path) -> None:
    (tmp_path / "magic").write_text("0\tstring\tHELLO\thello file\n")
    (work / "greeting").write_text("HELLO there\n")
    driver = cli("file -b -m {magic} -- greeting", {"magic": STRING}, cli_read_roots=[str(tmp_path)])
    assert driver.call_tool("t", {"magic": str(tmp_path / "magic")}) == "hello file\n"


@pytest.mark.parametrize(("command", "arguments"), [
    ("cp -- {src} {dst}", {"src": "a", "dst": "box"}),
    ("cp -t {dst} -- {src}", {"src": "a", "dst": "box"}),
    ("cp -- {src} box", {"src": "a"}),
    ("cp -r -- {src} {dst}", {"src": "tree", "dst": "box"}),
])
def test_a_copy_into_a_directory_holding_a_link_outside_is_refused(
    cli, work: Path, outside: Path, command: str, arguments: dict[str, str]
) -> None:
    (work / "box").mkdir()
    (work / "box" / "a").symlink_to(outside / "victim")
    (work / "box" / "tree").mkdir()
    (work / "box" / "tree" / "a").symlink_to(outside / "victim")
    (work / "tree").mkdir()
    (work / "tree" / "a").write_text("model's text\n")
    with pytest.raises(PolicyDeniedError, match="symlink"):
        cli(command, dict.fromkeys(arguments, STRING)).call_tool("t", arguments)
    assert untouched(outside)


def test_a_copy_into_a_directory_whose_links_stay_inside_still_runs(cli, work: Path) -> None:
    (work / "box").mkdir()
    (work / "box" / "old").symlink_to(work / "a")
    cli("cp -- {src} {dst}", {"src": STRING, "dst": STRING}).call_tool("t", {"src": "a", "dst": "box"})
    assert (work / "box" / "a").read_text() == "model's text\n"


@pytest.mark.parametrize("command", ["cp -- {src} {dst}", "cp -- {src} box; echo {dst}"])
def test_a_copy_into_a_directory_too_large_to_check_is_refused_rather_than_walked(
    cli, work: Path, command: str
) -> None:
    from mcs_mcp.mcpfile.cli import TREE_ENTRIES

    (work / "box").mkdir()
    for index in range(TREE_ENTRIES // 100 + 1):
        folder = work / "box" / f"d{index}"
        folder.mkdir()
        for name in range(99):
            (folder / str(name)).touch()
    driver = cli(command, {"src": STRING, "dst": STRING})
    with pytest.raises(PolicyDeniedError, match=f"more than {TREE_ENTRIES}"):
        driver.call_tool("t", {"src": "a", "dst": "box"})
    assert not (work / "box" / "a").exists()
