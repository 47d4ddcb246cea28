"""The MCP examples run as written, and the docs' ``mcpServers`` JSON serves an MCS driver.

``examples/mcp_client_features.py`` starts ``mcs serve notes_server:driver`` over stdio and
answers what the server asks. The JSON block of docs/serving.md is read with absolute
paths filled in, loaded with MCS's own ``mcp`` driver, and used.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from support.servers import free_port, server_process

import mcs

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
MCS = Path(sys.executable).with_name("mcs")


def test_the_client_features_example_answers_the_notes_server() -> None:
    done = subprocess.run([sys.executable, str(EXAMPLES / "mcp_client_features.py")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    for line in ("[user asked] Replace the note of monday?", "write_note -> saved the note of monday",
                 "[progress] 2/2 tidied tuesday", "summarise -> Two errands: milk and a call.",
                 'workspaces -> ["file:///home/me/notes"]', "read_resource -> buy oat milk",
                 "completions for 'tu': ['tuesday']", "updates heard: ['notes://day/monday']",
                 "[server log] info note of monday written"):
        assert line in out, out


def _docs_config() -> dict[str, object]:
    text = (ROOT / "docs" / "serving.md").read_text()
    block = re.search(r"<!-- mcpServers-example -->\s*```json\n(.*?)```", text, re.S)
    assert block is not None, "docs/serving.md lost its mcpServers example"
    filled = (block.group(1)
              .replace("/ABSOLUTE/PATH/TO/project/.venv/bin/mcs", str(MCS))
              .replace("/ABSOLUTE/PATH/TO/project/examples", str(EXAMPLES)))
    config: dict[str, object] = json.loads(filled)
    return config


def test_the_docs_mcp_servers_json_serves_the_notes_driver_to_the_mcp_driver(tmp_path: Path) -> None:
    config = _docs_config()
    server = config["mcpServers"]["notes"]  # type: ignore[index]
    assert Path(server["command"]).is_absolute() and Path(server["env"]["PYTHONPATH"]).is_absolute()
    path = tmp_path / "claude_desktop_config.json"
    path.write_text(json.dumps(config))
    with mcs.load_driver("mcp", config=str(path), include_resources=True) as driver:  # type: ignore[attr-defined]
        names = {tool.name for tool in driver.list_tools()}
        assert {"write_note", "tidy", "summarise", "badge", "read_resource"} <= names
        assert driver.process_llm_response({"tool": "read_resource", "arguments": {"uri": "notes://index"}}) == \
            '{"notes": 2}'


def test_the_docs_client_example_lists_and_calls_a_served_driver(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "serving.md").read_text()
    block = re.search(r"<!-- client-example -->\s*```python\n(.*?)```", text, re.S)
    assert block is not None, "docs/serving.md lost its client example"
    port = free_port()
    script = tmp_path / "client.py"
    script.write_text(block.group(1)
                      .replace("http://127.0.0.1:3000/mcp", f"http://127.0.0.1:{port}/mcp")
                      .replace('command="mcs"', f"command={str(MCS)!r}"))
    with server_process([MCS, "serve", "functions", "--transport", "http", "--port", str(port)], port):
        done = subprocess.run([sys.executable, "-W", "error", str(script)], capture_output=True, text=True,
                              timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["['get_weather', 'add']", "3.0", "light rain"]
