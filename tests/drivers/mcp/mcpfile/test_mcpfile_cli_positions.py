"""Where a placeholder may sit in a CLI template: only positions proven to keep a value data.

The cases of the security review's finding 1 (values run as shell code) are here, each
with its input: refused at load with the line and the position named, or, where the
position is safe, run by real bash with hostile values and no marker file created.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from mcpfile_support import git_repository_with_a_change, mcp_file, tool
from support.security_cases import HOSTILE_SHELL_VALUES as HOSTILE

from mcs.errors import ConfigurationError, InvalidInputError, PolicyDeniedError, ToolCallError

STRING = {"type": "string"}


def cli_driver(new_driver, write_file, command: str, properties: dict | None = None,
               variables: dict | None = None, **options):
    invocation = {"cli": {"command": command, **({"templateVariables": variables} if variables else {})}}
    return new_driver(write_file(mcp_file(tool("t", invocation, properties or {"x": STRING}))), **options)


def refusal(new_driver, write_file, command: str, properties: dict | None = None, variables: dict | None = None) -> str:
    with pytest.raises(ConfigurationError) as error:
        cli_driver(new_driver, write_file, command, properties, variables)
    return str(error.value)


# ----------------------------------------------------------------------------- refused at load


@pytest.mark.parametrize(
    ("command", "position"),
    [
        # the program position, however it is reached
        ("A=1 {x} arg", "program name"),
        ("if true; then {x}; fi", "program name"),
        ("for i in 1; do {x}; done", "program name"),
        ("! {x}", "program name"),
        ("true && {x}", "program name"),
        ("exec {x} F", "builtin 'exec'"),
        ("time {x}", "'time', which runs its arguments"),
        # contexts where bash evaluates the value or reads it as a name
        ("[[ {x} -eq 5 ]]", "[[ ... ]]"),
        ('[[ "{x}" == a ]]', "[[ ... ]]"),
        ('let "y={x}+1"', "builtin 'let'"),
        ("declare -i v={x}", "assigned by declare"),
        ("local v={x}", "assigned by local"),
        ("printf -v {x} hi", "printf with -v"),
        ("printf -v{x} hi", "printf with -v"),
        ('printf -v"{x}" hi', "printf with -v"),
        ("test -v {x}", "test with -v"),
        ("[ -v {x} ]", "-v or -R"),
        ("read -r {x}", "builtin 'read'"),
        ("unset {x}", "unset"),
        ("a[{x}]=1", "array subscript"),
        ("echo $(( y + {x} ))", "arithmetic"),
        ("echo $(( {x} + 1 ))", "arithmetic"),
        ("(( {x} > 1 ))", "arithmetic"),
        ("case a in {x}) echo;; esac", "case pattern"),
        ("arr=({x} b)", "array assignment"),
        # programs that run their arguments, or their input, as code
        ("bash -c 'echo {x}'", "'bash' where it runs code"),
        ('bash -lc "echo {x}"', "'bash' where it runs code"),
        ('sh -ec "echo {x}"', "'sh' where it runs code"),
        ("eval echo {x}", "builtin 'eval'"),
        ("source {x}", "builtin 'source'"),
        (". {x}", "builtin '.'"),
        ("env FOO=1 ls {x}", "'env', which runs its arguments"),
        ("echo a | xargs rm {x}", "'xargs', which runs its arguments"),
        ("find . -name {x} -exec rm -f \\;", "find with -exec"),
        ("ssh host ls {x}", "'ssh', which runs its arguments"),
        ("sudo ls {x}", "'sudo', which runs its arguments"),
        ("su -c {x} root", "'su', which runs its arguments"),
        ("timeout 5 ls {x}", "'timeout', which runs its arguments"),
        ("nohup ./server --port {x} &", "'nohup', which runs its arguments"),
        ("watch ls {x}", "'watch', which runs its arguments"),
        ("python3 -c 'import sys' {x}", "'python3' where it runs code"),
        ("python3 {x}", "'python3' where it runs code"),
        ("perl -ne 'print' {x}", "'perl' where it runs code"),
        ("sed 's/a/{x}/' file", "'sed' where it runs code"),
        ("awk -v v={x} -f prog.awk", "'awk' where it runs code"),
        ("sed -e 's/a/b/' -e {x} file", "'sed' where it runs code"),
        ("bash -o pipefail -c 'echo {x}'", "'bash' where it runs code"),
        ("kubectl exec pod -- ls {x}", "runs in a container"),
        ("docker run image {x}", "runs in a container"),
        ("kubectl -n default exec pod -- ls {x}", "runs in a container"),
        ("docker --context c run image {x}", "runs in a container"),
        ("pip install {x}", "'pip install', which installs or runs the package"),
        ("pip --quiet install {x}", "'pip install', which installs or runs the package"),
        ("python3 -m pip install {x}", "'pip install', which installs or runs the package"),
        ("npm --silent exec {x}", "'npm exec', which installs or runs the package"),
        ("go run {x}", "'go run', which installs or runs the package"),
        ("busybox sh -c {x}", "'busybox', which runs its arguments"),
        ("busybox xargs sh -c {x}", "'busybox', which runs its arguments"),
        ("echo {x} | busybox sh", "pipe into busybox"),
        ("mawk -W exec {x}", "'mawk' where it runs code"),
        ("echo {x} | bash", "pipe into bash"),
        ("echo {x} | sh -s", "pipe into sh"),
        ("echo {x} | $SHELL", "pipe into $SHELL"),
        ("bash <<< {x}", "standard input of bash"),
        ("python3 < {x}", "standard input of python3"),
        ("cat <<EOF | sh\n{x}\nEOF", "pipe into sh"),
        ("source <(echo {x})", "builtin 'source'"),
        ("f() ( eval \"$1\" )\nf {x}", "the function 'f'"),
        ("$PROG {x}", "not a literal name"),
        # where a value would land in the environment or choose a file to write
        ("GIT_SSH_COMMAND={x} git fetch", "in front of a command"),
        ("echo hi > {x}", "output redirection"),
        ("echo hi >> {x}", "output redirection"),
        ("cat <<'EOF'\n{x}\nEOF", "delimiter is quoted"),
        ("echo $HOME{x}", "glued to a $variable"),
        ("PATH={x}\nls", "a variable bash itself reads"),
        ("IFS={x}\nls", "a variable bash itself reads"),
        # a value held in a variable is followed to every use
        ('ns="{x}"\necho $(( ns + 1 ))', "evaluates it"),
        ('ns="{x}"\n[[ $ns -eq 1 ]]', "[[ ... ]]"),
        ('ns="{x}"\nkubectl get pods -n $ns', "unquoted"),
        ('ns="{x}"\nprintf -v ns "%s" 1', "is named where bash evaluates it"),
        ('ns="{x}"\ndeclare -n ref=ns', "is named where bash evaluates it"),
        ('ns="{x}"\n[ -v ns ]', "is named where bash evaluates it"),
        ('ns="{x}"\neval "echo hi"', "also runs 'eval'"),
        ('ns="{x}"\nexport ns', "evaluates it or reads it as a name"),
        ('ns="{x}"\nset -a\necho "$ns"', "also runs 'set'"),
        ('ns="{x}"\necho "$ns" | bash', "pipe into bash"),
        ('a="{x}"\nb="pre $a"\nbash -c "$b"', "'bash' where it runs code"),
        ("for p in $(echo {x}); do echo $(( p )); done", "evaluates it"),
        ("rm $(echo {x})", "unquoted"),
    ],
)
def test_a_placeholder_outside_a_proven_safe_position_is_refused_at_load(
    new_driver, write_file, command: str, position: str
) -> None:
    message = refusal(new_driver, write_file, command)
    assert position in message
    assert "line " in message and "tool 't'" in message


def test_a_refusal_names_the_line_the_placeholder_and_the_safe_way(new_driver, write_file) -> None:
    message = refusal(new_driver, write_file, "echo start\nkubectl get pods -n $ns\nns={x}\n[[ {x} -eq 1 ]]")
    assert "line 4 ('[[ {x} -eq 1 ]]')" in message
    assert "{x} is an operand of [[ ... ]]" in message
    assert "use [ ... ] (the test builtin)" in message


def test_a_script_bash_cannot_parse_is_refused_with_its_line(new_driver, write_file) -> None:
    message = refusal(new_driver, write_file, "echo ok\nif true; then echo {x}\n")
    assert "is not valid bash" in message


def test_a_format_that_opens_a_quote_is_refused(new_driver, write_file) -> None:
    message = refusal(new_driver, write_file, "echo {x} end\"", {"x": STRING}, {"x": {"format": '"{x}'}})
    assert "templateVariables.x.format opens or closes a quote" in message


def test_unused_arguments_are_not_appended_where_they_would_run(new_driver, write_file, workdir) -> None:
    # gen-mcp appends arguments no placeholder uses to the last line: "echo hi | sh --x=..." would run them.
    driver = cli_driver(new_driver, write_file, "echo 'echo hi' | sh", {"extra": STRING}, cli_cwd=workdir)
    assert driver.call_tool("t", {}) == "hi\n"
    with pytest.raises(InvalidInputError, match="extra cannot be passed: the command does not use them"):
        driver.call_tool("t", {"extra": "touch MARKER"})
    no_marker(workdir)


def test_unused_arguments_are_not_appended_after_a_block(new_driver, write_file, workdir) -> None:
    driver = cli_driver(new_driver, write_file, "for i in 1; do echo {x}; done", {"x": STRING, "extra": STRING},
                        cli_cwd=workdir)
    assert driver.call_tool("t", {"x": "a"}) == "a\n"
    with pytest.raises(InvalidInputError, match="no safe place to append them"):
        driver.call_tool("t", {"x": "a", "extra": "b"})


def test_a_property_appended_as_an_option_that_runs_its_value_is_not_appended(new_driver, write_file, workdir) -> None:
    # An unused property is appended as --name=value: a property named after an option that
    # runs its value makes that option, whoever chose the name.
    subprocess.run("git init -q . && echo needle > f && git add f", shell=True, cwd=workdir, check=True)
    driver = cli_driver(new_driver, write_file, "git grep -l -e needle", {"open-files-in-pager": STRING},
                        cli_cwd=workdir)
    assert driver.call_tool("t", {}) == "f\n"
    with pytest.raises(InvalidInputError, match="no safe place to append them") as refused:
        driver.call_tool("t", {"open-files-in-pager": "touch MARKER;false"})
    assert "--open-files-in-pager=" in refused.value.message
    no_marker(workdir)


# ----------------------------------------------------------------------------- the review's inputs, run


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


def no_marker(folder: Path) -> None:
    assert not (folder / "MARKER").exists()
    assert not (folder / "M").exists()


def test_a_here_string_does_not_unquote_the_lines_after_it(new_driver, write_file, workdir) -> None:
    command = 'read -r g <<< Hello\necho "$g" {who}'
    driver = cli_driver(new_driver, write_file, command, {"who": STRING}, cli_cwd=workdir)
    value = "bash -c touch${IFS}M;id"
    assert driver.call_tool("t", {"who": value}) == f"Hello {value}\n"
    no_marker(workdir)


def test_a_shift_operator_is_not_a_here_document(new_driver, write_file, workdir) -> None:
    driver = cli_driver(new_driver, write_file, "echo $(( 1 << 2 ))\necho {x}", cli_cwd=workdir)
    assert driver.call_tool("t", {"x": "$(touch MARKER)"}) == "4\n$(touch MARKER)\n"
    no_marker(workdir)


def test_negative_numbers_never_become_options(new_driver, write_file, workdir) -> None:
    driver = cli_driver(new_driver, write_file, "kill -s TERM {pid}", {"pid": {"type": "integer"}}, cli_cwd=workdir)
    with pytest.raises(InvalidInputError, match="must not start with '-'"):
        driver.call_tool("t", {"pid": -1})


@pytest.fixture
def fake_kubectl(tmp_path: Path) -> dict[str, str]:
    """A ``kubectl`` on PATH that prints two pod names and records its argv."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "kubectl"
    script.write_text(
        f"#!{sys.executable}\nimport json, sys\n"
        "args = sys.argv[1:]\n"
        "if args[:2] == ['get', 'pods']:\n"
        "    print('pod/a'); print('pod/b')\n"
        "else:\n"
        "    print(json.dumps({'args': args}))\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


REAL_SCRIPTS = {
    "loop over kubectl output into jq": (
        "for pod in $(kubectl get pods -n {namespace} -o name); do\n"
        '  kubectl logs -n {namespace} "$pod" | jq -c .args\n'
        "done\n"
    ),
    "kubectl output piped into a while loop": (
        "kubectl get pods -n {namespace} -o name | while read -r pod; do\n"
        '  kubectl logs "$pod" -n {namespace} | jq -c .args\n'
        "done\n"
    ),
    "variables, if and printf": (
        'ns="{namespace}"\nif [ -n "$ns" ]; then\n  printf \'%s\\n\' "namespace $ns"\nelse\n  echo none\nfi\n'
    ),
    "here-string into jq": 'jq -r .n <<< "{json}"\n',
    "here-document": "cat <<EOF\nnamespace: {namespace}\nEOF\n",
    "here-document into a pipe": "cat <<EOF | tr a-z A-Z\nnamespace: {namespace}\nEOF\n",
    "redirections and a background job": (
        'sleep 0 > /dev/null 2>&1 &\necho "{namespace}" > out.txt\ncat < out.txt\nwait\n'
    ),
    "case on a value": 'case "{namespace}" in\n  prod) echo production;;\n  *) echo other;;\nesac\n',
    "test builtin": '[ "{namespace}" = prod ] && echo yes || echo no\n',
    "numbers in arithmetic": "echo $(( {count} * 2 ))\n",
}
REAL_PROPS = {"namespace": STRING, "json": STRING, "count": {"type": "integer"}}


def props_of(script: str) -> dict:
    return {name: schema for name, schema in REAL_PROPS.items() if "{" + name + "}" in script}


@pytest.mark.parametrize("name", sorted(REAL_SCRIPTS))
def test_scripts_authors_write_load_and_keep_every_value_data(
    new_driver, write_file, workdir, fake_kubectl, monkeypatch, name: str
) -> None:
    monkeypatch.setenv("PATH", fake_kubectl["PATH"])
    script = REAL_SCRIPTS[name]
    props = props_of(script)
    # kubectl is off the allow-list (kubectl exec runs code): the operator vouches for it
    # here; and for jq, which loads ~/.jq, beside kubectl, which
    # may write files (kubectl cp) MCS cannot see.
    driver = cli_driver(new_driver, write_file, script, props, cli_cwd=workdir,
                        cli_trusted_programs=["kubectl", "jq"])
    for value in HOSTILE:
        arguments = {"namespace": value, "json": json.dumps({"n": value}), "count": 3}
        output = driver.call_tool("t", {k: v for k, v in arguments.items() if k in props})
        assert isinstance(output, str)
        no_marker(workdir)


def test_the_kubectl_loop_passes_the_namespace_as_one_argument(
    new_driver, write_file, workdir, fake_kubectl, monkeypatch
) -> None:
    monkeypatch.setenv("PATH", fake_kubectl["PATH"])
    script = REAL_SCRIPTS["loop over kubectl output into jq"]
    driver = cli_driver(new_driver, write_file, script, props_of(script), cli_cwd=workdir,
                        cli_trusted_programs=["kubectl", "jq"])
    lines = driver.call_tool("t", {"namespace": "a b; touch MARKER"}).splitlines()
    assert [json.loads(line) for line in lines] == [
        ["logs", "-n", "a b; touch MARKER", "pod/a"], ["logs", "-n", "a b; touch MARKER", "pod/b"]
    ]
    no_marker(workdir)


def test_a_marked_argument_may_reach_a_program_that_runs_code(new_driver, write_file, workdir) -> None:
    # The author's explicit choice: the value is one argv entry of bash -c, nothing else.
    variables = {"script": {"format": "{script}", "x-mcs-runsAsCode": True}}
    driver = cli_driver(new_driver, write_file, "bash -c {script}", {"script": STRING}, variables, cli_cwd=workdir)
    assert driver.call_tool("t", {"script": "echo ran"}) == "ran\n"
    refused = refusal(new_driver, write_file, "bash -c {script}", {"script": STRING},
                      {"script": {"format": "{script}", "x-mcs-runsAsCode": "yes"}})
    assert "'bash' where it runs code" in refused


def test_arguments_after_a_literal_script_file_are_data(new_driver, write_file, workdir, tmp_path) -> None:
    program = tmp_path / "show.py"
    program.write_text("import json, sys\nprint(json.dumps(sys.argv[1:]))\n")
    # python3 is off the allow-list; trusted by the operator, its inline code stays refused.
    driver = cli_driver(new_driver, write_file, f"python3 '{program}' --name {{x}}", cli_cwd=workdir,
                        cli_trusted_programs=["python3"])
    for value in HOSTILE:
        assert json.loads(driver.call_tool("t", {"x": value})) == ["--name", value]
    no_marker(workdir)


# ----------------------------------------------------------------------------- programs that run a value


# (command, a value the real program runs as a shell command, what the refusal names). The
# program reads the argument, or its standard input, as commands of its own language (sqlite3
# .shell, ed !, vim -c !, make VAR:=$(shell)), or takes the value of one option as a command
# to run (git -c core.fsmonitor=, tar -I, tar --checkpoint-action=exec=, zip -TT, scp -o).
RUNS_A_VALUE = [
    ("sqlite3 :memory: {x}", ".shell touch MARKER", "'sqlite3', which reads its arguments"),
    ("sqlite3 :memory: <<< {x}", ".system touch MARKER", "standard input of sqlite3"),
    ("echo {x} | sqlite3 :memory:", ".shell touch MARKER", "pipe into sqlite3"),
    ("echo {x} | ed -s", "!touch MARKER", "pipe into ed"),
    ("ed -s {x} <<< q", "!touch MARKER", "'ed', which reads its arguments"),
    ("vim -es -c {x} -c q", "!touch MARKER", "'vim', which reads its arguments"),
    ("vi -es {x}", "+!touch MARKER", "'vi', which reads its arguments"),
    ("printf 'all:\\n\\t@true\\n' > Makefile\nmake -s -- {x}", "X:=$(shell touch MARKER)",
     "'make', which reads its arguments"),
    ("git init -q . && git -c {x} status", "core.fsmonitor=touch MARKER", "git -c"),
    ("git init -q . && git ls-remote --upload-pack {x} .", "touch MARKER;", "git --upload-pack"),
    ("echo a > in && tar -I {x} -cf out.tar in", "touch MARKER;", "tar -I"),
    ("echo a > in && tar --checkpoint=1 --checkpoint-action={x} -cf out.tar in", "exec=touch MARKER",
     "tar --checkpoint-action"),
    ("echo a > in && zip -q out.zip in -T -TT {x}", "touch MARKER;", "zip -TT"),
    ("scp -o {x} h:f copy", "ProxyCommand=touch MARKER", "scp -o"),
    # the same options in the other spellings getopt and git accept: a cluster, a prefix
    ("echo a > in && tar -cI {x} -f out.tar in", "touch MARKER;", "tar -I"),
    ("echo a > in && tar -cf a.tar in && tar -xf a.tar --to-c {x}", "touch MARKER", "tar --to-command"),
    ("printf '#!/bin/sh\\ntouch MARKER\\nexec cat\\n' > mk && chmod +x mk && seq 200000 | "
     "sort -S 16k -T . --compress-prog={x} > /dev/null", "./mk", "sort --compress-program"),
    # a value glued to an option word completes it: git grep -O and git clone --upload-pack run it
    ("git init -q . && echo a > f && git add f && git grep -{x} a", "Otouch MARKER;false",
     "continues the option word '-'"),
    ("git init -q src && git clone -q --no-local --{x} src dst", "upload-pack=touch MARKER;false",
     "continues the option word '--'"),
    ("git init -q . && echo a > f && git add f && git grep -i{x} a", "Otouch MARKER;false",
     "continues the option word '-i'"),
    # git -C picks the repository whose configuration runs (a bare repository a clone brought in)
    ("git init -q evil && git -C evil remote add o ssh://h/r && git -C evil config core.sshCommand "
     "'touch ../MARKER; false' && git -C {x} fetch -q o", "evil", "git -C"),
    # cd: what runs after it runs there, and git obeys the configuration it finds there
    ("git init -q evil && git -C evil remote add o ssh://h/r && git -C evil config core.sshCommand "
     "'touch ../MARKER; false' && cd {x} && git fetch -q o", "evil", "'cd', which is not on the list"),
]


@pytest.mark.parametrize(("command", "value", "position"), RUNS_A_VALUE, ids=[c for c, _, _ in RUNS_A_VALUE])
def test_a_program_that_runs_a_value_as_a_command_is_refused_unless_the_argument_is_marked(
    new_driver, write_file, workdir, monkeypatch, command: str, value: str, position: str
) -> None:
    program = command.split("&&")[-1].split("|")[-1].split()[0] if "make" not in command else "make"
    if shutil.which(program) is None:
        pytest.skip(f"{program} is not installed, so what it would run cannot be shown")
    # Under `make test` the runner's own make state (jobserver, flags, level) is in the
    # environment the tool inherits; the make case must show make itself, not that state.
    for name in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "MAKE_TERMOUT", "MAKE_TERMERR"):
        monkeypatch.delenv(name, raising=False)
    # GNU make's $(shell) fails with "make: -c: No such file or directory" when SHELL is
    # absent from the environment, as it is under CI; a server's shell has it.
    monkeypatch.setenv("SHELL", "/bin/sh")
    marked = {"x": {"format": "{x}", "x-mcs-runsAsCode": True}}
    driver = cli_driver(new_driver, write_file, command, {"x": STRING}, marked, cli_cwd=workdir)
    try:
        outcome: object = driver.call_tool("t", {"x": value})
    except ToolCallError as error:
        outcome = error
    assert (workdir / "MARKER").exists(), f"{program} did not run the value, so the case shows nothing: {outcome!r}"
    message = refusal(new_driver, write_file, command)
    assert position in message and "x-mcs-runsAsCode" in message


