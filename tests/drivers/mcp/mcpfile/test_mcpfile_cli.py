"""CLI invocations with real commands: bash semantics kept, values only ever data.

The SECURITY.md cases A1 to A6 are here; each checks a marker file for side effects.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
from pathlib import Path

import pytest
from mcpfile_support import mcp_file, tool
from support.processes import assert_process_gone
from support.security_cases import A1_VALUES, A2_VALUES, A3_VALUES
from test_mcpfile_cli_egress import run_git

from mcs import AgentContext
from mcs.errors import (
    ConfigurationError,
    ExecutionError,
    InvalidInputError,
    PolicyDeniedError,
    ToolCallError,
    ToolTimeoutError,
)

GIT_PROPS = {
    "repoUrl": {"type": "string"},
    "depth": {"type": "integer", "minimum": 1, "maximum": 1000},
    "verbose": {"type": "boolean"},
}
GIT_VARS = {"depth": {"format": "--depth {depth}"}, "verbose": {"format": "--verbose", "omitIfFalse": True}}


@pytest.fixture
def argv_script(tmp_path: Path) -> str:
    """A command prefix that prints its argv as JSON (a stand-in for git)."""
    script = tmp_path / "record_argv.py"
    script.write_text("import json, sys\nprint(json.dumps(sys.argv[1:]))\n")
    return f"'{sys.executable}' '{script}'"


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "MARKER"


def cli_driver(new_driver, write_file, command: str, properties: dict | None = None, variables: dict | None = None,
               required: list[str] | None = None, **options):
    invocation = {"cli": {"command": command, **({"templateVariables": variables} if variables else {})}}
    return new_driver(write_file(mcp_file(tool("t", invocation, properties or {}, required))), **options)


def recorder_driver(new_driver, write_file, command: str, *args, **options):
    """A driver for a command run by the argv recorder, which the operator trusts: it is
    python, off the allow-list, and only ever prints its arguments."""
    return cli_driver(new_driver, write_file, command, *args, cli_trusted_programs=[sys.executable], **options)


def git(new_driver, write_file, argv_script: str, marker: Path, **options):
    command = f"touch '{marker}.spawned'; {argv_script} clone {{repoUrl}} {{depth}} {{verbose}}"
    return recorder_driver(new_driver, write_file, command, GIT_PROPS, GIT_VARS, ["repoUrl"], **options)


def spawned(marker: Path) -> bool:
    return Path(f"{marker}.spawned").exists()


# ----------------------------------------------------------------------------- the basics


def test_a_command_runs_and_returns_its_output(new_driver, write_file) -> None:
    driver = cli_driver(new_driver, write_file, "echo {msg}", {"msg": {"type": "string"}})
    assert driver.call_tool("t", {"msg": "hello world"}) == "hello world\n"


def test_template_variables_format_and_omit(new_driver, write_file, argv_script, marker) -> None:
    driver = git(new_driver, write_file, argv_script, marker)
    run = lambda **a: json.loads(driver.call_tool("t", a))  # noqa: E731
    assert run(repoUrl="https://h/r.git", depth=5, verbose=True) == ["clone", "https://h/r.git", "--depth", "5", "--verbose"]
    assert run(repoUrl="https://h/r.git", verbose=False) == ["clone", "https://h/r.git"]
    assert run(repoUrl="https://h/r.git") == ["clone", "https://h/r.git"]


def test_flag_only_format_without_omit_if_false_follows_presence(new_driver, write_file, argv_script) -> None:
    driver = recorder_driver(new_driver, write_file, f"{argv_script} {{force}}", {"force": {"type": "boolean"}},
                        {"force": {"format": "--force"}})
    assert json.loads(driver.call_tool("t", {"force": True})) == ["--force"]
    assert json.loads(driver.call_tool("t", {})) == []


def test_omit_if_false_with_a_placeholder_in_the_format(new_driver, write_file, argv_script) -> None:
    driver = recorder_driver(new_driver, write_file, f"{argv_script} {{color}}", {"color": {"type": "boolean"}},
                        {"color": {"format": "--color={color}", "omitIfFalse": True}})
    assert json.loads(driver.call_tool("t", {"color": True})) == ["--color=true"]
    assert json.loads(driver.call_tool("t", {"color": False})) == []


def test_a_quoted_format_keeps_the_value_one_word(new_driver, write_file, argv_script, tmp_path) -> None:
    # gen-mcp's ollama example: command 'ollama run {model} {prompt}', prompt format '"{prompt}"'.
    props = {"model": {"type": "string"}, "prompt": {"type": "string"}}
    driver = recorder_driver(new_driver, write_file, f"{argv_script} run {{model}} {{prompt}}", props,
                        {"prompt": {"format": '"{prompt}"'}}, cli_cwd=tmp_path)
    out = json.loads(driver.call_tool("t", {"model": "llama3", "prompt": 'Say "hi" $(touch MARKER)'}))
    assert out == ["run", "llama3", 'Say "hi" $(touch MARKER)']
    assert not (tmp_path / "MARKER").exists()


def test_a_template_variable_that_is_not_a_property_is_a_constant(new_driver, write_file, argv_script) -> None:
    driver = recorder_driver(new_driver, write_file, f"{argv_script} {{operation}} {{repo}}", {"repo": {"type": "string"}},
                        {"operation": {"format": "clone"}})
    assert json.loads(driver.call_tool("t", {"repo": "r"})) == ["clone", "r"]


def test_values_are_formatted_the_way_a_person_expects(new_driver, write_file, argv_script) -> None:
    props = {"b": {"type": "boolean"}, "n": {"type": "number"}, "i": {"type": "integer"},
             "files": {"type": "array", "items": {"type": "string"}}}
    driver = recorder_driver(new_driver, write_file, f"{argv_script} {{b}} {{n}} {{i}} {{files}}", props)
    out = json.loads(driver.call_tool("t", {"b": True, "n": 1.5, "i": 3, "files": ["a b", "c"]}))
    assert out == ["true", "1.5", "3", "a b", "c"]


def test_unreferenced_arguments_are_appended_in_schema_order(new_driver, write_file, argv_script) -> None:
    props = {"zeta": {"type": "string"}, "alpha": {"type": "integer"}, "mid": {"type": "boolean"},
             "path": {"type": "string"}}
    driver = recorder_driver(new_driver, write_file, f"{argv_script} {{path}}\n", props)
    out = json.loads(driver.call_tool("t", {"alpha": 2, "path": "p", "mid": False, "zeta": "z z"}))
    assert out == ["p", "--zeta=z z", "--alpha=2", "--mid=false"]


def test_a_missing_required_value_is_an_error_and_nothing_runs(new_driver, write_file, argv_script, marker) -> None:
    driver = git(new_driver, write_file, argv_script, marker)
    with pytest.raises(InvalidInputError, match="repoUrl"):
        driver.call_tool("t", {"depth": 1})
    assert not spawned(marker)


def test_bash_semantics_pipes_or_and_multiline_scripts(new_driver, write_file, tmp_path) -> None:
    out_file = tmp_path / "out.txt"
    command = f"echo {{word}} | tr a-z A-Z > '{out_file}'\nfalse || cat '{out_file}'\nif true; then echo done; fi"
    driver = cli_driver(new_driver, write_file, command, {"word": {"type": "string"}})
    assert driver.call_tool("t", {"word": "shout"}) == "SHOUT\ndone\n"


@pytest.mark.parametrize(
    ("command", "value", "expected"),
    [
        ('echo "Hello {name}!"', "World $(touch MARKER) `touch MARKER` $HOME", "Hello World $(touch MARKER) `touch MARKER` $HOME!\n"),
        ("echo 'id={name}'", "x'; touch MARKER; echo '", "id=x'; touch MARKER; echo '\n"),
        ("printf '%s\\n' $'<{name}>'", "a'b $(touch MARKER)", "<a'b $(touch MARKER)>\n"),
        ('echo "$(echo {name})"', "inner $(touch MARKER)", "inner $(touch MARKER)\n"),
        ("cat <<EOF\nHi {name}\nEOF", "$(touch MARKER) `id`", "Hi $(touch MARKER) `id`\n"),
        ("echo pre{name}post", "; touch MARKER", "pre; touch MARKERpost\n"),
        ('echo "$(cat <<EOF\nin \"sub\" {name}\nEOF\n)"', "$(touch MARKER)", 'in "sub" $(touch MARKER)\n'),
    ],
)
def test_placeholders_in_every_quoting_context_stay_data(new_driver, write_file, tmp_path, command, value, expected) -> None:
    driver = cli_driver(new_driver, write_file, command, {"name": {"type": "string"}}, cli_cwd=tmp_path)
    assert driver.call_tool("t", {"name": value}) == expected
    assert not (tmp_path / "MARKER").exists()


def test_a_multi_line_script_assigning_values_to_variables(new_driver, write_file, tmp_path) -> None:
    command = (
        'ns="{namespace}"\nname="{name}"\n'
        'if [ -n "$name" ]; then\n  echo "route $name in $ns"\nelse\n  echo none\nfi\n'
        'printf \'%s\\n\' "{namespace}/{name}" | tr a-z A-Z\n'
    )
    props = {"name": {"type": "string"}, "namespace": {"type": "string"}}
    driver = cli_driver(new_driver, write_file, command, props, cli_cwd=tmp_path)
    output = driver.call_tool("t", {"name": 'r"; touch MARKER; "', "namespace": "prod"})
    assert output == 'route r"; touch MARKER; " in prod\nPROD/R"; TOUCH MARKER; "\n'
    assert not (tmp_path / "MARKER").exists()


def test_placeholders_in_comments_are_ignored(new_driver, write_file) -> None:
    driver = cli_driver(new_driver, write_file, "# clones {x}\necho hi # {x}\necho {x}", {"x": {"type": "string"}})
    assert driver.call_tool("t", {"x": "v"}) == "hi\nv\n"


def test_numbers_in_arithmetic(new_driver, write_file) -> None:
    driver = cli_driver(new_driver, write_file, "echo $(( {n} + 1 ))", {"n": {"type": "integer"}})
    assert driver.call_tool("t", {"n": 41}) == "42\n"


def test_an_env_placeholder_is_passed_as_data(new_driver, write_file, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("MCS_TEST_GREETING", "hi; touch MARKER")
    driver = cli_driver(new_driver, write_file, "echo ${MCS_TEST_GREETING} {env.MCS_TEST_GREETING}", cli_cwd=tmp_path)
    assert driver.call_tool("t", {}) == "hi; touch MARKER hi; touch MARKER\n"
    assert not (tmp_path / "MARKER").exists()


def test_a_non_zero_exit_is_an_error_with_the_status(new_driver, write_file) -> None:
    driver = cli_driver(new_driver, write_file, "echo broken >&2; exit 3")
    with pytest.raises(ExecutionError) as error:
        driver.call_tool("t", {})
    assert "exited with status 3" in error.value.message and "broken" in error.value.message
    assert error.value.details["exit_status"] == 3


# ----------------------------------------------------------------------------- load-time refusals


@pytest.mark.parametrize(
    ("command", "match"),
    [
        ("eval echo {x}", "builtin 'eval'"),
        ("bash -c 'echo {x}'", "'bash' where it runs code"),
        ("sudo /bin/sh -c \"echo {x}\"", "'sudo', which runs its arguments"),
        ("echo a | xargs sh -c 'echo {x}'", "'xargs', which runs its arguments"),
        ("cat <<'EOF'\n{x}\nEOF", "delimiter is quoted"),
        ("echo $(( {x} + 1 ))", "arithmetic"),
        ("[[ 1 -eq {x} ]]", r"\[\[ \.\.\. \]\]"),
        ('echo "{x}', "not valid bash"),
        ("{x} --help", "program name"),
        ("echo a | {x}", "program name"),
    ],
)
def test_commands_that_would_run_a_value_as_code_are_refused(new_driver, write_file, command, match) -> None:
    with pytest.raises(ConfigurationError, match=match):
        cli_driver(new_driver, write_file, command, {"x": {"type": "string"}})


def test_a_format_must_not_change_the_quoting(new_driver, write_file) -> None:
    with pytest.raises(ConfigurationError, match="quote"):
        cli_driver(new_driver, write_file, "echo {x} end\"", {"x": {"type": "string"}}, {"x": {"format": '"{x}'}})


# ----------------------------------------------------------------------------- SECURITY A1 to A6


@pytest.mark.parametrize("value", A1_VALUES)
def test_a1_shell_metacharacters_reach_argv_literally(new_driver, write_file, argv_script, marker, tmp_path, value) -> None:
    driver = git(new_driver, write_file, argv_script, marker, cli_cwd=tmp_path)
    assert json.loads(driver.call_tool("t", {"repoUrl": value, "depth": 1})) == ["clone", value, "--depth", "1"]
    assert not (tmp_path / "MARKER").exists()


@pytest.mark.parametrize("arguments", A2_VALUES)
def test_a2_option_injection_is_refused_before_spawning(new_driver, write_file, argv_script, marker, arguments) -> None:
    driver = git(new_driver, write_file, argv_script, marker)
    with pytest.raises(InvalidInputError) as error:
        driver.call_tool("t", arguments)
    assert error.value.details["fields"] in (["repoUrl"], ["depth"])
    assert not spawned(marker)


def test_a2_leading_dash_is_data_after_double_dash(new_driver, write_file, argv_script) -> None:
    driver = recorder_driver(new_driver, write_file, f"{argv_script} clone -- {{repoUrl}}", {"repoUrl": {"type": "string"}})
    assert json.loads(driver.call_tool("t", {"repoUrl": "--upload-pack=x"})) == ["clone", "--", "--upload-pack=x"]


def test_a2_negative_numbers_are_options_too_unless_after_double_dash(new_driver, write_file, argv_script) -> None:
    # kill -s TERM -1 signals every process: a number starting with '-' is an option like any word.
    props = {"n": {"type": "integer"}, "xs": {"type": "array", "items": {"type": "number"}}}
    driver = recorder_driver(new_driver, write_file, f"{argv_script} {{n}} {{xs}}", props)
    assert json.loads(driver.call_tool("t", {"n": 5, "xs": [1.5, 2]})) == ["5", "1.5", "2"]
    with pytest.raises(InvalidInputError, match="must not start with '-'"):
        driver.call_tool("t", {"n": -5})
    with pytest.raises(InvalidInputError, match="must not start with '-'"):
        driver.call_tool("t", {"n": 5, "xs": [2, -1.5]})
    after = recorder_driver(new_driver, write_file, f"{argv_script} -- {{n}}", props)
    assert json.loads(after.call_tool("t", {"n": -5})) == ["--", "-5"]
    with pytest.raises(InvalidInputError, match="must not start with '-'"):
        recorder_driver(new_driver, write_file, f"{argv_script} {{xs}}",
                   {"xs": {"type": "array", "items": {"type": "string"}}}).call_tool("t", {"xs": ["ok", "-rf"]})


def test_a2_dash_values_inside_a_word_are_not_options(new_driver, write_file, argv_script) -> None:
    driver = recorder_driver(new_driver, write_file, f"{argv_script} --message={{m}}", {"m": {"type": "string"}})
    assert json.loads(driver.call_tool("t", {"m": "-x"})) == ["--message=-x"]


def test_a2_each_item_of_a_list_after_literal_text_is_a_word_that_may_not_be_an_option(
    new_driver, write_file, tmp_path: Path, marker: Path
) -> None:
    # refs/heads/{branches}: the first item is glued to the literal text, every later one is a
    # word of its own, where git fetch reads --upload-pack (run through the shell for a local remote)
    work, mirror = tmp_path / "work", tmp_path / "mirror.git"
    work.mkdir()
    run_git("init", "-q", "--bare", str(mirror))
    run_git("init", "-q", ".", cwd=work)
    (work / "f").write_text("a\n")
    run_git("add", "f", cwd=work)
    run_git("commit", "-q", "-m", "first", cwd=work)
    run_git("remote", "add", "origin", str(mirror), cwd=work)
    run_git("push", "-q", "origin", "HEAD:refs/heads/main", cwd=work)
    driver = cli_driver(new_driver, write_file, "git fetch -q origin refs/heads/{branches}",
                        {"branches": {"type": "array", "items": {"type": "string"}}}, cli_cwd=work)
    with pytest.raises(InvalidInputError, match="must not start with '-'"):
        driver.call_tool("t", {"branches": ["main", f"--upload-pack=touch '{marker}'; git-upload-pack"]})
    assert not marker.exists()
    driver.call_tool("t", {"branches": ["main", "main:refs/heads/copy"]})  # the later item is a refspec of its own
    assert (work / ".git" / "refs" / "heads" / "copy").is_file()


def test_a2_a_value_after_an_expansion_that_may_be_empty_starts_the_word(new_driver, write_file, tmp_path: Path) -> None:
    # "$DATA_DIR"{name} with DATA_DIR unset is the value alone: -o chose sort's output file
    (tmp_path / "victim").write_text("original\n")
    (tmp_path / "b").write_text("2\n1\n")
    driver = cli_driver(new_driver, write_file, 'sort "$DATA_DIR"{name}', {"name": {"type": "string"}}, cli_cwd=tmp_path)
    with pytest.raises(InvalidInputError, match="must not start with '-'"):
        driver.call_tool("t", {"name": f"-o{tmp_path / 'victim'}"})
    assert (tmp_path / "victim").read_text() == "original\n"
    assert driver.call_tool("t", {"name": "b"}) == "1\n2\n"
    # glued to an option word behind such an expansion, a value would choose the option: refused at load
    with pytest.raises(ConfigurationError, match="continues the option word '--'"):
        cli_driver(new_driver, write_file, 'git clone "$X"--{x} r', {"x": {"type": "string"}})


@pytest.fixture
def grep_work(tmp_path: Path) -> Path:
    """A repository with one file ``f`` holding ``hi``, where git grep -O would run its command."""
    work = tmp_path / "work"
    work.mkdir()
    run_git("init", "-q", ".", cwd=work)
    (work / "f").write_text("hi\n")
    run_git("add", "f", cwd=work)
    run_git("commit", "-q", "-m", "first", cwd=work)
    return work


def refused_at_load_or_harmless(new_driver, write_file, command: str, properties: dict, arguments: dict,
                                marker: Path, refusal: str, **options) -> None:
    """The command is refused at load naming ``refusal``; where it loads, a call with
    ``arguments`` must not run the marker's command (it did: that is the break)."""
    try:
        driver = cli_driver(new_driver, write_file, command, properties, **options)
    except ConfigurationError as error:
        assert refusal in str(error)
        return
    with contextlib.suppress(InvalidInputError, ExecutionError):
        driver.call_tool("t", arguments)
    assert not marker.exists(), f"the model's value ran as a command through {command!r}"
    pytest.fail(f"{command!r} loaded")


