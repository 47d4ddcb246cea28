"""``mcs serve ... --protocol rfc0001`` exposes any driver or toolbox over the wire protocol."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
from support.servers import free_port, server_process

MCS = [sys.executable, "-m", "mcs.cli"]


def _stdio(args: list[str], frames: list[dict[str, object]], cwd: Path | None = None) -> list[dict[str, object]]:
    text = "".join(json.dumps(f) + "\n" for f in frames)
    done = subprocess.run([*MCS, "serve", *args, "--protocol", "rfc0001", "--transport", "stdio"],
                          input=text.encode(), capture_output=True, timeout=60, cwd=cwd, check=True)
    return [json.loads(line) for line in done.stdout.decode().splitlines()]


def test_a_registered_driver_is_served_over_stdio() -> None:
    replies = _stdio(["functions"], [
        {"id": 1, "method": "capabilities"},
        {"id": 2, "method": "execute", "tool": "add", "arguments": {"a": 2, "b": 3}},
        {"id": 3, "method": "execute", "tool": "nope", "arguments": {}},
        {"id": 4, "method": "execute", "tool": "add", "arguments": {"a": "x"}},
    ])
    capabilities, added, missing, invalid = replies
    assert capabilities["status"] == 200
    tools = {t["name"]: t for t in capabilities["body"]["tools"]}
    assert {"add", "get_weather"} <= set(tools) and tools["add"]["timeout_ms"] == 30000
    assert added["status"] == 200 and added["body"]["result"] == 5
    assert missing["status"] == 404 and missing["body"]["error"] == "TOOL_NOT_FOUND"
    assert invalid["status"] == 400 and invalid["body"]["error"] == "INVALID_INPUT"


def test_a_toolbox_file_is_served_over_stdio(tmp_path: Path) -> None:
    config = tmp_path / "box.yaml"
    config.write_text("drivers:\n  math: {driver: functions}\n")
    replies = _stdio(["-c", str(config)], [
        {"id": 1, "method": "execute", "tool": "add", "arguments": {"a": 1, "b": 1}},
    ])
    assert replies[0]["status"] == 200 and replies[0]["body"]["result"] == 2


def test_a_module_of_tool_functions_is_served_over_stdio(tmp_path: Path) -> None:
    (tmp_path / "shop_tools.py").write_text(
        "import mcs\n\n\n@mcs.tool\ndef price(item: str, count: int) -> float:\n"
        "    \"\"\"The price of count items.\"\"\"\n    return {'pen': 1.5}[item] * count\n"
    )
    replies = _stdio(["shop_tools"], [
        {"id": 1, "method": "capabilities"},
        {"id": 2, "method": "execute", "tool": "price", "arguments": {"item": "pen", "count": 4}},
    ], cwd=tmp_path)
    assert replies[0]["body"]["server"] == "shop_tools"
    assert [t["name"] for t in replies[0]["body"]["tools"]] == ["price"]
    assert replies[1]["status"] == 200 and replies[1]["body"]["result"] == 6.0


def test_one_function_of_a_module_is_served_by_module_and_name(tmp_path: Path) -> None:
    (tmp_path / "two_tools.py").write_text(
        "import mcs\n\n\n@mcs.tool\ndef one() -> int:\n    return 1\n\n\n"
        "@mcs.tool\ndef two() -> int:\n    return 2\n"
    )
    replies = _stdio(["two_tools:two"], [{"id": 1, "method": "capabilities"}], cwd=tmp_path)
    assert [t["name"] for t in replies[0]["body"]["tools"]] == ["two"]


def test_a_driver_is_served_over_http() -> None:
    port = free_port()
    with server_process([*MCS, "serve", "functions", "--protocol", "rfc0001",
                         "--host", "127.0.0.1", "--port", str(port)], port, timeout=30):
        url = f"http://127.0.0.1:{port}"
        capabilities = httpx.get(url + "/mcp/capabilities", timeout=2)
        assert capabilities.json()["server"] == "functions"
        answer = httpx.post(url + "/mcp/execute", json={"tool": "get_weather", "arguments": {"city": "Paris"}})
        assert answer.status_code == 200 and answer.json()["result"]["sky"] == "light rain"


def test_an_unknown_driver_is_a_usage_error() -> None:
    done = subprocess.run([*MCS, "serve", "no-such-driver", "--protocol", "rfc0001", "--transport", "stdio"],
                          capture_output=True, timeout=60, input=b"")
    assert done.returncode == 2
    assert b"no MCS driver named 'no-such-driver'" in done.stderr


DEEP_TOOLS = (
    "from typing import Any\n\nimport mcs\n\n\n@mcs.tool\ndef keep(data: list) -> list:\n"
    "    \"\"\"Store data and give it back.\"\"\"\n    return data\n\n\n"
    "@mcs.tool\ndef tower() -> Any:\n    \"\"\"A list nested 5000 deep.\"\"\"\n"
    "    value: Any = []\n    for _ in range(5000):\n        value = [value]\n    return value\n"
)


def test_deeply_nested_arguments_or_results_do_not_stop_the_stdio_server(tmp_path: Path) -> None:
    (tmp_path / "deep_tools.py").write_text(DEEP_TOOLS)
    text = '{"id": 1, "method": "execute", "tool": "keep", "arguments": {"data": ' + "[" * 600 + "]" * 600 + "}}"
    done = subprocess.run([*MCS, "serve", "deep_tools", "--protocol", "rfc0001", "--transport", "stdio"],
                          input=(text + "\n" + json.dumps({"id": 2, "method": "execute", "tool": "tower"}) + "\n"
                                 + json.dumps({"id": 3, "method": "capabilities"}) + "\n").encode(),
                          capture_output=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    deep, tower, capabilities = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert (deep["id"], deep["status"], deep["body"]["error"]) == (1, 400, "INVALID_INPUT")
    assert "nested too deeply" in deep["body"]["message"]
    assert (tower["id"], tower["status"], tower["body"]["error"]) == (2, 502, "EXECUTION_ERROR")
    assert capabilities["status"] == 200


def test_deeply_nested_arguments_are_invalid_input_over_http(tmp_path: Path) -> None:
    (tmp_path / "deep_tools.py").write_text(DEEP_TOOLS)
    port = free_port()
    with server_process([*MCS, "serve", "deep_tools", "--protocol", "rfc0001", "--host", "127.0.0.1",
                         "--port", str(port)], port, timeout=30, cwd=tmp_path):
        url = f"http://127.0.0.1:{port}/mcp/execute"
        body = '{"tool": "keep", "arguments": {"data": ' + "[" * 600 + "]" * 600 + "}}"
        deep = httpx.post(url, content=body, headers={"content-type": "application/json"}, timeout=10)
        tower = httpx.post(url, json={"tool": "tower"}, timeout=10)
    assert deep.status_code == 400 and "nested too deeply" in deep.json()["message"]
    assert tower.status_code == 502 and tower.json()["error"] == "EXECUTION_ERROR"
