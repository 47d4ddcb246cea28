"""README's snippets run as written.

The Python blocks run in order in one fresh interpreter (warnings are errors), as a reader
pasting them into one session would, in a folder holding the files they name
(``petstore.yaml``, ``openapi.yaml``, ``mcpfile.yaml``). The names README leaves to the
reader are defined first: ``my_llm`` (a model that answers without a call),
``user_question`` and ``log``. The reference SDK block needs that SDK installed and runs
in ``tests/test_reference_sdk.py``. The command-line block runs line by line, except
``mcs serve`` and ``mcs inspect``, which do not return (the serving and inspector tests
cover them).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.readme import readme_blocks

ROOT = Path(__file__).resolve().parents[1]
PETSTORE = ROOT / "tests" / "drivers" / "rest" / "petstore.yaml"
REFERENCE_SDK_HEADING = "Drivers of the MCS reference SDK"

READER_NAMES = '''
import logging
log = logging.getLogger("readme")
user_question = "Which pets are there?"
ANSWER = "There are two pets: Rex and Tom."

def my_llm(system, question):
    assert "listPets" in system and question == user_question
    return ANSWER
'''

CHECKS = '''
import json as _json
print("README-CHECKS " + _json.dumps({
    "chaining": result is reply,
    "greeter": [greeter.meta.name, greeter.process_llm_response('{"tool": "greet", "arguments": {"who": "Ada"}}')],
    "toolbox": sorted(t.name for t in box.list_tools())[:3],
    "notes": notes.meta.name,
    "gen": gen.meta.name,
}))
'''

MCP_FILE = """\
mcpFileVersion: 0.1.0
name: readme-tools
version: 1.0.0
runtime:
  transportProtocol: stdio
tools:
  - name: hello
    description: Say hello.
    inputSchema: {type: object, properties: {who: {type: string}}, required: [who]}
    invocation:
      cli: {command: "echo hello {who}"}
"""


@pytest.fixture
def reader_folder(tmp_path: Path) -> Path:
    shutil.copy(PETSTORE, tmp_path / "petstore.yaml")
    shutil.copy(PETSTORE, tmp_path / "openapi.yaml")
    (tmp_path / "mcpfile.yaml").write_text(MCP_FILE)
    return tmp_path


def test_the_python_snippets_run_in_order_as_written(reader_folder: Path) -> None:
    blocks = [b.code for b in readme_blocks("python") if b.heading != REFERENCE_SDK_HEADING]
    script = "\n".join([READER_NAMES, *blocks, CHECKS])
    done = subprocess.run([sys.executable, "-W", "error", "-c", script], cwd=reader_folder,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    checks = json.loads(done.stdout.split("README-CHECKS ", 1)[1])
    assert checks["chaining"] is True, "a reply without a call is returned as it is"
    assert checks["greeter"] == ["greeter", "Hello, Ada!"]
    assert "Hello, Ada!" in done.stdout, "the minimal driver's own print"
    assert checks["notes"] == "notes" and checks["gen"] == "readme-tools"
    assert "add" in checks["toolbox"]


def _command_lines() -> list[str]:
    [block] = [b for b in readme_blocks("sh") if b.heading == "Command line"]
    lines = [line.split("  #", 1)[0].strip() for line in block.code.splitlines()]
    return [line for line in lines if line and not line.startswith(("mcs serve", "mcs inspect"))]


@pytest.mark.parametrize("line", _command_lines())
def test_the_command_line_snippets_run_as_written(line: str, reader_folder: Path) -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(["bash", "-o", "pipefail", "-c", line], cwd=reader_folder, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, f"{line}: {done.stderr}"
    assert done.stdout.strip(), f"{line} printed nothing"
    assert "Traceback" not in done.stderr
    if shlex.split(line)[:2] == ["mcs", "call"] or "| mcs call" in line:
        assert json.loads(done.stdout) == 3
