"""The interfaces a driver implements, as the page renders them.

The core knows the model (:class:`mcs.Interface`) but not where definitions come from
or how conformance is checked: installed distributions answer that through the
``mcs.interface_views`` entry-point group. Each entry point is a callable
``views(driver) -> list[dict]`` that returns, for each interface ``driver`` implements::

    {"interface": "media.player.v1", "description": "...",
     "methods": [{"name": "set_volume", "tool": "player_volume", "description": "...",
                  "parameters": {...}, "returns": {...}}],
     "conforms": true, "problems": ["set_volume: parameters/volume accepts ..."],
     "source": "list_interfaces of server mcp"}

``tool`` is the driver's tool name for the method (``None`` when no tool implements it).
The MCP distribution answers for MCP servers that declare interfaces and for drivers
with an ``implements`` declaration. A broken plugin is reported on the page, never
raised. For a toolbox, each member is asked and tool names are mapped to the toolbox's.

:func:`collect` adds ``ui``: the view the page builds from the definition alone
(``media.player``, ``filesystem.navigator``, ``code.editor``, ``chat.assistant`` in
version 1), or ``forms`` for any other interface.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from importlib import metadata
from typing import Any

from mcs.driver import ToolDriver
from mcs.interfaces import parse_interface_name

GROUP = "mcs.interface_views"
#: Interface families the page has a dedicated view for (major version 1).
UI_FAMILIES = frozenset({"media.player", "filesystem.navigator", "code.editor", "chat.assistant"})

logger = logging.getLogger("mcs.inspector")

ViewsOf = Callable[[Any], list[Mapping[str, Any]]]


def _providers() -> tuple[list[tuple[str, ViewsOf]], list[str]]:
    providers: list[tuple[str, ViewsOf]] = []
    problems: list[str] = []
    for entry_point in metadata.entry_points(group=GROUP):
        try:
            providers.append((entry_point.name, entry_point.load()))
        except Exception as exc:  # a broken plugin never breaks the page
            problems.append(f"interface plugin {entry_point.name!r} could not load: {type(exc).__name__}: {exc}")
    return providers, problems


def ui_of(name: str) -> str:
    """The page's view for interface ``name``: its family for the known v1 UIs, else ``forms``."""
    try:
        family, major = parse_interface_name(name)
    except ValueError:
        return "forms"
    return family if family in UI_FAMILIES and major == 1 else "forms"


def _members(driver: ToolDriver) -> list[tuple[Any, Callable[[str | None], str | None]]]:
    """The drivers to ask, each with a map from its tool names to the inspected driver's."""
    members: Mapping[str, Any] = getattr(driver, "members", {})
    if not members:
        return [(driver, lambda name: name)]
    exposed: dict[tuple[str, str], str] = {}
    for tool in driver.list_tools():
        key, original = tool.meta.get("toolbox_member"), tool.meta.get("member_tool")
        if isinstance(key, str) and isinstance(original, str):
            exposed[(key, original)] = tool.name

    def mapper(key: str) -> Callable[[str | None], str | None]:
        return lambda name: exposed.get((key, name)) if name is not None else None

    return [(member, mapper(key)) for key, member in members.items()]


def _view(raw: Mapping[str, Any], rename: Callable[[str | None], str | None]) -> dict[str, Any]:
    name = str(raw["interface"])
    methods = [
        {
            "name": str(m["name"]),
            "tool": rename(m.get("tool")),
            "description": str(m.get("description", "")),
            "parameters": dict(m.get("parameters") or {}),
            "returns": dict(m.get("returns") or {}),
        }
        for m in raw.get("methods", [])
    ]
    return {
        "interface": name,
        "description": str(raw.get("description", "")),
        "methods": methods,
        "conforms": bool(raw.get("conforms", True)),
        "problems": [str(p) for p in raw.get("problems", [])],
        "source": str(raw.get("source", "")),
        "ui": ui_of(name),
    }


def collect(driver: ToolDriver) -> tuple[list[dict[str, Any]], list[str]]:
    """Every interface view for ``driver`` (see the module docstring), and the problems met."""
    providers, problems = _providers()
    views: list[dict[str, Any]] = []
    for member, rename in _members(driver):
        for plugin, views_of in providers:
            try:
                found = views_of(member)
                views.extend(_view(raw, rename) for raw in found)
            except Exception as exc:
                logger.warning("interface plugin %r failed for %s", plugin, member, exc_info=True)
                problems.append(f"interface plugin {plugin!r} failed: {type(exc).__name__}: {exc}")
    return views, problems