@pytest.mark.parametrize(("command", "properties", "value"), [
    ('v={x}; git grep -e hi "$v" -- f', {"x": {"type": "string"}}, "-Otouch {marker}"),
    ('v="{x}"; w="$v"; git grep -e hi "$w" -- f', {"x": {"type": "string"}}, "-Otouch {marker}"),
    ('for v in {x}; do git grep -e hi "$v" -- f; done', {"x": {"type": "array", "items": {"type": "string"}}},
     ["-Otouch {marker}"]),
])
def test_a2_a_value_held_in_a_variable_is_checked_where_the_variable_starts_a_word(
    new_driver, write_file, grep_work: Path, marker: Path, command: str, properties: dict, value
) -> None:
    # "$v" is git grep's first operand: -O<command> ran the model's command on every match
    driver = cli_driver(new_driver, write_file, command, properties, cli_cwd=grep_work)
    hostile = [v.format(marker=marker) for v in value] if isinstance(value, list) else value.format(marker=marker)
    with pytest.raises(InvalidInputError, match="must not start with '-'"):
        driver.call_tool("t", {"x": hostile})
    assert not marker.exists()
    assert driver.call_tool("t", {"x": ["HEAD"] if isinstance(value, list) else "HEAD"}) == "HEAD:f:hi\n"