@pytest.mark.parametrize("command", ["jq -n {x}", "jq -n --arg v 1 {x}", "jq --indent 2 -n {x}", "yq e {x} f.yaml"])
def test_a_jq_filter_is_code_that_reads_the_servers_environment_and_takes_no_value(
    new_driver, write_file, workdir, monkeypatch, command: str
) -> None:
    if shutil.which("jq") is None:
        pytest.skip("jq is not installed, so what its filter would read cannot be shown")
    monkeypatch.setenv("MCS_TEST_SECRET", "s3cret-token")
    marked = {"x": {"format": "{x}", "x-mcs-runsAsCode": True}}
    leak = cli_driver(new_driver, write_file, "jq -n {x}", {"x": STRING}, marked, cli_cwd=workdir)
    assert "s3cret-token" in leak.call_tool("t", {"x": "$ENV.MCS_TEST_SECRET"})  # what the filter can read
    message = refusal(new_driver, write_file, command)
    assert f"'{command.split()[0]}' where it runs code" in message


def test_jq_arguments_and_input_stay_data(new_driver, write_file, workdir, monkeypatch) -> None:
    if shutil.which("jq") is None:
        pytest.skip("jq is not installed")
    monkeypatch.setenv("MCS_TEST_SECRET", "s3cret-token")
    value = "$ENV.MCS_TEST_SECRET"
    for command in ["jq -nr --arg v {x} '$v'", "jq -nr '$v' --arg v {x}", "jq -nr --args '$ARGS.positional[0]' {x}"]:
        driver = cli_driver(new_driver, write_file, command, cli_cwd=workdir)
        assert driver.call_tool("t", {"x": value}) == value + "\n"
    piped = cli_driver(new_driver, write_file, 'echo "{x}" | jq -r .', cli_cwd=workdir)
    assert piped.call_tool("t", {"x": json.dumps(value)}) == value + "\n"



