"""Topics built from channel addresses, and the checks every topic passes before the broker.

A parameter value fills exactly one topic level. It may not hold ``+`` or ``#`` (MQTT
wildcards), ``/`` (a level separator), NUL or any other control character, or a Unicode
noncharacter (on which brokers drop the connection), and may not start with ``$`` (the
broker's own ``$SYS`` space), so a model can never widen a subscription, reach a topic the
spec does not describe, or cut the shared connection. Nor may it hold an invisible format
character (Unicode category Cf: zero-width spaces and joiners, bidi controls, U+FEFF),
unless the template allows them: such a topic looks like another one in a dry run or a
log. Allow-lists are globs
(``fnmatch``: ``*`` matches any characters, ``/`` included); a subscription filter is
checked as written, so the glob ``plant/*`` allows ``plant/+/temp`` and ``plant/#`` but
``plant/line1/temp`` allows neither.
"""

from __future__ import annotations

import fnmatch
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from mcs.errors import InvalidInputError, PolicyDeniedError

MAX_TOPIC_BYTES = 65_535  # the MQTT limit on a topic's UTF-8 length
_PARAM = re.compile(r"\{([^{}]+)\}")


# Wildcards, the level separator, C0/DEL/C1 control characters (NUL among them), line and
# paragraph separators, lone surrogates (unicodedata's Cc and Cs, plus U+2028/2029), and the
# Unicode noncharacters (U+FDD0-U+FDEF and the last two code points of every plane), which
# MQTT says a topic should not hold and on which brokers such as mosquitto drop the client.
_NONCHARACTERS = "\ufdd0-\ufdef" + "".join(f"{chr(p + 0xFFFE)}{chr(p + 0xFFFF)}" for p in range(0, 0x110000, 0x10000))
_FORBIDDEN = re.compile(f"[+#/\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff{_NONCHARACTERS}]")


def _bad_character(value: str) -> str | None:
    found = _FORBIDDEN.search(value)
    if found is None:
        return None
    char = found.group()
    if char in "+#/":
        return repr(char)
    kind = "noncharacter" if re.fullmatch(f"[{_NONCHARACTERS}]", char) else "control character"
    return f"the {kind} U+{ord(char):04X}"


def _format_character(text: str) -> str | None:
    """The first invisible format character (Unicode category Cf) of ``text``, or ``None``."""
    if text.isascii():  # no format character is ASCII
        return None
    return next((char for char in text if unicodedata.category(char) == "Cf"), None)


def level_value(name: str, value: Any, tool: str, *, format_characters: bool = False) -> str:
    """``value`` as one topic level, or ``INVALID_INPUT`` saying what is not allowed;
    ``format_characters``: whether it may hold invisible format characters (Cf)."""
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, int | float | str):
        text = str(value)
    else:
        raise InvalidInputError(f"{name} must be a single value (a string or a number), not {type(value).__name__}.",
                                tool=tool, details={"field": name})
    if not text:
        raise InvalidInputError(f"{name} must not be empty: it fills one topic level.", tool=tool,
                                details={"field": name})
    bad = _bad_character(text)
    if bad is not None:
        raise InvalidInputError(
            f"{name}={text[:80]!r} is refused: a channel parameter is one topic level and may not contain "
            f"{bad} ('+', '#', '/', NUL, control characters and Unicode noncharacters are never allowed).",
            tool=tool, details={"field": name},
        )
    if text.startswith("$"):
        raise InvalidInputError(
            f"{name}={text[:80]!r} is refused: a channel parameter may not start with '$' (broker topics).",
            tool=tool, details={"field": name},
        )
    invisible = None if format_characters else _format_character(text)
    if invisible is not None:
        code = f"U+{ord(invisible):04X}"
        named = f"{code} ({unicodedata.name(invisible)})" if unicodedata.name(invisible, "") else code
        raise InvalidInputError(
            f"{name}={text[:80]!r} is refused: it holds the invisible format character {named}, so the "
            "topic would look like another one. Give the value without it (the operator can allow such "
            "characters with the allow_format_characters option).",
            tool=tool, details={"field": name, "code_point": code},
        )
    return text


