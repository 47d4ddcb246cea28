"""OpenAPI descriptions as plain text for a model to read.

OpenAPI descriptions are CommonMark (GitHub's) and, in practice, HTML too (Stripe's are
``<p>...</p>``). A model needs neither the markup nor the tokens it costs. :func:`plain_text`
parses CommonMark with markdown-it-py and HTML with the standard library's parser, and
keeps what reads as text:

* emphasis, code spans and headings lose their markers, keeping their words;
* a link keeps its text (an autolink or a bare URL stays the URL);
* list items become lines starting ``- `` (``1. `` when ordered; nested ones too), paragraphs are
  separated by a line break, code blocks keep their lines;
* entities are decoded (``&amp;`` is ``&``) and runs of spaces collapse;
* invisible format characters (zero-width, bidi, tag block) go, so no description carries
  words its reader cannot see.

:func:`bounded` cuts a text at ``limit`` characters, at a word boundary, with ``…``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from html.parser import HTMLParser
from typing import TYPE_CHECKING, Any

from mcs.tools import visible_text

if TYPE_CHECKING:
    from markdown_it.token import Token

# Text without any of these reads the same before and after conversion: HTML and autolinks,
# emphasis and code, links and images, entities, escapes, and block markers at a line start
# (headings, quotes, list items, fences, indented code). An underscore inside a word is no markup.
_MARKUP = re.compile(
    r"[<*`\[\\]|(?<!\w)_|_(?!\w)|&#?\w+;|^[ \t]*(#|>|\d+[.)][ \t]|[-+][ \t]|~~~)|^ {4}|\t",
    re.MULTILINE,
)
_SPACES = re.compile(r"[ \t\f\v\r]+")
_BLOCK_TAGS = frozenset({
    "p", "div", "br", "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "table",
    "tr", "blockquote", "dl", "dt", "dd", "hr", "section", "article", "header", "footer",
})
_SKIPPED_TAGS = frozenset({"script", "style", "head", "template"})


class _HtmlText(HTMLParser):
    """HTML to text: block elements end lines, ``<li>`` starts a ``- `` line, the rest is text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skipping = 0
        self._ordered: list[int | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED_TAGS:
            self._skipping += 1
        elif tag in ("ul", "ol"):
            self._ordered.append(0 if tag == "ol" else None)
            self.parts.append("\n")
        elif tag == "li":
            counter = self._ordered[-1] if self._ordered else None
            if counter is not None:
                self._ordered[-1] = counter + 1
                self.parts.append(f"\n{counter + 1}. ")
            else:
                self.parts.append("\n- ")
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")
        elif tag == "td" or tag == "th":
            self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED_TAGS:
            self._skipping = max(0, self._skipping - 1)
        elif tag in ("ul", "ol"):
            if self._ordered:
                self._ordered.pop()
            self.parts.append("\n")
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.parts.append(data)


def html_text(html: str) -> str:
    """The text of an HTML fragment, block elements on their own lines."""
    parser = _HtmlText()
    parser.feed(html)
    parser.close()
    return "".join(parser.parts)


@lru_cache(maxsize=1)
def _markdown() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark")


def _inline(children: list[Token]) -> str:
    out: list[str] = []
    for token in children:
        kind = token.type
        if kind in ("text", "code_inline"):
            out.append(token.content)
        elif kind == "softbreak":
            out.append(" ")
        elif kind == "hardbreak":
            out.append("\n")
        elif kind == "image":
            out.append(token.content or "")
        elif kind == "html_inline":
            out.append(html_text(token.content))
    return "".join(out)


def _markdown_text(text: str) -> str:
    lines: list[str] = []
    lists: list[int | None] = []  # the counter of each open list (None: bullets)
    item_start = False
    for token in _markdown().parse(text):
        kind = token.type
        if kind in ("bullet_list_open", "ordered_list_open"):
            start = token.attrGet("start")
            lists.append(None if kind == "bullet_list_open" else int(start or 1) - 1)
        elif kind in ("bullet_list_close", "ordered_list_close"):
            if lists:
                lists.pop()
        elif kind == "list_item_open":
            item_start = True
        elif kind == "inline":
            content = _inline(token.children or [])
            if item_start and lists:
                counter = lists[-1]
                if counter is None:
                    marker = "- "
                else:
                    lists[-1] = counter + 1
                    marker = f"{counter + 1}. "
                content = marker + content
                item_start = False
            lines.append(content)
        elif kind in ("fence", "code_block"):
            lines.append(token.content.rstrip("\n"))
        elif kind == "html_block":
            lines.append(html_text(token.content))
    return "\n".join(lines)


def plain_text(text: str) -> str:
    """``text`` (CommonMark, HTML, or both) as plain text; see the module docstring.

    The result has no invisible format characters (:func:`mcs.tools.visible_text`), also
    none that an entity such as ``&#x200B;`` spelled."""
    if not text:
        return ""
    converted = visible_text(text if _MARKUP.search(text) is None else _markdown_text(text))
    lines = (_SPACES.sub(" ", line).strip() for line in converted.split("\n"))
    return "\n".join(line for line in lines if line)


def bounded(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters at a word boundary, ending in ``…``."""
    if len(text) <= limit:
        return text
    cut = text[: max(1, limit - 1)]
    space = max(cut.rfind(" "), cut.rfind("\n"))
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip(" \n,;:") + "…"


__all__ = ["bounded", "html_text", "plain_text"]
