"""`make demo`: the embedded driver's round trip runs and prints a real result."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mcs import demo


def test_the_demo_module_runs_and_prints_the_result() -> None:
    done = subprocess.run([sys.executable, "-m", "mcs.demo"], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "== System prompt for claude-3-5-sonnet ==" in done.stdout
    result = done.stdout.split("== Result ==\n", 1)[1]
    assert json.loads(result) == {"city": "Paris", "temperature": 18.5, "unit": "celsius", "sky": "light rain"}


def test_main_prints_the_prompt_the_parsed_call_and_the_result(capsys: pytest.CaptureFixture[str]) -> None:
    demo.main()
    out = capsys.readouterr().out
    assert "get_weather" in out.split("== Recorded LLM output ==")[0]
    assert "ToolCall(name='get_weather'" in out
    assert '"sky": "light rain"' in out


def test_the_demo_tools_compute() -> None:
    driver = demo.DemoDriver()
    assert driver.call_tool("get_weather", {"city": "berlin", "unit": "fahrenheit"})["temperature"] == 53.6
    assert driver.call_tool("get_weather", {"city": "Atlantis"})["sky"] == "unknown"
    assert driver.call_tool("add", {"a": 0.5, "b": 2}) == 2.5
