"""The ``mcs`` command line, as a subprocess and in-process; exit codes 0/1/2/3."""

from __future__ import annotations

import io
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from mcs import cli
from mcs.cli import EXIT_CALL_FAILED, EXIT_MISSING, EXIT_OK, EXIT_USAGE, main, parse_options

WEATHER_CALL = '{"tool": "get_weather", "arguments": {"city": "Tokyo"}}'


def run_mcs(*args: str, stdin: bytes | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m mcs.cli`` the way a user runs ``mcs``."""
    completed = subprocess.run(
        [sys.executable, "-m", "mcs.cli", *args],
        input=stdin,
        capture_output=True,
        timeout=60,
        env={**os.environ, **(env or {})},
        check=False,
    )
    return subprocess.CompletedProcess(
        completed.args, completed.returncode,
        completed.stdout.decode("utf-8"), completed.stderr.decode("utf-8"),
    )


# ---------------------------------------------------------------------- as a subprocess


def test_drivers_lists_installed_and_missing_drivers() -> None:
    done = run_mcs("drivers")
    assert done.returncode == EXIT_OK
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["NAME", "DISTRIBUTION", "VERSION", "STATUS"]
    functions = next(line for line in lines if line.startswith("functions "))
    assert functions.split()[1:] == ["mcs-framework", "0.1.0", "installed"]
    missing = [line for line in lines if "missing:" in line]
    assert all("pip install mcs" in line for line in missing)


def test_describe_prints_the_function_description() -> None:
    done = run_mcs("describe", "functions")
    assert done.returncode == EXIT_OK
    assert "get_weather" in done.stdout and "add" in done.stdout


def test_describe_in_openai_format_is_json() -> None:
    done = run_mcs("describe", "functions", "--format", "openai")
    assert done.returncode == EXIT_OK
    tools = json.loads(done.stdout)
    assert [t["function"]["name"] for t in tools] == ["get_weather", "add"]


def test_describe_in_a_native_format_exports_the_meta_tools_in_discovery_mode() -> None:
    done = run_mcs("describe", "functions", "-o", "description_mode=discovery", "--format", "anthropic")
    assert done.returncode == EXIT_OK, done.stderr
    assert [t["name"] for t in json.loads(done.stdout)] == ["search_tools", "describe_tool", "call_tool"]
    every = run_mcs("describe", "functions", "-o", "description_mode=discovery", "--format", "anthropic", "--all-tools")
    assert [t["name"] for t in json.loads(every.stdout)] == ["get_weather", "add"]


def test_prompt_prints_the_system_message_for_a_model() -> None:
    done = run_mcs("prompt", "functions", "--model", "m")
    assert done.returncode == EXIT_OK
    assert "get_weather" in done.stdout


def test_call_runs_the_response_given_as_an_argument() -> None:
    done = run_mcs("call", "functions", "-r", WEATHER_CALL)
    assert done.returncode == EXIT_OK, done.stderr
    assert json.loads(done.stdout) == {"city": "Tokyo", "temperature": 24.0, "unit": "celsius", "sky": "clear"}


def test_call_reads_the_response_from_stdin() -> None:
    done = run_mcs("call", "functions", stdin=b'{"tool": "add", "arguments": {"a": 2, "b": "3"}}')
    assert done.returncode == EXIT_OK, done.stderr
    assert json.loads(done.stdout) == 5


def test_call_takes_driver_options() -> None:
    done = run_mcs("call", "functions", "-o", "prefix=demo", "-r",
                   '{"tool": "demo_add", "arguments": {"a": 1, "b": 1}}')
    assert done.returncode == EXIT_OK, done.stderr
    assert json.loads(done.stdout) == 2


def test_a_failed_call_prints_the_error_as_json_and_exits_1() -> None:
    done = run_mcs("call", "functions", "-r", '{"tool": "add", "arguments": {"a": "one"}}')
    assert done.returncode == EXIT_CALL_FAILED
    error = json.loads(done.stdout)
    assert error["error"] == "INVALID_INPUT"
    assert "'a'" in error["message"] and "missing required argument 'b'" in error["message"]
    assert "Traceback" not in done.stdout + done.stderr


def test_a_response_without_a_call_exits_1() -> None:
    done = run_mcs("call", "functions", "-r", "It is sunny in Tokyo.")
    assert done.returncode == EXIT_CALL_FAILED
    assert json.loads(done.stdout)["error"] == "NO_CALL"


def test_bytes_that_are_not_utf8_on_stdin_do_not_crash() -> None:
    done = run_mcs("call", "functions",
                   stdin=b'{"tool": "get_weather", "arguments": {"city": "Par\xffis"}}')
    assert done.returncode == EXIT_OK, done.stderr
    assert json.loads(done.stdout)["city"] == "Par\ufffdis"


def test_a_broken_unicode_escape_is_refused_as_invalid_input() -> None:
    done = run_mcs("call", "functions", stdin=b'{"tool": "get_weather", "arguments": {"city": "\\ud800"}}')
    assert done.returncode == EXIT_CALL_FAILED, done.stderr
    error = json.loads(done.stdout)
    assert error["error"] == "INVALID_INPUT" and "'city'" in error["message"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((), "usage: mcs"),
        (("describe",), "name a driver"),
        (("call", "no-such-driver", "-r", "x"), "no MCS driver named 'no-such-driver'"),
        (("call", "functions", "-o", "prefix", "-r", "x"), "option 'prefix' is not key=value"),
        (("call", "functions", "-o", "no_such_option=1", "-r", "x"), "takes no option 'no_such_option'"),
        (("call", "functions", "-o", "timeout=-1", "-r", "x"), "timeout must be a positive, finite number"),
        (("describe", "functions", "--format", "xml"), "invalid choice: 'xml'"),
    ],
)
def test_usage_and_configuration_errors_exit_2_with_a_readable_message(
    args: tuple[str, ...], expected: str
) -> None:
    done = run_mcs(*args)
    assert done.returncode == EXIT_USAGE
    assert expected in done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def _plugin(folder: Path, distribution: str, drivers: dict[str, str], source: str, *requires: str) -> dict[str, str]:
    """A distribution registering ``drivers`` from one module; returns the env that sees it."""
    info = folder / f"{distribution.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    requirements = "".join(f"Requires-Dist: {r}\n" for r in requires)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 1.0\n{requirements}")
    lines = "".join(f"{name} = {target}\n" for name, target in drivers.items())
    (info / "entry_points.txt").write_text(f"[mcs.drivers]\n{lines}")
    module = next(iter(drivers.values())).split(":")[0]
    (folder / f"{module}.py").write_text(source)
    return {"PYTHONPATH": str(folder)}


def test_a_driver_with_a_missing_dependency_exits_3_naming_the_install(tmp_path: Path) -> None:
    env = _plugin(tmp_path, "needy-plugin", {"needy": "needy_module:Driver"},
                  "import mcs_cli_test_absent_library\n", "mcs-cli-test-absent-library>=1")
    done = run_mcs("describe", "needy", env=env)
    assert done.returncode == EXIT_MISSING
    assert done.stderr.strip().splitlines() == [
        "mcs: the MCS driver 'needy' (from needy-plugin) needs 'mcs-cli-test-absent-library', which is "
        "not installed: pip install mcs-cli-test-absent-library"
    ]


BROKEN_SOURCE = """
import mcs
import mcs_cli_test_module_nobody_declares

class Driver(mcs.ToolDriver):
    pass
"""

FAILING_SOURCE = """
import mcs

class Driver(mcs.ToolDriver):
    protocol, transport, spec_format = "REST", "HTTP", "OpenAPI"

    def __init__(self, **options):
        raise RuntimeError("the backend said\\nno")

    def _list_tools(self):
        return []

    def _call_tool(self, invocation):
        return None

class Silent(mcs.ToolDriver):
    def _list_tools(self):
        return [mcs.Tool(name="hello")]

    def _call_tool(self, invocation):
        return "hi"
"""


def test_drivers_shows_a_plugin_that_fails_to_import_as_broken_with_its_error(tmp_path: Path) -> None:
    env = _plugin(tmp_path, "broken-plugin", {"broken": "broken_module:Driver"}, BROKEN_SOURCE)
    done = run_mcs("drivers", env=env)
    assert done.returncode == EXIT_OK
    [row] = [line for line in done.stdout.splitlines() if line.startswith("broken ")]
    assert row.split()[1:4] == ["broken-plugin", "1.0", "broken:"]
    assert "No module named 'mcs_cli_test_module_nobody_declares'" in row
    assert "installed" not in row.split("broken:")[0] and "pip install" not in row
    functions = next(line for line in done.stdout.splitlines() if line.startswith("functions "))
    assert functions.split()[1:] == ["mcs-framework", "0.1.0", "installed"]


def test_an_unexpected_error_of_a_driver_is_one_line_and_its_traceback_on_request(tmp_path: Path) -> None:
    env = _plugin(tmp_path, "broken-plugin", {"failing": "failing_module:Driver"}, FAILING_SOURCE)
    done = run_mcs("describe", "failing", env=env)
    assert done.returncode == EXIT_USAGE
    assert done.stderr.splitlines() == [
        "mcs: RuntimeError: the backend said no (set MCS_DEBUG=1 for the traceback)"
    ]
    debug = run_mcs("describe", "failing", env={**env, "MCS_DEBUG": "1"})
    assert debug.returncode != EXIT_OK and "Traceback" in debug.stderr


def test_a_driver_that_does_not_say_what_it_speaks_gets_one_line_naming_the_fix(tmp_path: Path) -> None:
    env = _plugin(tmp_path, "broken-plugin", {"hello": "silent_module:Silent"},
                  FAILING_SOURCE.replace("class Driver", "class Unused"))
    (tmp_path / "silent_module.py").write_text(FAILING_SOURCE)
    done = run_mcs("prompt", "hello", "--model", "gpt-4o", env=env)
    assert done.returncode == EXIT_USAGE
    [line] = done.stderr.splitlines()
    assert line.startswith("mcs: Silent does not say what it speaks: declare protocol, transport, spec_format")


NEEDS_SPEC_SOURCE = """
import mcs

class Driver(mcs.ToolDriver):
    protocol, transport, spec_format = "REST", "HTTP", "OpenAPI"

    def __init__(self, spec: str, base_url: str, *, timeout: float = 30.0, **options):
        super().__init__(**options)

    def _list_tools(self):
        return []

    def _call_tool(self, invocation):
        return None
"""


def test_a_driver_option_without_a_default_left_out_is_named_as_the_option_to_add(tmp_path: Path) -> None:
    env = _plugin(tmp_path, "acme-mcs-plugins", {"needs": "needs_module:Driver"}, NEEDS_SPEC_SOURCE)
    done = run_mcs("describe", "needs", "-o", "base_url=http://127.0.0.1:1", env=env)
    assert done.returncode == EXIT_USAGE
    assert done.stderr.splitlines() == ["mcs: the 'needs' driver needs -o spec=..."]
    done = run_mcs("describe", "needs", env=env)
    assert done.stderr.splitlines() == ["mcs: the 'needs' driver needs -o spec=... -o base_url=..."]


@pytest.mark.parametrize(("response", "code", "message"), [
    ('{"tool": "ad", "arguments": {"a": 1, "b": 2}}', "TOOL_NOT_FOUND",
     "There is no tool named 'ad'. Did you mean add? Available tools: get_weather, add."),
    ('get_wether(city="Paris")', "TOOL_NOT_FOUND", "There is no tool named 'get_wether'. Did you mean get_weather?"),
    ('{"tool": "add", "arguments": {"a": 1, "b": ', "INVALID_INPUT", "Your call to add was cut off before it ended"),
])
def test_call_answers_a_response_that_tried_to_call_with_what_went_wrong(
    response: str, code: str, message: str
) -> None:
    done = run_mcs("call", "functions", "-r", response)
    assert done.returncode == EXIT_CALL_FAILED
    error = json.loads(done.stdout)
    assert error["error"] == code and error["message"].startswith(message)


def test_call_still_says_no_call_for_a_plain_answer() -> None:
    done = run_mcs("call", "functions", "-r", "It is sunny in Paris.")
    assert done.returncode == EXIT_CALL_FAILED
    assert json.loads(done.stdout)["error"] == "NO_CALL"


def test_option_values_are_typed_by_the_drivers_signature() -> None:
    named = run_mcs("describe", "functions", "-o", "name=math", "-o", "timeout=5", "-o", "description_mode=inline")
    assert named.returncode == EXIT_OK, named.stderr
    wrong = run_mcs("describe", "functions", "-o", "timeout=soon")
    assert wrong.returncode == EXIT_USAGE
    assert wrong.stderr.splitlines() == [
        "mcs: option timeout='soon': the 'functions' driver expects float | None (write lists and mappings as JSON)"
    ]


@pytest.mark.parametrize("command", ["no-such-binary", "false"])
def test_describe_of_an_mcp_server_that_cannot_start_is_one_line(command: str) -> None:
    done = run_mcs("describe", "mcp", "-o", f"command={command}")
    assert done.returncode == EXIT_USAGE
    [line] = done.stderr.splitlines()
    assert line.startswith(f"mcs: cannot reach MCP server 'mcp' ({command}): "), line


def test_version_names_the_distribution() -> None:
    done = run_mcs("--version")
    assert done.returncode == EXIT_OK and done.stdout.strip() == "mcs-framework 0.1.0"


def test_describe_piped_into_head_ends_quietly() -> None:
    done = subprocess.run(
        f"{shlex.quote(sys.executable)} -m mcs.cli describe functions --format openai | head -c 20",
        shell=True, capture_output=True, text=True, timeout=60, check=False,
    )
    assert len(done.stdout) == 20
    assert done.stderr == ""


def test_a_model_name_without_a_template_is_named_on_stderr() -> None:
    done = run_mcs("prompt", "functions", "--model", "gtp-4o")
    assert done.returncode == EXIT_OK and done.stdout.strip()
    assert done.stderr.splitlines() == [
        "mcs: warning: no prompt template is made for model 'gtp-4o' (did you mean a gpt-* model?); "
        "the default template (MCS JSON calls) is used"
    ]


def test_serve_over_websocket_is_refused_for_mcp_before_anything_starts() -> None:
    done = run_mcs("serve", "mcp", "-o", "command=no-such-binary", "--transport", "websocket")
    assert done.returncode == EXIT_USAGE
    assert done.stderr.splitlines() == ["mcs: --protocol mcp serves over stdio or http, not websocket"]


# ---------------------------------------------------------------------- in-process


def test_main_in_process_runs_a_call(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["call", "functions", "-r", WEATHER_CALL]) == EXIT_OK
    assert json.loads(capsys.readouterr().out)["sky"] == "clear"


def test_main_in_process_reads_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b'{"tool": "add", "arguments": {"a": 1, "b": 2}}')))
    assert main(["call", "functions"]) == EXIT_OK
    assert json.loads(capsys.readouterr().out) == 3


def test_main_in_process_prompt_and_describe(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prompt", "functions", "--model", "m"]) == EXIT_OK
    prompt = capsys.readouterr().out
    assert main(["describe", "functions", "--model", "m"]) == EXIT_OK
    description = capsys.readouterr().out.strip()
    assert description and description in prompt


def test_main_in_process_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == EXIT_USAGE
    assert "usage: mcs" in capsys.readouterr().out
    assert main(["call", "functions", "-r", '{"tool": "add", "arguments": {}}']) == EXIT_CALL_FAILED
    assert json.loads(capsys.readouterr().out)["error"] == "INVALID_INPUT"
    assert main(["call", "nope", "-r", "x"]) == EXIT_USAGE
    assert "no MCS driver named 'nope'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main(["describe", "functions", "--format", "xml"])
    assert info.value.code == EXIT_USAGE


def test_serve_with_an_unknown_protocol_never_suggests_installing_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "functions", "--protocol", "carrier-pigeon"]) == EXIT_USAGE
    error = capsys.readouterr().err
    assert error == "mcs: no serve protocol named 'carrier-pigeon'; installed: mcp, rfc0001\n"


SHADOW_SERVE = """
from pathlib import Path


def serve(args):
    Path(__file__).with_name("MARKER").write_text("the shadow served")
    return 0
"""


def _shadow_serve_plugin(folder: Path) -> None:
    """A distribution that registers its own ``mcp`` serve protocol (one that leaves a marker)."""
    info = folder / "zz_shadow_serve-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: zz-shadow-serve\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[mcs.serve_backends]\nmcp = zz_shadow_serve:serve\n")
    (folder / "zz_shadow_serve.py").write_text(SHADOW_SERVE)


def _serve_with_plugin_last(folder: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``mcs serve functions`` with ``folder`` at the end of ``sys.path``, after every installed plugin."""
    code = (f"import sys; sys.path.append({str(folder)!r}); from mcs.cli import main; "
            "sys.exit(main(['serve', 'functions']))")
    return subprocess.run([sys.executable, "-c", code], stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=60, env={**os.environ, **(env or {})}, check=False)


def test_two_plugins_registering_one_serve_protocol_are_refused_not_picked_by_install_order(
    tmp_path: Path,
) -> None:
    _shadow_serve_plugin(tmp_path)
    allowed = os.environ.get("MCS_DRIVER_DISTRIBUTIONS", "")  # the suite's own list, when it has one
    done = _serve_with_plugin_last(tmp_path, {"MCS_DRIVER_DISTRIBUTIONS": f"{allowed},zz-shadow-serve"} if allowed else {})
    assert not (tmp_path / "MARKER").exists()
    assert done.returncode == EXIT_USAGE
    assert "2 plugins register the serve protocol 'mcp' (" in done.stderr
    assert "zz_shadow_serve:serve from zz-shadow-serve" in done.stderr
    assert "from mcs-framework-mcp" in done.stderr and "MCS_DRIVER_DISTRIBUTIONS" in done.stderr


def test_keeping_one_distribution_serves_with_its_protocol_again(tmp_path: Path) -> None:
    _shadow_serve_plugin(tmp_path)
    done = _serve_with_plugin_last(tmp_path, {"MCS_DRIVER_DISTRIBUTIONS": "mcs-framework,mcs-framework-mcp"})
    assert not (tmp_path / "MARKER").exists()
    assert done.returncode == EXIT_OK, done.stderr
    assert "serving 'functions'" in done.stderr


def test_parse_options_decodes_json_values() -> None:
    assert parse_options(["timeout=2.5", "retries=3", "verbose=true", "tags=[1, 2]", "base-url=http://h/x",
                          "name=plain"]) == {
        "timeout": 2.5, "retries": 3, "verbose": True, "tags": [1, 2], "base_url": "http://h/x", "name": "plain",
    }


def test_results_are_printed_as_json() -> None:
    from pydantic import BaseModel

    class Point(BaseModel):
        x: int

    assert cli.to_jsonable({"p": Point(x=1), "b": b"abc", 1: (1, None), "o": object}) == {
        "p": {"x": 1}, "b": {"bytes": 3}, "1": [1, None], "o": str(object),
    }


def test_the_readme_driver_registered_by_a_plugin_works_on_the_command_line(tmp_path: Path) -> None:
    from support.readme import readme_blocks

    [block] = [b for b in readme_blocks("python") if b.heading == "Writing a driver"]
    env = _plugin(tmp_path, "acme-mcs-plugins", {"hello": "greeter_module:GreeterDriver"}, block.code)
    prompt = run_mcs("prompt", "hello", "--model", "gpt-4o", env=env)
    assert prompt.returncode == EXIT_OK, prompt.stderr
    assert "greet" in prompt.stdout and "hello" in prompt.stdout and prompt.stderr == ""
    called = run_mcs("call", "hello", "-r", '{"tool": "greet", "arguments": {"who": "Ada"}}', env=env)
    assert json.loads(called.stdout.splitlines()[-1]) == "Hello, Ada!"  # the module's own prints come first
