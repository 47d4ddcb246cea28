"""Invocation bases and ``extends``: gen-mcp's ``pkg/invocation/extends`` semantics.

An invocation is a mapping with exactly one key, ``http``, ``cli`` or ``extends``. An
``extends`` names a base in ``invocationBases`` (``from``) and modifies a copy of it:

* the operations apply in the order **remove, then extend, then override**;
* a field may be touched by one operation only;
* ``extend``: strings are concatenated, maps merged (new keys win), lists appended;
* ``override``: the value replaces the base's; zero values (``""``, ``0``, ``false``,
  empty maps and lists) are skipped;
* ``remove``: a string becomes empty, map keys (given as a list or as a map) are
  deleted, list items equal to the given ones are deleted.

Bases may themselves extend other bases; cycles are refused.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping
from typing import Any

from mcs.errors import ConfigurationError
from mcs_mcp.mcpfile.templates import parse_template

logger = logging.getLogger("mcs_mcp.mcpfile")

KINDS = ("http", "cli")

# Field names (JSON keys) and their shape, per invocation kind.
_FIELDS: dict[str, dict[str, str]] = {
    "http": {"url": "str", "method": "str", "headers": "map", "bodyRoot": "str", "bodyAsArray": "bool"},
    "cli": {"command": "str", "templateVariables": "map"},
}
_OPERATIONS = ("remove", "extend", "override")


def invocation_kind(invocation: Mapping[str, Any], *, where: str) -> tuple[str, Mapping[str, Any]]:
    """Return ``(kind, config)`` for an invocation mapping.

    The 0.2.0 JSON Schema also allows a bare config (``{"url": ..., "method": ...}``); it is
    recognised by its keys.

    Raises:
        ConfigurationError: not exactly one of ``http``, ``cli``, ``extends``.
    """
    keys = [k for k, v in invocation.items() if v is not None]
    lowered = {str(k).lower(): invocation[k] for k in keys}
    if len(keys) == 1 and next(iter(lowered)) in ("http", "cli", "extends"):
        kind, config = next(iter(lowered.items()))
        if not isinstance(config, Mapping):
            raise ConfigurationError(f"{where}: invocation.{kind} must be a mapping")
        return kind, config
    if "from" in lowered:
        return "extends", invocation
    if "command" in lowered:
        return "cli", invocation
    if "url" in lowered and "method" in lowered:
        return "http", invocation
    if not keys:
        raise ConfigurationError(f"{where}: invocation is not set")
    raise ConfigurationError(
        f"{where}: an invocation has exactly one of 'http', 'cli' or 'extends'; got {', '.join(map(str, keys))}"
    )


def resolve(
    invocation: Mapping[str, Any], bases: Mapping[str, Any], *, where: str
) -> tuple[str, dict[str, Any]]:
    """Return ``(kind, config)`` with every ``extends`` applied; ``kind`` is ``http`` or ``cli``.

    Raises:
        ConfigurationError: an unknown base, a cycle, two operations on one field, or a
            value of the wrong shape; the message names ``where`` and the field.
    """
    return _resolve(invocation, bases, where=where, seen=())


def _resolve(
    invocation: Mapping[str, Any], bases: Mapping[str, Any], *, where: str, seen: tuple[str, ...]
) -> tuple[str, dict[str, Any]]:
    kind, config = invocation_kind(invocation, where=where)
    if kind != "extends":
        return kind, _canonical(kind, config)
    source = _get(config, "from")
    if not isinstance(source, str) or not source:
        raise ConfigurationError(f"{where}: extends requires a 'from' naming an invocation base")
    if source in seen:
        chain = " -> ".join((*seen, source))
        raise ConfigurationError(f"{where}: invocation bases extend each other in a cycle: {chain}")
    base = bases.get(source)
    if not isinstance(base, Mapping):
        known = ", ".join(sorted(bases)) or "none"
        raise ConfigurationError(f"{where}: extends from unknown invocation base {source!r}; known bases: {known}")
    base_kind, result = _resolve(base, bases, where=f"invocationBases.{source}", seen=(*seen, source))
    ops = {op: _get(config, op) for op in _OPERATIONS}
    parsed: dict[str, dict[str, Any]] = {}
    for op, raw in ops.items():
        if raw is None:
            parsed[op] = {}
            continue
        if not isinstance(raw, Mapping):
            raise ConfigurationError(f"{where}: extends.{op} must be a mapping of fields")
        parsed[op] = _fields_of(base_kind, raw, op=op, where=where)
    _check_one_operation_per_field(parsed, where)
    for field, value in parsed["remove"].items():
        _remove(result, field, value, base_kind, where)
    for field, value in parsed["extend"].items():
        _extend(result, field, value, base_kind, where)
    dropped = _dropped_formats(result, parsed["override"]) if base_kind == "cli" else {}
    for field, value in parsed["override"].items():
        if _is_zero(value):
            continue
        result[field] = copy.deepcopy(value)
    _warn_dropped_formats(result, dropped, where)
    return base_kind, result


def _dropped_formats(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """The base's ``templateVariables`` entries an ``override`` of the map leaves out."""
    replacement = override.get("templateVariables")
    if not isinstance(replacement, Mapping) or not replacement:
        return {}
    current = base.get("templateVariables") or {}
    return {k: v for k, v in current.items() if k not in replacement} if isinstance(current, Mapping) else {}


