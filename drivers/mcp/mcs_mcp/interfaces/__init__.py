"""Interfaces for MCP (the MCP Interfaces RFC seed): definitions, conformance, versions, wire form.

The model itself is :class:`mcs.Interface` (in the core). Here:

* :mod:`.registry` - shipped definitions, files, directories, a registry URL;
* :mod:`.conformance` / :mod:`.schemas` - does a set of tools implement an interface;
* :mod:`.declaration` - how drivers declare what they implement;
* :mod:`.versioning` - the seed's version rules and negotiation;
* :mod:`.partition` - describe only the interfaces a task needs;
* :mod:`.wire` - ``list_interfaces`` on MCP servers (:func:`install`, for ``MCPServer``
  and the low-level ``Server``) and clients;
* :mod:`.cli` - ``mcs interfaces list|check``.
"""

from mcs.interfaces import UNCLASSIFIED, Interface, InterfaceMethod, parse_interface_name
from mcs_mcp.interfaces.conformance import ConformanceReport, MethodReport, check
from mcs_mcp.interfaces.declaration import Implementation, implementations
from mcs_mcp.interfaces.registry import InterfaceRegistry, default_registry
from mcs_mcp.interfaces.versioning import breaking_changes, highest, negotiate
from mcs_mcp.interfaces.wire import install

__all__ = [
    "UNCLASSIFIED",
    "ConformanceReport",
    "Implementation",
    "Interface",
    "InterfaceMethod",
    "InterfaceRegistry",
    "MethodReport",
    "breaking_changes",
    "check",
    "default_registry",
    "highest",
    "implementations",
    "install",
    "negotiate",
    "parse_interface_name",
]
