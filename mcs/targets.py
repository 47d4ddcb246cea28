"""Drivers named on the command line by Python module: ``module`` or ``module:name``.

``mcs serve`` and ``mcs describe`` accept, besides registered driver names:

* ``package.module:name`` where ``name`` is a driver class (called with the ``-o``
  options), a driver instance, a factory function returning a driver (called with the
  options), or one ``@mcs.tool`` / ``@mcs.prompt`` / ``@mcs.resource`` function;
* ``package.module`` whose ``@mcs.tool``, ``@mcs.prompt`` and ``@mcs.resource``
  functions become one :class:`~mcs.FunctionDriver` named after the module.

:func:`load_named` is what every command that takes a driver runs: a registered name
first, then a module.

Naming a module runs its code: the operator chooses it, never a request.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from mcs.driver import MCSDriver
from mcs.errors import ConfigurationError
from mcs.function_prompts import FunctionPrompt
from mcs.function_resources import FunctionResource
from mcs.functions import FunctionDriver, FunctionTool

_OFFERINGS = (FunctionTool, FunctionPrompt, FunctionResource)


def is_module_target(spec: str) -> bool:
    """True for ``module:name``, or for an importable module name (no file path)."""
    if ":" in spec:
        return True
    if not re.fullmatch(r"[A-Za-z_][\w.]*", spec):
        return False
    try:
        return importlib.util.find_spec(spec) is not None
    except (ImportError, ValueError):
        return False


def _import(module_name: str, spec: str) -> ModuleType:
    try:
        return importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigurationError(f"cannot import {module_name!r} for {spec!r}: {exc}") from None


def _driver_name(module_name: str) -> str:
    return module_name.rsplit(".", 1)[-1][:40] or "functions"


def _typed(builder: Any, pairs: Sequence[str], spec: str, options: dict[str, Any]) -> dict[str, Any]:
    """``-o key=value`` pairs typed by ``builder``'s signature, then ``options``."""
    if not pairs:
        return options
    from mcs.options import typed_options

    return {**typed_options(builder, pairs, owner=spec), **options}


def load_target(spec: str, pairs: Sequence[str] = (), **options: Any) -> MCSDriver:
    """The driver ``spec`` names (see the module docstring), built with ``options`` and
    the command line's ``-o key=value`` ``pairs`` (typed by what they are passed to).

    Raises:
        ConfigurationError: the module cannot be imported, holds nothing servable, or an
            option does not fit.
    """
    module_name, _, attr = spec.partition(":")
    module = _import(module_name, spec)
    if not attr:
        offerings = [value for value in vars(module).values() if isinstance(value, _OFFERINGS)]
        if not offerings:
            raise ConfigurationError(
                f"module {module_name!r} has no @mcs.tool, @mcs.prompt or @mcs.resource functions; "
                f"name a driver in it as {module_name}:NAME"
            )
        options = _typed(FunctionDriver, pairs, spec, options)
        return FunctionDriver(offerings, name=_driver_name(module_name), **options)
    found: Any = getattr(module, attr, None)
    if found is None:
        raise ConfigurationError(f"module {module_name!r} has no {attr!r}")
    if isinstance(found, MCSDriver):
        if options or pairs:
            raise ConfigurationError(f"{spec} is a driver already built: it takes no -o options")
        return found
    if isinstance(found, _OFFERINGS):
        options = _typed(FunctionDriver, pairs, spec, options)
        return FunctionDriver([found], name=_driver_name(module_name), **options)
    if not callable(found):
        raise ConfigurationError(f"{spec} is neither a driver, a driver class, a factory nor a tool function")
    options = _typed(found, pairs, spec, options)
    try:
        built = found(**options)
    except TypeError as exc:
        hint = "" if isinstance(found, type) else " (a tool function needs @mcs.tool: decorate tool functions)"
        raise ConfigurationError(f"{spec} refused its options: {exc}{hint}") from None
    if not isinstance(built, MCSDriver):
        raise ConfigurationError(
            f"{spec} returned {type(built).__name__}, not a driver; decorate tool functions with @mcs.tool "
            f"and serve the module ({module_name}) instead"
        )
    return built


def load_named(name: str, pairs: Sequence[str] = ()) -> MCSDriver:
    """The driver ``name`` names on a command line, built with the ``-o key=value`` ``pairs``:
    ``module:attr`` (see :func:`load_target`), else a registered driver name, else an
    importable module of ``@mcs.tool`` functions. A name that is an existing file is never
    imported as a module.

    Raises:
        DriverNotFoundError: no registered driver and no module goes by ``name``.
        ConfigurationError: what :func:`load_target` or the driver's constructor refuses.
    """
    from pathlib import Path

    from mcs.cli import load_with_options
    from mcs.errors import DriverNotFoundError

    is_file = Path(name).exists()
    if ":" in name and not is_file:
        return load_target(name, pairs)
    try:
        return load_with_options(name, pairs)
    except DriverNotFoundError:
        if not is_file and is_module_target(name):
            return load_target(name, pairs)
        raise