@pytest.mark.parametrize("command", [
    'read -r v <<< {x}; git grep "$v" hi -- f',  # read drops the leading blank: " -O..." became -O...
    'v=-{x}; git grep "$v" hi -- f',  # the variable glues the value to an option word
    'v=$(echo {x}); git grep "$v" hi -- f',
])
def test_a2_a_variable_holding_more_than_the_value_may_not_start_a_word_before_dashdash(
    new_driver, write_file, grep_work: Path, marker: Path, command: str
) -> None:
    value = f"{'' if command.startswith('v=-') else ' -'}Otouch {marker}"
    refused_at_load_or_harmless(new_driver, write_file, command, {"x": {"type": "string"}}, {"x": value}, marker,
                                "holds more than the value alone", cli_cwd=grep_work)


def test_a2_a_variable_whose_text_starts_before_the_value_or_after_dashdash_loads(
    new_driver, write_file, grep_work: Path
) -> None:
    for command in ('v=./{x}; basename -- "$v"', 'read -r v <<< {x}; git grep -e hi -- "$v"',
                    'read -r v <<< {x}; printf "%s\n" "$v"'):
        assert cli_driver(new_driver, write_file, command, {"x": {"type": "string"}}, cli_cwd=grep_work).call_tool(
            "t", {"x": "f"}).strip() in ("./f", "f:hi", "f")


