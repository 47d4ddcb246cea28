"""The ``mcs`` command line.

    mcs drivers                              what is installed, and what is missing
    mcs describe DRIVER [-o k=v] [--model M] [--format text|openai|openai_responses|anthropic|gemini|mcp] [--all-tools]
    mcs prompt DRIVER --model M [-o k=v]
    mcs call DRIVER [-o k=v] [-r RESPONSE]   the LLM response from -r or stdin
    mcs serve TARGET [--protocol mcp|rfc0001] [--transport stdio|http] [--host H] [--port N]
                     [-s KEY=VALUE]          a serving option for the protocol's backend

``DRIVER`` is a registered driver name, or ``--config FILE`` names several drivers (a
toolbox). Options are ``-o key=value``, each value converted to the type the driver's
constructor declares for it (:mod:`mcs.options`). Drivers add commands through the
``mcs.commands`` entry-point group and serving protocols through ``mcs.serve_backends``.

Exit codes: 0 success, 1 the tool call failed (the error is printed as JSON; a response
that tried to call but could not, a misspelt tool or a call cut off, is a failed call),
2 usage or configuration error, 3 a driver or dependency is missing. Every error is one
line on stderr (``MCS_DEBUG=1`` adds the traceback of an unexpected one); warnings are
``mcs: warning: ...`` lines.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from importlib import metadata
from typing import Any

from mcs.driver import MCSDriver
from mcs.errors import (
    ConfigurationError,
    MCSError,
    MissingDependencyError,
    ToolCallError,
)

EXIT_OK, EXIT_CALL_FAILED, EXIT_USAGE, EXIT_MISSING = 0, 1, 2, 3
DEBUG_ENV = "MCS_DEBUG"
COMMANDS_GROUP = "mcs.commands"
SERVE_GROUP = "mcs.serve_backends"

Handler = Callable[[argparse.Namespace], int]


def parse_options(pairs: Sequence[str]) -> dict[str, Any]:
    """``["a=1", "b=x"]`` -> ``{"a": 1, "b": "x"}``; JSON values are decoded when they parse.

    For settings without a declared type (``-s``); driver options are typed by the
    driver's signature instead (:func:`load_with_options`, :mod:`mcs.options`).
    """
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


def load_with_options(name: str, pairs: Sequence[str], **fixed: Any) -> MCSDriver:
    """The driver registered as ``name``, built from ``-o key=value`` pairs typed by its signature.

    ``fixed`` are keyword arguments set by the caller rather than the user (a file path).
    """
    from mcs.options import typed_options
    from mcs.registry import driver_class

    cls = driver_class(name)
    options = {**typed_options(cls, pairs, owner=f"the {name!r} driver"), **fixed}
    missing = _missing_required(cls, options)
    if missing:
        given = " ".join(f"-o {key}=..." for key in missing)
        raise ConfigurationError(f"the {name!r} driver needs {given}")
    try:
        return cls(**options)
    except TypeError as exc:  # the options fit the signature; the class itself cannot be built
        raise ConfigurationError(f"driver {name!r} could not be built: {exc}") from exc


def _missing_required(cls: type, options: dict[str, Any]) -> list[str]:
    """The constructor's keywords without a default that ``options`` leaves out, in order."""
    try:
        parameters = inspect.signature(cls).parameters.values()
    except (TypeError, ValueError):  # a signature Python cannot read: the constructor decides
        return []
    keyword_kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return [p.name for p in parameters
            if p.kind in keyword_kinds and p.default is inspect.Parameter.empty and p.name not in options]


def build_driver(args: argparse.Namespace) -> MCSDriver:
    """The driver (or toolbox) a command names: ``DRIVER -o ...`` or ``--config FILE``."""
    if getattr(args, "config", None):
        from mcs.toolbox import Toolbox

        return Toolbox.from_config(args.config)
    if not args.driver:
        raise ConfigurationError("name a driver (see `mcs drivers`) or pass --config FILE")
    from mcs.targets import load_named

    return load_named(args.driver, getattr(args, "option", None) or [])


def _add_driver_arguments(parser: argparse.ArgumentParser, *, positional: str = "driver") -> None:
    parser.add_argument(positional, nargs="?", help="a driver name from `mcs drivers`")
    parser.add_argument("-o", "--option", action="append", metavar="KEY=VALUE",
                        help="a driver option (repeatable)")
    parser.add_argument("-c", "--config", metavar="FILE",
                        help="a YAML/JSON/TOML file naming several drivers (a toolbox)")


