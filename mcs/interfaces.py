"""Interfaces: named, versioned sets of tool methods (the MCP Interfaces RFC seed).

An :class:`Interface` such as ``media.player.v1`` fixes, for each of its methods, a
canonical name, a description, a JSON Schema of the parameters and one of the result.
A server or driver that *implements* the interface guarantees that those methods exist
with compatible schemas, and clients can rely on the canonical descriptions.

Names follow ``<name>.v<major>``: ``<name>`` is dotted lowercase words
(``media.player``), ``<major>`` a positive integer. Within one major version only
optional fields may be added; anything else is a new major (the seed's rule).

This module is the model only, with no protocol dependency; loading definitions,
conformance checks and the MCP wire form live in the MCP driver (``mcs_mcp.interfaces``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

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
        """The seed's JSON shape: ``{"interface", "description", "methods": [...]}``."""
        return {
            "interface": self.name,
            "description": self.description,
            "methods": [m.model_dump() for m in self.methods],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Interface:
        """Validate the seed's JSON shape (raises ``pydantic.ValidationError``)."""
        return cls.model_validate(dict(data))


__all__ = [
    "INTERFACE_NAME_PATTERN",
    "UNCLASSIFIED",
    "Interface",
    "InterfaceMethod",
    "parse_interface_name",
]
