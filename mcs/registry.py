"""Driver discovery through the ``mcs.drivers`` entry-point group (DESIGN.md, section 8).

Built-in drivers register exactly as third-party ones do. Nothing is imported until a
driver is loaded, so a plugin that fails to import never breaks :func:`available_drivers`
(one whose target is malformed is warned about and skipped); loading a broken plugin
raises :class:`~mcs.DriverNotFoundError` naming it, and :func:`load_driver` names the
exact ``pip install`` when a driver or one of its dependencies is missing.
``MCS_DISABLE_DRIVERS`` (a comma list of names) switches plugins off;
``MCS_DRIVER_DISTRIBUTIONS`` (a comma list of distribution names) keeps only the plugins
those distributions register, in every plugin group (drivers, commands, serve backends):
a locked-down deployment, or a test suite that must not read whatever else is installed.
"""

from __future__ import annotations

import importlib
import os
import re
import warnings
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from mcs.driver import MCSDriver
from mcs.errors import ConfigurationError, DriverNotFoundError, MCSError, MissingDependencyError

ENTRY_POINT_GROUP = "mcs.drivers"
DISABLE_ENV = "MCS_DISABLE_DRIVERS"
ONLY_ENV = "MCS_DRIVER_DISTRIBUTIONS"

#: Drivers this project publishes, so a missing one can be named with its install line.
KNOWN_DISTRIBUTIONS: dict[str, str] = {
    "rest": "mcs-framework-rest",
    "graphql": "mcs-framework-graphql",
    "soap": "mcs-framework-soap",
    "grpc": "mcs-framework-grpc",
    "mqtt": "mcs-framework-mqtt",
    "can": "mcs-framework-can",
    "mcp": "mcs-framework-mcp",
    "mcpfile": "mcs-framework-mcp",
    "rfc0001": "mcs-framework[server]",
}


@dataclass(frozen=True, slots=True)
class DriverInfo:
    """One driver as discovery sees it, without importing it."""

    name: str
    distribution: str
    version: str | None
    installed: bool
    target: str | None = None
    problem: str | None = None

    @property
    def install_command(self) -> str:
        return f"pip install {self.distribution}"


def _disabled() -> set[str]:
    return {name.strip() for name in os.environ.get(DISABLE_ENV, "").split(",") if name.strip()}


def _canonical(distribution: str) -> str:
    return re.sub(r"[-_.]+", "-", distribution).lower()


def plugin_entry_points(group: str) -> list[metadata.EntryPoint]:
    """The entry points of ``group``, from the distributions ``MCS_DRIVER_DISTRIBUTIONS`` allows."""
    allowed = {_canonical(d.strip()) for d in os.environ.get(ONLY_ENV, "").split(",") if d.strip()}
    found = metadata.entry_points(group=group)
    if not allowed:
        return list(found)
    return [ep for ep in found if ep.dist is not None and _canonical(ep.dist.metadata["Name"] or "") in allowed]


def _entry_points() -> dict[str, metadata.EntryPoint]:
    found: dict[str, metadata.EntryPoint] = {}
    disabled = _disabled()
    for entry_point in plugin_entry_points(ENTRY_POINT_GROUP):
        if entry_point.name in disabled:
            continue
        if not entry_point.pattern.match(entry_point.value):
            warnings.warn(
                f"the MCS driver plugin {entry_point.name!r} points at {entry_point.value!r}, "
                "which is not 'module:attribute'; skipping it",
                RuntimeWarning,
                stacklevel=3,
            )
            continue
        if entry_point.name in found:
            warnings.warn(
                f"two plugins register the MCS driver {entry_point.name!r}; "
                f"keeping {found[entry_point.name].value}, skipping {entry_point.value}",
                RuntimeWarning,
                stacklevel=3,
            )
            continue
        found[entry_point.name] = entry_point
    return found


def _distribution_of(entry_point: metadata.EntryPoint) -> tuple[str, str | None]:
    dist = entry_point.dist
    if dist is None:
        return "unknown", None
    return dist.metadata["Name"] or "unknown", dist.version


def available_drivers() -> list[DriverInfo]:
    """Every registered driver, plus the project's drivers that are not installed.

    Imports nothing. Sorted by name.
    """
    infos: dict[str, DriverInfo] = {}
    for name, entry_point in _entry_points().items():
        distribution, version = _distribution_of(entry_point)
        infos[name] = DriverInfo(name, distribution, version, True, entry_point.value)
    disabled = _disabled()
    for name, distribution in KNOWN_DISTRIBUTIONS.items():
        if name not in infos and name not in disabled:
            infos[name] = DriverInfo(name, distribution, None, False, problem="not installed")
    return [infos[name] for name in sorted(infos)]


