"""The ``mcp`` driver answering a server that talks back: elicitation, sampling, roots,
progress, logs, templates, completions and subscriptions.

    python examples/mcp_client_features.py

It starts ``examples/notes_server.py`` with ``mcs serve`` over stdio (the command a
Claude-Desktop-style config would run) and drives it as an LLM loop would.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import mcs

HERE = Path(__file__).resolve().parent
MCS = Path(sysconfig.get_path("scripts")) / "mcs"


def on_elicit(message: str, schema: Mapping[str, Any]) -> dict[str, Any] | None:
    print(f"[user asked] {message}")
    return {"replace": True}  # a real client shows a form; None would decline


def on_sample(messages: list[dict[str, Any]], options: dict[str, Any]) -> str:
    print(f"[model asked] {messages[-1]['content'][:40]}... (max {options['max_tokens']} tokens)")
    return "Two errands: milk and a call."  # a real client calls its own model here


def main() -> int:
    driver = mcs.load_driver(
        "mcp",
        command=str(MCS),
        args=["serve", "notes_server:driver"],
        env={"PYTHONPATH": str(HERE)},
        include_resources=True,
        on_elicit=on_elicit,
        on_sample=on_sample,
        roots=["file:///home/me/notes"],
        on_progress=lambda done, total, message: print(f"[progress] {done:g}/{total:g} {message}"),
        on_log=lambda level, logger, data: print(f"[server log] {level} {data['message']}"),
    )
    with driver:
        updated: list[str] = []
        driver.subscribe("notes://day/monday", updated.append)
        for call in (
            {"tool": "write_note", "arguments": {"day": "monday", "text": "buy oat milk"}},
            {"tool": "tidy", "arguments": {}},
            {"tool": "summarise", "arguments": {}},
            {"tool": "workspaces", "arguments": {}},
            {"tool": "read_resource", "arguments": {"uri": "notes://day/monday"}},
        ):
            print(f"{call['tool']} -> {driver.process_llm_response(call)}")
        print(f"completions for 'tu': {driver.complete('resource', 'notes://day/{day}', 'day', 'tu')}")
        print(f"updates heard: {updated}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
