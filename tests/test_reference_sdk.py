"""mcs-framework beside the MCS reference SDK in one environment.

The reference SDK's distributions install ``mcs/driver/<name>/`` and ``mcs/adapter/<name>/``
without ``mcs/__init__.py``: namespace packages inside the name ``mcs``. ``mcs`` and
``mcs.driver`` extend their ``__path__`` over every such folder, so both load. The first
test builds that layout by hand (no network); the others install the core's wheel and
the reference SDK's ``mcs-driver-core``, ``mcs-driver-filesystem`` and
``mcs-adapter-localfs`` from the package index into a fresh environment, and skip with
the reason when the index cannot be reached.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.readme import readme_blocks
from support.wheels import build_core_wheel, index_unreachable, new_venv, pip_install, uv

REFERENCE_SDK = ("mcs-driver-core", "mcs-driver-filesystem", "mcs-adapter-localfs")

IMPORT_BOTH = """
import json
import mcs
from mcs.driver import DriverMeta, ToolDriver
from mcs.driver.core import MCSToolDriver, DriverMeta as ReferenceMeta
from mcs.driver.filesystem import FilesystemToolDriver
from mcs.adapter.localfs import LocalFsAdapter

print(json.dumps({
    "ours": [mcs.ToolDriver is ToolDriver, mcs.DriverMeta is DriverMeta, mcs.__file__],
    "theirs": [issubclass(FilesystemToolDriver, MCSToolDriver), ReferenceMeta is not DriverMeta,
               [t.name for t in FilesystemToolDriver().list_tools()]],
}))
"""


def test_namespace_portions_of_mcs_load_beside_this_package(tmp_path: Path) -> None:
    for portion in ("mcs/driver/vendor_rest", "mcs/adapter/vendor_http"):
        (tmp_path / portion).mkdir(parents=True)
        (tmp_path / portion / "__init__.py").write_text(f"WHERE = {portion!r}\n")
    script = (
        "from mcs.driver import ToolDriver\n"
        "import mcs, mcs.driver.vendor_rest as rest, mcs.adapter.vendor_http as http\n"
        "print(rest.WHERE, http.WHERE, ToolDriver.__module__)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["mcs/driver/vendor_rest", "mcs/adapter/vendor_http", "mcs.driver"]


@pytest.fixture(scope="module")
def shared_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh environment holding the core's wheel and the reference SDK, from the index."""
    if uv() is None:
        pytest.importorskip("build", reason="needs uv or the 'build' package to build the wheel")
    root = tmp_path_factory.mktemp("coexistence")
    python = new_venv(root / "venv")
    done = pip_install(python, [str(build_core_wheel(root / "dist")), *REFERENCE_SDK])
    if index_unreachable(done):
        pytest.skip("the package index cannot be reached, so the reference SDK cannot be installed: "
                    + done.stderr.strip().splitlines()[-1])
    assert done.returncode == 0, done.stderr
    return python


def test_both_install_into_one_environment_and_import(shared_python: Path, tmp_path: Path) -> None:
    done = subprocess.run([str(shared_python), "-I", "-c", IMPORT_BOTH], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["ours"][:2] == [True, True]
    assert shared_python.parents[1] in Path(report["ours"][2]).parents, "mcs came from the installed wheel"
    assert report["theirs"] == [True, True, ["list_directory", "read_file", "write_file"]]


def test_the_readme_runs_a_reference_sdk_driver_through_the_pipeline(shared_python: Path, tmp_path: Path) -> None:
    [block] = [b for b in readme_blocks("python") if b.heading == "Drivers of the MCS reference SDK"]
    (tmp_path / "notes.txt").write_text("buy milk")
    check = (
        "\nprint('TOOLS', [t.name for t in files.list_tools()])"
        "\ntry:\n    files.process_llm_response('{\"tool\": \"read_file\", \"arguments\": {}}')"
        "\nexcept mcs.InvalidInputError as error:\n    print('REFUSED', error.code)"
    )
    done = subprocess.run([str(shared_python), "-I", "-W", "error", "-c", "import mcs\n" + block.code + check],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    first, tools, refused = done.stdout.splitlines()
    assert json.loads(first)["content"] == "buy milk"
    assert tools == "TOOLS ['list_directory', 'read_file', 'write_file']"
    assert refused == "REFUSED INVALID_INPUT", "our pipeline validated the arguments before their driver ran"


class _Parameter:
    """The shape of the reference SDK's ``ToolParameter`` (name, description, required, schema)."""

    def __init__(self, name: str, description: str, required: bool = False, schema: dict | None = None) -> None:
        self.name, self.description, self.required, self.schema = name, description, required, schema


class _Tool:
    def __init__(self, name: str, description: str, parameters: list[_Parameter]) -> None:
        self.name, self.title, self.description, self.parameters = name, None, description, parameters


class _Shelf:
    """A tool driver written against the reference SDK's interface (``list_tools``, ``execute_tool``)."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, dict]] = []

    def list_tools(self) -> list[_Tool]:
        return [_Tool("shelf.count", "Count the books on a shelf.", [
            _Parameter("shelf", "The shelf's number.", required=True, schema={"type": "integer"}),
            _Parameter("genre", "Only this genre."),
        ])]

    def execute_tool(self, tool_name: str, arguments: dict) -> str:
        self.ran.append((tool_name, arguments))
        if arguments["shelf"] > 9:
            raise ValueError("no such shelf")
        return json.dumps({"books": 12})


def test_a_reference_style_tool_driver_gets_this_pipeline_without_the_sdk() -> None:
    from mcs.errors import ExecutionError, InvalidInputError
    from mcs.reference_sdk import ReferenceToolDriver

    shelf = _Shelf()
    driver = ReferenceToolDriver(shelf, name="library", prefix="lib")
    [tool] = driver.list_tools()
    assert (tool.name, driver.meta.name) == ("lib_shelf_count", "library")
    assert tool.input_schema == {"type": "object", "required": ["shelf"], "properties": {
        "shelf": {"type": "integer", "description": "The shelf's number."},
        "genre": {"description": "Only this genre."}}}
    assert driver.process_llm_response('lib_shelf_count(shelf=3)') == '{"books": 12}'
    with pytest.raises(InvalidInputError):
        driver.process_llm_response('{"tool": "lib_shelf_count", "arguments": {"shelf": "three"}}')
    # an unexpected exception reaches the model as its type only; its text stays in the log
    with pytest.raises(ExecutionError, match=r"lib_shelf_count failed unexpectedly \(ValueError\)"):
        driver.call_tool("lib_shelf_count", {"shelf": 10})
    assert shelf.ran == [("shelf.count", {"shelf": 3}), ("shelf.count", {"shelf": 10})]
