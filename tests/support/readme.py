"""README's code blocks, in order, each with the heading it sits under."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"
_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
_HEADING = re.compile(r"^#+ (.+)$", re.MULTILINE)


@dataclass(frozen=True)
class Block:
    heading: str
    language: str
    code: str


def readme_blocks(language: str, path: Path = README) -> list[Block]:
    """Every fenced block of ``language`` in ``path``, in order."""
    text = path.read_text(encoding="utf-8")
    headings = [(m.start(), m.group(1).strip()) for m in _HEADING.finditer(text)]
    blocks = []
    for match in _BLOCK.finditer(text):
        if match.group(1) != language:
            continue
        heading = next((h for start, h in reversed(headings) if start < match.start()), "")
        blocks.append(Block(heading, match.group(1), match.group(2)))
    return blocks
