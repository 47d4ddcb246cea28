"""Tool descriptions as plain text: CommonMark and HTML stripped, bounded, whole in describe_tool."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
from mcs_rest import RestDriver
from mcs_rest._text import bounded, plain_text
from rest_paths import CORPUS, NOTES

from mcs.errors import ConfigurationError

OPENAPI = CORPUS / "openapi"


def test_commonmark_loses_its_markers_keeps_link_text_and_makes_list_items_lines():
    with RestDriver(NOTES) as driver:
        tool = driver.get_tool("createNote")
    assert tool.description == (
        "Creates a note. See the guide for limits.\n- text is required\n- parent makes it a reply"
    )


def test_html_loses_its_tags_keeps_link_text_and_makes_list_items_lines():
    with RestDriver(NOTES) as driver:
        tool = driver.get_tool("getNote")
    assert tool.description == "Returns the note with the given noteId.\n- Only your own notes.\n- Deleted notes answer 404."
    assert tool.title == "Read a note"


@pytest.mark.parametrize(("text", "expected"), [
    ("1. first\n2. second", "1. first\n2. second"),
    ("# Heading\n\nBody with `code` and _emphasis_.", "Heading\nBody with code and emphasis."),
    ("Tom &amp; Jerry &lt;3", "Tom & Jerry <3"),
    ("<ol><li>one</li><li>two</li></ol>", "1. one\n2. two"),
    ("See <https://example.com/docs>.", "See https://example.com/docs."),
    ("- outer\n  - inner", "- outer\n- inner"),
    ("```\nGET /x\n```", "GET /x"),
    ("<p>a<script>alert(1)</script>b</p>", "ab"),
    ("plain   words\twith spaces", "plain words with spaces"),
])
def test_plain_text_cases(text, expected):
    assert plain_text(text) == expected


def test_bounded_cuts_at_a_word_and_marks_the_cut():
    assert bounded("alpha beta gamma delta", 100) == "alpha beta gamma delta"
    cut = bounded("alpha beta gamma delta", 14)
    assert cut == "alpha beta…" and len(cut) <= 14


def test_stripe_html_descriptions_reach_the_model_without_tags(corpus):
    with RestDriver(OPENAPI / "stripe_spec3_2022-04-12.json") as driver:
        tools = [t for t in driver.list_tools() if "method" in t.meta]
    assert not [t.name for t in tools if "<p>" in t.description or "</a>" in t.description]
    assert driver.get_tool("PostCustomers").description == "Creates a new customer object."


def test_a_long_description_is_cut_and_describe_tool_answers_with_the_whole_text(corpus):
    with RestDriver(OPENAPI / "github_api.github.com_2020-08.json", description_mode="discovery") as driver:
        long = [t for t in driver.list_tools() if "full_description" in t.meta]
        assert long, "GitHub has descriptions over the bound"
        tool = long[0]
        assert len(tool.description) <= driver.max_description_chars and tool.description.endswith("…")
        answer = driver.call_tool("describe_tool", {"name": tool.name})
    assert answer["description"] == tool.meta["full_description"]
    assert len(answer["description"]) > driver.max_description_chars
    assert "](" not in answer["description"]


def test_the_bound_is_an_option_and_a_tiny_one_is_refused():
    with RestDriver(NOTES, max_description_chars=40) as driver:
        tool = driver.get_tool("createNote")
    assert len(tool.description) <= 40 and tool.meta["full_description"].startswith("Creates a note.")
    with pytest.raises(ConfigurationError):
        RestDriver(NOTES, max_description_chars=5)


HIDDEN = "\u200b\u202e\U000e0049\U000e0047\U000e004e\U000e004f\U000e0052\U000e0045"  # zero-width, bidi, "IGNORE" in tag characters


def _invisible(text: str) -> list[str]:
    return [f"U+{ord(c):04X}" for c in text if unicodedata.category(c) == "Cf"]


def test_descriptions_from_the_spec_carry_no_invisible_characters(tmp_path: Path) -> None:
    (tmp_path / "hidden.yaml").write_text(f"""openapi: 3.0.3
info: {{title: Hidden, version: "1"}}
paths:
  /notes/{{id}}:
    post:
      operationId: saveNote
      summary: Save{HIDDEN} a note
      description: "Saves the note{HIDDEN}. Entity form too: &#x200B;done."
      parameters:
        - {{name: id, in: path, required: true, description: "The id{HIDDEN}.", schema: {{type: string}}}}
      requestBody:
        description: The note{HIDDEN}.
        content:
          application/json:
            schema:
              type: object
              properties:
                text: {{type: string, description: "Its text{HIDDEN}."}}
                owner: {{$ref: "#/components/schemas/Owner", description: "Who{HIDDEN}."}}
      responses: {{"200": {{description: ok}}}}
components:
  schemas:
    Owner: {{type: object, description: "An owner{HIDDEN}.", properties: {{name: {{type: string}}}}}}
""", encoding="utf-8")
    with RestDriver(tmp_path / "hidden.yaml", base_url="http://127.0.0.1:9") as driver:
        tool = driver.get_tool("saveNote")
        shown = [tool.description, tool.title or "", json.dumps(tool.input_schema, ensure_ascii=False),
                 driver.get_function_description()]
    assert "Saves the note." in shown[0] and "The id." in shown[2] and "Its text." in shown[2]
    assert [_invisible(text) for text in shown] == [[], [], [], []]