@pytest.mark.parametrize(("command", "value", "options"), [
    # $_ is the last argument of the command before: the value, past every check of it
    ('printf -- "%s\n" {x}; git grep "$_" hi -- f', "-Otouch {marker}", {}),
    ('echo {x}; bash -c "$_"', "touch {marker}", {"cli_trusted_programs": ["bash"]}),
    # the array MCS keeps the values in, reached by a name reference
    ('printf -- "%s\n" {x}; declare -n r=__MCS_ARGS; git grep "$r" hi -- f', "-Otouch {marker}", {}),
])
def test_a_value_reached_past_its_placeholder_is_refused_at_load(
    new_driver, write_file, grep_work: Path, marker: Path, command: str, value: str, options: dict
) -> None:
    refused_at_load_or_harmless(new_driver, write_file, command, {"x": {"type": "string"}},
                                {"x": value.format(marker=marker)}, marker, "{x} may be", cli_cwd=grep_work, **options)


@pytest.mark.parametrize("command", ['D=-; git grep "$D"{x} hi -- f', 'git grep "$(echo -)"{x} hi -- f'])
def test_a2_a_value_after_an_expansion_the_script_fills_is_refused_at_load(
    new_driver, write_file, grep_work: Path, marker: Path, command: str
) -> None:
    # the expansion is not empty: "-" + "Otouch MARKER" is git grep -O's command
    refused_at_load_or_harmless(new_driver, write_file, command, {"x": {"type": "string"}},
                                {"x": f"Otouch {marker}"}, marker, "which the script may fill with '-'",
                                cli_cwd=grep_work)


