"""A small driver with tools, prompts, resources and scopes, served by the tests.

It implements the conformance suite's named fixtures (``test_simple_text``,
``test_error_handling``, ``test://static-text``, ``test_simple_prompt``...) on top of
ordinary MCS behaviour (validation, errors, AgentContext), and the prompt/resource
methods the gen-mcp file driver exposes (``prompts()``, ``render_prompt()``,
``resources()``, ``resource_templates()``, ``read_resource()``). Loadable by
``mcs serve serving_helpers:SampleDriver`` with this folder on ``PYTHONPATH``.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import re
import uuid
from collections.abc import Iterable
from typing import Any

import mcp_types as types

from mcs.context import AgentContext
from mcs.driver import DriverMeta, ToolDriver
from mcs.errors import ExecutionError, ToolNotFoundError
from mcs.pipeline import Invocation
from mcs.tools import Tool

logger = logging.getLogger("mcs.sample")

# A 1x1 red PNG and a 1-sample WAV.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)
WAV = base64.b64decode("UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQIAAAAAAA==")

_OBJ: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False}


def _tool(name: str, description: str, schema: dict[str, Any] | None = None, **meta: Any) -> Tool:
    return Tool(name=name, description=description, input_schema=schema or dict(_OBJ), meta=meta)


TOOLS = [
    _tool("echo", "Return the text unchanged.",
          {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"],
           "additionalProperties": False}),
    _tool("add", "Add two numbers; returns {sum}.",
          {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
           "required": ["a", "b"], "additionalProperties": False}),
    _tool("whoami", "Who the server thinks is calling: agent id, request id, headers."),
    _tool("fail", "Always fails with an execution error."),
    _tool("admin_reset", "Reset everything (needs the admin scope).", required_scopes=["admin"]),
    _tool("read_report", "Read the report (needs reports:read).", required_scopes=["reports:read"]),
    _tool("test_simple_text", "Returns simple text."),
    _tool("test_error_handling", "Always returns an error."),
    _tool("test_image_content", "Returns a PNG image.", mime_type="image/png"),
    _tool("test_audio_content", "Returns a WAV sound.", mime_type="audio/wav"),
    _tool("test_embedded_resource", "Returns an embedded resource."),
    _tool("test_multiple_content_types", "Returns text, image and resource."),
    _tool("test_tool_with_logging", "Logs three messages while it runs."),
    Tool(
        name="json_schema_2020_12_tool",
        description="Tool with JSON Schema 2020-12 features",
        input_schema={
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {"address": {"type": "object", "properties": {
                "street": {"type": "string"}, "city": {"type": "string"}}}},
            "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
            "additionalProperties": False,
        },
    ),
]

PROMPTS: list[dict[str, Any]] = [
    {"name": "test_simple_prompt", "description": "A simple prompt without arguments"},
    {"name": "test_prompt_with_arguments", "description": "A prompt with two arguments",
     "arguments": [{"name": "arg1", "description": "First test argument", "required": True},
                   {"name": "arg2", "description": "Second test argument", "required": True}]},
    {"name": "test_prompt_with_embedded_resource", "description": "A prompt embedding a resource",
     "arguments": [{"name": "resourceUri", "description": "URI to embed", "required": True}]},
    {"name": "test_prompt_with_image", "description": "A prompt with an image"},
    {"name": "secret_prompt", "description": "Needs the admin scope", "meta": {"required_scopes": ["admin"]}},
]

RESOURCES: list[dict[str, Any]] = [
    {"uri": "test://static-text", "name": "static-text", "description": "A static text resource",
     "mime_type": "text/plain"},
    {"uri": "test://static-binary", "name": "static-binary", "description": "A static PNG",
     "mime_type": "image/png"},
]
TEMPLATES: list[dict[str, Any]] = [
    {"uri_template": "test://template/{id}/data", "name": "template-data",
     "description": "Data for an id", "mime_type": "application/json"},
    {"uri_template": "test://secret/{id}", "name": "secret", "description": "Needs the admin scope",
     "mime_type": "text/plain", "meta": {"required_scopes": ["admin"]}},
]


class SampleDriver(ToolDriver):
    """Tools, prompts and resources for the serving tests (and the conformance suite)."""

    enforces_deadline = True

    def __init__(self, **options: Any) -> None:
        super().__init__(description_mode="inline", **options)
        self.meta = DriverMeta(
            id=str(uuid.uuid5(uuid.NAMESPACE_URL, "mcs-serving-sample")),
            name="sample",
            version="1.0.0",
            protocol="in-memory",
            transport="none",
            spec_format="python",
        )
        self.calls: list[tuple[str, dict[str, Any], AgentContext]] = []

    def _list_tools(self) -> Iterable[Tool]:
        return TOOLS

    def _call_tool(self, invocation: Invocation) -> Any:
        raise NotImplementedError("async only")  # _acall_tool serves every call

    async def _acall_tool(self, invocation: Invocation) -> Any:
        name, args, ctx = invocation.tool.name, dict(invocation.arguments), invocation.context
        self.calls.append((name, args, ctx))
        if name == "echo":
            return args["text"]
        if name == "add":
            return {"sum": args["a"] + args["b"]}
        if name == "whoami":
            return {"agent_id": ctx.agent_id, "request_id": ctx.request_id, "metadata": dict(ctx.metadata)}
        if name in ("fail", "test_error_handling"):
            raise ExecutionError("the backend refused: try again later")
        if name == "admin_reset":
            return "reset done"
        if name == "read_report":
            return "the report"
        if name == "test_simple_text":
            return "This is a simple text response for testing."
        if name == "test_image_content":
            return PNG
        if name == "test_audio_content":
            return WAV
        if name == "test_embedded_resource":
            return types.EmbeddedResource(
                type="resource",
                resource=types.TextResourceContents(
                    uri="test://embedded-resource", mime_type="text/plain",
                    text="This is an embedded resource content."),
            )
        if name == "test_multiple_content_types":
            return [
                types.TextContent(type="text", text="Multiple content types test:"),
                types.ImageContent(type="image", data=base64.b64encode(PNG).decode(), mime_type="image/png"),
                types.EmbeddedResource(type="resource", resource=types.TextResourceContents(
                    uri="test://mixed-content-resource", mime_type="application/json",
                    text=json.dumps({"test": "data", "value": 123}))),
            ]
        if name == "test_tool_with_logging":
            logger.info("Tool execution started")
            await asyncio.sleep(0.05)
            logger.info("Tool processing data")
            await asyncio.sleep(0.05)
            logger.info("Tool execution completed")
            return "Tool with logging executed successfully"
        if name == "json_schema_2020_12_tool":
            return {"received": args}
        raise ToolNotFoundError(f"no tool {name}")

    # -- prompts and resources, as the gen-mcp file driver offers them

    def prompts(self) -> list[dict[str, Any]]:
        return PROMPTS

    def render_prompt(self, name: str, arguments: dict[str, Any], context: AgentContext) -> Any:
        if name == "test_simple_prompt":
            return "This is a simple prompt for testing."
        if name == "test_prompt_with_arguments":
            return f"Prompt with arguments: arg1='{arguments.get('arg1')}', arg2='{arguments.get('arg2')}'"
        if name == "test_prompt_with_embedded_resource":
            return [
                {"role": "user", "content": {"type": "resource", "resource": {
                    "uri": arguments.get("resourceUri", "test://x"), "mimeType": "text/plain",
                    "text": "Embedded resource content for testing."}}},
                "Please process the embedded resource above.",
            ]
        if name == "test_prompt_with_image":
            return [
                {"role": "user", "content": {"type": "image", "data": base64.b64encode(PNG).decode(),
                                             "mimeType": "image/png"}},
                "Please analyze the image above.",
            ]
        if name == "secret_prompt":
            return "the secret"
        raise ToolNotFoundError(f"no prompt {name}")

    def resources(self) -> list[dict[str, Any]]:
        return RESOURCES

    def resource_templates(self) -> list[dict[str, Any]]:
        return TEMPLATES

    def read_resource(self, uri: str, context: AgentContext) -> Any:
        if uri == "test://static-text":
            return "This is the content of the static text resource."
        if uri == "test://static-binary":
            return {"blob": PNG, "mime_type": "image/png"}
        if uri.startswith("test://secret/"):
            return "classified"
        match = re.fullmatch(r"test://template/([^/]+)/data", uri)
        if match:
            item = match.group(1)
            return {"text": json.dumps({"id": item, "templateTest": True, "data": f"Data for ID: {item}"}),
                    "mime_type": "application/json"}
        raise ToolNotFoundError(f"no resource {uri}")


class ToolsOnlyDriver(SampleDriver):
    """The same tools without prompts or resources (a plain ToolDriver's surface)."""

    prompts = None  # type: ignore[assignment]
    resources = None  # type: ignore[assignment]
