"""docs/prompts.md's table of shipped templates says what the template files say."""

from __future__ import annotations

import re
from pathlib import Path

from mcs.prompts import PromptRegistry

DOCS = Path(__file__).resolve().parents[2] / "docs" / "prompts.md"
ROW = re.compile(r"^\| `(?P<name>\w+)`\s*\| (?P<globs>[^|]*) \|[^|]*\| `(?P<style>\w+)` \|$")


def _documented_rows() -> dict[str, tuple[tuple[str, ...], str]]:
    text = DOCS.read_text(encoding="utf-8")
    section = text.split("## Shipped templates", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        match = ROW.match(line)
        if match:
            globs = tuple(re.findall(r"`([^`]+)`", match["globs"]))
            rows[match["name"]] = (globs, match["style"])
    return rows


def test_the_docs_table_lists_every_shipped_template_with_all_its_globs_and_its_style() -> None:
    shipped = PromptRegistry.shipped()
    documented = _documented_rows()
    assert sorted(documented) == sorted(shipped.names())
    for name, (globs, style) in documented.items():
        template = shipped.get(name)
        assert template is not None, name
        assert style == template.description_style, name
        assert globs == tuple(template.globs), name