def test_a_variable_the_environment_holds_at_the_call_but_not_at_load_is_refused(
    new_driver, write_file, grep_work: Path, marker: Path, home: Path, monkeypatch
) -> None:
    # EDITOR was not in the environment at load, so EDITOR={x} was the script's own variable;
    # once the server's environment holds it, bash exports the value and git commit ran it as its editor
    for name in ("EDITOR", "VISUAL", "GIT_EDITOR"):
        monkeypatch.delenv(name, raising=False)
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "t")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "t@example.org")
    driver = cli_driver(new_driver, write_file, "EDITOR={x}; git commit -q --allow-empty", {"x": {"type": "string"}},
                        cli_cwd=grep_work)
    monkeypatch.setenv("EDITOR", "true")
    with pytest.raises(ToolCallError) as error:
        driver.call_tool("t", {"x": f"touch {marker}"})
    assert not marker.exists(), "git ran the model's value as its editor"
    assert isinstance(error.value, PolicyDeniedError)
    assert "EDITOR" in error.value.message


@pytest.mark.parametrize(("arguments", "field"), A3_VALUES)
def test_a3_type_range_and_control_characters(new_driver, write_file, argv_script, marker, arguments, field) -> None:
    driver = git(new_driver, write_file, argv_script, marker)
    with pytest.raises(InvalidInputError) as error:
        driver.call_tool("t", arguments)
    assert field in error.value.message
    assert not spawned(marker)


