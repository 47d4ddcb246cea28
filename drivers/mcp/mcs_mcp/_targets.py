"""Driver classes named on the command line as ``package.module:ClassName``.

``mcs serve`` and ``mcs interfaces check`` accept such a TARGET for a driver that is not
registered in the ``mcs.drivers`` entry-point group. Naming a class runs its module's
code: the operator chooses it, never a request. The import is the core's
(:func:`mcs.registry.import_driver_class`), shared with toolbox files.
"""

from __future__ import annotations

from mcs.registry import import_driver_class

__all__ = ["import_driver_class"]
