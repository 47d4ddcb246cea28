"""The generic contract checks, over every installed driver that needs no options.

A driver that cannot be built without options (an endpoint, a spec file) or whose
dependencies are missing is skipped with the reason; its own test module runs the full
suite with a configured instance.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mcs.driver import MCSDriver
from mcs.errors import MCSError
from mcs.registry import available_drivers, driver_class
from mcs.testing import DriverContractTests

INSTALLED = [info.name for info in available_drivers() if info.installed]


def test_the_builtin_functions_driver_is_installed() -> None:
    assert "functions" in INSTALLED


@pytest.fixture(params=INSTALLED)
def installed_driver(request: pytest.FixtureRequest) -> Iterator[MCSDriver]:
    name: str = request.param
    try:
        cls = driver_class(name)
    except (MCSError, ImportError) as exc:
        pytest.skip(f"driver {name!r} cannot be imported here: {exc}")
    try:
        driver = cls()
    except (TypeError, ValueError, MCSError, ImportError, OSError) as exc:
        pytest.skip(f"driver {name!r} needs options to be built ({type(exc).__name__}: {exc})")
    try:
        yield driver
    finally:
        close = getattr(driver, "close", None)
        if callable(close):
            close()


class TestInstalledDriver(DriverContractTests):
    @pytest.fixture
    def driver(self, installed_driver: MCSDriver) -> MCSDriver:
        return installed_driver
