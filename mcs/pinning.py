"""Tool-definition pinning (SECURITY.md F2: tool poisoning and rug pulls).

The first time a server's tools are seen, each definition is pinned by a hash of
everything a model or a policy reads of it: name, description, input schema (parameter
descriptions included) and, when present, title, output schema and annotations
(trust on first use). Later listings are compared with the pins; a tool is *held back*
(not offered to the LLM, not callable) when

* any of that changed since it was pinned (``changed``): a new description, schema, or
  an annotation flipped from destructive to ``readOnlyHint`` (a rug pull past an
  annotation-based approval policy);
* it appeared after the server's first listing, e.g. after ``tools/list_changed`` (``new``);
* it would shadow a name another server already owns, or its name is not the only one
  of its kind in the listing: the same name listed twice with different definitions (on
  one page or on two), or a name that another of the server's tools becomes once
  sanitised (``a.b`` and ``a_b``); a call by that name could reach either, so none of
  them is offered, whatever was approved before (``shadowing``);
* any text of it hides instructions: ``<IMPORTANT>``-style tags or invisible Unicode, in
  its name (a prompt's, a resource template's URI template), the description, a parameter
  description, a title or an enum (``suspicious``).

The ``mcp`` driver (``mcs_mcp.client.pinning`` re-exports this module) and the
``rfc0001`` client driver pin their servers' tools. The MCP driver pins and screens
prompts and resources offered as tools the same way,
each kind under its own key (``<server>/prompts``, ``<server>/resources``,
``<server>/resource-templates``); a held resource or template is not readable through
the ``read_resource`` tool until accepted.

:meth:`PinStore.accept` approves the current definition and re-pins it. Pins live in
memory, or in a JSON file when a path is given (written atomically).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import threading
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

HoldReason = Literal["changed", "new", "shadowing", "suspicious"]

# Read on the NFKC form of a text, so fullwidth (\uff1cIMPORTANT\uff1e) and mathematical
# letters match as the ASCII a model reads them as; a suffix (<IMPORTANT_NOTE>) and a
# chat-template bar (<|system|>) too. An HTML comment is hidden wherever text is rendered.
_SUSPICIOUS_TAGS = re.compile(
    r"<\s*\|?\s*/?\s*(important|system|instructions?|secret|hidden|admin)(?:[_-]\w*)?\b[^>]*>|<!--",
    re.IGNORECASE,
)

# Unicode's Default_Ignorable_Code_Point characters that are not format characters (Cf):
# shown as nothing, so they hide text or carry it (data smuggled in variation selectors).
_IGNORABLE = (
    (0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F), (0x3164, 0x3164),
    (0xFE00, 0xFE0F), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0xE0000, 0xE0FFF),
)
_PRESENTATION = (0xFE0E, 0xFE0F)  # text/emoji presentation: one after a visible character is ordinary


Definition = tuple[str, str | None, Mapping[str, Any] | None] | tuple[
    str, str | None, Mapping[str, Any] | None, Mapping[str, Any] | None
]


def definition_hash(
    name: str, description: str | None, input_schema: Mapping[str, Any] | None,
    extra: Mapping[str, Any] | None = None,
) -> str:
    """sha256 over the canonical JSON of (name, description, inputSchema[, extra]).

    ``extra`` holds the other fields a model or policy reads (``title``,
    ``outputSchema``, ``annotations``); left out when empty, so the hash of a tool
    without them is what it always was.
    """
    fields: list[Any] = [name, description or "", input_schema or {}]
    if extra:
        fields.append(extra)
    canonical = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


#: The control characters of ASCII other than tab and line breaks (what :func:`_invisible` finds there).
_ASCII_CONTROL: Final = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def suspicious_text(text: str) -> str | None:
    """Why ``text`` looks like a hidden instruction, or ``None``.

    Flags instruction tags (``<IMPORTANT>``, ``<system>``, ``<|system|>``...; also written
    in fullwidth or mathematical letters, read through NFKC), HTML comments, and invisible
    characters: Unicode format characters (zero-width, bidi controls, the tag block), the
    other default-ignorable ones (variation selectors, Hangul fillers, the combining
    grapheme joiner; one emoji presentation selector after a visible character is
    ordinary) and control characters other than tab and line breaks.
    """
    match = _SUSPICIOUS_TAGS.search(unicodedata.normalize("NFKC", text))
    if match:
        return f"contains the tag {match.group(0)!r}"
    if text.isascii():  # ASCII holds no format or default-ignorable character: its controls are all
        control = _ASCII_CONTROL.search(text)
        return None if control is None else f"contains the invisible character U+{ord(control.group()):04X}"
    previous = ""
    for char in text:
        if _invisible(char, previous):
            return f"contains the invisible character U+{ord(char):04X}"
        previous = char
    return None


def _invisible(char: str, previous: str) -> bool:
    """Whether ``char`` is shown as nothing: a format character, a default-ignorable one
    (a variation selector other than one presentation selector after a visible character),
    or a control character other than tab and line breaks (a terminal escape hides text)."""
    category = unicodedata.category(char)
    if category == "Cf" or (category == "Cc" and char not in "\t\n\r"):
        return True
    code = ord(char)
    if not any(low <= code <= high for low, high in _IGNORABLE):
        return False
    return not (code in _PRESENTATION and previous != "" and not _invisible(previous, "")
                and ord(previous) not in range(0xFE00, 0xFE10))


def _strings(value: Any, path: str) -> list[tuple[str, str]]:
    """Every string in a JSON value (keys too), with where it is."""
    found: list[tuple[str, str]] = []
    if isinstance(value, str):
        found.append((path, value))
    elif isinstance(value, Mapping):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            found.append((where, str(key)))
            found.extend(_strings(item, where))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            found.extend(_strings(item, f"{path}[{index}]"))
    return found


def suspicious_definition(
    description: str | None, input_schema: Mapping[str, Any] | None, extra: Mapping[str, Any] | None = None
) -> str | None:
    """Why any text of a definition looks like a hidden instruction, or ``None``.

    The description, then every string of the input schema (parameter descriptions,
    titles, enums, names) and of ``extra`` (title, output schema, annotations).
    """
    why = suspicious_text(description or "")
    if why is not None:
        return f"its description {why}"
    for part, value in (("input schema", input_schema), ("definition", extra)):
        for where, text in _strings(value or {}, ""):
            why = suspicious_text(text)
            if why is not None:
                return f"its {part} {why} (at {where or 'the top'})"
    return None


def _suspicious_name(name: str) -> str | None:
    """Why a definition's name (a prompt's name, a resource template's URI template) hides
    an instruction, or ``None``: a model reads it too, in the description of the tool that
    offers it."""
    why = suspicious_text(name)
    return None if why is None else f"its name {why}"


@dataclass(frozen=True, slots=True)
class HeldTool:
    """A tool kept from the LLM until :meth:`PinStore.accept`; ``detail`` says why."""

    server: str
    name: str
    reason: HoldReason
    detail: str
    pinned_hash: str | None
    current_hash: str


class PinStore:
    """Pinned tool hashes per server, in memory or in a JSON file (``path``)."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._lock = threading.Lock()
        self._pins: dict[str, dict[str, str]] = {}
        if self.path is not None and self.path.exists():
            data = json.loads(self.path.read_text(encoding="utf-8"))
            servers = data.get("servers", {}) if isinstance(data, dict) else {}
            self._pins = {str(s): {str(k): str(v) for k, v in tools.items()} for s, tools in servers.items()}
        self._held: dict[tuple[str, str], HeldTool] = {}

    def pinned(self, server: str) -> dict[str, str]:
        """A copy of the pins of ``server`` (tool name -> hash)."""
        with self._lock:
            return dict(self._pins.get(server, {}))

    def knows(self, server: str) -> bool:
        with self._lock:
            return server in self._pins

    def review(
        self,
        server: str,
        tools: list[Definition],
        *,
        owners: Mapping[str, str] | None = None,
        clashes: Mapping[str, str] | None = None,
        trust_new: bool = False,
    ) -> tuple[set[str], list[HeldTool]]:
        """Compare a listing with the pins; pin what is trusted. Returns (allowed names, held tools).

        ``tools`` holds ``(name, description, inputSchema)`` or ``(name, description,
        inputSchema, extra)`` with the other fields to pin (see :func:`definition_hash`).
        ``owners`` maps exposed tool
        names already owned by *other* servers to that server, for shadowing checks.
        ``clashes`` maps names that are ambiguous in this listing (another tool of the
        server is exposed under the same name) to why; they are held whatever their pins,
        as is a name listed more than once with different definitions.
        ``trust_new`` pins tools that appear after the first listing without holding them.
        """
        owners = owners or {}
        ambiguous = dict(clashes or {})
        versions: dict[str, set[str]] = {}
        for definition in tools:
            extra = definition[3] if len(definition) > 3 else None
            versions.setdefault(definition[0], set()).add(definition_hash(*definition[:3], extra))
        for name, hashes in versions.items():
            if len(hashes) > 1:
                ambiguous[name] = (f"the server lists {len(hashes)} different tools named {name!r}; none is "
                                   "offered, since a call by that name could reach any of them")
        allowed: set[str] = set()
        held: list[HeldTool] = []
        with self._lock:
            first_listing = server not in self._pins
            pins = self._pins.setdefault(server, {})
            for definition in tools:
                name, description, schema = definition[:3]
                extra = definition[3] if len(definition) > 3 else None
                current = definition_hash(name, description, schema, extra)
                pinned = pins.get(name)
                hold: tuple[HoldReason, str] | None = None
                if name in ambiguous:
                    hold = ("shadowing", ambiguous[name])
                elif pinned == current:
                    hold = None
                elif (why := _suspicious_name(name) or suspicious_definition(description, schema, extra)) is not None:
                    hold = ("suspicious", why)
                elif name in owners and owners[name] != server:
                    hold = ("shadowing", f"server {owners[name]!r} already offers a tool named {name!r}")
                elif pinned is not None:
                    hold = ("changed", "its description, schema or annotations changed since it was approved")
                elif not first_listing and not trust_new:
                    hold = ("new", "it appeared after the server's tools were first approved")
                if hold is None:
                    if pinned != current:
                        pins[name] = current
                    allowed.add(name)
                else:
                    item = HeldTool(server, name, hold[0], hold[1], pinned, current)
                    self._held[(server, name)] = item
                    held.append(item)
            for key in [k for k in self._held if k[0] == server]:
                if key[1] in allowed or key[1] not in {t[0] for t in tools}:
                    del self._held[key]
            self._save_locked()
        return allowed, held

    def held(self, server: str | None = None) -> list[HeldTool]:
        """Tools currently held back (of one server, or all)."""
        with self._lock:
            return [h for (s, _), h in self._held.items() if server is None or s == server]

    def accept(self, name: str, server: str | None = None) -> HeldTool:
        """Approve the held tool ``name`` as it is now; it is offered from the next listing.

        Raises:
            KeyError: no held tool has that name (on that server).
        """
        with self._lock:
            matches = [h for (s, n), h in self._held.items() if n == name and (server is None or s == server)]
            if not matches:
                raise KeyError(f"no held-back tool named {name!r}")
            if len(matches) > 1:
                raise KeyError(f"several servers hold a tool named {name!r}; name the server")
            item = matches[0]
            self._pins.setdefault(item.server, {})[item.name] = item.current_hash
            del self._held[(item.server, item.name)]
            self._save_locked()
            return item

    def _save_locked(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        payload = json.dumps({"version": 1, "servers": self._pins}, indent=2, sort_keys=True)
        fd, tmp = tempfile.mkstemp(prefix=".pins-", dir=self.path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(payload)
        os.replace(tmp, self.path)
