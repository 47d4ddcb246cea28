"""``mcs serve TARGET --protocol mcp``: the serve backend of this distribution.

TARGET is one of:

* a driver name (``mcs serve functions -o key=value``), served over stdio by default;
* ``package.module:NAME`` (a driver class, instance or factory, or one tool function) or
  ``package.module`` (its ``@mcs.tool``/``@mcs.prompt``/``@mcs.resource`` functions), see
  :mod:`mcs.targets`;
* a gen-mcp MCP file (YAML/JSON with ``mcpFileVersion`` or ``kind: MCPToolDefinitions``),
  served as its ``runtime`` says, after gen-mcp's ``GENMCP_*`` environment overrides;
* nothing, with ``-c toolbox.yaml`` naming several drivers.

Command-line flags win over the file. Serving options beyond the common flags come as
``-s key=value`` (repeatable): ``base_path``, ``stateful``, ``tls_cert``, ``tls_key``,
``allowed_hosts``, ``allowed_origins``, ``oauth_jwks_uri``, ``oauth_issuer``,
``oauth_audience``, ``oauth_authorization_servers``, ``oauth_resource``, ``log_level``,
``log_encoding``, ``log_output``, ``mcp_logs``, ``json_response``, ``name``,
``instructions``, ``resumable`` (an in-memory event store; needs ``stateful``),
``retry_interval`` (milliseconds), ``all_tools`` (list every tool of a driver in discovery
mode), ``head_timeout`` and ``body_timeout`` (seconds a client may take to send a request's
head and body), ``max_connections``. ``--extension module:function`` (repeatable) adds a serving extension, called as
``function(server, driver)``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from mcs.errors import ConfigurationError
from mcs.server.connections import SETTING_NAMES, ConnectionLimits
from mcs_mcp.serving.options import (
    OAuthOptions,
    ServeOptions,
    TLSOptions,
    apply_genmcp_env,
    logging_options,
    split_csv,
)

MCP_FILE_SUFFIXES = (".yaml", ".yml", ".json")


def default_extensions() -> list[Callable[[Any, Any], object]]:
    """The Interfaces layer's installer when it is present, else nothing."""
    try:
        from mcs_mcp.interfaces.wire import install  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return []
    return [install]


def load_extensions(specs: list[str] | None) -> list[Callable[[Any, Any], object]]:
    """``--extension module:function`` values -> the functions (imported; the operator names them).

    Raises:
        ConfigurationError: a value is not ``module:function``, or does not import.
    """
    import importlib

    loaded: list[Callable[[Any, Any], object]] = []
    for spec in specs or []:
        module_name, _, attr = spec.partition(":")
        if not module_name or not attr:
            raise ConfigurationError(f"--extension takes module:function, got {spec!r}")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise ConfigurationError(f"cannot import extension module {module_name!r}: {exc}") from None
        function = getattr(module, attr, None)
        if not callable(function):
            raise ConfigurationError(f"extension {spec!r}: {module_name!r} has no function {attr!r}")
        loaded.append(function)
    return loaded


def is_mcp_file(path: Path) -> bool:
    """True for a gen-mcp file: ``mcpFileVersion`` or ``kind: MCPToolDefinitions`` at the top."""
    if path.suffix.lower() not in MCP_FILE_SUFFIXES or not path.is_file():
        return False
    import yaml

    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return False
    return isinstance(document, Mapping) and (
        "mcpFileVersion" in document or document.get("kind") == "MCPToolDefinitions"
    )


def _serve_options_arg(args: argparse.Namespace) -> dict[str, Any]:
    from mcs.cli import parse_options

    return parse_options(getattr(args, "serve_option", None) or [])


