"""Tool descriptions as plain text: CommonMark and HTML stripped, bounded, whole in describe_tool."""

from __future__ import annotations

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
