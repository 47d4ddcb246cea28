"""Real model outputs from the BFCL v1 dump, one per format, checked call by call.

Rates over all 27,000 outputs are measured in ``bench/parser.py``, not asserted here.
"""

from __future__ import annotations

from typing import Any

import pytest

from mcs import parse_tool_calls
from mcs.tools import ToolCall

BINOMIAL = [
    ToolCall("calc_binomial_probability", {"n": 10, "k": 3, "p": 0.3}),
    ToolCall("calc_binomial_probability", {"n": 15, "k": 5, "p": 0.3}),
    ToolCall("calc_binomial_probability", {"n": 20, "k": 7, "p": 0.3}),
]
PLAYS = [
    ToolCall("spotify.play", {"artist": "Taylor Swift", "duration": 20}),
    ToolCall("spotify.play", {"artist": "Maroon 5", "duration": 15}),
]
TRIANGLE = [ToolCall("calculate_triangle_area", {"base": 10, "height": 5})]
TRIANGLE_UNITS = [ToolCall("calculate_triangle_area", {"base": 10, "height": 5, "unit": "units"})]

CASES = [
    # (model, category, id, known names, expected calls)
    ("NousResearch_Hermes-2-Pro-Llama-3-8B", "parallel_function", "parallel_function_0", ["spotify.play"], PLAYS),
    ("NousResearch_Hermes-2-Theta-Llama-3-70B", "simple", "simple_0", ["calculate_triangle_area"], TRIANGLE_UNITS),
    ("Salesforce_xLAM-1b-fc-r", "executable_parallel_function", "executable_parallel_function_0",
     ["calc_binomial_probability"], BINOMIAL),
    ("THUDM_glm-4-9b-chat", "simple", "simple_0", ["calculate_triangle_area"], TRIANGLE),
    ("THUDM_glm-4-9b-chat", "simple", "simple_114", ["prob_dist.binomial"],
     [ToolCall("prob_dist.binomial", {"p": 0.5, "successes": 5, "trials": 10})]),
    ("gpt-4o-2024-08-06-FC", "parallel_function", "parallel_function_0", ["spotify.play"], PLAYS),
    ("command-r-plus-FC", "simple", "simple_0", ["calculate_triangle_area"], TRIANGLE_UNITS),
    ("mistral-tiny-2312", "simple", "simple_0", ["calculate_triangle_area"], TRIANGLE),
    ("mistral-medium-2312", "executable_parallel_function", "executable_parallel_function_0",
     ["calc_binomial_probability"], BINOMIAL),
    ("gorilla-openfunctions-v2", "executable_parallel_function", "executable_parallel_function_0",
     ["calc_binomial_probability"], BINOMIAL),
    ("Nexusflow-Raven-v2", "executable_parallel_function", "executable_parallel_function_0",
     ["calc_binomial_probability"], BINOMIAL),
    ("open-mistral-nemo-2407", "executable_parallel_function", "executable_parallel_function_0",
     ["calc_binomial_probability"], BINOMIAL),
    ("meta-llama_Meta-Llama-3-8B-Instruct", "simple", "simple_0", ["calculate_triangle_area"], TRIANGLE),
    ("claude-3-opus-20240229", "executable_parallel_function", "executable_parallel_function_30",
     ["get_zipcode_by_ip_address"], [ToolCall("get_zipcode_by_ip_address", {"ip_address": "203.0.113.0"})]),
    ("gemini-1.5-pro-preview-0514", "simple", "simple_21", ["number_theory.gcd"],
     [ToolCall("number_theory.gcd", {"number1": 36, "number2": 48})]),
    ("deepseek-ai_deepseek-coder-6.7b-instruct", "simple", "simple_0", ["calculate_triangle_area"], TRIANGLE_UNITS),
    ("gemini-1.5-flash-preview-0514", "simple", "simple_61", ["diabetes_prediction"], []),
]


@pytest.mark.parametrize(
    ("model", "category", "ident", "known", "expected"),
    CASES,
    ids=[f"{model}-{ident}" for model, _, ident, _, _ in CASES],
)
def test_real_output_with_the_question_functions_as_known_names(
    bfcl: Any, model: str, category: str, ident: str, known: list[str], expected: list[ToolCall]
) -> None:
    assert parse_tool_calls(bfcl.result(model, category, ident), known_names=known) == expected


def test_glm_bare_output_needs_known_names(bfcl: Any) -> None:
    assert parse_tool_calls(bfcl.result("THUDM_glm-4-9b-chat", "simple", "simple_0")) == []


def test_fc_dump_without_known_names_keeps_the_provider_name(bfcl: Any) -> None:
    calls = parse_tool_calls(bfcl.result("gpt-4o-2024-08-06-FC", "parallel_function", "parallel_function_0"))
    assert [call.name for call in calls] == ["spotify_play", "spotify_play"]


def test_code_the_model_rambles_on_with_after_its_call_is_not_called(bfcl: Any) -> None:
    output = bfcl.result("deepseek-ai_deepseek-coder-6.7b-instruct", "simple", "simple_0")
    assert "main()" in output and "unittest.main()" in output
    assert parse_tool_calls(output) == TRIANGLE_UNITS  # not main(), unittest.main() or the f-string
    assert parse_tool_calls(output, known_names={"calculate_triangle_area"}) == TRIANGLE_UNITS
