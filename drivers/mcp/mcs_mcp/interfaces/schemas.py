"""Structural JSON Schema compatibility, the rule behind conformance checks.

Two directions, because parameters and results flow opposite ways:

* :func:`accepts` (parameters): the tool must accept every argument set the interface
  allows - no extra required parameter, no narrower type, enum or bound.
* :func:`provides` (results): every result the tool can return must satisfy the
  interface - each required field present, no wider type or enum.

The check covers ``type`` (``integer`` is a ``number``), ``enum``/``const``,
``properties``/``required``, ``items`` and numeric and length bounds; annotations
such as ``title`` and ``description`` never matter. It is deliberately conservative:
what it cannot prove (``oneOf``, ``$ref``) it reports as a warning, not a pass or a failure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from mcs.tools import json_type

Severity = Literal["error", "warning"]
_UNSUPPORTED = ("oneOf", "anyOf", "allOf", "$ref", "not", "if")


@dataclass(frozen=True, slots=True)
class Finding:
    """One difference: where (a JSON-pointer-like path), what, and how bad."""

    path: str
    message: str
    severity: Severity = "error"


def _simple_union(schema: Mapping[str, Any]) -> list[Mapping[str, Any]] | None:
    """The alternatives of an ``anyOf``/``oneOf`` of plain typed schemas (``X | None``), else ``None``."""
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options and all(
            isinstance(o, Mapping) and "type" in o and not (set(o) & set(_UNSUPPORTED)) for o in options
        ):
            return options
    return None


def _types(schema: Mapping[str, Any]) -> frozenset[str] | None:
    raw = schema.get("type")
    union = _simple_union(schema)
    if raw is None and union is not None:
        found: set[str] = set()
        for option in union:
            found |= _types(option) or set()
        return frozenset(found)
    if raw is None:
        if "properties" in schema:
            return frozenset({"object"})
        if "items" in schema:
            return frozenset({"array"})
        values = _enum(schema)
        if values is not None:
            kinds = frozenset(json_type(v) or "object" for v in values)
            return (kinds | {"integer"}) if "number" in kinds else kinds
        return None
    names = {raw} if isinstance(raw, str) else set(raw)
    if "number" in names:
        names.add("integer")
    return frozenset(names)


def inline_refs(schema: Mapping[str, Any] | None, *, max_depth: int = 32) -> Any:
    """``schema`` with local references (``#/$defs/X``, ``#/definitions/X``) replaced by their targets.

    A cyclic or unknown reference is left in place (the check then warns about it).
    """
    if schema is None:
        return None
    root = schema

    def walk(node: Any, trail: tuple[str, ...], depth: int) -> Any:
        if depth > max_depth:
            return node
        if isinstance(node, Mapping):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/") and ref not in trail:
                target: Any = root
                for part in ref[2:].split("/"):
                    target = target.get(part) if isinstance(target, Mapping) else None
                if isinstance(target, Mapping):
                    merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
                    return walk(merged, (*trail, ref), depth + 1)
            return {k: walk(v, trail, depth + 1) for k, v in node.items() if k not in ("$defs", "definitions")}
        if isinstance(node, list):
            return [walk(v, trail, depth + 1) for v in node]
        return node

    return walk(schema, (), 0)


def _enum(schema: Mapping[str, Any]) -> list[Any] | None:
    if "const" in schema:
        return [schema["const"]]
    enum = schema.get("enum")
    return list(enum) if isinstance(enum, list) else None


def _show(types: frozenset[str] | None) -> str:
    if types is None:
        return "any type"
    shown = sorted(types - {"integer"} if "number" in types else types)
    return "/".join(shown)


def _unsupported(schema: Mapping[str, Any], path: str) -> list[Finding]:
    simple = _simple_union(schema) is not None
    return [
        Finding(path, f"uses {key!r}, which the conformance check cannot compare", "warning")
        for key in _UNSUPPORTED
        if key in schema and not (simple and key in ("anyOf", "oneOf"))
    ]


def accepts(tool: Mapping[str, Any], interface: Mapping[str, Any], path: str = "") -> list[Finding]:
    """Findings that show ``tool`` (an input schema) refuses input ``interface`` allows."""
    findings = _unsupported(tool, path or "/")
    want, have = _types(interface), _types(tool)
    if have is not None:
        if want is None:
            findings.append(Finding(path or "/", f"accepts only {_show(have)}, the interface allows any type"))
            return findings
        missing = want - have
        if missing:
            findings.append(Finding(path or "/", f"accepts {_show(have)}, the interface allows {_show(want)}"))
            return findings
    tool_enum, iface_enum = _enum(tool), _enum(interface)
    if tool_enum is not None:
        if iface_enum is None:
            findings.append(Finding(path or "/", f"accepts only {tool_enum}, the interface allows any value"))
        elif extra := [v for v in iface_enum if v not in tool_enum]:
            findings.append(Finding(path or "/", f"does not accept {extra}, which the interface allows"))
    for low, high in (("minimum", "maximum"), ("minLength", "maxLength"), ("minItems", "maxItems")):
        if low in tool and (low not in interface or interface[low] < tool[low]):
            findings.append(Finding(path or "/", f"{low} is {tool[low]}, the interface allows {interface.get(low, 'any')}"))
        if high in tool and (high not in interface or interface[high] > tool[high]):
            findings.append(Finding(path or "/", f"{high} is {tool[high]}, the interface allows {interface.get(high, 'any')}"))
    if (want or frozenset()) & {"object"} or "properties" in interface:
        props = interface.get("properties") or {}
        tool_props = tool.get("properties") or {}
        iface_required = set(interface.get("required") or [])
        for name in sorted(set(tool.get("required") or []) - iface_required):
            findings.append(Finding(f"{path}/{name}", "is required by the tool but not by the interface"))
        for name, sub in props.items():
            if name not in tool_props:
                if tool.get("additionalProperties") is False or name in iface_required:
                    findings.append(Finding(f"{path}/{name}", "is a parameter of the interface the tool does not take"))
                else:
                    findings.append(Finding(f"{path}/{name}", "is not declared by the tool", "warning"))
                continue
            findings.extend(accepts(tool_props[name], sub, f"{path}/{name}"))
    if "items" in interface and isinstance(tool.get("items"), Mapping):
        findings.extend(accepts(tool["items"], interface["items"], f"{path}/items"))
    return findings


def provides(tool: Mapping[str, Any] | None, interface: Mapping[str, Any], path: str = "") -> list[Finding]:
    """Findings that show ``tool`` (an output schema) may return what ``interface`` forbids."""
    if not interface:
        return []
    if tool is None:
        return [Finding(path or "/", "the tool declares no output schema, so its result cannot be checked", "warning")]
    findings = _unsupported(tool, path or "/")
    want, have = _types(interface), _types(tool)
    if want is not None:
        if have is None:
            findings.append(Finding(path or "/", f"may return any type, the interface returns {_show(want)}"))
            return findings
        wider = have - want
        if wider:
            findings.append(Finding(path or "/", f"returns {_show(have)}, the interface returns {_show(want)}"))
            return findings
    tool_enum, iface_enum = _enum(tool), _enum(interface)
    if iface_enum is not None:
        if tool_enum is None:
            findings.append(Finding(path or "/", f"may return any value, the interface returns one of {iface_enum}"))
        elif extra := [v for v in tool_enum if v not in iface_enum]:
            findings.append(Finding(path or "/", f"may return {extra}, outside the interface's {iface_enum}"))
    if (want or frozenset()) & {"object"} or "properties" in interface:
        props = interface.get("properties") or {}
        tool_props = tool.get("properties") or {}
        tool_required = set(tool.get("required") or [])
        for name, sub in props.items():
            required = name in set(interface.get("required") or [])
            if name not in tool_props:
                if required:
                    findings.append(Finding(f"{path}/{name}", "is a required result field the tool does not return"))
                continue
            if required and name not in tool_required:
                findings.append(Finding(f"{path}/{name}", "is required by the interface but optional in the tool's result"))
            findings.extend(provides(tool_props[name], sub, f"{path}/{name}"))
    if "items" in interface and isinstance(tool.get("items"), Mapping):
        findings.extend(provides(tool["items"], interface["items"], f"{path}/items"))
    return findings


def additive_change(old: Mapping[str, Any], new: Mapping[str, Any], path: str = "") -> list[str]:
    """What makes ``new`` more than an optional-field addition to ``old`` (empty: compatible).

    Versioning rule of the seed: adding optional fields is allowed within a version;
    changing required fields, types or values needs a new major.
    """
    changes: list[str] = []
    if _types(old) != _types(new):
        changes.append(f"{path or '/'}: type changed from {_show(_types(old))} to {_show(_types(new))}")
        return changes
    if _enum(old) != _enum(new):
        changes.append(f"{path or '/'}: allowed values changed from {_enum(old)} to {_enum(new)}")
    for key in ("minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems", "pattern", "format"):
        if old.get(key) != new.get(key):
            changes.append(f"{path or '/'}: {key} changed from {old.get(key)!r} to {new.get(key)!r}")
    if set(old.get("required") or []) != set(new.get("required") or []):
        changes.append(f"{path or '/'}: required fields changed from {sorted(old.get('required') or [])} "
                       f"to {sorted(new.get('required') or [])}")
    old_props, new_props = old.get("properties") or {}, new.get("properties") or {}
    for name in old_props:
        if name not in new_props:
            changes.append(f"{path}/{name}: removed")
        else:
            changes.extend(additive_change(old_props[name], new_props[name], f"{path}/{name}"))
    if isinstance(old.get("items"), Mapping) and isinstance(new.get("items"), Mapping):
        changes.extend(additive_change(old["items"], new["items"], f"{path}/items"))
    return changes
