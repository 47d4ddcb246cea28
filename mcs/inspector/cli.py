"""``mcs inspect TARGET``: serve the inspector page for a driver until interrupted.

    mcs inspect rest -o spec=openapi.yaml -o base_url=http://127.0.0.1:8000
    mcs inspect mcpfile.yaml                 a gen-mcp file (mcpFileVersion)
    mcs inspect servers.json                 an mcpServers file (Claude Desktop, VS Code)
    mcs inspect http://127.0.0.1:3000/mcp    an MCP server over streamable HTTP
    mcs inspect -c toolbox.yaml              several drivers
    mcs inspect my_tools[:name]              a module of @mcs.tool functions, or a driver in it
    mcs inspect ... [--port N] [--open]

Prints the page's address (127.0.0.1, a free port unless ``--port``, a random session
token) and opens nothing unless ``--open``. Registered through the ``mcs.commands``
entry-point group; exit codes as every ``mcs`` command (2 usage, 3 missing dependency).
"""

from __future__ import annotations

import argparse
import contextlib
import html
import json
import os
import shutil
import signal
import tempfile
import threading
import webbrowser
from pathlib import Path
from typing import Any

import yaml

from mcs.errors import ConfigurationError


def register_command(subparsers: Any) -> None:
    """Add ``inspect`` to the ``mcs`` command line."""
    parser = subparsers.add_parser(
        "inspect", help="a local web page: what the model sees of a driver, and what a call does"
    )
    parser.add_argument("target", nargs="?",
                        help="a driver name, a module of tools (module[:name]), a gen-mcp file, "
                             "an mcpServers JSON file, or an MCP server URL")
    parser.add_argument("-o", "--option", action="append", metavar="KEY=VALUE",
                        help="a driver option (repeatable)")
    parser.add_argument("-c", "--config", metavar="FILE", help="a toolbox file naming several drivers")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--open", action="store_true", help="open the page in the default browser")
    parser.set_defaults(handler=cmd_inspect)


def _file_kind(path: Path) -> str | None:
    """``"mcpfile"`` for a gen-mcp file, ``"mcpservers"`` for an mcpServers JSON file."""
    try:
        text = path.read_text(encoding="utf-8")
        document = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError):
        return None
    if not isinstance(document, dict):
        return None
    if "mcpFileVersion" in document or document.get("kind") == "MCPToolDefinitions":
        return "mcpfile"
    if isinstance(document.get("mcpServers"), dict) or isinstance(document.get("servers"), dict):
        return "mcpservers"
    return None


def build_target(args: argparse.Namespace) -> Any:
    """The driver ``mcs inspect`` was pointed at (see the module docstring)."""
    from mcs.cli import build_driver, load_with_options

    target: str | None = args.target
    if args.config:
        if target:
            raise ConfigurationError("give either a TARGET or -c toolbox.yaml, not both")
        return build_driver(argparse.Namespace(driver=None, option=args.option, config=args.config))
    if not target:
        raise ConfigurationError("name a driver (see `mcs drivers`) or a module of tools, a gen-mcp or "
                                 "mcpServers file, an MCP server URL, or pass -c toolbox.yaml")
    pairs = args.option or []
    path = Path(target)
    if target.startswith(("http://", "https://")):
        return load_with_options("mcp", pairs, url=target)
    if path.is_file():
        kind = _file_kind(path)
        if kind is None:
            raise ConfigurationError(
                f"{target} is neither a gen-mcp file (mcpFileVersion) nor an mcpServers JSON file; "
                "for a toolbox use -c FILE"
            )
        if kind == "mcpfile":
            return load_with_options("mcpfile", pairs, path=str(path))
        return load_with_options("mcp", pairs, config=str(path))
    # A registered driver, or a Python module of tools (``module`` / ``module:name``).
    return build_driver(argparse.Namespace(driver=target, option=pairs, config=None))


def open_in_browser(url: str) -> Path:
    """Open ``url`` in the default browser without putting it on a command line.

    Any local user can read a process's command line, and ``url`` holds the session token,
    so the browser is given a file only the current user can read, which leads to ``url``.
    Returns the private folder holding that file; remove it when the inspector stops.
    """
    folder = Path(tempfile.mkdtemp(prefix="mcs-inspect-"))  # mode 0700
    page = folder / "open.html"
    quoted = html.escape(url, quote=True)
    descriptor = os.open(page, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as out:
        out.write(f'<!doctype html>\n<meta charset="utf-8">\n<meta http-equiv="refresh" content="0;url={quoted}">\n'
                  f'<title>mcs inspect</title>\n<p><a href="{quoted}">Open the inspector</a></p>\n')
    webbrowser.open(page.as_uri())
    return folder


def cmd_inspect(args: argparse.Namespace) -> int:
    from mcs.inspector.server import InspectorServer

    if not 0 <= args.port <= 65535:
        raise ConfigurationError(f"--port must be between 0 and 65535, got {args.port}")
    driver = build_target(args)
    stopping = threading.Event()
    try:
        server = InspectorServer(driver, port=args.port)
        server.start()
        tools = server.inspection.overview()["tools"]
        print(f"mcs inspect: {driver.meta.name} ({tools} tools) at {server.url}", flush=True)
        print("Open that address in a browser (it carries the session token); Ctrl-C stops.", flush=True)
        launcher = open_in_browser(server.url) if args.open else None
        signal.signal(signal.SIGTERM, lambda *_: stopping.set())
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how a person stops it
            stopping.wait()
        server.stop()
        if launcher is not None:
            shutil.rmtree(launcher, ignore_errors=True)
    finally:
        close = getattr(driver, "close", None)
        if callable(close):
            close()
    return 0
