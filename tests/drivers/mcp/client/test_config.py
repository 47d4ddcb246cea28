"""Reading mcpServers files as Claude Desktop, Cursor and VS Code write them."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp_bridge_servers import player_stdio_options
from mcs_mcp.client import load_config
from mcs_mcp.client_driver import MCPDriver

from mcs.errors import ConfigurationError


def test_a_claude_desktop_file_gives_one_spec_per_server(tmp_path: Path) -> None:
    path = tmp_path / "claude_desktop_config.json"
    path.write_text(json.dumps({"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "server-files", "${env:ROOT}"], "env": {"K": "${K}"}},
        "remote": {"url": "https://mcp.example.test/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
        "off": {"command": "x", "disabled": True},
    }}))
    files, remote = load_config(path, environ={"ROOT": "/data", "K": "v", "TOKEN": "t0k"})
    assert (files.name, files.command, files.args, dict(files.env or {})) == ("files", "npx", ("-y", "server-files", "/data"), {"K": "v"})
    assert (remote.transport, remote.url, dict(remote.headers)) == ("HTTP", "https://mcp.example.test/mcp", {"Authorization": "Bearer t0k"})
    assert "t0k" not in remote.describe()


def test_vs_code_servers_key_is_accepted() -> None:
    [spec] = load_config({"servers": {"a": {"type": "http", "url": "http://127.0.0.1:1/mcp"}}})
    assert spec.url == "http://127.0.0.1:1/mcp"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"command": "x", "url": "http://h/mcp"}, "both"),
        ({"args": []}, "needs a 'command'"),
        ({"type": "websocket", "url": "ws://h/ws"}, "not a transport the bridge speaks"),
        ({"type": "sse", "command": "x"}, "needs a 'url'"),
        ({"command": "x", "args": "not a list"}, "args must be a list"),
        ({"command": "x", "env": {"A": "${MISSING_VAR_FOR_TEST}"}}, "MISSING_VAR_FOR_TEST"),
        ({"url": "ws://h/mcp"}, "http"),
    ],
)
def test_a_malformed_entry_names_the_server_and_field(entry: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message) as caught:
        load_config({"mcpServers": {"broken": entry}}, environ={})
    assert "broken" in str(caught.value)


def test_a_missing_or_invalid_file_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="does not exist"):
        load_config(tmp_path / "nope.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ConfigurationError, match="not valid JSON"):
        load_config(bad)


def test_a_config_file_connects_to_stdio_and_http_servers_together(tmp_path: Path, player_http: str, quiet: Any) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {
        "local": {"command": sys.executable, "args": player_stdio_options()["args"]},
        "remote": {"url": player_http},
    }}))
    with MCPDriver(config=str(path), namespace=True, stderr=quiet) as driver:
        assert driver.call_tool("local_echo", {"text": "a"}) == "a"
        assert driver.call_tool("remote_echo", {"text": "b"}) == "b"
        assert driver.meta.transport == "HTTP/STDIO"


def test_mcs_spec_s8_an_sse_entry_is_an_mcp_over_sse_bridge() -> None:
    [spec] = load_config({"mcpServers": {"legacy": {"type": "sse", "url": "http://h/sse"}}}, environ={})
    assert (spec.transport, spec.url, spec.sse) == ("SSE", "http://h/sse", True)