def test_a4_unknown_arguments_never_become_flags(new_driver, write_file, argv_script, marker) -> None:
    driver = git(new_driver, write_file, argv_script, marker)
    with pytest.raises(InvalidInputError, match="unexpected argument"):
        driver.call_tool("t", {"repoUrl": "r", "config": "/evil", "exec": "rm -rf /"})
    assert not spawned(marker)


def test_a4_undeclared_keys_never_become_flags_even_when_the_schema_allows_them(new_driver, write_file, argv_script,
                                                                               marker) -> None:
    invocation = {"cli": {"command": f"touch '{marker}.spawned'; {argv_script} {{a}}"}}
    schema_tool = tool("t", invocation, {"a": {"type": "string"}})
    schema_tool["inputSchema"]["additionalProperties"] = True
    driver = new_driver(write_file(mcp_file(schema_tool)), cli_trusted_programs=[sys.executable])
    with pytest.raises(InvalidInputError, match="'exec' is not declared"):
        driver.call_tool("t", {"a": "x", "exec": "rm -rf /"})
    assert not spawned(marker)


@pytest.mark.parametrize("header", ["Authorization", "Cookie", "Proxy-Authorization", "authorization"])
def test_a5_credential_headers_in_commands_are_refused_at_load(new_driver, write_file, header) -> None:
    with pytest.raises(ConfigurationError, match="credentials"):
        # curl is off the allow-list: the operator trusts it here, and the header is still refused.
        cli_driver(new_driver, write_file, f"curl -H 'X: {{headers.{header}}}' http://x", cli_trusted_programs=["curl"])


