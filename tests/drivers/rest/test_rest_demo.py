"""`make demo` (python -m mcs_rest.demo) makes real HTTP calls on loopback and prints them."""

from __future__ import annotations

import json

from mcs_rest import demo


def test_the_demo_prints_the_prompt_and_the_results_of_real_calls(capsys):
    demo.main()
    capsys.readouterr()
    demo.main()  # a second run starts from a fresh shop
    out = capsys.readouterr().out
    assert "== System prompt for gpt-4o ==" in out
    assert '"addPet"' in out
    results = out.split("== Result of the real HTTP call ==\n")[1:]
    assert len(results) == 2
    added = json.loads(results[0].split("\n\n")[0])
    assert added == {"id": 2, "name": "Rex", "species": "dog", "age": 3}
    listed = json.loads(results[1].split("\n\n")[0])
    assert listed == [added]


def test_the_demo_server_stops_after_use():
    import httpx
    import pytest

    with demo.serve_shop() as url:
        assert httpx.get(url + "/pets").status_code == 200
    with pytest.raises(httpx.ConnectError):
        httpx.get(url + "/pets")
