"""Plain text from the Markdown and HTML a schema's descriptions carry."""

from __future__ import annotations

import re
import unicodedata

_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_TAG = re.compile(r"</?[a-zA-Z][^>]{0,200}>")
_EMPHASIS = re.compile(r"(\*\*|__|`+)")
_SPACE = re.compile(r"\s+")


def plain(text: str | None, limit: int = 0) -> str:
    """``text`` without Markdown links, emphasis, code ticks or HTML tags, on one line.

    ``limit`` > 0 cuts the result to that many characters (ending with ``...``).
    """
    if not text:
        return ""
    text = visible(text)
    out = _SPACE.sub(" ", _EMPHASIS.sub("", _TAG.sub("", _LINK.sub(r"\1", text)))).strip()
    if limit and len(out) > limit:
        out = out[: limit - 3].rstrip() + "..."
    return out


def visible(text: str) -> str:
    """``text`` without invisible format characters (Unicode category Cf: zero-width spaces and
    joiners, bidi overrides, the tag block U+E0000-E007F that spells hidden ASCII): a schema's
    description may not carry words its reader cannot see (SECURITY.md F2)."""
    if text.isascii():
        return text
    return "".join(char for char in text if unicodedata.category(char) != "Cf")
