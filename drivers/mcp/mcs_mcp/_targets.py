"""Driver classes named on the command line as ``package.module:ClassName``.

``mcs serve`` and ``mcs interfaces check`` accept such a TARGET for a driver that is not
registered in the ``mcs.drivers`` entry-point group. Naming a class runs its module's
code: the operator chooses it, never a request.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from mcs.errors import ConfigurationError


def import_driver_class(spec: str) -> Callable[..., Any]:
    """``package.module:ClassName`` -> the class, imported; call it with the driver's options.

    Raises:
        ConfigurationError: the module cannot be imported, or has no callable of that name.
    """
    module_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigurationError(f"cannot import {module_name!r} for {spec!r}: {exc}") from None
    found: object = getattr(module, attr, None)
    if not callable(found):
        raise ConfigurationError(f"{module_name!r} has no driver class {attr!r}")
    return found
