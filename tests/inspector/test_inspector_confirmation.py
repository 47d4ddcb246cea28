"""A write runs from the inspector only with the confirmation of exactly what the person was
shown: through the real HTTP app, in front of a real MCP server (``interfaces_server.py``
over stdio) whose ``edit_line`` changes a file it keeps and records every call."""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from inspect_support import INTERFACES_SERVER
from mcs_mcp.client_driver import MCPDriver

from mcs.inspector import InspectorServer

MAIN = "/src/main.py"


@pytest.fixture
def editor(tmp_path: Path) -> Iterator[tuple[httpx.Client, Path]]:
    record = tmp_path / "calls.jsonl"
    with MCPDriver(command=sys.executable, args=[str(INTERFACES_SERVER), "--record", str(record)]) as driver, \
            InspectorServer(driver) as server, httpx.Client(base_url=server.url, timeout=30) as client:
        yield client, record


def _edits(record: Path) -> list[dict[str, Any]]:
    if not record.exists():
        return []
    calls = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines() if line]
    return [c["arguments"] for c in calls if c["tool"] == "edit_line"]


def _content(client: httpx.Client) -> str:
    return str(client.post("api/call", json={"tool": "open_file", "arguments": {"path": MAIN}}).json()["result"]["content"])


def _save(lines: dict[int, str]) -> dict[str, Any]:
    """The editor's Save of these changed lines: one edit_line call per line."""
    return {"calls": [{"tool": "edit_line", "arguments": {"path": MAIN, "line": n, "text": t}} for n, t in lines.items()]}


def test_save_runs_only_with_the_confirmation_of_the_lines_it_showed(editor: tuple[httpx.Client, Path]) -> None:
    client, record = editor
    shown = _save({2: "print('inspector')"})
    asked = client.post("api/calls", json=shown)
    assert asked.status_code == 409 and asked.json()["error"] == "CONFIRMATION_REQUIRED"
    assert asked.json()["tools"] == ["edit_line"]
    assert asked.json()["preview"] == shown  # the server shows exactly what will run
    confirmation = asked.json()["confirmation"]

    # The same confirmation with other content (a line the person never saw) runs nothing.
    other = _save({1: "import os; os.remove('x')", 2: "print('inspector')"})
    again = client.post("api/calls", json={**other, "confirmation": confirmation})
    assert again.status_code == 409 and again.json()["preview"] == other
    assert again.json()["confirmation"] != confirmation  # that content needs its own
    assert _edits(record) == []

    done = client.post("api/calls", json={**shown, "confirmation": confirmation}).json()
    assert [(o["tool"], o["ok"]) for o in done["outcomes"]] == [("edit_line", True)]
    assert _edits(record) == [{"path": MAIN, "line": 2, "text": "print('inspector')"}]
    assert _content(client) == "print('hello')\nprint('inspector')\n"


