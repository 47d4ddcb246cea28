"""Where interface definitions come from: the shipped ones, files, directories, a registry URL.

A definition file is JSON or YAML holding one interface (the seed's shape), a list of
them, or ``{"interfaces": [...]}``. :func:`default_registry` holds the definitions
shipped with this package (``media.player.v1``, ``code.editor.v1``,
``filesystem.navigator.v1``, ``chat.assistant.v1``) plus every file in the directories
named by ``MCS_INTERFACES_PATH`` (``os.pathsep``-separated).

Loading a definition whose name is already known is allowed only as the seed's versioning
rule permits (optional fields added); anything else is refused with the list of changes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from mcs.errors import ConfigurationError
from mcs.interfaces import Interface, parse_interface_name
from mcs_mcp.interfaces.versioning import breaking_changes, highest, matches

PATH_ENV = "MCS_INTERFACES_PATH"
_SUFFIXES = (".json", ".yaml", ".yml")


def _definitions(data: Any, source: str) -> list[Interface]:
    if isinstance(data, Mapping) and "interfaces" in data and "methods" not in data:
        data = data["interfaces"]
    items = data if isinstance(data, list) else [data]
    out: list[Interface] = []
    for index, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise ConfigurationError(f"{source}: entry {index} is not an interface object")
        try:
            out.append(Interface.model_validate(dict(item)))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(top level)"
            raise ConfigurationError(f"{source}: interface {index}: {where}: {first['msg']}") from None
    return out


class InterfaceRegistry:
    """Interface definitions by name (``media.player.v1``)."""

    def __init__(self, interfaces: Mapping[str, Interface] | None = None) -> None:
        self._by_name: dict[str, Interface] = dict(interfaces or {})

    def add(self, interface: Interface, *, source: str = "") -> None:
        """Register ``interface``; a same-named one may only be extended with optional fields.

        Raises:
            ConfigurationError: the new definition changes the interface incompatibly.
        """
        known = self._by_name.get(interface.name)
        if known is not None and known != interface:
            changes = breaking_changes(known, interface)
            if changes:
                where = f" ({source})" if source else ""
                raise ConfigurationError(
                    f"{interface.name}{where} changes the interface incompatibly; "
                    f"publish it as a new major version instead: {'; '.join(changes)}"
                )
        self._by_name[interface.name] = interface

    def load_data(self, data: Any, *, source: str = "data") -> list[Interface]:
        """Register the definitions in parsed JSON/YAML ``data``; returns them."""
        found = _definitions(data, source)
        for interface in found:
            self.add(interface, source=source)
        return found

    def load_file(self, path: str | os.PathLike[str]) -> list[Interface]:
        """Register the definitions in a JSON or YAML file.

        Raises:
            ConfigurationError: the file is missing, unparsable or holds an invalid definition.
        """
        file = Path(path)
        try:
            text = file.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigurationError(f"cannot read interface file {file}: {exc.strerror or exc}") from None
        try:
            data = json.loads(text) if file.suffix == ".json" else yaml.safe_load(text)
        except (ValueError, yaml.YAMLError) as exc:
            raise ConfigurationError(f"interface file {file} is not valid {file.suffix[1:].upper()}: {exc}") from None
        return self.load_data(data, source=str(file))

    def load_dir(self, path: str | os.PathLike[str]) -> list[Interface]:
        """Register every ``*.json``/``*.yaml``/``*.yml`` file of a directory, in name order."""
        found: list[Interface] = []
        for file in sorted(Path(path).iterdir()):
            if file.suffix in _SUFFIXES and file.is_file():
                found += self.load_file(file)
        return found

    def load_url(self, url: str, *, headers: Mapping[str, str] | None = None, timeout: float = 10.0) -> list[Interface]:
        """Register the definitions a registry serves at ``url`` (JSON or YAML over HTTP)."""
        import httpx

        try:
            response = httpx.get(url, headers=dict(headers or {}), timeout=timeout, follow_redirects=False)
            response.raise_for_status()
        except httpx.HTTPError as exc:
            raise ConfigurationError(f"cannot fetch interface definitions from {url}: {exc}") from None
        try:
            data = yaml.safe_load(response.text)
        except yaml.YAMLError as exc:
            raise ConfigurationError(f"{url} did not return JSON or YAML: {exc}") from None
        return self.load_data(data, source=url)

    def get(self, name: str) -> Interface:
        """The interface ``name``, or the highest version of a family (``media.player``).

        Raises:
            KeyError: unknown; the message lists what is known.
        """
        if name in self._by_name:
            return self._by_name[name]
        family_versions = [n for n in self._by_name if matches(n, name)]
        if family_versions:
            return self._by_name[highest(family_versions)[name]]
        try:
            family = parse_interface_name(name)[0]
        except ValueError:
            family = name
        versions = [i.name for i in self.versions(family)]
        if versions:
            raise KeyError(f"unknown interface {name!r}; known versions of {family}: {', '.join(versions)}")
        known = ", ".join(sorted(self._by_name)) or "none"
        raise KeyError(f"unknown interface {name!r}; known interfaces: {known}")

    def find(self, name: str) -> Interface | None:
        try:
            return self.get(name)
        except KeyError:
            return None

    def versions(self, family: str) -> list[Interface]:
        """Every known version of ``family``, lowest first."""
        found = [i for i in self._by_name.values() if i.family == family]
        return sorted(found, key=lambda i: i.major)

    def names(self) -> list[str]:
        return sorted(self._by_name)

    def __iter__(self) -> Iterator[Interface]:
        return iter(self._by_name[n] for n in self.names())

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __len__(self) -> int:
        return len(self._by_name)


def shipped() -> list[Interface]:
    """The definitions shipped in this package (``mcs_mcp/interfaces/definitions``)."""
    folder = resources.files("mcs_mcp.interfaces") / "definitions"
    out: list[Interface] = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(_SUFFIXES):
            out += _definitions(yaml.safe_load(entry.read_text(encoding="utf-8")), entry.name)
    return out


def default_registry(*, environ: Mapping[str, str] | None = None) -> InterfaceRegistry:
    """A fresh registry with the shipped definitions and those under ``MCS_INTERFACES_PATH``."""
    registry = InterfaceRegistry()
    for interface in shipped():
        registry.add(interface, source="shipped")
    env = os.environ if environ is None else environ
    for folder in filter(None, env.get(PATH_ENV, "").split(os.pathsep)):
        if Path(folder).is_dir():
            registry.load_dir(folder)
    return registry


__all__ = ["PATH_ENV", "InterfaceRegistry", "default_registry", "parse_interface_name", "shipped"]
