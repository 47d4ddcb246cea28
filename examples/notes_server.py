"""A notes server made of plain functions: every MCP server feature through MCS's public API.

Serve it (this folder on PYTHONPATH):

    PYTHONPATH=examples mcs serve notes_server:driver                       # stdio
    PYTHONPATH=examples mcs serve notes_server:driver --transport http \\
        -s stateful=true -s resumable=true                                  # streamable HTTP

Tools report progress, ask the user (elicitation), ask the client's model (sampling),
read the client's roots and return an image; a prompt and a resource template complete
their arguments; a note's resource announces its new content to subscribers.
"""

from __future__ import annotations

import asyncio
import base64
import logging

import mcs

log = logging.getLogger("notes")
NOTES: dict[str, str] = {"monday": "buy milk", "tuesday": "call Ada"}
DOT_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)


def days(prefix: str) -> list[str]:
    return [day for day in NOTES if day.startswith(prefix)]


@mcs.tool
async def write_note(day: str, text: str, ctx: mcs.AgentContext) -> str:
    """Write the note of a day (confirms with the user first when one exists)."""
    if day in NOTES:
        answer = await ctx.elicit(f"Replace the note of {day}?", {
            "type": "object",
            "properties": {"replace": {"type": "boolean", "default": True}},
        })
        if not answer.accepted or not (answer.content or {}).get("replace"):
            return f"kept the note of {day}"
    NOTES[day] = text
    log.info("note of %s written", day)
    driver.resource_updated(f"notes://day/{day}")  # subscribers hear of it
    return f"saved the note of {day}"


@mcs.tool
async def tidy(ctx: mcs.AgentContext) -> str:
    """Tidy every note, reporting progress."""
    for done, day in enumerate(sorted(NOTES), start=1):
        NOTES[day] = NOTES[day].strip()
        await ctx.report_progress(done, len(NOTES), f"tidied {day}")
        await asyncio.sleep(0)
    return f"tidied {len(NOTES)} notes"


@mcs.tool
async def summarise(ctx: mcs.AgentContext) -> str:
    """Summarise all notes with the client's own model."""
    reply = await ctx.sample("Summarise these notes: " + "; ".join(NOTES.values()), max_tokens=60)
    return reply.text


@mcs.tool
async def workspaces(ctx: mcs.AgentContext) -> list[str]:
    """The folders the client works in (its roots)."""
    return [root.uri for root in await ctx.list_roots()]


@mcs.tool
def badge() -> mcs.Image:
    """The notes badge, as a PNG."""
    return mcs.Image(DOT_PNG, "image/png")


@mcs.prompt(complete={"day": lambda value: days(value)})
def plan(day: str) -> str:
    """Plan a day around its note."""
    return f"Plan my {day}; the note says: {NOTES.get(day, 'nothing')}"


@mcs.resource("notes://index", mime_type="application/json")
def index() -> dict[str, int]:
    """How many notes there are."""
    return {"notes": len(NOTES)}


@mcs.resource("notes://day/{day}", mime_type="text/plain", complete={"day": lambda value: days(value)})
def note(day: str) -> str:
    """The note of one day."""
    return NOTES.get(day, "")


driver = mcs.FunctionDriver([write_note, tidy, summarise, workspaces, badge, plan, index, note], name="notes")