def driver_class(name: str, /) -> type[MCSDriver]:
    """Import and return the class registered as ``name``.

    Raises:
        DriverNotFoundError: nothing is registered under ``name`` (or it is disabled).
        MissingDependencyError: the driver, or a package it imports, is not installed.
    """
    entry_point = _entry_points().get(name)
    if entry_point is None:
        if name in _disabled():
            raise DriverNotFoundError(f"the MCS driver {name!r} is disabled by {DISABLE_ENV}")
        distribution = KNOWN_DISTRIBUTIONS.get(name)
        if distribution is not None:
            raise MissingDependencyError(
                f"the MCS driver {name!r} is not installed: pip install {distribution}",
                install=f"pip install {distribution}",
            )
        known = ", ".join(sorted(_entry_points())) or "none"
        raise DriverNotFoundError(f"no MCS driver named {name!r}; installed drivers: {known}")
    try:
        loaded = entry_point.load()
    except ImportError as exc:
        raise _import_failure(name, entry_point, exc) from exc
    except Exception as exc:  # a broken plugin: name it instead of leaking its traceback
        distribution, _ = _distribution_of(entry_point)
        raise DriverNotFoundError(
            f"the MCS driver plugin {name!r} ({entry_point.value}, from {distribution}) is "
            f"broken: loading it raised {type(exc).__name__}: {exc}"
        ) from exc
    if not (isinstance(loaded, type) and issubclass(loaded, MCSDriver)):
        raise DriverNotFoundError(
            f"the plugin {name!r} ({entry_point.value}) is not an MCSDriver subclass"
        )
    return loaded


def _declared_requirement(dist: metadata.Distribution | None, module: str) -> str | None:
    """The requirement of ``dist`` whose name is the top-level ``module``, if it declares one."""
    top = _canonical(module.split(".")[0])
    for requirement in (dist.requires or []) if dist is not None else []:
        if ";" in requirement and "extra ==" in requirement:
            continue
        name = re.split(r"[\s;<>=!~\[(]", requirement.strip(), maxsplit=1)[0]
        if _canonical(name) == top:
            return name
    return None


def _import_failure(name: str, entry_point: metadata.EntryPoint, exc: ImportError) -> MCSError:
    """What to say when a plugin does not import: the missing package it declares, else why.

    The install hint only ever names a requirement the plugin's own distribution
    declares, never something built from a name the user typed.
    """
    distribution, _ = _distribution_of(entry_point)
    requirement = _declared_requirement(entry_point.dist, exc.name) if exc.name else None
    if requirement is not None:
        install = f"pip install {requirement}"
        return MissingDependencyError(
            f"the MCS driver {name!r} (from {distribution}) needs {requirement!r}, which is not "
            f"installed: {install}",
            install=install,
        )
    return DriverNotFoundError(
        f"the MCS driver plugin {name!r} ({entry_point.value}, from {distribution}) is broken: "
        f"importing it raised {type(exc).__name__}: {exc}"
    )


def check_driver(name: str, /) -> str | None:
    """Import the driver registered as ``name``; ``None`` when it loads, else why it does not."""
    try:
        driver_class(name)
    except MCSError as exc:
        return str(exc)
    return None


def import_driver_class(target: str, /) -> type[MCSDriver]:
    """``package.module:ClassName`` -> the driver class, imported (for a driver not registered).

    Naming a class runs its module's code: configuration written by the operator may do
    it (``mcs serve``, a toolbox file), never anything a model supplies.

    Raises:
        ConfigurationError: the module cannot be imported, or that name is not a driver class.
    """
    module_name, _, attribute = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigurationError(f"cannot import {module_name!r} for {target!r}: {exc}") from None
    found = getattr(module, attribute, None)
    if not (isinstance(found, type) and issubclass(found, MCSDriver)):
        raise ConfigurationError(f"{target!r} is not an MCS driver class (a subclass of mcs.MCSDriver)")
    return found


def load_driver(name: str, /, **options: Any) -> MCSDriver:
    """Create the driver registered as ``name`` with ``options`` as constructor arguments.

    ``name`` is positional-only, so a driver option may itself be called ``name``
    (``load_driver("functions", name="math")``).
    """
    return driver_class(name)(**options)
