"""Pythonic calls, read with ast and never evaluated."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcs import parse_tool_calls
from mcs.tools import ToolCall

TWO_PLAYS = [
    ToolCall("spotify.play", {"artist": "Taylor Swift", "duration": 20}),
    ToolCall("spotify.play", {"artist": "Maroon 5", "duration": 15}),
]


@pytest.mark.parametrize(
    "text",
    [
        "[spotify.play(artist='Taylor Swift', duration=20), spotify.play(artist='Maroon 5', duration=15)]",
        "```python\n[spotify.play(artist='Taylor Swift', duration=20), spotify.play(artist='Maroon 5', duration=15)]\n```",
        "spotify.play(artist='Taylor Swift', duration=20), spotify.play(artist='Maroon 5', duration=15)",
        "spotify.play(artist='Taylor Swift', duration=20); spotify.play(artist='Maroon 5', duration=15);",
        "spotify.play(artist='Taylor Swift', duration=20)\nspotify.play(artist='Maroon 5', duration=15)",
        "['spotify.play(artist=\"Taylor Swift\", duration=20)', 'spotify.play(artist=\"Maroon 5\", duration=15)']",
        "[spotify.play(artist='Taylor Swift', duration=20), spotify.play(artist='Maroon 5', duration=15)]<|eot_id|>",
    ],
    ids=["list", "python-fence", "no-brackets", "semicolons", "one-per-line", "quoted-call-strings", "eot-token"],
)
def test_pythonic_variants(text: str) -> None:
    assert parse_tool_calls(text) == TWO_PLAYS


def test_positional_dict_is_the_arguments() -> None:
    text = "[calc_binomial_probability({'n': 30, 'k': 15, 'p': 0.5})]"
    assert parse_tool_calls(text) == [ToolCall("calc_binomial_probability", {"n": 30, "k": 15, "p": 0.5})]


def test_other_positional_arguments_cannot_be_named_so_no_call() -> None:
    assert parse_tool_calls("[math.hypot(4, 5)]") == []


def test_literals_and_json_words_are_converted() -> None:
    text = "f(a=True, b=None, c=(1, 2), d={'k': [1.5]}, e=true, g=null)"
    assert parse_tool_calls(text) == [
        ToolCall("f", {"a": True, "b": None, "c": [1, 2], "d": {"k": [1.5]}, "e": True, "g": None})
    ]


def test_expressions_are_kept_as_text_for_validation_to_judge() -> None:
    assert parse_tool_calls("[plot_sine_wave(start_range=0, end_range=2*pi, data=my_data)]") == [
        ToolCall("plot_sine_wave", {"start_range": 0, "end_range": "2 * pi", "data": "my_data"})
    ]


def test_nothing_is_ever_evaluated(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    text = f"run(cmd=__import__('os').system('touch {marker}'))"
    calls = parse_tool_calls(text)
    assert not marker.exists()
    assert calls == [ToolCall("run", {"cmd": f"__import__('os').system('touch {marker}')"})]


def test_unescaped_apostrophe_inside_single_quotes_is_repaired() -> None:
    text = "[send_email(to='john.doe@example.com', subject='Meeting', body='Let's meet at 10 AM tomorrow')]"
    assert parse_tool_calls(text) == [
        ToolCall("send_email", {"to": "john.doe@example.com", "subject": "Meeting", "body": "Let's meet at 10 AM tomorrow"})
    ]


def test_markdown_escaped_underscores_in_names_and_keywords() -> None:
    assert parse_tool_calls("[solve\\_quadratic\\_equation(a=2, b=6, c=5)]") == [
        ToolCall("solve_quadratic_equation", {"a": 2, "b": 6, "c": 5})
    ]


def test_quoted_name_call() -> None:
    assert parse_tool_calls("['math.factorial'(number=5)]") == [ToolCall("math.factorial", {"number": 5})]


def test_gemini_print_default_api_wrapper_is_unwrapped() -> None:
    text = "```python\nprint(default_api.number_theory_gcd(number1=36, number2=48))\n```"
    assert parse_tool_calls(text) == [ToolCall("number_theory_gcd", {"number1": 36, "number2": 48})]


def test_call_after_prose_and_before_explanation() -> None:
    text = (
        "Based on the question, I would make the following function call:\n\n"
        "[calculate_triangle_area(base=10, height=5)]\n\nThe above line computes the area."
    )
    assert parse_tool_calls(text) == [ToolCall("calculate_triangle_area", {"base": 10, "height": 5})]


def test_a_call_on_its_own_line_is_dropped_when_known_names_say_it_is_not_a_tool() -> None:
    text = "Let me check both.\nround(x=2.5)\nget_weather(location='Paris')"
    assert parse_tool_calls(text) == [ToolCall("round", {"x": 2.5}), ToolCall("get_weather", {"location": "Paris"})]
    assert parse_tool_calls(text, known_names={"get_weather"}) == [ToolCall("get_weather", {"location": "Paris"})]


def test_a_call_inside_a_sentence_is_a_mention_not_a_call() -> None:
    text = "You could compute it with round(x=2.5) and then call get_weather(location='Paris')."
    assert parse_tool_calls(text, known_names={"get_weather"}) == []


def test_unparseable_keyword_value_is_kept_as_text() -> None:
    text = "[calculate_stock_return(investment\\_amount=$5000, annual\\_growth\\_rate=0.06, holding\\_period=5)]"
    assert parse_tool_calls(text) == [
        ToolCall("calculate_stock_return", {"investment_amount": "$5000", "annual_growth_rate": 0.06, "holding_period": 5})
    ]
