"""Prompt context partitioning: describe only the interfaces a task needs, and switch."""

from __future__ import annotations

from typing import ClassVar

import pytest
from iface_impls import Entry, FileContent, Listing, Success
from mcs_mcp.interfaces.partition import InterfaceView
from pydantic import BaseModel

from mcs import FunctionDriver, tool
from mcs.errors import ConfigurationError, ToolNotFoundError

FILES = {"/a.py": "print(1)\n"}


@tool
def nav_list(path: str) -> Listing:
    """ls."""
    return Listing(entries=[Entry(name=name, type="file") for name in FILES])


@tool
def read(path: str) -> FileContent:
    """cat."""
    return FileContent(path=path, content=FILES[path])


@tool
def rm(path: str) -> Success:
    """rm."""
    return Success(success=FILES.pop(path, None) is not None)


@tool
def edit(path: str, line: int, text: str) -> Success:
    """sed."""
    lines = FILES[path].splitlines()
    lines[line - 1] = text
    FILES[path] = "\n".join(lines) + "\n"
    return Success(success=True)


class RunOut(BaseModel):
    stdout: str
    exit_code: int


@tool
def run(path: str) -> RunOut:
    """python."""
    return RunOut(stdout=FILES[path], exit_code=0)


class Workbench(FunctionDriver):
    implements: ClassVar[dict[str, dict[str, str]]] = {
        "filesystem.navigator.v1": {"list_dir": "nav_list", "open_file": "read", "delete_file": "rm"},
        "code.editor.v1": {"open_file": "read", "edit_line": "edit", "run_code": "run"},
    }


def make_view(active: list[str] | None = None) -> InterfaceView:
    return InterfaceView(Workbench([nav_list, read, rm, edit, run]), active=active)


def test_only_the_active_interface_is_described_with_canonical_text() -> None:
    view = make_view(["filesystem.navigator"])
    assert {t.name for t in view.list_tools()} == {"nav_list", "read", "rm"}
    description = view.get_function_description()
    assert "Delete a file." in description and "rm." not in description
    assert "edit" not in {t.name for t in view.list_tools()}


def test_switching_interfaces_mid_session_changes_what_is_offered_and_callable() -> None:
    view = make_view(["filesystem.navigator.v1"])
    assert view.call_tool("read", {"path": "/a.py"}) == FileContent(path="/a.py", content="print(1)\n")
    with pytest.raises(ToolNotFoundError):
        view.call_tool("edit", {"path": "/a.py", "line": 1, "text": "print(2)"})
    view.use("code.editor.v1")
    assert {t.name for t in view.list_tools()} == {"read", "edit", "run"}
    assert view.process_llm_response({"tool": "edit", "arguments": {"path": "/a.py", "line": 1, "text": "print(2)"}}) == Success(success=True)
    assert view.call_tool("run", {"path": "/a.py"}).stdout == "print(2)\n"


def test_a_non_conforming_declaration_is_refused_with_the_reason() -> None:
    class Sloppy(FunctionDriver):
        implements: ClassVar[list[str]] = ["code.editor.v1"]

    with pytest.raises(ConfigurationError, match=r"does not conform to code\.editor\.v1.*no tool implements"):
        InterfaceView(Sloppy([read]))


def test_switching_to_an_interface_not_implemented_is_an_error() -> None:
    view = make_view()
    with pytest.raises(ConfigurationError, match="not implemented here"):
        view.use("media.player.v1")


def test_a_toolbox_can_be_partitioned_by_interface_too() -> None:
    from mcs import Toolbox

    box = Toolbox([Workbench([nav_list, read, rm, edit, run])])
    view = InterfaceView(box, implements=Workbench.implements, active=["code.editor"])
    assert {t.name for t in view.list_tools()} == {"read", "edit", "run"}
    assert view.call_tool("read", {"path": "/a.py"}).path == "/a.py"


async def test_a_prefix_on_the_view_keeps_calls_working() -> None:
    view = InterfaceView(Workbench([nav_list, read, rm, edit, run]), active=["code.editor"], prefix="ws")
    assert {t.name for t in view.list_tools()} == {"ws_read", "ws_edit", "ws_run"}
    assert view.process_llm_response({"tool": "ws_read", "arguments": {"path": "/a.py"}}).path == "/a.py"
    assert (await view.acall_tool("ws_read", {"path": "/a.py"})).path == "/a.py"