@pytest.mark.parametrize("command", [
    "echo {x} | jq -n -f /dev/stdin",
    "jq -n -f /dev/stdin <<< {x}",
    "jq -n --from-file /dev/stdin <<< {x}",
    "jq -nf /dev/fd/0 <<< {x}",
    "printf '%s' {x} | jq -n -f /proc/self/fd/0",
    "jq -n -f ../../../../../../../../dev/stdin <<< {x}",
])
def test_jq_reading_its_filter_from_its_input_is_refused_at_load(
    new_driver, write_file, workdir, monkeypatch, command: str
) -> None:
    # -f names the filter file; /dev/stdin is the value: the model's filter read $ENV
    if shutil.which("jq") is None:
        pytest.skip("jq is not installed")
    monkeypatch.setenv("MCS_TEST_SECRET", "s3cret-token")
    with pytest.raises(ConfigurationError, match="runs its input as code"):
        driver = cli_driver(new_driver, write_file, command, cli_cwd=workdir)
        assert "s3cret-token" not in str(driver.call_tool("t", {"x": "$ENV.MCS_TEST_SECRET"}))


def test_a_trusted_interpreter_reading_its_script_from_its_input_is_refused_at_load(
    new_driver, write_file, workdir
) -> None:
    # trusting python3 allows python3 tool.py {x}, not a script that is the value itself
    with pytest.raises(ConfigurationError, match="runs its input as code"):
        driver = cli_driver(new_driver, write_file, "python3 /dev/stdin <<< {x}", cli_cwd=workdir,
                            cli_trusted_programs=["python3"])
        driver.call_tool("t", {"x": "open('MARKER', 'w')"})
    no_marker(workdir)


