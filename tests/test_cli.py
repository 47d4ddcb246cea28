"""The ``mcs`` command line, as a subprocess and in-process; exit codes 0/1/2/3."""

from __future__ import annotations

import io
import json
import os
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
        (("call", "functions", "-o", "no_such_option=1", "-r", "x"), "refused its options"),
        (("call", "functions", "-o", "timeout=-1", "-r", "x"), "timeout must be a positive number"),
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


def test_a_driver_with_a_missing_dependency_exits_3_naming_the_install(tmp_path: Path) -> None:
    info = tmp_path / "needy_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: needy-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[mcs.drivers]\nneedy = needy_module:Driver\n")
    (tmp_path / "needy_module.py").write_text("import mcs_cli_test_absent_library\n")
    done = run_mcs("describe", "needy", env={"PYTHONPATH": str(tmp_path)})
    assert done.returncode == EXIT_MISSING
    assert "mcs_cli_test_absent_library" in done.stderr
    assert "pip install --force-reinstall needy-plugin" in done.stderr


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


def test_serve_with_an_unknown_protocol_names_what_to_install(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "functions", "--protocol", "carrier-pigeon"]) == EXIT_MISSING
    assert "pip install carrier-pigeon" in capsys.readouterr().err


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
