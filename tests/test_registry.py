"""Driver discovery through real entry points of a throwaway distribution."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

import mcs
from mcs.demo import DemoDriver
from mcs.errors import DriverNotFoundError, MissingDependencyError
from mcs.registry import (
    DISABLE_ENV,
    KNOWN_DISTRIBUTIONS,
    ONLY_ENV,
    available_drivers,
    check_driver,
    driver_class,
    load_driver,
)

PLUGIN_MODULE = '''
from mcs.functions import FunctionDriver, tool

NOT_A_DRIVER = 42


@tool
def ping() -> str:
    """Answer pong."""
    return "pong"


class PingDriver(FunctionDriver):
    def __init__(self, *, greeting: str = "pong", **options):
        super().__init__([ping], name="ping", **options)
        self.greeting = greeting
'''

Install = Callable[..., Path]


@pytest.fixture
def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Install:
    """Put a distribution with ``mcs.drivers`` entry points on ``sys.path``."""
    monkeypatch.delenv(DISABLE_ENV, raising=False)

    def make(
        entry_points: dict[str, str],
        *,
        name: str = "acme-mcs-plugins",
        version: str = "2.1.0",
        modules: dict[str, str] | None = None,
        requires: tuple[str, ...] = (),
    ) -> Path:
        root = tmp_path / name
        info = root / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir(parents=True)
        requirements = "".join(f"Requires-Dist: {r}\n" for r in requires)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{requirements}")
        lines = "\n".join(f"{key} = {value}" for key, value in entry_points.items())
        (info / "entry_points.txt").write_text(f"[mcs.drivers]\n{lines}\n")
        for module, source in (modules or {}).items():
            (root / f"{module}.py").write_text(textwrap.dedent(source))
        monkeypatch.syspath_prepend(str(root))
        return root

    return make


def _module_name(request: pytest.FixtureRequest) -> str:
    return "acme_" + request.node.name.replace("[", "_").replace("]", "").replace("-", "_")[:40]


@pytest.fixture
def plugin(install: Install, request: pytest.FixtureRequest) -> str:
    """A working plugin module under a name unique to the test (no import cache leaks)."""
    module = _module_name(request)
    install({"ping": f"{module}:PingDriver"}, modules={module: PLUGIN_MODULE})
    return module


def test_the_builtin_driver_registers_through_the_entry_point_group() -> None:
    assert driver_class("functions") is DemoDriver
    info = next(i for i in available_drivers() if i.name == "functions")
    assert info.installed and info.distribution == "mcs-framework"
    assert info.target == "mcs.demo:DemoDriver"


def test_a_third_party_driver_is_listed_and_loaded_with_options(plugin: str) -> None:
    info = next(i for i in available_drivers() if i.name == "ping")
    assert (info.distribution, info.version, info.installed) == ("acme-mcs-plugins", "2.1.0", True)
    driver = load_driver("ping", greeting="hi", prefix="p")
    assert driver.greeting == "hi"  # type: ignore[attr-defined]
    assert driver.process_llm_response('{"tool": "p_ping", "arguments": {}}') == "pong"


def test_listing_imports_nothing(install: Install, request: pytest.FixtureRequest) -> None:
    import sys

    module = _module_name(request)
    install({"lazy": f"{module}:PingDriver"}, modules={module: PLUGIN_MODULE})
    assert any(i.name == "lazy" for i in available_drivers())
    assert module not in sys.modules


def test_listing_is_sorted_and_names_uninstalled_project_drivers() -> None:
    infos = available_drivers()
    assert [i.name for i in infos] == sorted(i.name for i in infos)
    missing = {i.name: i for i in infos if not i.installed}
    for name, info in missing.items():
        assert info.install_command == f"pip install {KNOWN_DISTRIBUTIONS[name]}"
        assert info.problem == "not installed"


def test_a_plugin_that_raises_on_import_is_listed_and_named_when_loaded(
    install: Install, request: pytest.FixtureRequest
) -> None:
    module = _module_name(request)
    install({"broken": f"{module}:Broken"}, modules={module: "raise RuntimeError('plugin bug')\n"})
    assert any(i.name == "broken" for i in available_drivers())
    with pytest.raises(DriverNotFoundError) as info:
        load_driver("broken")
    message = str(info.value)
    assert "'broken'" in message and "acme-mcs-plugins" in message
    assert "RuntimeError: plugin bug" in message


def test_a_malformed_plugin_is_warned_about_and_skipped(install: Install) -> None:
    install({"garbled": "not a valid target!!"})
    with pytest.warns(RuntimeWarning, match="'garbled'.*not 'module:attribute'"):
        names = [i.name for i in available_drivers()]
    assert "garbled" not in names
    assert "functions" in names


def test_two_plugins_with_one_name_keep_the_first_and_warn(
    install: Install, request: pytest.FixtureRequest
) -> None:
    module = _module_name(request)
    install({"ping": f"{module}:PingDriver"}, name="first-dist", modules={module: PLUGIN_MODULE})
    install({"ping": f"{module}:Other"}, name="second-dist")
    with pytest.warns(RuntimeWarning, match="two plugins register the MCS driver 'ping'"):
        infos = [i for i in available_drivers() if i.name == "ping"]
    assert len(infos) == 1


def test_a_plugin_that_is_not_a_driver_is_refused(install: Install, request: pytest.FixtureRequest) -> None:
    module = _module_name(request)
    install({"number": f"{module}:NOT_A_DRIVER"}, modules={module: PLUGIN_MODULE})
    with pytest.raises(DriverNotFoundError, match="not an MCSDriver subclass"):
        driver_class("number")


def test_a_plugin_missing_a_declared_dependency_names_that_requirement(
    install: Install, request: pytest.FixtureRequest
) -> None:
    module = _module_name(request)
    install({"needy": f"{module}:D"}, modules={module: "import mcs_test_library_that_is_absent\n"},
            requires=("mcs-test-library-that-is-absent>=2; python_version >= '3'", "pyyaml"))
    with pytest.raises(MissingDependencyError) as info:
        load_driver("needy")
    assert info.value.install == "pip install mcs-test-library-that-is-absent"
    assert "'needy' (from acme-mcs-plugins) needs" in str(info.value)
    assert "--force-reinstall" not in str(info.value)


def test_a_plugin_that_fails_to_import_is_broken_with_its_error_and_no_install_hint(
    install: Install, request: pytest.FixtureRequest
) -> None:
    module = _module_name(request)
    install({"needy": f"{module}:D"}, modules={module: "import mcs_test_module_nobody_declares\n"})
    with pytest.raises(DriverNotFoundError) as info:
        load_driver("needy")
    message = str(info.value)
    assert "is broken: importing it raised ModuleNotFoundError" in message
    assert "mcs_test_module_nobody_declares" in message and "pip install" not in message
    assert check_driver("needy") == message


def test_a_registered_driver_is_named_after_its_entry_point(
    install: Install, request: pytest.FixtureRequest
) -> None:
    module = _module_name(request)
    source = """