def test_jq_with_a_filter_file_of_its_own_still_takes_its_input_as_data(new_driver, write_file, workdir) -> None:
    if shutil.which("jq") is None:
        pytest.skip("jq is not installed")
    (workdir / "prog.jq").write_text(".a\n")
    driver = cli_driver(new_driver, write_file, "jq -f prog.jq <<< {x}", cli_cwd=workdir)
    assert driver.call_tool("t", {"x": '{"a": "$ENV"}'}) == '"$ENV"\n'


# A name that bash resolves to something else than the program of that name: "e" below runs
# eval, bash -c, or bash itself; the analysis reads "e" as an unknown program taking data.
RENAMING = [
    ("shopt -s expand_aliases\nalias e=eval\ne {x}", "alias e=eval"),
    ("shopt -s expand_aliases\nalias e='bash -c'\ne {x}", "alias e="),
    ("set -o posix\nalias e=eval\ne {x}", "alias e=eval"),
    ("shopt -s expand_aliases\nBASH_ALIASES[e]=eval\ne {x}", "BASH_ALIASES[e]=eval"),
    ("hash -p /bin/bash e\ne -c {x}", "hash -p /bin/bash e"),
    ("BASH_CMDS[e]=/bin/bash\ne -c {x}", "BASH_CMDS[e]=/bin/bash"),
    ('command_not_found_handle() ( eval "$2" )\ne {x}', "command_not_found_handle"),
]


@pytest.mark.parametrize(("command", "where"), RENAMING, ids=[c.replace("\n", "; ") for c, _ in RENAMING])
def test_a_script_that_renames_programs_takes_no_value(new_driver, write_file, workdir, command: str,
                                                      where: str) -> None:
    marked = {"x": {"format": "{x}", "x-mcs-runsAsCode": True}}
    driver = cli_driver(new_driver, write_file, command, {"x": STRING}, marked, cli_cwd=workdir)
    driver.call_tool("t", {"x": "touch MARKER"})
    assert (workdir / "MARKER").exists(), "bash did not run the value: the case shows nothing"
    message = refusal(new_driver, write_file, command)
    assert "renames programs" in message and where in message


def test_npx_runs_the_package_a_value_names_and_takes_no_value(new_driver, write_file, workdir) -> None:
    if shutil.which("npx") is None:
        pytest.skip("npx is not installed, so what it would run cannot be shown")
    package = workdir / "pkg"
    package.mkdir()
    (package / "package.json").write_text('{"name": "mk", "version": "1.0.0", "bin": {"mk": "mk.js"}}')
    (package / "mk.js").write_text('#!/usr/bin/env node\nrequire("fs").writeFileSync("MARKER", "")\n')
    (package / "mk.js").chmod(0o755)
    marked = {"x": {"format": "{x}", "x-mcs-runsAsCode": True}}
    driver = cli_driver(new_driver, write_file, "npx --yes {x}", {"x": STRING}, marked, cli_cwd=workdir)
    with contextlib.suppress(ToolCallError):
        driver.call_tool("t", {"x": "./pkg"})
    assert (workdir / "MARKER").exists(), "npx did not run the package: the case shows nothing"
    assert "'npx', which installs or runs the package" in refusal(new_driver, write_file, "npx --yes {x}")


# read, mapfile and readarray put a value read from standard input in a variable, which was not
# followed: each of these ran "touch MARKER" through bash -c "$v" (git -c "$l" alike).
READ_INTO_A_VARIABLE = [
    ('read -r v <<< {x}; bash -c "$v"', "$v (which holds {x})"),
    ('read -r <<< {x}; bash -c "$REPLY"', "$REPLY (which holds {x})"),
    ('read -r v < <(echo {x}); bash -c "$v"', "$v (which holds {x})"),
    ('IFS= read -r v <<EOF\n{x}\nEOF\nbash -c "$v"', "$v (which holds {x})"),
    ('shopt -s lastpipe; echo {x} | read v; bash -c "$v"', "$v (which holds {x})"),
    ('echo {x} | while read -r l; do git -c "$l" status; done', "$l (which holds {x})"),
    ("read -r v <<< {x}; echo $v", "is unquoted"),
    ('read -r "$n" <<< {x}', "is assigned to"),
]


@pytest.mark.parametrize(("command", "named"), READ_INTO_A_VARIABLE,
                         ids=[c.replace("\n", "; ") for c, _ in READ_INTO_A_VARIABLE])
def test_a_value_read_into_a_variable_is_followed_like_an_assignment(new_driver, write_file, command: str,
                                                                     named: str) -> None:
    assert named in refusal(new_driver, write_file, command)


@pytest.mark.parametrize("command", [
    'read -r v <<< {x}; printf "%s\\n" "$v"',
    'read -r <<< {x}; printf "%s\\n" "$REPLY"',
    'echo {x} | while read -r l; do printf "%s\\n" "$l"; done',
])
def test_a_value_read_into_a_variable_and_used_quoted_stays_data(new_driver, write_file, workdir,
                                                                 command: str) -> None:
    driver = cli_driver(new_driver, write_file, command, cli_cwd=workdir)
    for value in HOSTILE:
        assert driver.call_tool("t", {"x": value}) == value + "\n"
    no_marker(workdir)


# ----------------------------------------------------------------------------- the allow-list of programs

# Programs off the allow-list, where each value would have reached the program unrefused before:
# an unknown program is not proven to keep a value data (sqlite3, make and git -c were found that way).
OFF_THE_LIST = [
    ("kubectl get pods -n {x}", "'kubectl'"),
    ("helm template r <<< {x}", "standard input of 'helm'"),
    ("echo {x} | ./deploy.sh", "piped into './deploy.sh'"),
    ("./deploy.sh --name {x}", "'./deploy.sh'"),
    ("curl -s {x}", "'curl'"),
    ("awk -f prog.awk {x}", "'awk'"),
    ("tar -xf {x}", "'tar'"),
    ("find . -name {x}", "'find'"),
    ("/opt/tools/cat {x}", "'/opt/tools/cat'"),
    ("git config user.name {x}", "'git config'"),
    ("git submodule foreach {x}", "'git submodule'"),
    ("git push origin {x}", "'git push'"),
    ('ns="{x}"\nkubectl get pods -n "$ns"', "'kubectl'"),
]


@pytest.mark.parametrize(("command", "program"), OFF_THE_LIST, ids=[c for c, _ in OFF_THE_LIST])
def test_a_program_off_the_allow_list_is_refused_naming_it_and_both_ways_out(new_driver, write_file, command: str,
                                                                             program: str) -> None:
    message = refusal(new_driver, write_file, command)
    assert "line " in message and program in message
    assert "not on the list" in message
    assert "cli_trusted_programs" in message and "x-mcs-runsAsCode: true" in message


def test_a_value_never_chooses_gits_subcommand(new_driver, write_file) -> None:
    assert "is git's subcommand" in refusal(new_driver, write_file, "git {x} --verbose")


@pytest.mark.parametrize(("command", "trusted"), [
    ("kubectl get pods -n {x}", "kubectl"),
    ("echo {x} | ./deploy.sh", "./deploy.sh"),
    ("git config user.name {x}", "git"),
])
def test_the_same_file_loads_when_the_operator_trusts_the_program_or_the_file_marks_the_argument(
    new_driver, write_file, command: str, trusted: str
) -> None:
    refusal(new_driver, write_file, command)
    cli_driver(new_driver, write_file, command, cli_trusted_programs=[trusted])
    cli_driver(new_driver, write_file, command, cli_trusted_programs=f"helm,{trusted}")  # the command line's form
    cli_driver(new_driver, write_file, command, {"x": STRING}, {"x": {"format": "{x}", "x-mcs-runsAsCode": True}})