def test_a5_inbound_credentials_never_reach_argv_or_env(new_driver, write_file, argv_script) -> None:
    command = f"{argv_script} {{headers.X-Request-Id}} && env"
    # env prints the environment here (it runs its arguments, so it is off the allow-list).
    driver = cli_driver(new_driver, write_file, command, cli_trusted_programs=[sys.executable, "env"])
    context = AgentContext(metadata={"header:authorization": "Bearer SECRET", "header:cookie": "s=SECRET",
                                     "header:x-request-id": "req-1"})
    output = driver.call_tool("t", {}, context=context)
    assert json.loads(output.splitlines()[0]) == ["req-1"]
    assert "SECRET" not in output


def test_a6_a_runaway_command_is_killed_with_its_process_group(new_driver, write_file, tmp_path) -> None:
    pid_file = tmp_path / "child.pid"
    driver = cli_driver(new_driver, write_file, f"sleep 600 & echo $! > '{pid_file}'; wait", timeout=1)
    started = time.monotonic()
    with pytest.raises(ToolTimeoutError, match="timed out after 1 s"):
        driver.call_tool("t", {})
    assert time.monotonic() - started < 3
    assert_process_gone(int(pid_file.read_text()))


def test_a6_endless_output_is_capped_with_a_marker(new_driver, write_file) -> None:
    driver = cli_driver(new_driver, write_file, "head -c 1073741824 /dev/zero | tr '\\0' y", max_output_bytes=65536,
                        timeout=20)
    started = time.monotonic()
    text = driver.call_tool("t", {})
    assert time.monotonic() - started < 10
    assert text.startswith("y" * 1000)
    assert "[truncated: the output exceeded 65536 bytes" in text
    assert len(text) < 65536 + 200