@dataclass(frozen=True, slots=True)
class TopicTemplate:
    """A channel address such as ``smartylighting/streetlights/1/0/action/{streetlightId}/dim``."""

    address: str
    names: tuple[str, ...]
    literals: tuple[str, ...]  # the text around the parameters: len(names) + 1 pieces
    pattern: re.Pattern[str]
    format_characters: bool = False  # parameter values may hold invisible format characters (Cf)

    @classmethod
    def of(cls, address: str, *, format_characters: bool = False) -> TopicTemplate:
        """The template of ``address``; its own text is configuration and is never checked."""
        pieces = _PARAM.split(address)  # literal, name, literal, name, ..., literal
        names, literals = tuple(pieces[1::2]), tuple(pieces[0::2])
        regex = "([^/]+)".join(re.escape(literal) for literal in literals)
        return cls(address, names, literals, re.compile(regex), format_characters)

    def _fill(self, values: Mapping[str, Any], tool: str, missing: str | None) -> str:
        out = [self.literals[0]]
        for name, literal in zip(self.names, self.literals[1:], strict=True):
            value = values.get(name)
            if value is None:
                if missing is None:
                    raise InvalidInputError(f"{name} is required: it fills one level of the topic {self.address}.",
                                            tool=tool, details={"field": name})
                out.append(missing)
            else:
                out.append(level_value(name, value, tool, format_characters=self.format_characters))
            out.append(literal)
        return "".join(out)

    def topic(self, values: Mapping[str, Any], tool: str) -> str:
        """The concrete topic for ``values`` (every parameter required)."""
        return self._fill(values, tool, None)

    def filter(self, values: Mapping[str, Any], tool: str) -> str:
        """A subscription filter: given parameters filled, every level that holds another one
        ``+`` (a wildcard is always a whole level: ``room-{room}`` becomes ``+``, and
        :meth:`parameters_of` then keeps only the topics of this channel)."""
        return _whole_levels(self._fill(values, tool, _MISSING))

    def wide_filter(self) -> str:
        """The filter of every value of every parameter."""
        return _whole_levels(_MISSING.join(self.literals))

    def parameters_of(self, topic: str) -> dict[str, str] | None:
        """The parameter values of a received ``topic``, or ``None`` when it is not this channel's."""
        match = self.pattern.fullmatch(topic)
        if match is None:
            return None
        return dict(zip(self.names, match.groups(), strict=True))


_MISSING = "\x00"  # an omitted parameter while a filter is built (no value may hold NUL)


def _whole_levels(filled: str) -> str:
    return "/".join("+" if _MISSING in level else level for level in filled.split("/"))


def check_size(topic: str, tool: str) -> None:
    """Refuse a topic or filter longer than MQTT's 65,535 bytes."""
    size = len(topic.encode("utf-8")) if len(topic) * 4 > MAX_TOPIC_BYTES else len(topic)
    if size > MAX_TOPIC_BYTES:
        raise InvalidInputError(
            f"The topic would be {size} bytes; MQTT allows {MAX_TOPIC_BYTES}.", tool=tool,
            details={"topic_bytes": size},
        )


def covers(wide: str, narrow: str) -> bool:
    """Whether every topic the filter ``narrow`` matches is also matched by ``wide``
    (MQTT filter semantics: ``+`` is one level, a final ``#`` the parent and every level
    below it)."""
    wide_levels, narrow_levels = wide.split("/"), narrow.split("/")
    if wide_levels[0] in ("+", "#") and narrow.startswith("$"):
        return False  # a wildcard first level never matches the broker's own $ topics
    for index, level in enumerate(wide_levels):
        if level == "#":
            return True
        if index >= len(narrow_levels):
            return False
        other = narrow_levels[index]
        if other == "#" or (level != "+" and level != other):
            return False
    return len(wide_levels) == len(narrow_levels)


#: What a publish topic may never hold: the wildcards and NUL.
NOT_IN_PUBLISH_TOPICS = ("+", "#", "\x00")


def check_publish_topic(topic: str, tool: str) -> None:
    """Refuse what no broker should receive as a publish topic (wildcards, NUL, oversize)."""
    check_size(topic, tool)
    if not topic or any(c in topic for c in NOT_IN_PUBLISH_TOPICS):
        raise InvalidInputError(f"{topic[:120]!r} is not a topic one can publish to.", tool=tool)


class AllowList:
    """Topic globs; ``None`` allows everything the spec describes."""

    def __init__(self, globs: Iterable[str] | None, kind: str) -> None:
        self.kind = kind
        self.globs: tuple[str, ...] | None = None if globs is None else tuple(globs)
        self._patterns = None if self.globs is None else [re.compile(fnmatch.translate(g)) for g in self.globs]

    def allows(self, topic: str) -> bool:
        return self._patterns is None or any(p.match(topic) for p in self._patterns)

    def check(self, topic: str, tool: str) -> None:
        """``POLICY_DENIED`` when ``topic`` (a topic or a filter) matches no glob."""
        if not self.allows(topic):
            shown = topic if len(topic) <= 200 else topic[:200] + "..."
            raise PolicyDeniedError(
                f"{self.kind} to {shown!r} is not allowed by this driver's {self.kind.lower()} allow-list "
                f"({', '.join(self.globs or ())}).",
                tool=tool, details={"topic": shown, "allowed": list(self.globs or ())},
            )
