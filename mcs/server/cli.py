"""``mcs serve TARGET --protocol rfc0001``: any driver or toolbox over the RFC-0001 wire protocol.

    mcs serve functions --protocol rfc0001 --port 8000
    mcs serve my_tools --protocol rfc0001      (a module of @mcs.tool functions, or module:NAME)
    mcs serve -c toolbox.yaml --protocol rfc0001 --transport stdio

``--transport`` is ``http`` (default; the WebSocket endpoint is served too),
``websocket`` (the same app) or ``stdio``. As with ``--protocol mcp``, ``Host`` and
``Origin`` are checked against DNS rebinding; ``-s allowed_hosts=a:*,b`` and
``-s allowed_origins=https://app`` widen the allow-lists. ``-s head_timeout=10``,
``-s body_timeout=30`` (seconds a client may take to send a request's head and body) and
``-s max_connections=500`` change the bounds on slow clients (:mod:`mcs.server.connections`).
"""

from __future__ import annotations

import argparse

from mcs.driver import MCSDriver, ToolDriver
from mcs.errors import ConfigurationError


def _build(args: argparse.Namespace) -> ToolDriver:
    from mcs.options import typed_options
    from mcs.targets import load_named

    pairs: list[str] = getattr(args, "option", None) or []
    driver: MCSDriver
    if getattr(args, "config", None):
        from mcs.toolbox import Toolbox

        driver = Toolbox.from_config(args.config, **typed_options(Toolbox, pairs, owner="a toolbox"))
    elif getattr(args, "target", None):
        driver = load_named(args.target, pairs)
    else:
        raise ConfigurationError("name a driver (see `mcs drivers`) or pass --config FILE")
    if not isinstance(driver, ToolDriver):
        raise ConfigurationError(
            f"{type(driver).__name__} implements only the bare MCS contract; serving it over "
            "rfc0001 needs a driver built on mcs.ToolDriver (it must list its tools)"
        )
    return driver


def serve_command(args: argparse.Namespace) -> int:
    """Entry point of the ``rfc0001`` serve backend; returns the process exit code."""
    from mcs.cli import parse_options
    from mcs.server.backend import DriverBackend
    from mcs.server.connections import SETTING_NAMES, ConnectionLimits
    from mcs.server.runner import serve

    transport = getattr(args, "transport", None) or "http"
    settings = parse_options(getattr(args, "serve_option", None) or [])
    known = ("allowed_hosts", "allowed_origins", *SETTING_NAMES)
    unknown = sorted(set(settings) - set(known))
    if unknown:
        raise ConfigurationError(
            f"--protocol rfc0001 has no serving option {', '.join(map(repr, unknown))}; "
            f"options: {', '.join(known)}"
        )
    limits = ConnectionLimits.from_settings(settings)
    driver = _build(args)
    backend = DriverBackend(driver)
    try:
        serve(backend, transport=transport,
              host=getattr(args, "host", None) or "127.0.0.1",
              port=getattr(args, "port", None) or 8000,
              allowed_hosts=_listed(settings.get("allowed_hosts")),
              allowed_origins=_listed(settings.get("allowed_origins")),
              limits=limits)
    finally:
        backend.close()
        driver.close()
    return 0


def _listed(value: object) -> list[str]:
    """A ``-s`` value as a list: ``a,b`` or an already parsed list."""
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return [str(v) for v in value]
    return [part.strip() for part in str(value).split(",") if part.strip()]