def test_a_trusted_program_gets_each_value_verbatim_as_one_argument(new_driver, write_file, workdir, fake_kubectl,
                                                                    monkeypatch) -> None:
    monkeypatch.setenv("PATH", fake_kubectl["PATH"])
    driver = cli_driver(new_driver, write_file, "kubectl logs -n {x} pod/a", cli_cwd=workdir,
                        cli_trusted_programs=["kubectl"])
    for value in HOSTILE:
        assert json.loads(driver.call_tool("t", {"x": value})) == {"args": ["logs", "-n", value, "pod/a"]}
    no_marker(workdir)


@pytest.mark.parametrize(("command", "trusted", "position"), [
    ("python3 -c {x}", "python3", "'python3' where it runs code"),
    ("bash -c {x}", "bash", "'bash' where it runs code"),
    ("echo {x} | bash", "bash", "pipe into bash"),
    ("sqlite3 :memory: {x}", "sqlite3", "'sqlite3', which reads its arguments"),
    ("xargs {x}", "xargs", "'xargs', which runs its arguments"),
    ("kubectl exec pod -- ls {x}", "kubectl", "runs in a container"),
    ("npx {x}", "npx", "installs or runs the package"),
    ("tar -xI {x} -f a.tar", "tar", "tar -I"),
    ("tar -xf a.tar --to-c={x}", "tar", "tar --to-command"),
    ("git -C {x} status", "git", "git -C"),
    ("git rebase --exec {x} main", "git", "git --exec"),
    ("sort --compress {x} f", "sort", "sort --compress-program"),
    ("sort --compress-prog={x} f", "sort", "sort --compress-program"),
])
def test_trusting_a_program_does_not_lift_what_is_known_to_run_code(new_driver, write_file, command: str,
                                                                   trusted: str, position: str) -> None:
    with pytest.raises(ConfigurationError) as error:
        cli_driver(new_driver, write_file, command, cli_trusted_programs=[trusted])
    assert position in str(error.value)


def test_the_operator_option_takes_program_names_only(new_driver, write_file) -> None:
    with pytest.raises(ConfigurationError, match="cli_trusted_programs takes program names"):
        cli_driver(new_driver, write_file, "kubectl get {x}", cli_trusted_programs=["kubectl get"])


# Each program of the allow-list, with a command that shows what it received: (command, what to
# prepare in the folder for value v, what the call must give back or leave behind).
CONTENT = "content\n"


def _file(v: str) -> Callable[[Path], None]:
    return lambda d: (d / v).write_text(CONTENT)


def _files(v: str) -> Callable[[Path], None]:
    return lambda d: ((d / v).write_text(CONTENT), (d / "same").write_text(CONTENT), (d / "other").write_text("o\n"))


def _dir(v: str) -> Callable[[Path], None]:
    return lambda d: (d / v).mkdir()


Check = Callable[[str, Path, str], bool]
DATA_CASES: dict[str, tuple[str, Callable[[str], Callable[[Path], None]] | None, Check]] = {
    "echo": ("echo {x}", None, lambda out, d, v: out == v + "\n"),
    "printf": ("printf -- {x}", None, lambda out, d, v: out == v),
    "test": ("test {x} = {x} && echo same", None, lambda out, d, v: out == "same\n"),
    "[": ("[ {x} = {x} ] && echo same", None, lambda out, d, v: out == "same\n"),
    "true": ("true {x} && echo ok", None, lambda out, d, v: out == "ok\n"),
    "false": ("false {x} || echo ok", None, lambda out, d, v: out == "ok\n"),
    ":": (": {x}; echo ok", None, lambda out, d, v: out == "ok\n"),
    "pwd": ("pwd {x}", None, lambda out, d, v: out == f"{d}\n"),
    "kill": ("kill -s {x} -- 999999 2>&1 || echo refused", None,  # the process is checked at the call
             lambda out, d, v: v in out and out.endswith("refused\n")),
    "cat": ("cat -- {x}", _file, lambda out, d, v: out == CONTENT),
    "ls": ("ls -d --quoting-style=literal -- {x}", _file, lambda out, d, v: out == v + "\n"),
    "mkdir": ("mkdir -- {x}", None, lambda out, d, v: (d / v).is_dir()),
    "rmdir": ("rmdir -- {x}", _dir, lambda out, d, v: not (d / v).exists()),
    "touch": ("touch -- {x}", None, lambda out, d, v: (d / v).is_file()),
    "cp": ("cp -- {x} copy", _file, lambda out, d, v: (d / "copy").read_text() == CONTENT),
    "mv": ("mv -- {x} moved", _file, lambda out, d, v: (d / "moved").is_file() and not (d / v).exists()),
    "rm": ("rm -- {x}", _file, lambda out, d, v: not (d / v).exists()),
    "ln": ("ln -s -- {x} link", None, lambda out, d, v: os.readlink(d / "link") == v),
    "wc": ("wc -c <<< {x}", None, lambda out, d, v: out == f"{len(v.encode()) + 1}\n"),
    "head": ("head -n 1 <<< {x}", None, lambda out, d, v: out == v + "\n"),
    "tail": ("tail -n 1 <<< {x}", None, lambda out, d, v: out == v + "\n"),
    "cut": ("cut -c 1- <<< {x}", None, lambda out, d, v: out == v + "\n"),
    "tr": ("tr -d '\\n' <<< {x}", None, lambda out, d, v: out == v),
    "sort": ("echo {x} | sort", None, lambda out, d, v: out == v + "\n"),
    "uniq": ("uniq <<< {x}", None, lambda out, d, v: out == v + "\n"),
    "basename": ("basename -- {x}", None, lambda out, d, v: out == v + "\n"),
    "dirname": ('dirname -- "{x}/leaf"', None, lambda out, d, v: out == v + "\n"),
    "realpath": ("realpath -m --relative-to=. -- {x}", None, lambda out, d, v: out == v + "\n"),
    "stat": ("stat -c %n -- {x}", _file, lambda out, d, v: out == v + "\n"),
    "du": ("du -b -- {x}", _file, lambda out, d, v: out == f"{len(CONTENT)}\t{v}\n"),
    "df": ("df --output=file -- {x}", _file, lambda out, d, v: out.splitlines()[1:] == [v]),
    "date": ('date -u -d @0 "+{x}"', None, lambda out, d, v: out == v + "\n"),
    "sleep": ("sleep -- {x} 2>&1 || echo refused", None, lambda out, d, v: out.endswith("refused\n")),
    "uname": ("uname -s -- {x} 2>&1 || echo refused", None, lambda out, d, v: out.endswith("refused\n")),
    "nproc": ("nproc -- {x} 2>&1 || echo refused", None, lambda out, d, v: out.endswith("refused\n")),
    "whoami": ("whoami -- {x} 2>&1 || echo refused", None, lambda out, d, v: out.endswith("refused\n")),
    "id": ("id -- {x} 2>&1 || echo refused", None, lambda out, d, v: out.endswith("no such user\nrefused\n")),
    "md5sum": ("md5sum <<< {x}", None, lambda out, d, v: out == hashlib.md5((v + "\n").encode()).hexdigest() + "  -\n"),
    "sha1sum": ("sha1sum <<< {x}", None, lambda out, d, v: out == hashlib.sha1((v + "\n").encode()).hexdigest() + "  -\n"),
    "sha256sum": ("sha256sum <<< {x}", None,
                  lambda out, d, v: out == hashlib.sha256((v + "\n").encode()).hexdigest() + "  -\n"),
    "base64": ("base64 -w0 <<< {x}", None, lambda out, d, v: out == base64.b64encode((v + "\n").encode()).decode()),
    "grep": ("grep -F -x -- {x} <<< {x}", None, lambda out, d, v: out == v + "\n"),
    "egrep": ("egrep -x -e '.*' <<< {x}", None, lambda out, d, v: out.endswith(v + "\n")),
    "fgrep": ("fgrep -x -- {x} <<< {x}", None, lambda out, d, v: out.endswith(v + "\n")),
    "diff": ("diff -- {x} same && echo same", _files, lambda out, d, v: out == "same\n"),
    "cmp": ("cmp -- {x} other || true", _files, lambda out, d, v: out.startswith(f"{v} other differ")),
    "file": ("file -- {x}", _file, lambda out, d, v: out == f"{v}: ASCII text\n"),
    "jq": ("jq -nr --arg v {x} '$v'", None, lambda out, d, v: out == v + "\n"),
    "git": ("git init -q -- {x}", None, lambda out, d, v: (d / v / ".git" / "HEAD").is_file()),
}


