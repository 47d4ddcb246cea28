"""Drivers named by Python module on the command line (``mcs describe``/``mcs serve``)."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import mcs
from mcs.cli import main
from mcs.errors import ConfigurationError
from mcs.targets import is_module_target, load_target


@pytest.fixture
def module_dir(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "weather_tools.py").write_text(textwrap.dedent('''
        import mcs

        @mcs.tool
        def forecast(city: str) -> str:
            """Tomorrow's weather."""
            return f"sunny in {city}"

        @mcs.prompt
        def brief(city: str) -> str:
            """Brief a traveller."""
            return f"Brief me on {city}"

        @mcs.resource("weather://stations")
        def stations() -> list:
            """Known stations."""
            return ["OSL"]

        def plain(a: int) -> int:
            return a

        def factory(prefix: str = "w") -> mcs.FunctionDriver:
            return mcs.FunctionDriver([forecast], name="factory", prefix=prefix)

        built = mcs.FunctionDriver([forecast], name="built")
    '''))
    sys.path.insert(0, str(tmp_path))
    try:
        yield tmp_path
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("weather_tools", None)


def test_a_module_of_tool_functions_is_one_function_driver(module_dir: Path) -> None:
    driver = load_target("weather_tools")
    assert isinstance(driver, mcs.FunctionDriver) and driver.meta.name == "weather_tools"
    assert [t.name for t in driver.list_tools()] == ["forecast"]
    assert [p["name"] for p in driver.prompts()] == ["brief"]
    assert driver.read_resource("weather://stations") == ["OSL"]


def test_module_colon_name_takes_a_factory_an_instance_or_one_tool(module_dir: Path) -> None:
    assert [t.name for t in load_target("weather_tools:factory", prefix="x").list_tools()] == ["x_forecast"]
    assert load_target("weather_tools:built").meta.name == "built"
    assert [t.name for t in load_target("weather_tools:forecast").list_tools()] == ["forecast"]
    with pytest.raises(ConfigurationError, match="takes no -o options"):
        load_target("weather_tools:built", prefix="x")
    with pytest.raises(ConfigurationError, match="decorate tool functions"):
        load_target("weather_tools:plain")
    with pytest.raises(ConfigurationError, match="has no 'missing'"):
        load_target("weather_tools:missing")
    with pytest.raises(ConfigurationError, match="cannot import"):
        load_target("no_such_module_here:x")
    assert is_module_target("weather_tools") and not is_module_target("no_such_module_here")


def test_describe_lists_a_modules_tools_prompts_and_resources(module_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["describe", "weather_tools"]) == 0
    out = capsys.readouterr().out
    assert "forecast" in out and "Prompts:\n- brief: Brief a traveller." in out
    assert "Resources:\n- weather://stations: Known stations." in out


def test_a_name_that_is_neither_a_driver_nor_a_module_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["describe", "no_such_driver_or_module"]) == 2
    assert "no_such_driver_or_module" in capsys.readouterr().err
