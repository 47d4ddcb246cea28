"""Interfaces: named, versioned sets of tool methods (the MCP Interfaces RFC seed).

An :class:`Interface` such as ``media.player.v1`` fixes, for each of its methods, a
canonical name, a description, a JSON Schema of the parameters and one of the result.
A server or driver that *implements* the interface guarantees that those methods exist
with compatible schemas, and clients can rely on the canonical descriptions.

Names follow ``<name>.v<major>``: ``<name>`` is dotted lowercase words
(``media.player``), ``<major>`` a positive integer. Within one major version only
optional fields may be added; anything else is a new major (the seed's rule). An
interface may be marked ``deprecated`` (``True``, or a note naming its successor): it
stays usable, as the seed requires of historical versions, and users are told.

Every method's ``parameters`` and ``returns`` must be valid JSON Schema: a definition
that is not is refused when it is read, not when a tool is checked against it.

This module is the model only, with no protocol dependency; loading definitions,
conformance checks and the MCP wire form live in the MCP driver (``mcs_mcp.interfaces``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import jsonschema_rs
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from mcs.errors import ConfigurationError

INTERFACE_NAME_PATTERN = re.compile(r"^(?P<family>[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)*)\.v(?P<major>[1-9][0-9]*)$")

#: The reserved section of ``list_interfaces`` for tools outside every interface.
UNCLASSIFIED = "unclassified"


def parse_interface_name(name: str) -> tuple[str, int]:
    """``"media.player.v1"`` -> ``("media.player", 1)``.

    Raises:
        ValueError: ``name`` is not ``<name>.v<major>``.
    """
    match = INTERFACE_NAME_PATTERN.match(name)
    if match is None:
        raise ValueError(
            f"interface name {name!r} must look like '<name>.v<major>', e.g. 'media.player.v1' "
            "(lowercase dotted words, then .v and a major version from 1)"
        )
    return match.group("family"), int(match.group("major"))


class InterfaceMethod(BaseModel):
    """One method of an interface: canonical name, description, parameter and result schemas.

    An empty ``parameters`` (``{}``, as the seed writes it) means "no parameters";
    :attr:`input_schema` gives it as a JSON Schema object. An empty ``returns`` means
    the result is not specified.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str
    parameters: dict[str, Any] = Field(default_factory=dict)
    returns: dict[str, Any] = Field(default_factory=dict)

    @field_validator("name")
    @classmethod
    def _name_is_an_identifier(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_\-]{0,63}", value):
            raise ValueError(f"method name {value!r} must be a tool name (letters, digits, _ or -)")
        return value

    @field_validator("parameters", "returns")
    @classmethod
    def _is_json_schema(cls, value: dict[str, Any]) -> dict[str, Any]:
        if value:
            try:
                jsonschema_rs.meta.validate(value)
            except jsonschema_rs.ValidationError as exc:
                first = str(exc).splitlines()[0]
                raise ValueError(f"is not a valid JSON Schema: {first}") from None
            except Exception as exc:  # an unknown $schema draft, an unresolvable reference
                raise ValueError(f"is not a valid JSON Schema: {exc}") from None
        return value

    @property
    def input_schema(self) -> dict[str, Any]:
        """``parameters`` as a JSON Schema object (``{}`` becomes an empty object schema)."""
        if not self.parameters:
            return {"type": "object", "properties": {}}
        return dict(self.parameters)


class Interface(BaseModel):
    """A named, versioned interface. Frozen; built from the seed's JSON shape.

    ``Interface.model_validate({"interface": "media.player.v1", "description": ...,
    "methods": [...]})`` reads the seed's form (``name`` is accepted too);
    :meth:`to_dict` writes it back.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    name: str = Field(alias="interface")
    description: str = ""
    methods: tuple[InterfaceMethod, ...]
    deprecated: bool | str = False

    @field_validator("name")
    @classmethod
    def _name_is_versioned(cls, value: str) -> str:
        if value == UNCLASSIFIED:
            raise ValueError(f"{UNCLASSIFIED!r} is reserved for tools outside every interface")
        parse_interface_name(value)
        return value

    @model_validator(mode="after")
    def _methods_are_unique(self) -> Interface:
        seen: set[str] = set()
        for method in self.methods:
            if method.name in seen:
                raise ValueError(f"interface {self.name} declares method {method.name!r} twice")
            seen.add(method.name)
        if not self.methods:
            raise ValueError(f"interface {self.name} declares no methods")
        return self

    @property
    def family(self) -> str:
        """The name without its version: ``media.player``."""
        return parse_interface_name(self.name)[0]

    @property
    def major(self) -> int:
        """The major version: ``1`` for ``media.player.v1``."""
        return parse_interface_name(self.name)[1]

    def method(self, name: str) -> InterfaceMethod | None:
        """The method called ``name``, or ``None``."""
        return next((m for m in self.methods if m.name == name), None)

    @property
    def method_names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.methods)

    def to_dict(self) -> dict[str, Any]:
        """The seed's JSON shape: ``{"interface", "description", "methods": [...]}``
        (and ``"deprecated"`` when it is)."""
        out: dict[str, Any] = {
            "interface": self.name,
            "description": self.description,
            "methods": [m.model_dump() for m in self.methods],
        }
        if self.deprecated:
            out["deprecated"] = self.deprecated
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Interface:
        """Validate the seed's JSON shape (raises ``pydantic.ValidationError``)."""
        return cls.model_validate(dict(data))


#: ``[(interface or its name, method -> tool, tool -> listed name)]``, see :func:`normalise_declaration`.
Declaration = list[tuple[Interface | str, dict[str, str], dict[str, str]]]


def normalise_declaration(spec: Any) -> Declaration:
    """A driver's ``implements`` declaration as ``[(interface, method -> tool, renamed)]``.

    Accepted shapes: ``"media.player.v1"``, an :class:`Interface`, a list of those or of
    ``(name, {method: tool})`` pairs or of ``{"interface", "tools", "renamed"}`` dicts,
    or ``{name: {method: tool}}``. ``renamed`` maps a tool name to the name it is listed
    under (a :class:`~mcs.Toolbox` that prefixed a colliding tool says so this way).

    Raises:
        ConfigurationError: a shape that is none of these.
    """
    if spec is None:
        return []
    if isinstance(spec, str | Interface):
        return [(spec, {}, {})]
    if isinstance(spec, Mapping):
        return [(name, dict(mapping or {}), {}) for name, mapping in spec.items()]
    out: Declaration = []
    for item in spec:
        if isinstance(item, str | Interface):
            out.append((item, {}, {}))
        elif isinstance(item, tuple | list) and len(item) == 2:
            out.append((item[0], dict(item[1] or {}), {}))
        elif isinstance(item, Mapping) and "interface" in item:
            interface = item["interface"]
            ref = interface if isinstance(interface, Interface) else str(interface)
            out.append((ref, dict(item.get("tools") or {}), dict(item.get("renamed") or {})))
        else:
            raise ConfigurationError(f"cannot read interface declaration {item!r}")
    return out


__all__ = [
    "INTERFACE_NAME_PATTERN",
    "UNCLASSIFIED",
    "Declaration",
    "Interface",
    "InterfaceMethod",
    "normalise_declaration",
    "parse_interface_name",
]
