"""The generic contract checks, over every installed driver that needs no options.

A driver that cannot be built without options (an endpoint, a spec file) or whose
dependencies are missing is reported once as skipped, with the reason; its own test
module runs the full suite with a configured instance.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mcs.driver import MCSDriver
from mcs.errors import MCSError
from mcs.registry import available_drivers, driver_class
from mcs.testing import DriverContractTests

INSTALLED = [info.name for info in available_drivers() if info.installed]


def _build(name: str) -> MCSDriver:
    """The driver registered as ``name``, built with no options; skips with the reason."""
    try:
        cls = driver_class(name)
    except (MCSError, ImportError) as exc:
        pytest.skip(f"driver {name!r} cannot be imported here: {exc}")
    try:
        return cls()
    except (TypeError, ValueError, MCSError, ImportError, OSError) as exc:
        pytest.skip(f"driver {name!r} needs options to be built ({type(exc).__name__}: {exc})")


def _close(driver: MCSDriver) -> None:
    close = getattr(driver, "close", None)
    if callable(close):
        close()


def _buildable(name: str) -> bool:
    try:
        _close(_build(name))
    except pytest.skip.Exception:
        return False
    return True


BUILDABLE = [name for name in INSTALLED if _buildable(name)]


def test_the_builtin_functions_driver_is_checked() -> None:
    assert "functions" in BUILDABLE


@pytest.mark.parametrize("name", sorted(set(INSTALLED) - set(BUILDABLE)))
def test_drivers_that_need_options_are_reported(name: str) -> None:
    _build(name)  # skips with the reason
    pytest.fail(f"driver {name!r} was not buildable at collection but is now")


@pytest.fixture(params=BUILDABLE)
def installed_driver(request: pytest.FixtureRequest) -> Iterator[MCSDriver]:
    driver = _build(request.param)
    try:
        yield driver
    finally:
        _close(driver)


class TestInstalledDriver(DriverContractTests):
    @pytest.fixture
    def driver(self, installed_driver: MCSDriver) -> MCSDriver:
        return installed_driver


@pytest.mark.parametrize("name", INSTALLED)
def test_every_installed_driver_refuses_an_unknown_option_by_name_before_it_loads_anything(name: str) -> None:
    from mcs.errors import ConfigurationError

    try:
        cls = driver_class(name)
    except (MCSError, ImportError) as exc:
        pytest.skip(f"driver {name!r} cannot be imported here: {exc}")
    import inspect

    # What the driver requires is a placeholder it never reads: the unknown option is refused first.
    required = {p.name: "never-read" for p in list(inspect.signature(cls.__init__).parameters.values())[1:]
                if p.default is p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    with pytest.raises(ConfigurationError) as caught:
        cls(**required, colour_of_the_sky="blue")
    message = str(caught.value)
    assert "has no option 'colour_of_the_sky'" in message
    assert "timeout" in message.split("; options: ", 1)[1]  # the options it does take, the shared ones among them
