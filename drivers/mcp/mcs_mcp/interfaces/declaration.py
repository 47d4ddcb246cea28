"""How a driver (or server) declares the interfaces it implements, and checking it.

A declaration names interfaces and, when tool names differ from the canonical method
names, maps method -> tool name. Any of these shapes works, as a driver attribute
``implements`` or as the ``implements=`` option of :func:`~mcs_mcp.interfaces.wire.install`:

    ["media.player.v1"]                                      tools named like the methods
    {"media.player.v1": {"play": "player_play", ...}}        a mapping per interface
    [Interface(...), ("code.editor.v1", {"run_code": "run"})]
    [{"interface": ..., "tools": {...}, "renamed": {...}}]   what a Toolbox declares

:func:`implementations` resolves names through a registry and checks each declaration
(conformance); :class:`Implementation` carries the interface, the mapping and the report.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcs.errors import ConfigurationError
from mcs.interfaces import Interface, normalise_declaration
from mcs_mcp.interfaces.conformance import ConformanceReport, check
from mcs_mcp.interfaces.registry import InterfaceRegistry, default_registry


@dataclass(frozen=True, slots=True)
class Implementation:
    """One declared interface: its definition, method -> tool names, and the conformance verdict."""

    interface: Interface
    tools: Mapping[str, str] = field(default_factory=dict)
    report: ConformanceReport | None = None

    def tool_for(self, method: str) -> str:
        return self.tools.get(method, method)

    @property
    def conforms(self) -> bool:
        return self.report is not None and self.report.conforms


def resolve(spec: Any, *, registry: InterfaceRegistry | None = None) -> list[tuple[Interface, dict[str, str]]]:
    """Each declared interface's definition and its method -> tool mapping, without tools.

    Raises:
        ConfigurationError: an interface unknown to the registry (the message names the
            known versions of its family), or a mapping naming a method the interface lacks.
    """
    registry = registry or default_registry()
    out: list[tuple[Interface, dict[str, str]]] = []
    for ref, mapping, renamed in normalise_declaration(spec):
        if isinstance(ref, Interface):
            interface = ref
        else:
            try:
                interface = registry.get(ref)
            except KeyError as exc:
                raise ConfigurationError(str(exc.args[0])) from None
        unknown = sorted(set(mapping) - set(interface.method_names))
        if unknown:
            raise ConfigurationError(
                f"the declaration of {interface.name} maps {unknown}, which are not methods of it "
                f"(methods: {', '.join(interface.method_names)})"
            )
        if renamed:
            mapping = {m: renamed.get(mapping.get(m, m), mapping.get(m, m)) for m in interface.method_names}
        out.append((interface, mapping))
    return out


def declared(driver: Any, implements: Any = None) -> Any:
    """The raw declaration: ``implements`` if given, else the driver's ``implements`` attribute."""
    if implements is not None:
        return implements
    return getattr(driver, "implements", None)


def implementations(
    tools: Iterable[Any],
    spec: Any,
    *,
    registry: InterfaceRegistry | None = None,
    target: str = "driver",
) -> list[Implementation]:
    """Resolve a declaration and check each interface against ``tools``.

    Raises:
        ConfigurationError: an interface name is unknown to the registry, or a mapping
            names a method the interface does not have.
    """
    tool_list = list(tools)
    out: list[Implementation] = []
    for interface, mapping in resolve(spec, registry=registry):
        report = check(interface, tool_list, mapping, target=target)
        out.append(Implementation(interface, mapping, report))
    return out