import mcs

class WeatherDriver(mcs.ToolDriver):
    protocol, transport, spec_format = "REST", "HTTP", "OpenAPI"

    def _list_tools(self):
        return [mcs.Tool(name="forecast")]

    def _call_tool(self, invocation):
        return "sunny"
"""
    install({"met-office": f"{module}:WeatherDriver"}, modules={module: source}, version="3.2.1")
    meta = load_driver("met-office").meta
    assert (meta.name, meta.version) == ("met-office", "3.2.1")


def test_only_the_allowed_distributions_register_drivers(
    plugin: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ONLY_ENV, "mcs_framework, Some-Other-Dist")
    names = {i.name for i in available_drivers() if i.installed}
    assert "functions" in names and "ping" not in names
    with pytest.raises(DriverNotFoundError):
        driver_class("ping")
    monkeypatch.setenv(ONLY_ENV, "acme-mcs-plugins")
    assert {i.name for i in available_drivers() if i.installed} == {"ping"}


def test_a_driver_option_may_be_called_name() -> None:
    assert load_driver("functions", name="math").meta.name == "math"


@pytest.mark.parametrize("name", sorted(KNOWN_DISTRIBUTIONS))
def test_a_project_driver_that_is_not_installed_names_its_pip_install(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if any(i.name == name and i.installed for i in available_drivers()):
        pytest.skip(f"{name} is installed here")
    with pytest.raises(MissingDependencyError) as info:
        load_driver(name)
    assert info.value.install == f"pip install {KNOWN_DISTRIBUTIONS[name]}"
    assert info.value.install in str(info.value)


def test_an_unknown_driver_lists_the_installed_ones() -> None:
    with pytest.raises(DriverNotFoundError) as info:
        load_driver("no-such-driver")
    assert "no MCS driver named 'no-such-driver'" in str(info.value)
    assert "functions" in str(info.value)


def test_disabled_drivers_are_neither_listed_nor_loaded(
    plugin: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DISABLE_ENV, "ping, rest")
    names = [i.name for i in available_drivers()]
    assert "ping" not in names and "rest" not in names
    for name in ("ping", "rest"):
        with pytest.raises(DriverNotFoundError, match=f"disabled by {DISABLE_ENV}"):
            load_driver(name)
    assert isinstance(load_driver("functions"), DemoDriver)


def test_the_public_names_are_the_registry_functions() -> None:
    assert mcs.load_driver is load_driver
    assert mcs.available_drivers is available_drivers


def test_the_suite_does_not_read_a_users_plugin_named_like_a_fixture(
    plugin: str, install: Install, request: pytest.FixtureRequest
) -> None:
    module = _module_name(request) + "_users"
    install({"ping": f"{module}:Other", "extra": f"{module}:Other"}, name="users-own-plugins")
    infos = {i.name: i for i in available_drivers()}  # no "two plugins register" warning
    assert infos["ping"].distribution == "acme-mcs-plugins" and "extra" not in infos