def test_every_program_on_the_allow_list_has_a_case_below() -> None:
    from mcs_mcp.mcpfile.shell import DATA_PROGRAMS

    assert set(DATA_CASES) == set(DATA_PROGRAMS)


@pytest.mark.parametrize("program", sorted(DATA_CASES))
def test_every_program_on_the_allow_list_gets_a_hostile_value_verbatim_as_data(new_driver, write_file, tmp_path,
                                                                              program: str) -> None:
    command, prepare, check = DATA_CASES[program]
    executable = "bash" if program in ("[", ":", "true", "false", "test", "kill", "pwd") else program
    if shutil.which(executable) is None:
        pytest.skip(f"{program} is not installed")
    for index, value in enumerate([*HOSTILE, "-c core.fsmonitor=touch MARKER"]):
        folder = tmp_path / f"run{index}"
        folder.mkdir()
        if prepare is not None:
            prepare(value)(folder)
        driver = cli_driver(new_driver, write_file, command, cli_cwd=folder)
        try:
            output = driver.call_tool("t", {"x": value})
        except InvalidInputError as error:  # the call-time rule: a word starting with '-' and no '--' before
            assert value.startswith("-") and "must not start with '-'" in error.message
            continue
        assert isinstance(output, str)
        assert check(output, folder, value), (program, value, output)
        no_marker(folder)


# An option word bash reads after quote removal: "-v", '-c', -\v and -"e" are -v, -c and -e.
# The checks compared the word as written, so each of these loaded; bash runs the value.
QUOTED_OPTIONS = [
    ('test "-v" {x}', None, "test with -v"),
    ("printf '-v' {x} hi", None, "printf with -v"),
    ("printf -\\v {x} hi", None, "printf with -v"),
    ('python3 "-c" {x}', "python3", "'python3' where it runs code"),
    ("bash '-c' {x}", "bash", "'bash' where it runs code"),
    ('sed -"e" {x} f', "sed", "'sed' where it runs code"),
    ('kubectl "exec" pod -- ls {x}', "kubectl", "runs in a container"),
    ('find . "-exec" {x} ";"', "find", "find with -exec"),
    ("tar -\\I {x} -cf a.tar in", "tar", "tar -I"),
    ('git "clone" "--upload-pack" {x} r', "git", "git --upload-pack"),
    ("git -c'' {x} status", "git", "git -c"),
]


@pytest.mark.parametrize(("command", "trusted", "position"), QUOTED_OPTIONS, ids=[c for c, _, _ in QUOTED_OPTIONS])
def test_an_option_written_with_quotes_or_a_backslash_is_still_that_option(new_driver, write_file, command: str,
                                                                          trusted: str | None, position: str) -> None:
    with pytest.raises(ConfigurationError) as error:
        cli_driver(new_driver, write_file, command, cli_trusted_programs=[trusted] if trusted else [])
    assert position in str(error.value)


@pytest.mark.parametrize("script", ['test "-v" "$1"', "printf '-v' \"$1\" hi", 'printf -v"$1" hi'])
def test_bash_evaluates_a_subscript_named_by_a_quoted_v_option(workdir: Path, script: str) -> None:
    # What the refusal above prevents, shown with real bash: the value names an array element.
    import subprocess

    subprocess.run(["bash", "-c", script, "t", "a[$(touch MARKER)]"], cwd=workdir, check=False)
    assert (workdir / "MARKER").exists()


# ----------------------------------------------------------------------------- git's own configuration


def _embedded_bare_repository(folder: Path) -> Path:
    """A bare repository directory as a clone could carry it in its files: its config names
    a work tree and an fsmonitor command (``touch MARKER``), and it has an index."""
    bare, tree = folder / "inner.git", folder / "tree"
    tree.mkdir()
    (tree / "f").write_text("a\n")
    run = functools.partial(subprocess.run, check=True, capture_output=True)
    run(["git", "init", "-q", "--bare", str(bare)])
    run(["git", "-C", str(bare), "config", "core.worktree", str(tree)])
    run(["git", f"--git-dir={bare}", f"--work-tree={tree}", "add", "f"])
    run(["git", "-C", str(bare), "config", "core.fsmonitor", f"touch {folder / 'MARKER'}"])
    return bare


def test_a_bare_repository_found_by_walking_into_it_runs_no_command_of_its_config(
    new_driver, write_file, workdir
) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    bare = _embedded_bare_repository(workdir)
    driver = cli_driver(new_driver, write_file, f"cd '{bare}' && git status --short -- {{x}}", cli_cwd=workdir)
    with pytest.raises(ToolCallError) as refused:
        driver.call_tool("t", {"x": "f"})
    assert "cannot use bare repository" in refused.value.message
    no_marker(workdir)


@pytest.mark.parametrize("command", ['GIT_CONFIG_VALUE_1={x}; git status --short',
                                     'read -r GIT_EXTERNAL_DIFF <<< {x}; git diff',
                                     'SERVER_SETTING={x}; git status --short'])
def test_a_value_is_never_assigned_to_a_variable_of_the_environment_the_programs_get(
    new_driver, write_file, workdir, monkeypatch, command: str
) -> None:
    # the environment is exported: GIT_CONFIG_VALUE_1 is the core.fsmonitor MCS sets to false,
    # so assigning it chose the command git status runs
    monkeypatch.setenv("SERVER_SETTING", "operator's")
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    git_repository_with_a_change(workdir)
    with pytest.raises(ConfigurationError) as error:
        cli_driver(new_driver, write_file, command, cli_cwd=workdir)
    assert "a variable of the environment the programs of the command get" in str(error.value)
    if command.startswith("GIT_CONFIG"):  # what it did, with the environment MCS gives bash
        subprocess.run(["bash", "-c", command.replace("{x}", "'touch MARKER; false'")], cwd=workdir,
                       env={**os.environ, "GIT_CONFIG_COUNT": "2", "GIT_CONFIG_KEY_0": "safe.bareRepository",
                            "GIT_CONFIG_VALUE_0": "explicit", "GIT_CONFIG_KEY_1": "core.fsmonitor",
                            "GIT_CONFIG_VALUE_1": "false"}, capture_output=True, check=False)
        assert (workdir / "MARKER").exists(), "git ran no fsmonitor command: the case shows nothing"
    # a variable of the script's own takes the value as before
    driver = cli_driver(new_driver, write_file, 'note={x}; printf "%s" "$note"', cli_cwd=workdir)
    assert driver.call_tool("t", {"x": "$(touch MARKER2)"}) == "$(touch MARKER2)"


def test_git_config_a_deployment_sets_through_the_environment_is_kept(
    new_driver, write_file, workdir, monkeypatch
) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "user.name")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "Deploy Bot")
    driver = cli_driver(new_driver, write_file, "git config --get {x}", cli_cwd=workdir, cli_trusted_programs=["git"])
    assert driver.call_tool("t", {"x": "user.name"}).strip() == "Deploy Bot"
    assert driver.call_tool("t", {"x": "safe.bareRepository"}).strip() == "explicit"


# ----------------------------------------------------------------------------- every program of a command with values


@pytest.mark.parametrize(("command", "program"), [
    ("echo {x} > s.sh\nbash s.sh", "bash"),
    ("git clone -- {x} r && make -C r", "make"),
    ("printf '%s' {x} > cfg && python3 tool.py cfg", "python3"),
    ("mkdir -p -- {x} && ./deploy.sh", "./deploy.sh"),
])
def test_a_program_that_takes_no_value_is_still_refused_in_a_command_that_takes_one(
    new_driver, write_file, command: str, program: str
) -> None:
    message = refusal(new_driver, write_file, command)
    assert f"also runs {program!r}" in message and "cli_trusted_programs" in message
    assert "x-mcs-runsAsCode" in message


def test_the_operator_can_trust_such_a_program_and_the_file_can_mark_the_value(
    new_driver, write_file, workdir
) -> None:
    script = "printf '%s' {x} > out.txt && bash -c 'cat out.txt'"
    driver = cli_driver(new_driver, write_file, script, cli_cwd=workdir, cli_trusted_programs=["bash"])
    assert driver.call_tool("t", {"x": "$(touch MARKER)"}) == "$(touch MARKER)"
    no_marker(workdir)
    marked = {"x": {"format": "{x}", "x-mcs-runsAsCode": True}}
    assert cli_driver(new_driver, write_file, script, {"x": STRING}, marked, cli_cwd=workdir) is not None


