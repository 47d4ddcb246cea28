"""The neutral tool model every driver speaks, and the rules for tool names.

A :class:`Tool` is what a driver offers (name, description, JSON Schema of its input);
a :class:`ToolCall` is what an LLM asked for. Provider name rules (OpenAI, Anthropic,
Gemini) allow ``^[a-zA-Z0-9_-]{1,64}$``; :func:`sanitize_tool_name` maps any name into
that alphabet, and truncated names stay unique through a stable hash.
:func:`json_type` names the JSON Schema type of a value found in a schema or a call.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

MAX_TOOL_NAME_LENGTH = 64
TOOL_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_INVALID_CHARS = re.compile(r"[^a-zA-Z0-9_-]+")
_HASH_LENGTH = 8

EMPTY_OBJECT_SCHEMA: Mapping[str, Any] = MappingProxyType({"type": "object", "properties": {}})
# ``bool`` before ``int``, of which it is a subclass.
_JSON_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (list, "array"), (dict, "object"),
)


@dataclass(frozen=True, slots=True)
class Tool:
    """One callable operation, described for an LLM.

    ``name`` follows the provider alphabet (see :func:`sanitize_tool_name`).
    ``input_schema`` is a JSON Schema object; ``output_schema`` is optional.
    ``annotations`` carries MCP-style hints (``readOnlyHint``, ``idempotentHint``...);
    ``meta`` is the driver's own data (the original operation name, a location map),
    never shown to the LLM.
    """

    name: str
    description: str = ""
    input_schema: Mapping[str, Any] = field(default_factory=lambda: dict(EMPTY_OBJECT_SCHEMA))
    title: str | None = None
    output_schema: Mapping[str, Any] | None = None
    annotations: Mapping[str, Any] = field(default_factory=dict)
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not TOOL_NAME_PATTERN.match(self.name):
            raise ValueError(
                f"tool name {self.name!r} must match {TOOL_NAME_PATTERN.pattern}; "
                "pass it through mcs.tools.sanitize_tool_name first"
            )

    @property
    def original_name(self) -> str:
        """The name in the source spec (``spotify.play``), or ``name`` when unchanged."""
        original = self.meta.get("original_name")
        return original if isinstance(original, str) else self.name

    @property
    def unprefixed_name(self) -> str:
        """The name the driver listed the tool under, before its ``prefix`` was applied.

        A driver built with ``prefix="crm"`` exposes ``crm_get_user`` to the LLM; its own
        routing (an operation table, the remote server) knows ``get_user``. Equal to
        ``name`` when no prefix is in effect.
        """
        unprefixed = self.meta.get("unprefixed_name")
        return unprefixed if isinstance(unprefixed, str) else self.name

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description (what ``mcs describe --format text`` prints)."""
        out: dict[str, Any] = {"name": self.name}
        if self.title:
            out["title"] = self.title
        if self.description:
            out["description"] = self.description
        out["input_schema"] = self.input_schema
        if self.output_schema is not None:
            out["output_schema"] = self.output_schema
        return out


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A call found in LLM output: the tool's name, its arguments and the call id if any.

    ``arguments`` is always a dict: a provider's JSON string is decoded by the parser.
    """

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    id: str | None = None


def json_type(value: Any) -> str | None:
    """The JSON Schema type name of a decoded JSON value; ``None`` for any other Python value.

    ``"null"``, ``"boolean"``, ``"integer"``, ``"number"`` (a float), ``"string"``,
    ``"array"`` (a list) or ``"object"`` (a dict). A ``bool`` is a boolean, never an integer.
    """
    if value is None:
        return "null"
    return next((name for kind, name in _JSON_TYPES if isinstance(value, kind)), None)


def _stable_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:_HASH_LENGTH]


def visible_text(text: str) -> str:
    """``text`` without invisible format characters (Unicode category Cf: zero-width spaces and
    joiners, bidi overrides, the tag block U+E0000-E007F that spells hidden ASCII): a spec's
    description may not carry words its reader cannot see (SECURITY.md F2)."""
    if text.isascii():
        return text
    return "".join(char for char in text if unicodedata.category(char) != "Cf")


def sanitize_tool_name(name: str, *, max_length: int = MAX_TOOL_NAME_LENGTH) -> str:
    """Map ``name`` into ``^[a-zA-Z0-9_-]{1,max_length}$``, deterministically.

    Runs of other characters become ``_``. A name that had to be truncated ends with
    ``_`` and an 8-character hash of the whole original, so two long names sharing a
    prefix stay distinct and the same input always gives the same output.
    """
    if max_length < _HASH_LENGTH + 2:
        raise ValueError(f"max_length must be at least {_HASH_LENGTH + 2}")
    cleaned = _INVALID_CHARS.sub("_", name).strip("_") or "tool"
    if len(cleaned) <= max_length:
        return cleaned
    head = cleaned[: max_length - _HASH_LENGTH - 1].rstrip("_")
    return f"{head}_{_stable_hash(name)}"


def unique_tool_names(names: Iterable[str], *, max_length: int = MAX_TOOL_NAME_LENGTH) -> list[str]:
    """Sanitise every name and make the results unique, in order.

    A name whose sanitised form is already taken gets a stable hash suffix computed from
    its original text, so the mapping does not depend on the order of unrelated names.
    """
    result: list[str] = []
    taken: set[str] = set()
    for name in names:
        candidate = sanitize_tool_name(name, max_length=max_length)
        if candidate in taken:
            head = candidate[: max_length - _HASH_LENGTH - 1].rstrip("_")
            candidate = f"{head}_{_stable_hash(name)}"
        counter = 2
        base = candidate
        while candidate in taken:  # a hash collision: astronomically rare, still handled
            suffix = f"_{counter}"
            candidate = base[: max_length - len(suffix)] + suffix
            counter += 1
        taken.add(candidate)
        result.append(candidate)
    return result
