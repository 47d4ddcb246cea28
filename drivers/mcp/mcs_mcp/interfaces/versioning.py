"""Interface versions: the seed's rules, and picking the highest version both sides support.

* Within one major version only optional fields may be added
  (:func:`breaking_changes` lists everything else).
* A new major is a new interface name (``media.player.v2``); old versions stay loadable.
* A client asks for the highest mutually supported version (:func:`negotiate`).
"""

from __future__ import annotations

from collections.abc import Iterable

from mcs.interfaces import Interface, parse_interface_name
from mcs_mcp.interfaces.schemas import additive_change


def highest(names: Iterable[str]) -> dict[str, str]:
    """The highest version per family: ``["a.v1", "a.v2", "b.v1"]`` -> ``{"a": "a.v2", "b": "b.v1"}``."""
    best: dict[str, tuple[int, str]] = {}
    for name in names:
        family, major = parse_interface_name(name)
        if family not in best or major > best[family][0]:
            best[family] = (major, name)
    return {family: name for family, (_, name) in best.items()}


def negotiate(client: Iterable[str], server: Iterable[str]) -> dict[str, str]:
    """Per family, the highest version both sides list; families without a common version are left out."""
    common = set(client) & set(server)
    return highest(common)


def matches(name: str, wanted: str) -> bool:
    """``wanted`` is the exact interface name or its family (``media.player`` matches ``media.player.v2``)."""
    if name == wanted:
        return True
    try:
        return parse_interface_name(name)[0] == wanted
    except ValueError:
        return False


def breaking_changes(old: Interface, new: Interface) -> list[str]:
    """What in ``new`` needs a new major version compared with ``old`` (same name); empty when compatible.

    Allowed within a version: new optional parameters or result fields, and wording of
    descriptions. Everything else - a method added or removed, a required field, a type,
    an allowed value or a bound changed - is listed.
    """
    changes: list[str] = []
    old_methods = {m.name: m for m in old.methods}
    new_methods = {m.name: m for m in new.methods}
    for name in old_methods.keys() - new_methods.keys():
        changes.append(f"method {name} removed")
    for name in new_methods.keys() - old_methods.keys():
        changes.append(f"method {name} added (a server implementing {old.name} would not have it)")
    for name in sorted(old_methods.keys() & new_methods.keys()):
        before, after = old_methods[name], new_methods[name]
        changes += [f"{name} parameters{c}" for c in _optional_additions(before.input_schema, after.input_schema)]
        changes += [f"{name} returns{c}" for c in _optional_additions(before.returns, after.returns)]
    return changes


def _optional_additions(old: dict[str, object], new: dict[str, object]) -> list[str]:
    if not old and not new:
        return []
    return [c if c.startswith("/") else f" {c}" for c in additive_change(old, new)]