def resolve_target(args: argparse.Namespace) -> tuple[Any, ServeOptions]:
    """The driver ``args`` name, and the options it is served with (before CLI flags)."""
    from mcs.cli import load_with_options

    pairs: list[str] = getattr(args, "option", None) or []
    if getattr(args, "config", None):
        from mcs.toolbox import Toolbox

        toolbox = Toolbox.from_config(args.config)
        return toolbox, ServeOptions(name=Path(args.config).stem, version=toolbox.meta.version)
    target = getattr(args, "target", None)
    if not target:
        raise ConfigurationError("name a driver, an MCP file, or pass -c toolbox.yaml")
    path = Path(target)
    if is_mcp_file(path):
        driver = load_with_options("mcpfile", pairs, path=str(path))
        settings_of = getattr(driver, "runtime_settings", None)
        settings = {"name": path.stem, **(settings_of() if callable(settings_of) else {})}
        settings["name"] = settings["name"] or path.stem
        return driver, ServeOptions.from_runtime_settings(apply_genmcp_env(settings))
    if path.suffix.lower() in MCP_FILE_SUFFIXES and path.exists():
        raise ConfigurationError(
            f"{target} is not an MCP file (no mcpFileVersion or kind: MCPToolDefinitions); "
            "for several drivers use -c"
        )
    from mcs.targets import load_named

    return _named(load_named(target, pairs))


def _named(driver: Any) -> tuple[Any, ServeOptions]:
    """A driver, and options that serve it under its own name and version."""
    return driver, ServeOptions(name=driver.meta.name, version=driver.meta.version)


def _bool(value: Any, key: str) -> bool:
    if isinstance(value, bool):
        return value
    lowered = str(value).lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ConfigurationError(f"-s {key} must be true or false, got {value!r}")


def _list(value: Any) -> tuple[str, ...]:
    if isinstance(value, list | tuple):
        return tuple(str(v) for v in value)
    return split_csv([str(value)])


_KNOWN = {
    "base_path", "stateful", "stateless", "tls_cert", "tls_key", "allowed_hosts", "allowed_origins",
    "oauth_jwks_uri", "oauth_issuer", "oauth_audience", "oauth_authorization_servers",
    "oauth_resource", "log_level", "log_encoding", "log_output", "mcp_logs", "name",
    "instructions", "version", "max_request_body", "json_response", "resumable", "retry_interval",
    "all_tools", *SETTING_NAMES,
}


