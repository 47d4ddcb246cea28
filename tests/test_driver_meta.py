"""ToolDriver's derived ``meta``: a driver written as README shows needs no DriverMeta of its own."""

from __future__ import annotations

import subprocess
import sys
import uuid
from typing import Any

import pytest
from support.readme import readme_blocks

import mcs
from mcs.driver import _identity
from mcs.errors import ConfigurationError
from mcs.testing import DriverContractTests


def _readme_driver_class() -> type[mcs.ToolDriver]:
    [block] = [b for b in readme_blocks("python") if b.heading == "Writing a driver"]
    namespace: dict[str, Any] = {}
    exec(compile(block.code, "README.md", "exec"), namespace)
    cls: type[mcs.ToolDriver] = namespace["GreeterDriver"]
    return cls


GreeterDriver = _readme_driver_class()


class TestTheReadmeDriverHonoursTheContract(DriverContractTests):
    @pytest.fixture
    def driver(self) -> mcs.MCSDriver:
        return GreeterDriver()

    @pytest.fixture
    def valid_call(self) -> str:
        return '{"tool": "greet", "arguments": {"who": "Ada"}}'


def test_the_readme_driver_gets_a_meta_derived_from_its_class() -> None:
    meta = GreeterDriver().meta
    assert (meta.name, meta.protocol, meta.transport, meta.spec_format) == (
        "greeter", "Python", "in-process", "JSON Schema")
    assert meta.id == str(uuid.uuid5(_identity.NAMESPACE, "greeter"))
    assert meta.version == "0.0.0" and meta.capabilities == ()


def test_the_derived_id_is_the_same_in_another_process() -> None:
    [block] = [b for b in readme_blocks("python") if b.heading == "Writing a driver"]
    done = subprocess.run([sys.executable, "-c", block.code + "\nprint(greeter.meta.id)"],
                          capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split()[-1] == GreeterDriver().meta.id


class Minimal(mcs.ToolDriver):
    protocol = "REST"
    transport = "HTTP"
    spec_format = "OpenAPI"

    def _list_tools(self) -> list[mcs.Tool]:
        return [mcs.Tool(name="ping")]

    def _call_tool(self, invocation: mcs.Invocation) -> str:
        return "pong"


@pytest.mark.parametrize(("class_name", "expected"), [
    ("WeatherDriver", "weather"), ("OpenAPIDriver", "open_api"), ("CRMSync", "crm_sync"), ("Driver", "driver"),
])
def test_a_name_is_derived_from_the_class_name(class_name: str, expected: str) -> None:
    assert _identity.name_from_class(type(class_name, (), {})) == expected


def test_name_and_version_class_attributes_win() -> None:
    class Named(Minimal):
        name = "crm"
        version = "2.1.0"

    meta = Named().meta
    assert (meta.name, meta.version) == ("crm", "2.1.0")
    assert meta.id == str(uuid.uuid5(_identity.NAMESPACE, "crm"))


def test_optional_methods_become_declared_capabilities() -> None:
    class Checked(Minimal):
        def healthcheck(self) -> dict[str, str]:
            return {"status": "ok"}

    driver = Checked()
    assert driver.meta.capabilities == ("healthcheck",)
    assert driver.supports("healthcheck") and not Minimal().supports("healthcheck")


def test_a_meta_assigned_in_init_is_kept() -> None:
    class Explicit(Minimal):
        def __init__(self) -> None:
            super().__init__()
            self.meta = mcs.DriverMeta(id=str(uuid.uuid4()), name="explicit", version="9", protocol="gRPC",
                                       transport="HTTP/2", spec_format="Protobuf")

    assert (Explicit().meta.name, Explicit().meta.protocol) == ("explicit", "gRPC")
    assert mcs.FunctionDriver([], name="math").meta.name == "math"


def test_the_meta_tells_the_prefix_and_the_template_globs_whoever_built_it() -> None:
    class Explicit(Minimal):
        def __init__(self, **options: Any) -> None:
            super().__init__(**options)
            self.meta = mcs.DriverMeta(id=str(uuid.uuid4()), name="explicit", version="9", protocol="gRPC",
                                       transport="HTTP/2", spec_format="Protobuf")

    for driver in (Explicit(prefix="lab"), Minimal(prefix="lab")):
        assert driver.meta.prefix == "lab"
        assert driver.meta.target_llms == mcs.prompts.target_llms()
        assert {"gpt-*", "claude-*"} <= set(driver.meta.target_llms)
    assert Minimal().meta.prefix is None


def test_a_driver_that_does_not_say_what_it_speaks_is_told_what_to_declare() -> None:
    class Silent(mcs.ToolDriver):
        transport = "HTTP"

        def _list_tools(self) -> list[mcs.Tool]:
            return []

        def _call_tool(self, invocation: mcs.Invocation) -> None:
            return None

    with pytest.raises(ConfigurationError) as info:
        Silent().get_driver_system_message("gpt-4o")
    message = str(info.value)
    assert "Silent does not say what it speaks: declare protocol, spec_format as class attributes" in message
    assert "self.meta = mcs.DriverMeta(...)" in message
