"""Does a set of tools implement an interface? A report per method, readable by people and code.

For each method of the interface, the implementing tool (the declared mapping, else the
tool with the method's canonical name) must exist, accept every parameter set the
interface allows (:func:`~mcs_mcp.interfaces.schemas.accepts`) and return what the
interface promises (:func:`~mcs_mcp.interfaces.schemas.provides`). A different
description is not an error: implementations are served with the canonical one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcs.interfaces import Interface
from mcs_mcp.interfaces.schemas import Finding, accepts, inline_refs, provides


@dataclass(frozen=True, slots=True)
class ToolShape:
    """What the check needs of a tool: name, description, input and output schemas."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    output_schema: Mapping[str, Any] | None

    @classmethod
    def of(cls, tool: Any) -> ToolShape:
        """From an :class:`mcs.Tool`, an MCP ``Tool`` model, or an MCP tool dict."""
        if isinstance(tool, Mapping):
            return cls(
                name=str(tool["name"]),
                description=str(tool.get("description") or ""),
                input_schema=tool.get("inputSchema") or tool.get("input_schema") or {"type": "object"},
                output_schema=tool.get("outputSchema", tool.get("output_schema")),
            )
        if hasattr(tool, "input_schema"):
            return cls(tool.name, tool.description or "", tool.input_schema or {"type": "object"}, tool.output_schema)
        return cls(tool.name, tool.description or "", tool.inputSchema or {"type": "object"}, tool.outputSchema)


@dataclass(frozen=True, slots=True)
class MethodReport:
    """One method: which tool implements it and what differs."""

    method: str
    tool: str | None
    findings: tuple[Finding, ...] = ()
    description_differs: bool = False

    @property
    def conforms(self) -> bool:
        return self.tool is not None and not any(f.severity == "error" for f in self.findings)


@dataclass(frozen=True, slots=True)
class ConformanceReport:
    """The verdict for one interface on one target."""

    interface: str
    target: str
    methods: tuple[MethodReport, ...] = field(default_factory=tuple)

    @property
    def conforms(self) -> bool:
        return all(m.conforms for m in self.methods)

    def errors(self) -> list[str]:
        """Every error, as ``method: path message`` lines."""
        out: list[str] = []
        for m in self.methods:
            if m.tool is None:
                out.append(f"{m.method}: no tool implements this method")
            out.extend(f"{m.method}: {f.path} {f.message}" for f in m.findings if f.severity == "error")
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "interface": self.interface,
            "target": self.target,
            "conforms": self.conforms,
            "methods": [
                {
                    "method": m.method,
                    "tool": m.tool,
                    "conforms": m.conforms,
                    "description_differs": m.description_differs,
                    "findings": [{"path": f.path, "message": f.message, "severity": f.severity} for f in m.findings],
                }
                for m in self.methods
            ],
        }

    def to_text(self) -> str:
        """A report for a terminal: one line per method, then its findings indented."""
        verdict = "conforms" if self.conforms else "DOES NOT CONFORM"
        lines = [f"{self.interface} on {self.target}: {verdict}"]
        for m in self.methods:
            mark = "ok  " if m.conforms else "FAIL"
            via = f" (tool {m.tool})" if m.tool and m.tool != m.method else ""
            lines.append(f"  {mark} {m.method}{via}")
            if m.tool is None:
                lines.append("       error: no tool implements this method")
            for f in m.findings:
                lines.append(f"       {f.severity}: {f.path or '/'} {f.message}")
            if m.description_differs:
                lines.append("       note: the tool's description differs; the canonical one is used")
        return "\n".join(lines)


def check(
    interface: Interface,
    tools: Iterable[Any],
    mapping: Mapping[str, str] | None = None,
    *,
    target: str = "tools",
) -> ConformanceReport:
    """Check ``tools`` against ``interface``; ``mapping`` maps method -> tool name when they differ."""
    by_name = {shape.name: shape for shape in (ToolShape.of(t) for t in tools)}
    mapping = mapping or {}
    reports: list[MethodReport] = []
    for method in interface.methods:
        name = mapping.get(method.name, method.name)
        shape = by_name.get(name)
        if shape is None:
            reports.append(MethodReport(method.name, None))
            continue
        findings = [
            Finding(f"parameters{f.path}", f.message, f.severity)
            for f in accepts(inline_refs(shape.input_schema), inline_refs(method.input_schema))
        ]
        findings += [
            Finding(f"returns{f.path}", f.message, f.severity)
            for f in provides(inline_refs(shape.output_schema), inline_refs(method.returns))
        ]
        reports.append(
            MethodReport(
                method.name,
                shape.name,
                tuple(findings),
                description_differs=shape.description.strip() != method.description.strip(),
            )
        )
    return ConformanceReport(interface.name, target, tuple(reports))