def _cmd_drivers(args: argparse.Namespace) -> int:
    from mcs.registry import available_drivers, check_driver

    rows = [("NAME", "DISTRIBUTION", "VERSION", "STATUS")]
    for info in available_drivers():
        if not info.installed:
            status = f"missing: {info.install_command}"
        else:
            problem = check_driver(info.name)
            status = "installed" if problem is None else f"broken: {problem}"
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


def _print_auth_options(driver: MCSDriver) -> None:
    """On stderr (stdout stays the description): the auth the spec declares, and how to set it."""
    from mcs.driver import ToolDriver

    options = driver.auth_options() if isinstance(driver, ToolDriver) else []
    if not options:
        return
    print("mcs: the spec declares these security schemes; set one with -o:", file=sys.stderr)
    for option in options:
        state = "  (set)" if option.configured else ""
        print(f"  {option.name} ({option.kind}): {option.option}{state}", file=sys.stderr)


def _offer_lines(driver: MCSDriver) -> list[str]:
    """The driver's prompts, resources and resource templates, one line each (none: empty)."""

    def listed(method: str) -> list[Any]:
        function = getattr(driver, method, None)
        return list(function()) if callable(function) else []

    def field(item: Any, *names: str) -> Any:
        for name in names:
            value = item.get(name) if isinstance(item, dict) else getattr(item, name, None)
            if value:
                return value
        return ""

    lines: list[str] = []
    for title, method, key in (("Prompts", "prompts", ("name",)), ("Resources", "resources", ("uri",)),
                               ("Resource templates", "resource_templates", ("uri_template", "uriTemplate"))):
        items = listed(method)
        if items:
            lines.append(f"\n{title}:")
            lines.extend(f"- {field(i, *key)}: {field(i, 'description', 'name')}".rstrip(": ") for i in items)
    return lines


def _cmd_describe(args: argparse.Namespace) -> int:
    with opened_driver(args) as driver:
        _print_auth_options(driver)
        if args.format == "text":
            print(driver.get_function_description(args.model))
            for line in _offer_lines(driver):
                print(line)
            return EXIT_OK
        from mcs.driver import ToolDriver
        from mcs.native import export_tools

        if not isinstance(driver, ToolDriver):
            raise ConfigurationError(f"--format {args.format} needs a driver built on ToolDriver")
        tools = export_tools(driver.list_tools(), args.format, all_tools=args.all_tools)
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
        from mcs.loop import attempted_calls

        attempts = attempted_calls(driver, response)
        if attempts and attempts[0].error is not None:  # a misspelt tool, a call cut off
            print(json.dumps(attempts[0].error.to_dict(), ensure_ascii=False))
        else:
            print(json.dumps({"error": "NO_CALL", "message": "the response holds no call for this driver"}))
        return EXIT_CALL_FAILED
    print(json.dumps(to_jsonable(result), indent=2, ensure_ascii=False))
    return EXIT_OK


#: The serve protocols this project publishes: where each comes from, what it serves over.
KNOWN_SERVE_BACKENDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "mcp": ("mcs-framework-mcp", ("stdio", "http")),
    "rfc0001": ("mcs-framework[server]", ("stdio", "http", "websocket")),
}


def _serve_backends() -> dict[str, list[metadata.EntryPoint]]:
    """Every registered serve protocol, with every plugin that registers it."""
    from mcs.registry import plugin_entry_points

    backends: dict[str, list[metadata.EntryPoint]] = {}
    for entry_point in plugin_entry_points(SERVE_GROUP):
        backends.setdefault(entry_point.name, []).append(entry_point)
    return backends


def _one_backend(protocol: str, registered: list[metadata.EntryPoint]) -> metadata.EntryPoint:
    """The one plugin serving ``protocol``; two or more are refused, not picked by install order.

    Raises:
        ConfigurationError: naming each plugin and how to keep one.
    """
    if len(registered) == 1:
        return registered[0]
    from mcs.registry import ONLY_ENV

    named = ", ".join(
        f"{ep.value} from {(ep.dist.metadata['Name'] if ep.dist is not None else None) or 'unknown'}"
        for ep in registered
    )
    raise ConfigurationError(
        f"{len(registered)} plugins register the serve protocol {protocol!r} ({named}); "
        f"uninstall all but one, or keep one with {ONLY_ENV}"
    )