def test_a_command_whose_only_values_are_the_servers_environment_may_run_any_program(
    new_driver, write_file, workdir, monkeypatch
) -> None:
    monkeypatch.setenv("GREETING", "hello")
    driver = cli_driver(new_driver, write_file, "printf '%s' {env.GREETING} > g && bash -c 'cat g'", {},
                        cli_cwd=workdir)
    assert driver.call_tool("t", {}) == "hello"


# ----------------------------------------------------------------------------- every CLI command of a file with values


def two_tools(new_driver, write_file, writer: str, runner: str, properties: dict | None = None, **options):
    """A file whose tool ``write`` takes the model's values and whose tool ``run`` takes none:
    one server, one working directory."""
    return new_driver(write_file(mcp_file(
        tool("write", {"cli": {"command": writer}}, {"x": STRING} if properties is None else properties),
        tool("run", {"cli": {"command": runner}}, {}),
    )), **options)


def file_refusal(new_driver, write_file, writer: str, runner: str, **options) -> str:
    with pytest.raises(ConfigurationError) as error:
        two_tools(new_driver, write_file, writer, runner, **options)
    return str(error.value)


# (tool that writes from a value, tool that runs what is there, the program, a value that runs there)
ACROSS_TOOLS = [
    ("printf '%s' {x} > notes.sh", "bash notes.sh", "bash", "touch MARKER"),
    ("echo {x} >> Makefile", "make -s", "make", "$(shell touch MARKER)"),
    ("mkdir -p repo && printf '%s' {x} > repo/setup.sh", "cd repo && bash setup.sh", "bash", "touch ../MARKER"),
    ("printf '%s' {x} > main.py", "python3 main.py", "python3", "open('MARKER', 'w')"),
    ("printf '%s' {x} > package.json", "npm test --silent", "npm", '{"scripts": {"test": "touch MARKER"}}'),
    # the value an env placeholder carries is the server's, but the command's program is still one that runs files
    ("printf '%s' {x} > notes.sh", "bash {env.MCS_TEST_SCRIPT}", "bash", "touch MARKER"),
]


@pytest.mark.parametrize(("writer", "runner", "program", "value"), ACROSS_TOOLS, ids=[r for _, r, _, _ in ACROSS_TOOLS])
def test_a_tool_that_runs_what_another_tool_wrote_from_a_value_is_refused_at_load(
    new_driver, write_file, workdir, monkeypatch, writer: str, runner: str, program: str, value: str
) -> None:
    for name in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES"):  # show make itself, not the runner's make
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SHELL", "/bin/sh")
    monkeypatch.setenv("MCS_TEST_SCRIPT", "notes.sh")
    message = file_refusal(new_driver, write_file, writer, runner, cli_cwd=workdir)
    assert "tool 'run'" in message and "line 1" in message and f"runs {program!r}" in message
    assert "tool 'write' of this file takes the model's values" in message
    assert "cli_trusted_programs" in message
    # the operator's choice: trusting the program loads the same file, and the chain is real
    driver = two_tools(new_driver, write_file, writer, runner, cli_cwd=workdir, cli_trusted_programs=[program])
    driver.call_tool("write", {"x": value})
    with contextlib.suppress(ToolCallError):
        driver.call_tool("run", {})
    assert (workdir / "MARKER").exists(), f"{program} did not run what the value wrote: the case shows nothing"


def test_arguments_appended_to_a_command_without_placeholders_are_the_models_values(
    new_driver, write_file, workdir
) -> None:
    # `>> notes.sh echo` takes no placeholder, but a property it does not use is appended as --text=...
    properties = {"text": STRING}
    message = file_refusal(new_driver, write_file, ">> notes.sh echo", "bash notes.sh", properties=properties)
    assert "tool 'write' of this file takes the model's values" in message and "runs 'bash'" in message
    driver = two_tools(new_driver, write_file, ">> notes.sh echo", "bash notes.sh", properties=properties,
                       cli_cwd=workdir, cli_trusted_programs=["bash"])
    driver.call_tool("write", {"text": "x; touch MARKER"})
    with contextlib.suppress(ToolCallError):
        driver.call_tool("run", {})
    assert (workdir / "MARKER").exists(), "bash did not run the appended argument: the case shows nothing"


def test_a_prompt_or_resource_command_is_held_like_a_tool(new_driver, write_file) -> None:
    data = mcp_file(tool("write", {"cli": {"command": "printf '%s' {x} > notes.sh"}}, {"x": STRING}))
    data["resources"] = [{"name": "notes", "description": "the notes, run", "uri": "file:///notes",
                          "invocation": {"cli": {"command": "bash notes.sh"}}}]
    with pytest.raises(ConfigurationError) as error:
        new_driver(write_file(data))
    assert "resource 'notes'" in str(error.value) and "runs 'bash'" in str(error.value)


def test_marking_a_value_of_one_tool_does_not_lift_the_check_of_another(new_driver, write_file) -> None:
    marked = mcp_file(
        tool("write", {"cli": {"command": "printf '%s' {x} > notes.sh",
                               "templateVariables": {"x": {"format": "{x}", "x-mcs-runsAsCode": True}}}},
             {"x": STRING}),
        tool("run", {"cli": {"command": "bash notes.sh"}}, {}),
    )
    with pytest.raises(ConfigurationError) as error:
        new_driver(write_file(marked))
    assert "runs 'bash'" in str(error.value) and "does not lift" in str(error.value)


def test_a_tool_that_already_runs_its_own_marked_value_as_code_is_not_held_again(new_driver, write_file,
                                                                                 workdir) -> None:
    data = mcp_file(
        tool("write", {"cli": {"command": "printf '%s' {x} > notes.txt"}}, {"x": STRING}),
        tool("calc", {"cli": {"command": "python3 -c {code}",
                              "templateVariables": {"code": {"format": "{code}", "x-mcs-runsAsCode": True}}}},
             {"code": STRING}),
    )
    driver = new_driver(write_file(data), cli_cwd=workdir)
    driver.call_tool("write", {"x": "hi"})
    assert driver.call_tool("calc", {"code": "print(open('notes.txt').read())"}) == "hi\n"


def test_a_file_whose_tools_take_no_model_value_may_run_any_program(new_driver, write_file, workdir) -> None:
    data = mcp_file(tool("write", {"cli": {"command": "printf 'echo built' > notes.sh"}}, {}),
                    tool("run", {"cli": {"command": "bash notes.sh"}}, {}))
    driver = new_driver(write_file(data), cli_cwd=workdir)
    driver.call_tool("write", {})
    assert driver.call_tool("run", {}) == "built\n"


def test_a_value_free_tool_of_listed_programs_loads_beside_one_that_takes_values(new_driver, write_file,
                                                                                 workdir) -> None:
    # git and jq, which run configuration a written file can be, are held apart (below)
    driver = two_tools(new_driver, write_file, "printf '%s' {x} > notes.txt",
                       "cat notes.txt && ls && wc -c < notes.txt", cli_cwd=workdir)
    driver.call_tool("write", {"x": "$(touch MARKER)"})
    assert driver.call_tool("run", {}).startswith("$(touch MARKER)")
    no_marker(workdir)


def test_a_value_free_status_tool_loads_beside_one_that_takes_values(new_driver, write_file, workdir) -> None:
    driver = two_tools(new_driver, write_file, "echo {x}", "sleep 0 && uname -s && nproc && whoami && id -u",
                       cli_cwd=workdir)
    assert driver.call_tool("run", {}).splitlines()[0] == os.uname().sysname


def test_a_program_the_servers_environment_names_is_shown_and_trusted_as_the_file_writes_it(
    new_driver, write_file, workdir, monkeypatch
) -> None:
    monkeypatch.setenv("RUNNER", "bash")
    message = file_refusal(new_driver, write_file, "printf '%s' {x} > notes.sh", "{env.RUNNER} notes.sh")
    assert "runs '{env.RUNNER}'" in message and "cli_trusted_programs=['{env.RUNNER}']" in message
    driver = two_tools(new_driver, write_file, "printf '%s' {x} > notes.sh", "{env.RUNNER} notes.sh",
                       cli_cwd=workdir, cli_trusted_programs=["{env.RUNNER}"])
    driver.call_tool("write", {"x": "echo ran"})
    assert driver.call_tool("run", {}) == "ran\n"


# ----------------------------------------------------------------------------- configuration a written file can be