def _warn_dropped_formats(result: Mapping[str, Any], dropped: Mapping[str, Any], where: str) -> None:
    """Warn when a dropped format's placeholder is still in the command (the format's own
    CLI example does this: ``{verbose}`` then receives the bare value, ``true``)."""
    command = result.get("command")
    if not dropped or not isinstance(command, str):
        return
    try:
        used = set(parse_template(command, where=where).params())
    except ConfigurationError:
        return  # the command is reported when it is compiled
    for key in sorted(set(dropped) & used):
        fmt = dropped[key].get("format") if isinstance(dropped[key], Mapping) else None
        logger.warning(
            "%s: extends.override.templateVariables replaces the base's whole map and drops %r, which the "
            "command still uses as {%s}: its value is now inserted as it is, without the base's format %r. "
            "Use extend to add or change one entry.", where, key, key, fmt,
        )


def _get(config: Mapping[str, Any], key: str) -> Any:
    for k, v in config.items():
        if str(k).lower() == key:
            return v
    return None


def _canonical(kind: str, config: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy keyed by the canonical field names (Go matches them case-insensitively)."""
    names = {name.lower(): name for name in _FIELDS[kind]}
    out: dict[str, Any] = {}
    for key, value in config.items():
        if value is None:
            continue
        name = names.get(str(key).lower())
        if name is not None:
            out[name] = copy.deepcopy(value)
    return out


def _fields_of(kind: str, raw: Mapping[str, Any], *, op: str, where: str) -> dict[str, Any]:
    fields = _canonical(kind, raw)
    for name, value in fields.items():
        shape = _FIELDS[kind][name]
        if op == "remove" and shape == "map" and isinstance(value, list):
            continue
        if not _fits(value, shape):
            raise ConfigurationError(
                f"{where}: extends.{op}.{name} must be a {_SHAPE_NAMES[shape]}, got {type(value).__name__}"
            )
    return {k: v for k, v in fields.items() if not _is_zero(v)}


_SHAPE_NAMES = {"str": "string", "map": "mapping", "bool": "boolean"}


def _fits(value: Any, shape: str) -> bool:
    if shape == "str":
        return isinstance(value, str)
    if shape == "map":
        return isinstance(value, Mapping)
    return isinstance(value, bool)


def _is_zero(value: Any) -> bool:
    return value in ("", 0, False) or (isinstance(value, (Mapping, list)) and not value)


def _check_one_operation_per_field(parsed: Mapping[str, Mapping[str, Any]], where: str) -> None:
    fields: dict[str, list[str]] = {}
    for op in ("extend", "override", "remove"):
        for name in parsed[op]:
            fields.setdefault(name, []).append(op)
    for name, ops in fields.items():
        if len(ops) > 1:
            raise ConfigurationError(
                f"{where}: field {name!r} is modified by several operations ({', '.join(ops)}); use one"
            )


def _extend(result: dict[str, Any], field: str, value: Any, kind: str, where: str) -> None:
    shape = _FIELDS[kind][field]
    if shape == "str":
        result[field] = str(result.get(field, "")) + value
    elif shape == "map":
        merged = dict(result.get(field) or {})
        merged.update(copy.deepcopy(dict(value)))
        result[field] = merged
    else:
        raise ConfigurationError(f"{where}: extends.extend.{field} cannot be extended (a boolean); use override")


def _remove(result: dict[str, Any], field: str, value: Any, kind: str, where: str) -> None:
    if field not in result or _is_zero(result[field]):
        return
    shape = _FIELDS[kind][field]
    if shape == "str":
        result[field] = ""
    elif shape == "bool":
        result[field] = False
    else:
        keys = list(value) if isinstance(value, (list, Mapping)) else [value]
        remaining = dict(result[field])
        for key in keys:
            remaining.pop(key, None)
        result[field] = remaining