def _cmd_serve(args: argparse.Namespace) -> int:
    backends = _serve_backends()
    registered = backends.get(args.protocol)
    backend = _one_backend(args.protocol, registered) if registered else None
    known = KNOWN_SERVE_BACKENDS.get(args.protocol)
    if backend is None and known is None:  # never an install hint built from what was typed
        raise ConfigurationError(
            f"no serve protocol named {args.protocol!r}; installed: {', '.join(sorted(backends)) or 'none'}"
        )
    if known is not None and args.transport and args.transport not in known[1]:
        raise ConfigurationError(
            f"--protocol {args.protocol} serves over {' or '.join(known[1])}, not {args.transport}"
        )
    if backend is None:
        assert known is not None
        raise MissingDependencyError(
            f"serving over {args.protocol!r} is not installed: pip install {known[0]}",
            install=f"pip install {known[0]}",
        )
    serve: Callable[[argparse.Namespace], int] = backend.load()
    return serve(args)


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mcs", description="Model Context Standard drivers.")
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    drivers = sub.add_parser("drivers", help="list drivers: installed, or what to install")
    drivers.set_defaults(handler=_cmd_drivers)

    describe = sub.add_parser("describe", help="print a driver's function description")
    _add_driver_arguments(describe)
    describe.add_argument("--model", help="the model the description is for")
    describe.add_argument("--format", default="text",
                          choices=["text", "openai", "openai_responses", "anthropic", "gemini", "mcp"])
    describe.add_argument("--all-tools", action="store_true",
                          help="with a native --format: every tool, even above the token budget "
                               "(where only the discovery meta-tools are exported)")
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
    serve.add_argument("--transport", choices=["stdio", "http", "websocket"],
                       help="stdio (default for mcp) or http; websocket with --protocol rfc0001 only")
    serve.add_argument("--host", default=None, help="bind address (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=None)
    serve.add_argument("--extension", action="append", metavar="MODULE:FUNCTION",
                       help="a serving extension, called as FUNCTION(server, driver) (repeatable)")
    serve.add_argument("-s", "--serve-option", action="append", metavar="KEY=VALUE",
                       help="a serving option for the backend, e.g. tls_cert=FILE (repeatable)")
    serve.set_defaults(handler=_cmd_serve)

    from mcs.registry import plugin_entry_points

    for entry_point in plugin_entry_points(COMMANDS_GROUP):
        try:
            register: Callable[[Any], None] = entry_point.load()
            register(sub)
        except Exception as exc:  # a broken plugin never breaks the CLI
            print(f"mcs: skipping command plugin {entry_point.name!r}: {exc}", file=sys.stderr)
    return parser


def _version() -> str:
    try:
        return f"mcs-framework {metadata.version('mcs-framework')}"
    except metadata.PackageNotFoundError:  # run from a source tree that is not installed
        from mcs import __version__

        return f"mcs-framework {__version__} (not installed)"


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def _show_warning(message: Warning | str, category: type[Warning], *_: Any, **__: Any) -> None:
    print(f"mcs: warning: {_one_line(message) if isinstance(message, Warning) else message}",
          file=sys.stderr)


def _run(handler: Handler, args: argparse.Namespace) -> int:
    """``handler(args)``, every failure turned into one line on stderr and its exit code."""
    try:
        return handler(args)
    except BrokenPipeError:  # the reader went away (`| head`): main handles it
        raise
    except MissingDependencyError as exc:
        print(f"mcs: {_one_line(exc)}", file=sys.stderr)
        return EXIT_MISSING
    except (MCSError, ValueError, OSError, LookupError) as exc:
        print(f"mcs: {_one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a driver's own failure: one line; the traceback on request
        if os.environ.get(DEBUG_ENV):
            raise
        print(f"mcs: {type(exc).__name__}: {_one_line(exc)} (set {DEBUG_ENV}=1 for the traceback)",
              file=sys.stderr)
        return EXIT_USAGE


def main(argv: Sequence[str] | None = None) -> int:
    parser = _build_parser()
    args = parser.parse_args(argv)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_USAGE
    with warnings.catch_warnings():
        warnings.simplefilter("once")  # each message once, from wherever it was raised
        warnings.showwarning = _show_warning
        try:
            code = _run(handler, args)
            sys.stdout.flush()
        except BrokenPipeError:  # `mcs describe ... | head`: the reader left, nothing to report
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            return EXIT_OK
    return code


if __name__ == "__main__":
    sys.exit(main())
