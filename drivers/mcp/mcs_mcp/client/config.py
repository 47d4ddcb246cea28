"""Read an ``mcpServers`` JSON file, as Claude Desktop, Cursor and VS Code write it.

    {"mcpServers": {
        "files":  {"command": "npx", "args": ["-y", "@scope/server", "/tmp"], "env": {"K": "V"}},
        "remote": {"url": "https://example.test/mcp", "headers": {"Authorization": "Bearer ${env:TOKEN}"}}
    }}

``servers`` (VS Code) is accepted as well as ``mcpServers``. A server with
``"disabled": true`` is skipped. ``${env:NAME}`` and ``${NAME}`` in ``command``,
``args``, ``env``, ``url`` and ``headers`` are replaced by environment variables (a
missing one is an error naming it). ``"type": "sse"`` names a server on the legacy
HTTP+SSE transport (MCS spec section 8 counts MCP over SSE as a bridge); ``"http"`` or
``"streamable-http"`` (or no type) streamable HTTP.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mcs.errors import ConfigurationError
from mcs_mcp.client.connection import ServerSpec

_KINDS = frozenset({"", "stdio", "http", "streamable-http", "streamablehttp", "sse"})
_VARIABLE = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}")


def _expand(value: str, where: str, environ: Mapping[str, str]) -> str:
    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in environ:
            raise ConfigurationError(f"{where} uses ${{{name}}} but the environment variable {name} is not set")
        return environ[name]

    return _VARIABLE.sub(replace, value)


def _strings(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigurationError(f"{where} must be a list of strings")
    return list(value)


def _mapping(value: Any, where: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ConfigurationError(f"{where} must be an object of string values")
    return {str(k): v for k, v in value.items()}


def server_spec(name: str, entry: Mapping[str, Any], *, environ: Mapping[str, str] | None = None) -> ServerSpec:
    """One config entry as a :class:`ServerSpec` (raises ``ConfigurationError`` with the field)."""
    env_vars = os.environ if environ is None else environ
    where = f"mcpServers.{name}"
    kind = str(entry.get("type", entry.get("transport", ""))).lower().replace("_", "-")
    if kind not in _KINDS:
        raise ConfigurationError(
            f"{where}.type {kind!r} is not a transport the bridge speaks; use 'stdio', 'http' "
            "(streamable HTTP) or 'sse' (the legacy HTTP+SSE transport)"
        )
    url = entry.get("url", entry.get("serverUrl"))
    command = entry.get("command")
    if command is None and url is None:
        raise ConfigurationError(f"{where} needs a 'command' (stdio) or a 'url' (streamable HTTP)")
    if command is not None and url is not None:
        raise ConfigurationError(f"{where} has both 'command' and 'url'; keep one")
    if command is not None and kind not in ("", "stdio"):
        raise ConfigurationError(f"{where}.type {kind!r} needs a 'url'; a 'command' runs over stdio")
    try:
        if command is not None:
            if not isinstance(command, str) or not command:
                raise ConfigurationError(f"{where}.command must be a non-empty string")
            args = [_expand(a, f"{where}.args", env_vars) for a in _strings(entry.get("args", []), f"{where}.args")]
            env = {k: _expand(v, f"{where}.env.{k}", env_vars) for k, v in _mapping(entry.get("env", {}), f"{where}.env").items()}
            cwd = entry.get("cwd")
            return ServerSpec(
                name=name,
                command=_expand(command, f"{where}.command", env_vars),
                args=tuple(args),
                env=env or None,
                cwd=str(cwd) if cwd is not None else None,
            )
        if not isinstance(url, str):
            raise ConfigurationError(f"{where}.url must be a string")
        headers = {
            k: _expand(v, f"{where}.headers.{k}", env_vars)
            for k, v in _mapping(entry.get("headers", {}), f"{where}.headers").items()
        }
        return ServerSpec(name=name, url=_expand(url, f"{where}.url", env_vars), headers=headers, sse=kind == "sse")
    except ValueError as exc:
        if isinstance(exc, ConfigurationError):
            raise
        raise ConfigurationError(f"{where}: {exc}") from None


def load_config(source: str | os.PathLike[str] | Mapping[str, Any], *, environ: Mapping[str, str] | None = None) -> list[ServerSpec]:
    """Every enabled server of an ``mcpServers`` file (path) or already-parsed mapping, in order.

    Raises:
        ConfigurationError: the file is missing, is not JSON, or an entry is malformed.
    """
    if isinstance(source, Mapping):
        data: Any = source
        label = "the MCP server config"
    else:
        path = Path(source)
        label = str(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigurationError(f"MCP server config {label} does not exist") from None
        except ValueError as exc:
            raise ConfigurationError(f"MCP server config {label} is not valid JSON: {exc}") from None
    if not isinstance(data, Mapping):
        raise ConfigurationError(f"{label} must hold a JSON object")
    servers = data.get("mcpServers", data.get("servers"))
    if not isinstance(servers, Mapping):
        raise ConfigurationError(f"{label} has no 'mcpServers' object")
    specs: list[ServerSpec] = []
    for name, entry in servers.items():
        if not isinstance(entry, Mapping):
            raise ConfigurationError(f"mcpServers.{name} must be an object")
        if entry.get("disabled") is True:
            continue
        specs.append(server_spec(str(name), entry, environ=environ))
    if not specs:
        raise ConfigurationError(f"{label} names no enabled MCP server")
    return specs
