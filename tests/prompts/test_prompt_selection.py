"""Which template serves which model name."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import mcs
from mcs.prompts import (
    PromptRegistry,
    PromptTemplate,
    TemplateError,
    UnknownModelWarning,
    default_registry,
    glob_specificity,
)


@mcs.tool
def get_weather(city: str) -> str:
    """Current weather for a city."""
    return f"sunny in {city}"


def _template(name: str, *globs: str, marker: str | None = None) -> PromptTemplate:
    return PromptTemplate(
        name=name,
        globs=globs,
        call_format="mcs_json",
        body=f"{marker or name.upper()}\n{{function_description}}",
    )


SELECTION_TABLE = [
    # OpenAI
    ("gpt-4o", "openai"),
    ("gpt-4o-mini-2024-07-18", "openai"),
    ("GPT-4.1", "openai"),
    ("gpt-5", "openai"),
    ("chatgpt-4o-latest", "openai"),
    ("o1-mini", "openai"),
    ("o3", "openai"),
    ("o4-mini-high", "openai"),
    ("gpt-oss-20b", "openai"),
    ("openai/gpt-oss-120b", "openai"),
    # Anthropic
    ("claude-3-5-sonnet", "claude"),
    ("claude-3-5-sonnet-20241022", "claude"),
    ("claude-opus-4-1", "claude"),
    ("anthropic/claude-3.5-sonnet", "claude"),
    ("us.anthropic.claude-3-7-sonnet-20250219-v1:0", "claude"),
    # Meta Llama
    ("llama-3.1-8b-instant", "llama3"),
    ("llama3.1:8b", "llama3"),
    ("llama3.2", "llama3"),
    ("meta-llama/Llama-3.3-70B-Instruct", "llama3"),
    ("meta-llama/Meta-Llama-3-8B-Instruct", "llama3"),
    ("accounts/fireworks/models/llama-v3p1-8b-instruct", "llama3"),
    ("meta-llama/Llama-4-Scout-17B-16E-Instruct", "llama4"),
    ("llama4:maverick", "llama4"),
    # Hermes / Qwen: a Hermes fine-tune of Llama or Mistral speaks Hermes
    ("NousResearch/Hermes-3-Llama-3.1-8B", "hermes"),
    ("Hermes-2-Pro-Mistral-7B", "hermes"),
    ("hermes3:8b", "hermes"),
    ("qwen2.5:7b", "hermes"),
    ("Qwen/Qwen2.5-72B-Instruct", "hermes"),
    ("qwen3-coder-30b", "hermes"),
    ("QwQ-32B", "hermes"),
    # Mistral
    ("mistral-large-latest", "mistral"),
    ("mistralai/Mistral-7B-Instruct-v0.3", "mistral"),
    ("open-mixtral-8x22b", "mistral"),
    ("ministral-8b-latest", "mistral"),
    ("codestral-2501", "mistral"),
    ("devstral-small-2505", "mistral"),
    ("dolphin-mixtral:8x7b", "mistral"),
    # Google
    ("gemini-1.5-pro", "gemini"),
    ("gemini-2.5-flash", "gemini"),
    ("models/gemini-2.0-flash", "gemini"),
    ("gemma3:4b", "gemma"),
    ("google/gemma-2-9b-it", "gemma"),
    # Everything else
    ("deepseek-r1", "default"),
    ("phi-4", "default"),
    ("my-private-finetune", "default"),
]


@pytest.mark.parametrize(("model_name", "expected"), SELECTION_TABLE)
def test_the_shipped_registry_picks_the_family_template(model_name: str, expected: str) -> None:
    assert default_registry().select(model_name).name == expected


@pytest.mark.parametrize("model_name", [None, "", "   "])
def test_no_model_name_gets_the_default_template(model_name: str | None) -> None:
    assert default_registry().select(model_name).name == "default"


def test_a_function_driver_gives_claude_the_claude_prompt_and_others_the_default() -> None:
    driver = mcs.FunctionDriver([get_weather])
    claude = driver.get_driver_system_message("claude-3-5-sonnet")
    unknown = driver.get_driver_system_message("some-unknown-model")
    assert claude.startswith(default_registry().get("claude").body.split("{")[0])  # type: ignore[union-attr]
    assert "<tools>" in claude and "get_weather" in claude
    assert unknown.startswith(default_registry().get("default").body.split("{")[0])  # type: ignore[union-attr]
    assert "<tools>" not in unknown and "get_weather" in unknown


def test_more_literal_characters_make_a_glob_more_specific() -> None:
    ordered = ["*", "c*", "claude-*", "claude-3-5*", "claude-3-5-sonnet"]
    scores = [glob_specificity(glob) for glob in ordered]
    assert scores == sorted(scores)
    assert len(set(scores)) == len(scores)


def test_fewer_wildcards_then_a_longer_prefix_break_ties_between_globs() -> None:
    assert glob_specificity("qwen*") > glob_specificity("*qwen*")  # one wildcard fewer
    assert glob_specificity("qwen?") > glob_specificity("*qwen*")
    assert glob_specificity("ab*c") > glob_specificity("a*bc")  # same counts, longer prefix
    assert glob_specificity("[Qq]wen*") == (3, -2, 0)  # a character class is one wildcard


def test_the_most_specific_glob_wins_whatever_the_registration_order() -> None:
    for order in (("broad", "narrow"), ("narrow", "broad")):
        templates = {
            "broad": _template("broad", "claude-*"),
            "narrow": _template("narrow", "claude-3-5*"),
        }
        registry = PromptRegistry([_template("default", "*"), *(templates[n] for n in order)])
        assert registry.select("claude-3-5-haiku").name == "narrow"
        assert registry.select("claude-3-opus").name == "broad"
        assert registry.select("gpt-4o").name == "default"


def test_matching_ignores_case_on_both_sides() -> None:
    registry = PromptRegistry([_template("default", "*"), _template("qwen", "Qwen*")])
    assert registry.select("QWEN2.5").name == "qwen"
    assert registry.select("qwen2.5").name == "qwen"


def test_a_tie_goes_to_the_template_added_last() -> None:
    registry = PromptRegistry([_template("default", "*"), _template("first", "gpt-*")])
    registry.add(_template("second", "gpt-*"))
    assert registry.select("gpt-4o").name == "second"
    registry.add(_template("first", "gpt-*"))  # re-adding counts as the latest
    assert registry.select("gpt-4o").name == "first"


def test_a_registry_without_a_default_template_says_what_is_missing() -> None:
    registry = PromptRegistry([_template("claude", "claude-*")])
    assert registry.select("claude-3").name == "claude"
    with pytest.raises(TemplateError, match="no 'default' template") as raised:
        registry.select("gpt-4o")
    assert isinstance(raised.value, ValueError)


def test_a_user_template_with_a_shipped_name_overrides_it() -> None:
    registry = default_registry().copy()
    registry.add(_template("claude", "claude-*", marker="MY CLAUDE PROMPT"))
    driver = mcs.FunctionDriver([get_weather], prompt_templates=registry)
    message = driver.get_driver_system_message("claude-3-5-sonnet")
    assert message.startswith("MY CLAUDE PROMPT\n")
    assert "get_weather" in message
    # the copy left the process-wide registry alone
    assert default_registry().get("claude") is not registry.get("claude")
    assert not mcs.FunctionDriver([get_weather]).get_driver_system_message(
        "claude-3-5-sonnet"
    ).startswith("MY CLAUDE PROMPT")


def test_a_user_template_with_a_narrower_glob_wins_over_the_shipped_family() -> None:
    registry = default_registry().copy()
    registry.add(_template("sonnet-only", "claude-3-5-sonnet*", marker="SONNET"))
    assert registry.select("claude-3-5-sonnet-20241022").name == "sonnet-only"
    assert registry.select("claude-3-opus").name == "claude"


def test_a_user_folder_of_templates_overrides_the_shipped_ones(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "mine.md").write_text(
        "---\nname: default\nglobs: ['*']\ncall_format: mcs_json\n---\nMINE {driver_name}\n{function_description}\n",
        encoding="utf-8",
    )
    registry = default_registry().copy()
    loaded = registry.load_dir(tmp_path)
    assert [t.name for t in loaded] == ["default"]
    assert registry.select("unknown-model").body.startswith("MINE")
    assert registry.select("gpt-4o").name == "openai"  # families without an override stay


def test_a_misspelt_model_name_gets_the_default_template_and_a_warning_naming_the_family() -> None:
    registry = default_registry()
    with pytest.warns(UnknownModelWarning, match=r"model 'gtp-4o' \(did you mean a gpt-\* model\?\); the default"):
        assert registry.select("gtp-4o").name == "default"
    with pytest.warns(UnknownModelWarning, match=r"model 'claud-3-opus' \(did you mean a claude-\* model\?\)"):
        assert registry.select("claud-3-opus").name == "default"


MISSPELT_MODEL_SCRIPT = """\
from mcs.demo import DemoDriver
driver = DemoDriver()
driver.get_driver_system_message("gtp-4o")
"""


def test_a_system_message_for_a_misspelt_model_warns_once_at_the_callers_line(tmp_path: Path) -> None:
    script = tmp_path / "app.py"
    script.write_text(MISSPELT_MODEL_SCRIPT)
    done = subprocess.run([sys.executable, "-W", "default", str(script)], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    warned = [line for line in done.stderr.splitlines() if "UnknownModelWarning" in line]
    assert warned == [f"{script}:3: UnknownModelWarning: no prompt template is made for model 'gtp-4o' "
                      "(did you mean a gpt-* model?); the default template (MCS JSON calls) is used"]


@pytest.mark.parametrize("model", ["gpt-4o", None, "deepseek-v3", "phi-4", "my-private-finetune"])
def test_a_known_family_an_unknown_one_or_no_model_selects_without_a_warning(model: str | None) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        default_registry().select(model)
