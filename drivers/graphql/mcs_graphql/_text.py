"""Plain text from the Markdown and HTML a schema's descriptions carry."""

from __future__ import annotations

import re

from mcs.tools import visible_text

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
    text = visible_text(text)
    out = _SPACE.sub(" ", _EMPHASIS.sub("", _TAG.sub("", _LINK.sub(r"\1", text)))).strip()
    if limit and len(out) > limit:
        out = out[: limit - 3].rstrip() + "..."
    return out


