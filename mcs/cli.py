"""The ``mcs`` command line.

    mcs drivers                              what is installed, and what is missing
    mcs describe DRIVER [-o k=v] [--model M] [--format text|openai|openai_responses|anthropic|gemini|mcp]
    mcs prompt DRIVER --model M [-o k=v]
    mcs call DRIVER [-o k=v] [-r RESPONSE]   the LLM response from -r or stdin
    mcs serve TARGET [--protocol mcp|rfc0001] [--transport stdio|http] [--host H] [--port N]
                     [-s KEY=VALUE]          a serving option for the protocol's backend

``DRIVER`` is a registered driver name, or ``--config FILE`` names several drivers (a
toolbox). Options are ``-o key=value``; values that parse as JSON (numbers, booleans,
lists) are passed as such. Drivers add commands through the ``mcs.commands`` entry-point
group and serving protocols through ``mcs.serve_backends``.

Exit codes: 0 success, 1 the tool call failed (the error is printed as JSON),
2 usage or configuration error, 3 a driver or dependency is missing.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from importlib import metadata
from typing import Any

from mcs.driver import MCSDriver
from mcs.errors import (
    ConfigurationError,
    DriverNotFoundError,
    MissingDependencyError,
    ToolCallError,
)

EXIT_OK, EXIT_CALL_FAILED, EXIT_USAGE, EXIT_MISSING = 0, 1, 2, 3
COMMANDS_GROUP = "mcs.commands"
SERVE_GROUP = "mcs.serve_backends"

Handler = Callable[[argparse.Namespace], int]


def parse_options(pairs: Sequence[str]) -> dict[str, Any]:
    """``["a=1", "b=x"]`` -> ``{"a": 1, "b": "x"}``; JSON values are decoded when they parse."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise ConfigurationError(f"option {pair!r} is not key=value")
        try:
            value: Any = json.loads(raw)
        except ValueError:
            value = raw
        options[key.strip().replace("-", "_")] = value
    return options


