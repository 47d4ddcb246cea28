"""RFC 6570 URI templates for ``resourceTemplates``: syntax check, variable names, matching.

Matching (``weather://forecast/{city}/{date}`` against a concrete URI) is what a server
needs to answer ``resources/read``; it supports the operators of levels 1 to 3 (simple,
``+``, ``#``, ``.``, ``/``, ``;``, ``?``, ``&``) with explode and prefix modifiers read but
values matched as single strings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote

from mcs.errors import ConfigurationError

_OPERATORS = "+#./;?&"
_VARNAME = re.compile(r"^(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})(?:\.?(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2}))*$")
_VARSPEC = re.compile(r"^(?P<name>[^:*]+)(?::(?P<prefix>[1-9][0-9]{0,3})|(?P<explode>\*))?$")


@dataclass(frozen=True, slots=True)
class _Expression:
    operator: str
    names: tuple[str, ...]


@dataclass(frozen=True)
class UriTemplate:
    """A parsed template; build with :meth:`parse`."""

    text: str
    parts: tuple[str | _Expression, ...]

    @classmethod
    def parse(cls, text: str, *, where: str = "uriTemplate") -> UriTemplate:
        """Parse ``text``.

        Raises:
            ConfigurationError: malformed braces, operators or variable names.
        """
        parts: list[str | _Expression] = []
        i = 0
        while i < len(text):
            open_ = text.find("{", i)
            close_ = text.find("}", i)
            if open_ == -1:
                if close_ != -1:
                    raise ConfigurationError(f"{where}: unmatched '}}' in URI template {text!r}")
                parts.append(text[i:])
                break
            if close_ != -1 and close_ < open_:
                raise ConfigurationError(f"{where}: unmatched '}}' in URI template {text!r}")
            end = text.find("}", open_)
            if end == -1:
                raise ConfigurationError(f"{where}: unterminated expression in URI template {text!r}")
            if open_ > i:
                parts.append(text[i:open_])
            body = text[open_ + 1 : end]
            operator = body[0] if body and body[0] in _OPERATORS else ""
            names: list[str] = []
            for spec in body[len(operator) :].split(","):
                match = _VARSPEC.match(spec)
                if not match or not _VARNAME.match(match.group("name")):
                    raise ConfigurationError(f"{where}: invalid variable {spec!r} in URI template {text!r}")
                names.append(match.group("name"))
            parts.append(_Expression(operator, tuple(names)))
            i = end + 1
        return cls(text, tuple(parts))

    @property
    def variables(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(n for p in self.parts if isinstance(p, _Expression) for n in p.names))

    def match(self, uri: str) -> dict[str, str] | None:
        """The variables of ``uri`` if it matches this template, else ``None``."""
        pattern: list[str] = ["^"]
        groups: dict[str, tuple[str, tuple[str, ...]]] = {}
        for index, part in enumerate(self.parts):
            if isinstance(part, str):
                pattern.append(re.escape(part))
                continue
            group = f"g{index}"
            groups[group] = (part.operator, part.names)
            prefix = {"": "", "+": "", "#": "#", ".": r"\.", "/": "/", ";": ";", "?": r"\?", "&": "&"}[part.operator]
            if part.operator in ("+", "#"):
                body = ".*?"
            elif part.operator in ("?", "&", ";") or (part.operator in ("/", ".") and len(part.names) > 1):
                body = "[^?#]*?"
            else:
                body = "[^/?#]*?"
            pattern.append(f"(?:{prefix}(?P<{group}>{body}))?")
        pattern.append("$")
        found = re.match("".join(pattern), uri)
        if found is None:
            return None
        values: dict[str, str] = {}
        for group, (operator, names) in groups.items():
            raw = found.group(group)
            if raw is None:
                continue
            if operator in ("?", "&", ";"):
                separator = ";" if operator == ";" else "&"
                for key, value in parse_qsl(raw.replace(separator, "&"), keep_blank_values=True):
                    if key in names:
                        values[key] = value
                continue
            separator = {"": ",", "+": ",", "#": ",", ".": ".", "/": "/"}[operator]
            pieces = raw.split(separator) if len(names) > 1 else [raw]
            for name, piece in zip(names, pieces, strict=False):
                values[name] = piece if operator in ("+", "#") else unquote(piece)
        return values