def test_a_bare_confirmed_flag_or_a_made_up_hash_runs_no_write(editor: tuple[httpx.Client, Path]) -> None:
    client, record = editor
    one = {"tool": "edit_line", "arguments": {"path": MAIN, "line": 2, "text": "print('x')"}}
    assert client.post("api/call", json={**one, "confirmed": True}).status_code == 409
    guessed = hashlib.sha256(json.dumps(one, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    assert client.post("api/call", json={**one, "confirmation": guessed}).status_code == 409
    shown = _save({2: "print('x')"})
    assert client.post("api/calls", json={**shown, "confirmed": True}).status_code == 409
    assert _edits(record) == []


def test_a_confirmation_fits_one_call_only(editor: tuple[httpx.Client, Path]) -> None:
    client, record = editor
    first = {"tool": "edit_line", "arguments": {"path": MAIN, "line": 1, "text": "print('one')"}}
    confirmation = client.post("api/call", json=first).json()["confirmation"]
    changed = {"tool": "edit_line", "arguments": {"path": MAIN, "line": 1, "text": "print('two')"}}
    assert client.post("api/call", json={**changed, "confirmation": confirmation}).status_code == 409
    # A one-call confirmation is not the Save of that same line either: the preview differs.
    as_save = {"calls": [first], "confirmation": confirmation}
    assert client.post("api/calls", json=as_save).status_code == 409
    assert _edits(record) == []
    assert client.post("api/call", json={**first, "confirmation": confirmation}).json()["ok"]
    assert _edits(record) == [first["arguments"]]


def test_save_stops_at_the_first_line_that_fails_and_reads_run_without_asking(editor: tuple[httpx.Client, Path]) -> None:
    client, record = editor
    shown = {"calls": [{"tool": "edit_line", "arguments": {"path": MAIN, "line": 1, "text": "a"}},
                       {"tool": "edit_line", "arguments": {"path": "/no/such.py", "line": 1, "text": "b"}},
                       {"tool": "edit_line", "arguments": {"path": MAIN, "line": 2, "text": "c"}}]}
    confirmation = client.post("api/calls", json=shown).json()["confirmation"]
    outcomes = client.post("api/calls", json={**shown, "confirmation": confirmation}).json()["outcomes"]
    assert [o["ok"] for o in outcomes] == [True, False]
    assert [e["text"] for e in _edits(record)] == ["a", "b"]
    reads = {"calls": [{"tool": "list_dir", "arguments": {"path": "/src"}}]}
    assert client.post("api/calls", json=reads).json()["outcomes"][0]["ok"]


@pytest.mark.parametrize("body", [{}, {"calls": []}, {"calls": ["edit_line"]}, {"calls": [{"tool": 3}]},
                                  {"calls": [{"tool": "edit_line", "arguments": []}]},
                                  {"calls": [{"tool": "list_dir", "arguments": {}}], "confirmation": 1}])
def test_a_malformed_save_is_a_400_that_says_what_to_send(editor: tuple[httpx.Client, Path], body: dict[str, Any]) -> None:
    client, record = editor
    answer = client.post("api/calls", json=body)
    assert answer.status_code == 400 and answer.json()["error"] == "BAD_REQUEST"
    assert _edits(record) == []


def test_a_confirmation_runs_its_call_once(editor: tuple[httpx.Client, Path]) -> None:
    client, record = editor
    one = {"tool": "edit_line", "arguments": {"path": MAIN, "line": 1, "text": "print('once')"}}
    confirmation = client.post("api/call", json=one).json()["confirmation"]
    assert client.post("api/call", json={**one, "confirmation": confirmation}).json()["ok"]
    replayed = client.post("api/call", json={**one, "confirmation": confirmation})
    assert replayed.status_code == 409 and replayed.json()["confirmation"] != confirmation
    assert _edits(record) == [one["arguments"]]
    again = client.post("api/call", json={**one, "confirmation": replayed.json()["confirmation"]})
    assert again.json()["ok"]  # confirmed anew: it runs again
    assert _edits(record) == [one["arguments"], one["arguments"]]


def test_a_save_and_a_reply_run_once_per_confirmation(editor: tuple[httpx.Client, Path]) -> None:
    client, record = editor
    shown = _save({2: "print('saved')"})
    confirmation = client.post("api/calls", json=shown).json()["confirmation"]
    assert client.post("api/calls", json={**shown, "confirmation": confirmation}).json()["outcomes"][0]["ok"]
    assert client.post("api/calls", json={**shown, "confirmation": confirmation}).status_code == 409
    reply = {"reply": json.dumps({"tool": "edit_line", "arguments": {"path": MAIN, "line": 1, "text": "r"}})}
    confirmation = client.post("api/reply/run", json=reply).json()["confirmation"]
    assert client.post("api/reply/run", json={**reply, "confirmation": confirmation}).json()["ok"]
    assert client.post("api/reply/run", json={**reply, "confirmation": confirmation}).status_code == 409
    assert [e["text"] for e in _edits(record)] == ["print('saved')", "r"]