def test_a_daemon_the_command_starts_in_the_background_survives(new_driver, write_file, tmp_path) -> None:
    pid_file = tmp_path / "daemon.pid"
    driver = cli_driver(new_driver, write_file, f"nohup sleep 30 > /dev/null 2>&1 & echo $! > '{pid_file}'")
    assert driver.call_tool("t", {}) == ""
    pid = int(pid_file.read_text())
    try:
        os.kill(pid, 0)  # still running
    finally:
        os.kill(pid, 9)


def test_a_background_child_holding_the_output_does_not_delay_the_result(new_driver, write_file, tmp_path) -> None:
    pid_file = tmp_path / "child.pid"
    driver = cli_driver(new_driver, write_file, f"sleep 30 & echo $! > '{pid_file}'; echo hi")
    started = time.monotonic()
    try:
        assert driver.call_tool("t", {}) == "hi\n"
        assert time.monotonic() - started < 5
    finally:
        os.kill(int(pid_file.read_text()), 9)


async def test_async_background_child_does_not_delay_or_leak(new_driver, write_file, tmp_path) -> None:
    pid_file = tmp_path / "child.pid"
    driver = cli_driver(new_driver, write_file, f"sleep 30 & echo $! > '{pid_file}'; echo hi")
    started = time.monotonic()
    try:
        assert await driver.acall_tool("t", {}) == "hi\n"
        assert time.monotonic() - started < 5
    finally:
        os.kill(int(pid_file.read_text()), 9)


# ----------------------------------------------------------------------------- async


async def test_async_commands_run_and_time_out(new_driver, write_file, tmp_path) -> None:
    driver = cli_driver(new_driver, write_file, "echo {msg}", {"msg": {"type": "string"}})
    assert await driver.acall_tool("t", {"msg": "$(id)"}) == "$(id)\n"
    pid_file = tmp_path / "child.pid"
    slow = cli_driver(new_driver, write_file, f"sleep 600 & echo $! > '{pid_file}'; wait", timeout=1)
    with pytest.raises(ToolTimeoutError):
        await slow.acall_tool("t", {})
    assert_process_gone(int(pid_file.read_text()))


async def test_cancelling_an_async_call_kills_the_process_group(new_driver, write_file, tmp_path) -> None:
    pid_file = tmp_path / "child.pid"
    driver = cli_driver(new_driver, write_file, f"sleep 600 & echo $! > '{pid_file}'; wait", timeout=None)
    task = asyncio.create_task(driver.acall_tool("t", {}))
    # A deadline that holds on a loaded machine: the shell may take seconds to start there.
    deadline = time.monotonic() + 60
    while not (pid_file.exists() and pid_file.read_text().strip()):
        assert not task.done(), task.result()
        assert time.monotonic() < deadline, "the command never wrote its child's pid"
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert_process_gone(int(pid_file.read_text()), within=10)
