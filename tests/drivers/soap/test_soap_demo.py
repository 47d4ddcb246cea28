"""`make demo-soap` (python -m mcs_soap.demo) makes real SOAP calls on loopback and prints them."""

from __future__ import annotations

import httpx
import pytest
from mcs_soap import demo


def test_the_demo_prints_the_prompt_results_and_a_fault(capsys):
    demo.main()
    out = capsys.readouterr().out
    assert "== System prompt for gpt-4o ==" in out and "Adds two integers." in out
    results = out.split("== Result of the real SOAP call ==\n")[1:]
    assert [r.split("\n", 1)[0] for r in results] == ["42", '"2.5"']
    assert "Division by zero" in out.split("== Error for the model (EXECUTION_ERROR) ==")[1]


def test_the_demo_service_stops_after_use():
    with demo.serve_calculator() as url:
        assert httpx.get(url).status_code == 200
    with pytest.raises(httpx.ConnectError):
        httpx.get(url)
