"""What the servers behind an :class:`~mcs_mcp.client_driver.MCPDriver` claim, checked.

For each server, its real ``tools/list`` and its ``list_interfaces`` answer are read over
the driver's own connection; every interface the server declares (conforming or listed
as ``nonconforming``), plus any asked for, is checked against those real tools. This is
what ``mcs interfaces check`` prints and what the inspector shows beside a server's UIs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mcs.interfaces import UNCLASSIFIED, Interface
from mcs_mcp.interfaces.conformance import ConformanceReport, check
from mcs_mcp.interfaces.registry import InterfaceRegistry


@dataclass(frozen=True, slots=True)
class ServedClaim:
    """One interface on one server: its definition, method -> server tool, the verdict."""

    server: str
    interface: Interface
    tools: dict[str, str]
    report: ConformanceReport


async def _inspect(client: Any) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    from mcs_mcp.client_driver import list_all_tools
    from mcs_mcp.interfaces import wire

    tools = await list_all_tools(client)
    listing = None
    if wire.server_offers_interfaces(client.server_capabilities):
        listing = await wire.request_listing(client.session)
    if listing is None and any(t["name"] == wire.METHOD for t in tools):
        listing = await wire.call_listing_tool(client)
    return [t for t in tools if t["name"] != wire.METHOD], listing


def _claimed(
    listing: dict[str, Any] | None, registry: InterfaceRegistry, extra: Sequence[str]
) -> dict[str, tuple[Interface, dict[str, str]]]:
    claimed: dict[str, tuple[Interface, dict[str, str]]] = {}
    for section in (listing or {}).get("interfaces", []):
        if section.get("interface") == UNCLASSIFIED:
            continue
        published = Interface.model_validate({
            "interface": section["interface"],
            "description": section.get("description", ""),
            "methods": [
                {k: m[k] for k in ("name", "description", "parameters", "returns") if k in m}
                for m in section.get("methods", [])
            ],
        })
        known = registry.find(published.name) if published.name in registry else None
        mapping = {m["name"]: m.get("tool", m["name"]) for m in section.get("methods", [])}
        claimed[published.name] = (known or published, mapping)
    for failing in (listing or {}).get("nonconforming", []):
        found = registry.find(str(failing.get("interface")))
        if found is not None:
            claimed.setdefault(found.name, (found, dict(failing.get("tools") or {})))
    for wanted in extra:
        interface = registry.get(wanted)
        claimed.setdefault(interface.name, (interface, {}))
    return claimed


def served_claims(driver: Any, registry: InterfaceRegistry, extra: Sequence[str] = ()) -> list[ServedClaim]:
    """Every interface each server of ``driver`` (an ``MCPDriver``) claims, plus ``extra``, checked."""
    out: list[ServedClaim] = []
    for name, connection in driver.connections.items():
        tools, listing = connection.run(_inspect, timeout=connection.connect_timeout + 30)
        target = f"{name} ({connection.spec.describe()})"
        for interface, mapping in _claimed(listing, registry, extra).values():
            out.append(ServedClaim(name, interface, mapping, check(interface, tools, mapping, target=target)))
    return out
