"""The interfaces a driver implements, for ``mcs inspect`` (entry point ``mcs.interface_views``).

For an :class:`~mcs_mcp.client_driver.MCPDriver`, every interface its servers declare,
checked against their real tools exactly as ``mcs interfaces check`` does; for any other
driver, its ``implements`` declaration, checked against its tools. Each view carries the
definition (the registry's canonical one when it knows the interface, else the server's
own), the driver's tool name for each method, and the conformance problems.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcs.interfaces import Interface
from mcs_mcp.interfaces.conformance import ConformanceReport
from mcs_mcp.interfaces.declaration import declared, implementations
from mcs_mcp.interfaces.registry import default_registry


def _view(interface: Interface, tools: Mapping[str, str | None], report: ConformanceReport | None,
          source: str) -> dict[str, Any]:
    return {
        "interface": interface.name,
        "description": interface.description,
        "methods": [{**m.model_dump(), "tool": tools.get(m.name)} for m in interface.methods],
        "conforms": report is not None and report.conforms,
        "problems": report.errors() if report is not None else ["not checked"],
        "source": source,
    }


def _server_views(driver: Any) -> list[dict[str, Any]]:
    from mcs_mcp.interfaces.served import served_claims

    exposed = {
        (str(t.meta.get("server")), str(t.meta.get("original_name"))): t.name for t in driver.list_tools()
    }
    views = []
    for claim in served_claims(driver, default_registry()):
        tools = {
            method.name: exposed.get((claim.server, claim.tools.get(method.name, method.name)))
            for method in claim.interface.methods
        }
        views.append(_view(claim.interface, tools, claim.report, f"list_interfaces of MCP server {claim.server}"))
    return views


def interface_views(driver: Any) -> list[dict[str, Any]]:
    """Views of the interfaces ``driver`` implements (see the module docstring)."""
    from mcs_mcp.client_driver import MCPDriver

    if isinstance(driver, MCPDriver):
        return _server_views(driver)
    spec = declared(driver)
    list_tools = getattr(driver, "list_tools", None)
    if not spec or not callable(list_tools):
        return []
    name = str(getattr(getattr(driver, "meta", None), "name", type(driver).__name__))
    found = implementations(list_tools(), spec, registry=default_registry(), target=name)
    names = {t.name for t in list_tools()}
    return [
        _view(
            impl.interface,
            {m.name: impl.tool_for(m.name) if impl.tool_for(m.name) in names else None for m in impl.interface.methods},
            impl.report,
            f"implements declaration of driver {name}",
        )
        for impl in found
    ]
