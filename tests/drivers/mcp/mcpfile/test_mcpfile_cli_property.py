"""Property: whatever the value and the quoting around its placeholder, bash sees the value itself."""

from __future__ import annotations

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
