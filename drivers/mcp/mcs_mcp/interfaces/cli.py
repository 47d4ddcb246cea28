"""``mcs interfaces list`` and ``mcs interfaces check TARGET``.

    mcs interfaces list [--file DEF.yaml] [--json]
    mcs interfaces check TARGET [-o key=value] [--implements NAME] [--file DEF.yaml] [--json]

``TARGET`` is an MCP server (``http://...`` URL, an ``mcpServers`` JSON file, or a
command line such as ``"python server.py"``), a registered driver name, or a driver
class as ``package.module:ClassName`` (options with ``-o``). For a server, the interfaces it declares in ``list_interfaces`` are checked
against the definitions known here (the server's own definition when this registry
does not know one) using its real ``tools/list``; for a driver, its ``implements``
declaration. ``--implements`` checks an interface the target does not declare.

Exit codes: 0 every checked interface conforms, 1 one does not (or nothing to check),
2 usage or configuration error.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from pathlib import Path
from typing import Any

from mcs.errors import ConfigurationError
from mcs_mcp.interfaces.conformance import ConformanceReport
from mcs_mcp.interfaces.declaration import declared, implementations
from mcs_mcp.interfaces.registry import InterfaceRegistry, default_registry


def register_command(subparsers: Any) -> None:
    """Add ``interfaces`` to the ``mcs`` CLI (the ``mcs.commands`` entry point)."""
    parser = subparsers.add_parser("interfaces", help="list interface definitions, check conformance")
    sub = parser.add_subparsers(dest="interfaces_command", metavar="ACTION")
    parser.set_defaults(handler=lambda args: _usage(parser))

    listing = sub.add_parser("list", help="list known interface definitions")
    listing.add_argument("--file", action="append", default=[], metavar="PATH",
                         help="also load definitions from a JSON/YAML file or directory (repeatable)")
    listing.add_argument("--json", action="store_true", help="print the full definitions as JSON")
    listing.set_defaults(handler=cmd_list)

    checking = sub.add_parser("check", help="print a conformance report for a server or driver")
    checking.add_argument("target", help="an MCP server URL, mcpServers JSON file, command line, or driver name")
    checking.add_argument("-o", "--option", action="append", default=[], metavar="KEY=VALUE",
                          help="a driver option (repeatable)")
    checking.add_argument("--implements", action="append", default=[], metavar="INTERFACE",
                          help="check this interface even if the target does not declare it (repeatable)")
    checking.add_argument("--file", action="append", default=[], metavar="PATH",
                          help="also load definitions from a JSON/YAML file or directory (repeatable)")
    checking.add_argument("--json", action="store_true", help="print the report as JSON")
    checking.set_defaults(handler=cmd_check)


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _registry(files: list[str]) -> InterfaceRegistry:
    registry = default_registry()
    for item in files:
        path = Path(item)
        if path.is_dir():
            registry.load_dir(path)
        else:
            registry.load_file(path)
    return registry


def cmd_list(args: argparse.Namespace) -> int:
    registry = _registry(args.file)
    if args.json:
        print(json.dumps([i.to_dict() for i in registry], indent=2, ensure_ascii=False))
        return 0
    for interface in registry:
        print(f"{interface.name}  {interface.description}")
        for method in interface.methods:
            print(f"    {method.name}: {method.description}")
    return 0


_DRIVER_CLASS = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


def _is_driver_name(target: str) -> bool:
    from importlib import metadata

    return any(ep.name == target for ep in metadata.entry_points(group="mcs.drivers"))


def _mcp_options(target: str, options: dict[str, Any]) -> dict[str, Any] | None:
    if target.startswith(("http://", "https://")):
        return {"url": target, **options}
    path = Path(target)
    if path.suffix == ".json" and path.is_file():
        return {"config": str(path), **options}
    if (_is_driver_name(target) and target != "mcp") or _DRIVER_CLASS.match(target):
        return None
    if target == "mcp":
        return options
    words = shlex.split(target)
    if not words:
        raise ConfigurationError("name a server or a driver to check")
    return {"command": words[0], "args": words[1:], **options}


def check_server(options: dict[str, Any], registry: InterfaceRegistry, extra: list[str]) -> list[ConformanceReport]:
    """Reports for every interface an MCP server declares (plus ``extra``), from its real tools."""
    from mcs_mcp.client_driver import MCPDriver
    from mcs_mcp.interfaces.served import served_claims

    driver = MCPDriver(**options)
    try:
        return [claim.report for claim in served_claims(driver, registry, extra)]
    finally:
        driver.close()


def cmd_check(args: argparse.Namespace) -> int:
    from mcs.options import typed_options
    from mcs_mcp.client_driver import MCPDriver

    registry = _registry(args.file)
    mcp_options = _mcp_options(args.target, {})
    if mcp_options is not None:
        mcp_options.update(typed_options(MCPDriver, args.option or [], owner="the MCP driver"))
        reports = check_server(mcp_options, registry, args.implements)
    else:
        from mcs.cli import load_with_options
        from mcs_mcp._targets import import_driver_class

        if _DRIVER_CLASS.match(args.target):
            cls = import_driver_class(args.target)
            driver = cls(**typed_options(cls, args.option or [], owner=args.target))
        else:
            driver = load_with_options(args.target, args.option or [])
        try:
            spec: Any = declared(driver)
            if args.implements:
                spec = [*(_as_list(spec)), *args.implements]
            list_tools = getattr(driver, "list_tools", None)
            if not callable(list_tools):
                raise ConfigurationError(f"driver {args.target!r} does not list its tools")
            found = implementations(list_tools(), spec, registry=registry, target=args.target) if spec else []
            reports = [i.report for i in found if i.report is not None]
        finally:
            close = getattr(driver, "close", None)
            if callable(close):
                close()
    if args.json:
        print(json.dumps([r.to_dict() for r in reports], indent=2, ensure_ascii=False))
    elif not reports:
        print(f"{args.target} declares no interface (use --implements NAME to check one)")
    else:
        print("\n\n".join(r.to_text() for r in reports))
    if not reports:
        return 1
    return 0 if all(r.conforms for r in reports) else 1


def _as_list(spec: Any) -> list[Any]:
    if spec is None:
        return []
    if isinstance(spec, dict):
        return list(spec.items())
    if isinstance(spec, str):
        return [spec]
    return list(spec)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(2)