def apply_flags(options: ServeOptions, args: argparse.Namespace) -> ServeOptions:
    """``options`` with the command line's flags and ``-s key=value`` settings applied."""
    extra = _serve_options_arg(args)
    unknown = sorted(set(extra) - _KNOWN)
    if unknown:
        raise ConfigurationError(
            f"unknown serving option(s) {', '.join(unknown)}; known: {', '.join(sorted(_KNOWN))}"
        )
    changes: dict[str, Any] = {}
    transport = getattr(args, "transport", None)
    if transport == "websocket":
        raise ConfigurationError("the MCP backend serves stdio or http (streamable HTTP), not websocket")
    if transport:
        changes["transport"] = "streamablehttp" if transport == "http" else transport
    if getattr(args, "host", None):
        changes["host"] = args.host
    if getattr(args, "port", None) is not None:
        changes["port"] = args.port
    if "base_path" in extra:
        changes["base_path"] = str(extra["base_path"])
    if "stateful" in extra:
        changes["stateless"] = not _bool(extra["stateful"], "stateful")
    if "stateless" in extra:
        changes["stateless"] = _bool(extra["stateless"], "stateless")
    for key in ("name", "instructions", "version"):
        if key in extra:
            changes[key] = str(extra[key])
    if "json_response" in extra:
        changes["json_response"] = _bool(extra["json_response"], "json_response")
    if "all_tools" in extra:
        changes["all_tools"] = _bool(extra["all_tools"], "all_tools")
    if "max_request_body" in extra:
        changes["max_request_body"] = int(extra["max_request_body"])
    limit_keys = set(SETTING_NAMES) & set(extra)
    if limit_keys:
        limits = ConnectionLimits.from_settings({key: extra[key] for key in limit_keys})
        changes.update({key: getattr(limits, key) for key in limit_keys})
    if "resumable" in extra and _bool(extra["resumable"], "resumable"):
        from mcs_mcp.serving.events import MemoryEventStore

        changes["event_store"] = MemoryEventStore()
        changes.setdefault("retry_interval", 1000)
    if "retry_interval" in extra:
        changes["retry_interval"] = int(extra["retry_interval"])
    if "allowed_hosts" in extra:
        changes["allowed_hosts"] = _list(extra["allowed_hosts"])
    if "allowed_origins" in extra:
        changes["allowed_origins"] = _list(extra["allowed_origins"])
    if "tls_cert" in extra or "tls_key" in extra:
        if "tls_cert" not in extra or "tls_key" not in extra:
            raise ConfigurationError("TLS needs both -s tls_cert=FILE and -s tls_key=FILE")
        changes["tls"] = TLSOptions(str(extra["tls_cert"]), str(extra["tls_key"]))
    oauth_keys = {k for k in extra if k.startswith("oauth_")}
    if oauth_keys:
        base = options.auth or OAuthOptions()
        changes["auth"] = replace(
            base,
            jwks_uri=str(extra.get("oauth_jwks_uri", base.jwks_uri or "")) or None,
            issuer=str(extra.get("oauth_issuer", base.issuer or "")) or None,
            audience=str(extra.get("oauth_audience", base.audience or "")) or None,
            resource=str(extra.get("oauth_resource", base.resource or "")) or None,
            authorization_servers=_list(extra["oauth_authorization_servers"])
            if "oauth_authorization_servers" in extra
            else base.authorization_servers,
        )
    log_keys = {"log_level", "log_encoding", "log_output", "mcp_logs"} & set(extra)
    if log_keys:
        changes["logging"] = logging_options(
            {
                "level": extra.get("log_level"),
                "encoding": extra.get("log_encoding"),
                "output_paths": _list(extra["log_output"]) if "log_output" in extra else None,
                "enable_mcp_logs": _bool(extra["mcp_logs"], "mcp_logs") if "mcp_logs" in extra else None,
            },
            options.logging,
        )
    return replace(options, **changes)


def serve_command(args: argparse.Namespace) -> int:
    """Entry point of ``mcs serve --protocol mcp``; returns the exit code."""
    from mcs_mcp.serving.http import is_loopback
    from mcs_mcp.serving.logs import configure_logging
    from mcs_mcp.serving.runner import serve
    from mcs_mcp.serving.server import refuse_credential_forwarding

    driver, options = resolve_target(args)
    options = apply_flags(options, args)
    refuse_credential_forwarding(driver)
    undo = configure_logging(options.logging, stdio=options.transport == "stdio")
    try:
        if options.transport != "stdio" and options.auth is None and not is_loopback(options.host):
            print(f"mcs: warning: serving on {options.host} without OAuth; anyone who can reach "
                  "this address can call every tool", file=sys.stderr, flush=True)
        tools = len(driver.list_tools())
        if options.transport == "stdio":  # stdout is the protocol: say what runs on stderr
            print(f"mcs: serving {options.name!r} ({tools} tool{'' if tools == 1 else 's'}) as an MCP server over stdio",
                  file=sys.stderr, flush=True)
        else:
            print(
                json.dumps({"event": "serving", "url": options.url, "tools": tools,
                            "stateless": options.stateless, "oauth": options.auth is not None}),
                file=sys.stderr,
                flush=True,
            )
        with contextlib.suppress(KeyboardInterrupt):
            extensions = [*default_extensions(), *load_extensions(getattr(args, "extension", None))]
            asyncio.run(serve(driver, options, extensions=extensions))
    finally:
        undo()
        close = getattr(driver, "close", None)
        if callable(close):
            close()
    return 0
