"""Property: whatever the value and the quoting around its placeholder, bash sees the value itself."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcpfile_support import mcp_file, tool
from mcs_mcp.mcpfile.driver import MCPFileDriver

# Printable text without control characters (refused by design), rich in shell syntax.
SHELLISH = st.text(
    alphabet=st.sampled_from([*"abc XYZ019'\"`$(){}[]<>|&;*?~!#%^=+,.:/\\-_@", "é", "→"]),
    min_size=1, max_size=40,
).filter(lambda s: not s.startswith("-"))

CONTEXTS = {
    "word": ("printf '%s' {x}", "{v}"),
    "double": ("printf '%s' \"<{x}>\"", "<{v}>"),
    "single": ("printf '%s' '<{x}>'", "<{v}>"),
    "ansi": ("printf '%s' $'<{x}>'", "<{v}>"),
    "substitution": ("printf '%s' \"$(printf '%s' {x})\"", "{v}"),
    "heredoc": ("cat <<EOF\n<{x}>\nEOF", "<{v}>\n"),
}


@pytest.fixture(scope="module")
def drivers(tmp_path_factory) -> dict[str, MCPFileDriver]:
    folder = tmp_path_factory.mktemp("prop")
    made = {}
    for name, (command, _) in CONTEXTS.items():
        path = folder / f"{name}.yaml"
        import yaml

        path.write_text(yaml.safe_dump(mcp_file(tool("t", {"cli": {"command": command}}, {"x": {"type": "string"}}))))
        made[name] = MCPFileDriver(path, cli_cwd=folder)
    return made


@pytest.mark.parametrize("context", sorted(CONTEXTS))
def test_values_arrive_unchanged_in_every_context(drivers, context, tmp_path_factory) -> None:
    driver = drivers[context]
    expected = CONTEXTS[context][1]

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(value=SHELLISH)
    def check(value: str) -> None:
        output = driver.call_tool("t", {"x": value})
        if context == "substitution":
            assert output == value.rstrip("\n")
        else:
            assert output == expected.replace("{v}", value)

    check()
    cwd = Path(driver.file.cli_options.cwd or ".")
    assert sorted(p.name for p in cwd.iterdir()) == sorted(f"{name}.yaml" for name in CONTEXTS)


# ----------------------------------------------------------------------------- the command checker, fuzzed

PREFIXES = ["", "read -r g <<< Hello\n", 'ns="{x}"\n', "A=1 ", "if true; then ", "for i in 1; do ", "! ",
            "time ", "exec ", "eval ", "echo $(( 1 << 2 ))\n", "cat <<EOF\n{x}\nEOF\n", "nohup "]
COMMANDS = ["echo {x}", "{x}", "printf '%s\\n' \"{x}\"", "[[ {x} == a ]]", "let y={x}", "declare v={x}",
            'bash -c "{x}"', "sh -ec '{x}'", 'bash -lc "echo {x}"', "echo $ns", 'echo "$ns"', "echo $(( ns ))",
            "cat <<'EOF'\n{x}\nEOF", "read -r {x}", "a[{x}]=1", "test -v {x}", "echo {x} | bash",
            "xargs echo {x}", "(( {x} ))", "printf -v {x} a", "[ {x} = a ]", 'echo "$(echo {x})"',
            "echo $(echo {x})", "env {x}", "echo '{x}'", "echo $'{x}'", "source <(echo {x})", "jq . <<< {x}"]
SUFFIXES = ["", "; fi", "; done", " &", " | cat", " > /dev/null", " | sh", "\n"]
HOSTILE_VALUES = st.sampled_from([
    "touch MARKER", "$(touch MARKER)", "`touch MARKER`", "a[$(touch MARKER)]", "bash -c touch${IFS}MARKER",
    "x; touch MARKER", "'; touch MARKER; '", '"; touch MARKER; "', "-c touch MARKER",
]) | SHELLISH


def test_whatever_the_checker_accepts_never_runs_a_value(tmp_path_factory) -> None:
    import yaml

    from mcs.errors import ConfigurationError, ToolCallError

    folder = tmp_path_factory.mktemp("checker")
    counter = iter(range(10**6))

    @settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(prefix=st.sampled_from(PREFIXES), command=st.sampled_from(COMMANDS), suffix=st.sampled_from(SUFFIXES),
           value=HOSTILE_VALUES)
    def check(prefix: str, command: str, suffix: str, value: str) -> None:
        path = folder / f"t{next(counter)}.yaml"
        template = prefix + command + suffix
        path.write_text(yaml.safe_dump(mcp_file(tool("t", {"cli": {"command": template}}, {"x": {"type": "string"}}))))
        try:
            driver = MCPFileDriver(path, cli_cwd=folder, timeout=5)
        except ConfigurationError:
            return  # refused at load: nothing can run
        with driver, contextlib.suppress(ToolCallError):  # refused, failed or timed out: what ran matters
            driver.call_tool("t", {"x": value})
        assert not (folder / "MARKER").exists(), f"{template!r} ran {value!r}"

    check()
