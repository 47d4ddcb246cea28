"""The official conformance suite's server fixtures, written only with MCS's documented API.

Plain ``@mcs.tool``, ``@mcs.prompt`` and ``@mcs.resource`` functions; the tests serve
this module as it is: ``mcs serve conformance_server --transport http`` (with this
folder on ``PYTHONPATH``). Nothing here imports the MCP SDK or MCS internals.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
from typing import Annotated

from pydantic import Field

import mcs

logger = logging.getLogger("conformance.tools")

# A 1x1 red PNG and a one-sample WAV.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
WAV = base64.b64decode("UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQIAAAAAAA==")
CITIES = ["paris", "park", "party", "prague", "porto"]

# ----------------------------------------------------------------------------- tools


@mcs.tool
def test_simple_text() -> str:
    """Returns simple text."""
    return "This is a simple text response for testing."


@mcs.tool
def test_image_content() -> mcs.Image:
    """Returns a PNG image."""
    return mcs.Image(PNG, "image/png")


@mcs.tool
def test_audio_content() -> mcs.Audio:
    """Returns a WAV sound."""
    return mcs.Audio(WAV, "audio/wav")


@mcs.tool
def test_embedded_resource() -> mcs.EmbeddedResource:
    """Returns an embedded resource."""
    return mcs.EmbeddedResource(
        "test://embedded-resource", text="This is an embedded resource content.", mime_type="text/plain"
    )


@mcs.tool
def test_multiple_content_types() -> list[str | mcs.Image | mcs.EmbeddedResource]:
    """Returns text, an image and a resource."""
    return [
        "Multiple content types test:",
        mcs.Image(PNG, "image/png"),
        mcs.EmbeddedResource(
            "test://mixed-content-resource", text=json.dumps({"test": "data", "value": 123}),
            mime_type="application/json",
        ),
    ]


@mcs.tool
async def test_tool_with_logging() -> str:
    """Logs three messages while it runs."""
    logger.info("Tool execution started")
    await asyncio.sleep(0.05)
    logger.info("Tool processing data")
    await asyncio.sleep(0.05)
    logger.info("Tool execution completed")
    return "Tool with logging executed successfully"


@mcs.tool
async def test_tool_with_progress(ctx: mcs.AgentContext) -> str:
    """Reports progress 0, 50 and 100 of 100."""
    for done in (0, 50, 100):
        await ctx.report_progress(done, 100, f"{done}% done")
        await asyncio.sleep(0.05)
    return "Progress tool executed successfully"


@mcs.tool
def test_error_handling() -> str:
    """Always fails."""
    raise mcs.ExecutionError("This tool intentionally returns an error for testing")


@mcs.tool
async def test_sampling(prompt: str, ctx: mcs.AgentContext) -> str:
    """Asks the client's model to answer the prompt."""
    reply = await ctx.sample(prompt, max_tokens=100)
    return f"LLM response: {reply.text}"


@mcs.tool
async def test_elicitation(message: str, ctx: mcs.AgentContext) -> str:
    """Asks the user for a username and an email address."""
    answer = await ctx.elicit(message, {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    })
    return f"User response: action={answer.action}, content={json.dumps(answer.content)}"


@mcs.tool
async def test_elicitation_sep1034_defaults(ctx: mcs.AgentContext) -> str:
    """Asks the user for values that all have defaults."""
    answer = await ctx.elicit("Please review your details", {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"],
                       "default": "active"},
            "verified": {"type": "boolean", "description": "Verification status", "default": True},
        },
    })
    return f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content)}"


@mcs.tool
async def test_elicitation_sep1330_enums(ctx: mcs.AgentContext) -> str:
    """Asks the user to choose, in each of the five enum forms."""
    answer = await ctx.elicit("Please choose", {
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ]},
            "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                           "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array", "items": {"anyOf": [
                {"const": "value1", "title": "First Choice"},
                {"const": "value2", "title": "Second Choice"},
                {"const": "value3", "title": "Third Choice"},
            ]}},
        },
    })
    return f"Elicitation completed: action={answer.action}, content={json.dumps(answer.content)}"


@mcs.tool
async def test_reconnection(ctx: mcs.AgentContext) -> str:
    """Lets go of the client's stream mid-call; the result arrives after it reconnects."""
    await ctx.session.close_stream()
    await asyncio.sleep(0.2)
    return "Reconnection test completed successfully"


@mcs.tool(
    name="json_schema_2020_12_tool",
    input_schema={
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"address": {"type": "object", "properties": {
            "street": {"type": "string"}, "city": {"type": "string"}}}},
        "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
        "additionalProperties": False,
    },
)
def json_schema_tool(**arguments: object) -> dict[str, object]:
    """Tool with JSON Schema 2020-12 features."""
    return {"received": arguments}


# ----------------------------------------------------------------------------- prompts


@mcs.prompt
def test_simple_prompt() -> str:
    """A simple prompt without arguments."""
    return "This is a simple prompt for testing."


@mcs.prompt(complete={"arg1": lambda value: [c for c in CITIES if c.startswith(value)]})
def test_prompt_with_arguments(
    arg1: Annotated[str, Field(description="First test argument")],
    arg2: Annotated[str, Field(description="Second test argument")],
) -> str:
    """A prompt with two arguments."""
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@mcs.prompt
def test_prompt_with_embedded_resource(
    resourceUri: Annotated[str, Field(description="URI of the resource to embed")],
) -> list[object]:
    """A prompt embedding a resource."""
    return [
        mcs.EmbeddedResource(resourceUri, text="Embedded resource content for testing.", mime_type="text/plain"),
        "Please process the embedded resource above.",
    ]


@mcs.prompt
def test_prompt_with_image() -> list[object]:
    """A prompt with an image."""
    return [mcs.Image(PNG, "image/png"), "Please analyze the image above."]


# ----------------------------------------------------------------------------- resources


@mcs.resource("test://static-text", name="static-text", mime_type="text/plain")
def static_text() -> str:
    """A static text resource."""
    return "This is the content of the static text resource."


@mcs.resource("test://static-binary", name="static-binary", mime_type="image/png")
def static_binary() -> bytes:
    """A static PNG."""
    return PNG


@mcs.resource("test://watched-resource", name="watched-resource", mime_type="text/plain")
def watched_resource() -> str:
    """A resource clients can subscribe to."""
    return "watched content"


@mcs.resource(
    "test://template/{id}/data", name="template-data", mime_type="application/json",
    complete={"id": lambda value: [str(n) for n in range(100, 130) if str(n).startswith(value)]},
)
def template_data(id: str) -> str:
    """Data for an id."""
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})
