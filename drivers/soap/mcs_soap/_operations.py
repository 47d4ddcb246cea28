"""From a parsed WSDL to one :class:`~mcs.Tool` per operation of every service and port.

* Names: the operation's name; where two ports (or services) offer an operation of the
  same name, each becomes ``Service_Port_operation``. Names pass through
  :func:`mcs.tools.unique_tool_names` (provider alphabet, 64 characters, stable hashes).
* Descriptions: the operation's ``wsdl:documentation`` (else its input element's), then
  the port, binding (SOAP 1.1 / 1.2 / HTTP) and style when several ports exist.
* Annotations: SOAP has no read/write semantics, so they follow the operation's name
  (``Get``/``List``/``Find``... are reads, ``Delete``/``Remove``... destructive);
  ``idempotentHint`` for reads and for operations configured idempotent.
* ``meta`` keeps what a call needs (service, port, binding, operation, address, how the
  body is passed) as JSON, so the tool list can come back from the disk cache.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mcs.errors import ConfigurationError
from mcs.tools import Tool, unique_tool_names
from mcs_soap._schema import SchemaConverter
from mcs_soap._xsd import SchemaIndex

_READ = re.compile(r"^(get|list|find|search|query|describe|lookup|look_up|read|fetch|check|is|has|count|"
                   r"retrieve|show|view|browse|select|validate|verify|exists|ping|echo)(?=[A-Z_0-9]|$)",
                   re.IGNORECASE)
_DESTRUCTIVE = re.compile(r"^(delete|remove|destroy|drop|purge|erase|terminate|kill|cancel|clear|reset|"
                          r"revoke|unregister|deregister|wipe|truncate|shutdown|power_?down)(?=[A-Z_0-9]|$)",
                          re.IGNORECASE)
_ADDITIVE = re.compile(r"^(create|add|insert|new|register|append|submit|send|post|log|record)(?=[A-Z_0-9]|$)",
                      re.IGNORECASE)
_HUMP = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SOAP_VERSIONS = {"Soap11Binding": "SOAP 1.1", "Soap12Binding": "SOAP 1.2",
                  "HttpGetBinding": "HTTP GET", "HttpPostBinding": "HTTP POST"}


@dataclass(frozen=True)
class PortRef:
    """One port of one service, with the binding zeep parsed for it."""

    service: str
    port: str
    binding: Any
    address: str | None

    @property
    def label(self) -> str:
        return f"{self.service}/{self.port}"


def ports_of(document: Any, selected: Sequence[str] | None) -> list[PortRef]:
    """Every port of every service (or those named in ``selected``: ``Port`` or ``Service/Port``)."""
    found: list[PortRef] = []
    for service in document.services.values():
        for port in service.ports.values():
            if port.binding is None:
                continue
            found.append(PortRef(service.name, port.name, port.binding, (port.binding_options or {}).get("address")))
    if selected:
        wanted = set(selected)
        known = {p.label for p in found} | {p.port for p in found}
        unknown = sorted(wanted - known)
        if unknown:
            raise ConfigurationError(
                f"ports: no port named {', '.join(map(repr, unknown))}; the WSDL has "
                + ", ".join(sorted(p.label for p in found))
            )
        found = [p for p in found if p.label in wanted or p.port in wanted]
    return found


def _matches(patterns: Sequence[str], *names: str) -> bool:
    return bool(patterns) and any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns for name in names)


def annotations_for(operation: str, idempotent: bool) -> dict[str, Any]:
    """MCP hints from the operation's name (see the module docstring)."""
    words = _HUMP.sub("_", operation.rsplit("_", 1)[-1])
    read = bool(_READ.match(words)) or bool(_READ.match(operation))
    destructive = not read and (bool(_DESTRUCTIVE.match(words)) or bool(_DESTRUCTIVE.match(operation)))
    hints: dict[str, Any] = {"readOnlyHint": read, "openWorldHint": True}
    if destructive:
        hints["destructiveHint"] = True
    elif not read and _ADDITIVE.match(words):
        hints["destructiveHint"] = False
    if read or idempotent:
        hints["idempotentHint"] = True
    return hints


def build_tools(index: SchemaIndex, ports: Sequence[PortRef], idempotent: Sequence[str]) -> list[Tool]:
    """One tool per operation of every port in ``ports``."""
    converter = SchemaConverter(index)
    entries: list[tuple[PortRef, str, Any]] = []
    for port in ports:
        for name, operation in port.binding._operations.items():
            entries.append((port, name, operation))
    counts: dict[str, int] = {}
    for _, name, _ in entries:
        counts[name] = counts.get(name, 0) + 1
    several_ports = len(ports) > 1
    raw_names = [name if counts[name] == 1 else f"{port.service}_{port.port}_{name}" for port, name, _ in entries]
    tools = []
    for (port, name, operation), tool_name in zip(entries, unique_tool_names(raw_names), strict=True):
        tools.append(_tool(converter, index, port, name, operation, tool_name, several_ports, idempotent))
    return tools


def _tool(converter: SchemaConverter, index: SchemaIndex, port: PortRef, name: str, operation: Any, tool_name: str, several_ports: bool,
          idempotent: Sequence[str]) -> Tool:
    binding = port.binding
    message = operation.input
    body = getattr(message, "body", None) if message is not None else None
    schema, simple_name = converter.body_schema(body)
    kind = _SOAP_VERSIONS.get(type(binding).__name__, type(binding).__name__)
    port_type = binding.port_name.text if getattr(binding, "port_name", None) is not None else ""
    docs = index.operation_docs
    text = docs.get((port_type, name)) or docs.get((binding.name.text, name), "")
    if not text and body is not None:
        text = index.documentation_of(index.lookup("element", getattr(body, "qname", None)))
    style = getattr(operation, "style", None) or ""
    lines = [text or f"Calls the SOAP operation {name}."]
    if several_ports:
        lines.append(f"Port {port.label} ({kind}{', ' + style if style else ''}).")
    if operation.output is None:
        lines.append("One-way operation: the service sends no answer (the result is null).")
    is_idempotent = _matches(idempotent, name, tool_name, f"{port.port}.{name}")
    meta: dict[str, Any] = {
        "original_name": name if tool_name == name else f"{port.service}.{port.port}.{name}",
        "service": port.service, "port": port.port, "operation": name,
        "binding": binding.name.text, "soap": kind, "style": style,
        "address": port.address, "simple_body": simple_name, "idempotent": is_idempotent,
        "group": port.port if several_ports else (name.split("_", 1)[0] if "_" in name else None),
    }
    if meta["group"] is None:
        del meta["group"]
    return Tool(
        name=tool_name,
        title=name,
        description=" ".join(lines),
        input_schema=schema,
        annotations=annotations_for(name, is_idempotent),
        meta=meta,
    )


def tool_to_dict(tool: Tool) -> dict[str, Any]:
    """A tool as JSON (for the disk cache)."""
    return {"name": tool.name, "title": tool.title, "description": tool.description,
            "input_schema": tool.input_schema, "annotations": dict(tool.annotations), "meta": dict(tool.meta)}


def tool_from_dict(data: Mapping[str, Any]) -> Tool:
    return Tool(name=data["name"], title=data.get("title"), description=data.get("description", ""),
                input_schema=data["input_schema"], annotations=data.get("annotations") or {},
                meta=data.get("meta") or {})