def to_jsonable(value: Any) -> Any:
    """Results as JSON can carry them: models dumped, bytes described, the rest as text."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if isinstance(value, bytes | bytearray):
        return {"bytes": len(value)}
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def build_driver(args: argparse.Namespace) -> MCSDriver:
    """The driver (or toolbox) a command names: ``DRIVER -o ...`` or ``--config FILE``."""
    from mcs.registry import load_driver

    options = parse_options(getattr(args, "option", None) or [])
    if getattr(args, "config", None):
        from mcs.toolbox import Toolbox

        return Toolbox.from_config(args.config)
    if not args.driver:
        raise ConfigurationError("name a driver (see `mcs drivers`) or pass --config FILE")
    try:
        return load_driver(args.driver, **options)
    except TypeError as exc:  # an option the driver does not take, or of the wrong type
        raise ConfigurationError(f"driver {args.driver!r} refused its options: {exc}") from exc


def _add_driver_arguments(parser: argparse.ArgumentParser, *, positional: str = "driver") -> None:
    parser.add_argument(positional, nargs="?", help="a driver name from `mcs drivers`")
    parser.add_argument("-o", "--option", action="append", metavar="KEY=VALUE",
                        help="a driver option (repeatable)")
    parser.add_argument("-c", "--config", metavar="FILE",
                        help="a YAML/JSON/TOML file naming several drivers (a toolbox)")


def _cmd_drivers(args: argparse.Namespace) -> int:
    from mcs.registry import available_drivers

    rows = [("NAME", "DISTRIBUTION", "VERSION", "STATUS")]
    for info in available_drivers():
        status = "installed" if info.installed else f"missing: {info.install_command}"
        rows.append((info.name, info.distribution, info.version or "-", status))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + "  " + row[3])
    return EXIT_OK


@contextmanager
def opened_driver(args: argparse.Namespace) -> Iterator[MCSDriver]:
    """:func:`build_driver`, closed (connections released) when the command is done."""
    driver = build_driver(args)
    try:
        yield driver
    finally:
        close = getattr(driver, "close", None)
        if callable(close):
            close()


def _cmd_describe(args: argparse.Namespace) -> int:
    with opened_driver(args) as driver:
        if args.format == "text":
            print(driver.get_function_description(args.model))
            return EXIT_OK
        from mcs.driver import ToolDriver
        from mcs.native import export_tools

        if not isinstance(driver, ToolDriver):
            raise ConfigurationError(f"--format {args.format} needs a driver built on ToolDriver")
        tools = export_tools(driver.list_tools(), args.format)
        print(json.dumps(tools, indent=2, ensure_ascii=False))
        return EXIT_OK


def _cmd_prompt(args: argparse.Namespace) -> int:
    with opened_driver(args) as driver:
        print(driver.get_driver_system_message(args.model))
    return EXIT_OK


def _read_response(raw: str | None) -> Any:
    text = raw if raw is not None else sys.stdin.buffer.read().decode("utf-8", errors="replace")
    stripped = text.strip()
    if stripped[:1] in "{[":
        try:
            return json.loads(stripped)
        except ValueError:
            return text
    return text


def _cmd_call(args: argparse.Namespace) -> int:
    with opened_driver(args) as driver:
        response = _read_response(args.response)
        try:
            result = driver.process_llm_response(response)
        except ToolCallError as error:
            print(json.dumps(error.to_dict(), ensure_ascii=False))
            return EXIT_CALL_FAILED
    if result is response:
        print(json.dumps({"error": "NO_CALL", "message": "the response holds no call for this driver"}))
        return EXIT_CALL_FAILED
    print(json.dumps(to_jsonable(result), indent=2, ensure_ascii=False))
    return EXIT_OK


def _serve_backends() -> dict[str, metadata.EntryPoint]:
    return {ep.name: ep for ep in metadata.entry_points(group=SERVE_GROUP)}


def _cmd_serve(args: argparse.Namespace) -> int:
    backends = _serve_backends()
    backend = backends.get(args.protocol)
    if backend is None:
        hint = {"mcp": "mcs-framework-mcp", "rfc0001": "mcs-framework[server]"}.get(args.protocol, args.protocol)
        raise MissingDependencyError(
            f"serving over {args.protocol!r} is not installed: pip install {hint}",
            install=f"pip install {hint}",
        )
    serve: Callable[[argparse.Namespace], int] = backend.load()
    return serve(args)


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mcs", description="Model Context Standard drivers.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    drivers = sub.add_parser("drivers", help="list drivers: installed, or what to install")
    drivers.set_defaults(handler=_cmd_drivers)

    describe = sub.add_parser("describe", help="print a driver's function description")
    _add_driver_arguments(describe)
    describe.add_argument("--model", help="the model the description is for")
    describe.add_argument("--format", default="text",
                          choices=["text", "openai", "openai_responses", "anthropic", "gemini", "mcp"])
    describe.set_defaults(handler=_cmd_describe)

    prompt = sub.add_parser("prompt", help="print the system prompt for a model")
    _add_driver_arguments(prompt)
    prompt.add_argument("--model", help="model name, e.g. gpt-4o or claude-3-5-sonnet")
    prompt.set_defaults(handler=_cmd_prompt)

    call = sub.add_parser("call", help="run the call(s) in an LLM response, print the result")
    _add_driver_arguments(call)
    call.add_argument("--response", "-r", help="the LLM response (default: read stdin)")
    call.set_defaults(handler=_cmd_call)

    serve = sub.add_parser("serve", help="serve a driver, toolbox or MCP file")
    serve.add_argument("target", nargs="?", help="a driver name or an MCP file (YAML)")
    serve.add_argument("-o", "--option", action="append", metavar="KEY=VALUE")
    serve.add_argument("-c", "--config", metavar="FILE", help="a toolbox file")
    serve.add_argument("--protocol", default="mcp", help="mcp (default) or rfc0001")
    serve.add_argument("--transport", choices=["stdio", "http", "websocket"])
    serve.add_argument("--host", default=None, help="bind address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=None)
    serve.add_argument("-s", "--serve-option", action="append", metavar="KEY=VALUE",
                       help="a serving option for the backend, e.g. tls_cert=FILE (repeatable)")
    serve.set_defaults(handler=_cmd_serve)

    for entry_point in metadata.entry_points(group=COMMANDS_GROUP):
        try:
            register: Callable[[Any], None] = entry_point.load()
            register(sub)
        except Exception as exc:  # a broken plugin never breaks the CLI
            print(f"mcs: skipping command plugin {entry_point.name!r}: {exc}", file=sys.stderr)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _build_parser()
    args = parser.parse_args(argv)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        return handler(args)
    except MissingDependencyError as exc:
        print(f"mcs: {exc}", file=sys.stderr)
        return EXIT_MISSING
    except (ConfigurationError, DriverNotFoundError, ValueError, OSError) as exc:
        print(f"mcs: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
