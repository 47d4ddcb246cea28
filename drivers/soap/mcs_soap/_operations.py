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
* Input schemas are built when first read (:class:`SchemaTool`): listing 1,158 operations
  for discovery mode needs their names and descriptions only; describing, validating or
  rendering a tool inline builds its schema, once. The result is the same schema an
  eager build gives (one converter per WSDL, memoised per type).

This module imports neither zeep nor lxml at import time (the disk cache decodes tools
with :func:`tool_from_dict` without them).
"""

from __future__ import annotations

import fnmatch
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcs.errors import ConfigurationError
from mcs.tools import Tool, unique_tool_names
from mcs_soap._loading import WsdlError

if TYPE_CHECKING:
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


# The slot Tool keeps its input schema in; SchemaTool reads and fills it behind a property.
_INPUT_SCHEMA: Any = Tool.__dict__["input_schema"]
_UNBUILT: Any = object()


class SchemaTool(Tool):
    """A :class:`~mcs.Tool` whose input schema is built from the XSD when first read.

    Name, title, description, annotations and meta are there from the start. The first
    read of ``input_schema`` builds it (under the WSDL's builder lock, so threads agree);
    every later read returns that same dict. A copy made with ``dataclasses.replace``
    (a driver ``prefix``) reads, so builds, the schema first.
    """

    __slots__ = ("_body", "_builder")
    _body: Any  # zeep's body element, until the schema is built
    _builder: SchemaBuilder

    @property
    def input_schema(self) -> Mapping[str, Any]:
        value: Mapping[str, Any] = _INPUT_SCHEMA.__get__(self, Tool)
        if value is _UNBUILT:
            value = self._builder.build(self)
        return value

    @input_schema.setter
    def input_schema(self, value: Mapping[str, Any]) -> None:
        _INPUT_SCHEMA.__set__(self, value)

    @property
    def schema_built(self) -> bool:
        """Whether ``input_schema`` has been built (reading this builds nothing)."""
        return _INPUT_SCHEMA.__get__(self, Tool) is not _UNBUILT


class SchemaBuilder:
    """Builds the input schemas of one WSDL's tools on demand, with one shared converter.

    The converter (and the schema index it reads) is let go once every tool has its schema.
    """

    def __init__(self, index: SchemaIndex, location: str) -> None:
        from mcs_soap._schema import SchemaConverter

        self.location = location
        self._converter: SchemaConverter | None = SchemaConverter(index)
        self._lock = threading.Lock()
        self._unbuilt = 0

    def tool(self, body: Any, **fields: Any) -> SchemaTool:
        tool = SchemaTool(input_schema=_UNBUILT, **fields)
        object.__setattr__(tool, "_body", body)
        object.__setattr__(tool, "_builder", self)
        self._unbuilt += 1
        return tool

    def build(self, tool: SchemaTool) -> Mapping[str, Any]:
        """``tool``'s input schema, built now unless another thread just did.

        Raises:
            WsdlError: zeep's model of the operation's input cannot be read.
        """
        with self._lock:
            value: Mapping[str, Any] = _INPUT_SCHEMA.__get__(tool, Tool)
            if value is not _UNBUILT:
                return value
            assert self._converter is not None  # kept while a tool has no schema
            try:
                value, _ = self._converter.body_schema(tool._body)
            except Exception as exc:
                raise WsdlError(
                    f"{self.location}: the input of operation {tool.title or tool.name} cannot be described "
                    f"({type(exc).__name__}: {' '.join(str(exc).split())[:300]})"
                ) from None
            _INPUT_SCHEMA.__set__(tool, value)
            object.__setattr__(tool, "_body", None)
            self._unbuilt -= 1
            if self._unbuilt == 0:
                self._converter = None
            return value


def build_tools(index: SchemaIndex, ports: Sequence[PortRef], idempotent: Sequence[str], *,
                location: str = "the WSDL") -> list[Tool]:
    """One tool per operation of every port in ``ports`` (schemas built when first read)."""
    builder = SchemaBuilder(index, location)
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
        tools.append(_tool(builder, index, port, name, operation, tool_name, several_ports, idempotent))
    return tools


def _tool(builder: SchemaBuilder, index: SchemaIndex, port: PortRef, name: str, operation: Any, tool_name: str,
          several_ports: bool, idempotent: Sequence[str]) -> Tool:
    from mcs_soap._schema import simple_body_name

    binding = port.binding
    message = operation.input
    body = getattr(message, "body", None) if message is not None else None
    simple_name = simple_body_name(body)
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
    return builder.tool(
        body,
        name=tool_name,
        title=name,
        description=" ".join(lines),
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