WRITE_AND_COPY = [
    tool("write", {"cli": {"command": "printf '%s\\n' {text} > notes.txt"}}, {"text": STRING}),
    tool("copy", {"cli": {"command": "cp -- {src} {dst}"}}, {"src": STRING, "dst": STRING}),
]


def test_git_runs_the_diff_command_a_tool_wrote_into_git_config_so_the_file_is_refused_at_load(
    new_driver, write_file, workdir, home
) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    git_repository_with_a_change(workdir)
    path = write_file(mcp_file(*WRITE_AND_COPY, tool("diff", {"cli": {"command": "git diff"}}, {})))
    with pytest.raises(ConfigurationError) as error:
        new_driver(path, cli_cwd=workdir)
    message = str(error.value)
    assert "tool 'diff'" in message and "runs 'git'" in message and ".git/config" in message
    assert "tool 'write' writes files from the model's values" in message and "'> notes.txt'" in message
    assert "cli_trusted_programs=['git']" in message and "x-mcs-runsAsCode does not lift" in message
    # the operator's choice: trusting git loads the same file, and the chain is real
    driver = new_driver(path, cli_cwd=workdir, cli_trusted_programs=["git"])
    driver.call_tool("write", {"text": "[diff] external = touch MARKER #"})
    driver.call_tool("copy", {"src": "notes.txt", "dst": ".git/config"})
    with contextlib.suppress(ToolCallError):
        driver.call_tool("diff", {})
    assert (workdir / "MARKER").exists(), "git did not run the written diff.external: the case shows nothing"


@pytest.mark.parametrize(("command", "writer"), [
    ("printf '%s\\n' {text} > .git/config && git diff", "an output redirection '> .git/config'"),
    ("git diff -- {text} 2>&1; echo {text} | sort -o .git/config; git diff", "sort -o writes"),
    ("ln -sf -- {text} .git/config && git diff", "ln creates or replaces files"),
    ("uniq -- {text} && git diff", "uniq writes its second operand"),  # a list is two words: [notes, .git/config]
    ('for w in {text}; do echo "$w"; done >> .git/config; git diff', "an output redirection '>> .git/config'"),
])
def test_a_command_that_writes_from_a_value_and_runs_git_is_refused_at_load(
    new_driver, write_file, workdir, home, command: str, writer: str
) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    git_repository_with_a_change(workdir)
    path = write_file(mcp_file(tool("t", {"cli": {"command": command}}, {"text": STRING})))
    with pytest.raises(ConfigurationError) as error:
        new_driver(path, cli_cwd=workdir)
    assert "runs 'git'" in str(error.value) and "this tool writes files" in str(error.value)
    assert writer in str(error.value)
    if command.startswith("printf"):
        driver = new_driver(path, cli_cwd=workdir, cli_trusted_programs=["git"])
        with contextlib.suppress(ToolCallError):
            driver.call_tool("t", {"text": "[diff] external = touch MARKER #"})
        assert (workdir / "MARKER").exists(), "git did not run the written diff.external: the case shows nothing"


def test_a_program_the_operator_trusts_may_write_the_configuration_git_runs(new_driver, write_file, workdir,
                                                                           home) -> None:
    if shutil.which("git") is None or shutil.which("tee") is None:
        pytest.skip("git or tee is not installed")
    git_repository_with_a_change(workdir)
    command = "printf '%s\\n' {text} | tee .git/config > /dev/null && git diff"
    path = write_file(mcp_file(tool("t", {"cli": {"command": command}}, {"text": STRING})))
    with pytest.raises(ConfigurationError) as error:
        new_driver(path, cli_cwd=workdir, cli_trusted_programs=["tee"])
    assert "runs 'git'" in str(error.value) and "tee is trusted by the operator" in str(error.value)
    assert "cli_trusted_programs=['git', 'tee']" in str(error.value)
    driver = new_driver(path, cli_cwd=workdir, cli_trusted_programs=["tee", "git"])
    with contextlib.suppress(ToolCallError):
        driver.call_tool("t", {"text": "[diff] external = touch MARKER #"})
    assert (workdir / "MARKER").exists(), "git did not run what tee wrote: the case shows nothing"


def test_an_appended_output_option_makes_git_log_write_the_configuration_another_git_runs(
    new_driver, write_file, workdir, home
) -> None:
    # a property no placeholder uses is appended as --output=value: git log writes its output there
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    git_repository_with_a_change(workdir)
    path = write_file(mcp_file(
        tool("commit", {"cli": {"command": "git -c user.name=t -c user.email=t@example.org commit -q --allow-empty "
                                           "-m {message}"}}, {"message": STRING}),
        tool("last", {"cli": {"command": "git log -1 --format=%B"}}, {"output": STRING}),
        tool("diff", {"cli": {"command": "git diff"}}, {}),
    ))
    with pytest.raises(ConfigurationError) as error:
        new_driver(path, cli_cwd=workdir)
    message = str(error.value)
    assert "runs 'git'" in message and "tool 'last' writes files" in message and "--output" in message
    driver = new_driver(path, cli_cwd=workdir, cli_trusted_programs=["git"])
    driver.call_tool("commit", {"message": "[diff] external = touch MARKER #"})
    driver.call_tool("last", {"output": ".git/config"})
    with contextlib.suppress(ToolCallError):
        driver.call_tool("diff", {})
    assert (workdir / "MARKER").exists(), "git did not run what git log wrote: the case shows nothing"


def test_jq_loads_the_definitions_a_tool_copied_to_home_jq_so_the_file_is_refused_at_load(
    new_driver, write_file, workdir, home, monkeypatch
) -> None:
    if shutil.which("jq") is None:
        pytest.skip("jq is not installed")
    monkeypatch.setenv("MCS_TEST_SECRET", "s3cret-of-the-server")
    lower = tool("lower", {"cli": {"command": "jq -r '.[] | ascii_downcase' <<< '[\"A\"]'"}}, {})
    path = write_file(mcp_file(*WRITE_AND_COPY, lower))
    with pytest.raises(ConfigurationError) as error:
        new_driver(path, cli_cwd=workdir)
    message = str(error.value)
    assert "tool 'lower'" in message and "runs 'jq'" in message and "~/.jq" in message
    assert "cli_trusted_programs=['jq']" in message
    driver = new_driver(path, cli_cwd=workdir, cli_trusted_programs=["jq"])
    assert driver.call_tool("lower", {}) == "a\n"
    driver.call_tool("write", {"text": "def ascii_downcase: $ENV.MCS_TEST_SECRET;"})
    # trusting jq does not let the copy leave the working directory
    with pytest.raises(PolicyDeniedError):
        driver.call_tool("copy", {"src": "notes.txt", "dst": str(home / ".jq")})
    assert not (home / ".jq").exists()
    # the operator's choice: HOME as a directory the commands may write, and jq loads the copy
    driver = new_driver(path, cli_cwd=workdir, cli_trusted_programs=["jq"], cli_write_roots=[str(home)])
    driver.call_tool("copy", {"src": "notes.txt", "dst": str(home / ".jq")})
    assert driver.call_tool("lower", {}) == "s3cret-of-the-server\n", "jq did not load ~/.jq: the case shows nothing"


def test_git_and_jq_beside_tools_that_write_no_file_load_and_run(new_driver, write_file, workdir, home) -> None:
    if shutil.which("git") is None or shutil.which("jq") is None:
        pytest.skip("git or jq is not installed")
    git_repository_with_a_change(workdir)
    path = write_file(mcp_file(
        tool("log", {"cli": {"command": "git log --oneline -- {path} && git status --short"}}, {"path": STRING}),
        tool("diff", {"cli": {"command": "git diff -- {path}"}}, {"path": STRING}),
        tool("field", {"cli": {"command": "jq -r --arg k {key} '.[$k]' data.json"}}, {"key": STRING}),
        tool("dirs", {"cli": {"command": "mkdir -p -- {path} && touch -- {path}/keep"}}, {"path": STRING}),
    ))
    (workdir / "data.json").write_text('{"a": 1}')
    driver = new_driver(path, cli_cwd=workdir)
    assert " M f\n" in driver.call_tool("log", {"path": "f"})
    assert "+b" in driver.call_tool("diff", {"path": "f"})
    assert driver.call_tool("field", {"key": "a"}) == "1\n"
    driver.call_tool("dirs", {"path": "sub"})
    assert (workdir / "sub" / "keep").is_file()
