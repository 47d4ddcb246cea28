"""Driver values -> MCP wire objects (tool results, tools, prompts, resources).

The rules a caller can rely on:

* ``str`` -> one text block; ``dict`` -> JSON text plus ``structuredContent``;
  ``list``/numbers/booleans/``None`` -> JSON text; ``bytes`` -> an image or audio block
  when the tool declares an image/audio MIME type (``Tool.meta["mime_type"]``), else an
  embedded blob resource; pydantic models are dumped first.
* :class:`mcs.content.Binary` (bytes as ``{"content_type", "base64"}``) -> an image or
  audio block by its content type, else an embedded blob resource.
* :class:`mcs.Image` / :class:`mcs.Audio` -> an image / audio block;
  :class:`mcs.EmbeddedResource` -> an embedded resource; a list mixing them with strings
  (and MCP blocks) -> one block each.
* A value that already is MCP (``CallToolResult``, a content block, a list of blocks)
  passes through unchanged, so a driver can speak MCP when it wants to.
* A :class:`~mcs.errors.ToolCallError` becomes ``isError: true`` with its message.
* A tool with an object output schema gets ``structuredContent`` (JSON text is read as
  JSON), checked against the schema; a result that is no JSON object, or does not fit,
  is an ``EXECUTION_ERROR`` about the output.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import mcp_types as types
from pydantic import BaseModel

from mcs import content as mcs_content
from mcs.errors import ExecutionError, ToolCallError
from mcs.tools import Tool

_CONTENT_TYPES = (
    types.TextContent,
    types.ImageContent,
    types.AudioContent,
    types.ResourceLink,
    types.EmbeddedResource,
)
_ANNOTATION_KEYS = {
    "title": "title",
    "readOnlyHint": "read_only_hint",
    "destructiveHint": "destructive_hint",
    "idempotentHint": "idempotent_hint",
    "openWorldHint": "open_world_hint",
}


def field(obj: Any, *names: str, default: Any = None) -> Any:
    """The first of ``names`` present on ``obj`` (attribute or mapping key)."""
    for name in names:
        if isinstance(obj, Mapping):
            if name in obj and obj[name] is not None:
                return obj[name]
        else:
            value = getattr(obj, name, None)
            if value is not None:
                return value
    return default


def required_scopes(obj: Any) -> tuple[str, ...]:
    """The OAuth scopes a tool, prompt or resource asks for (``meta["required_scopes"]``)."""
    meta = field(obj, "meta", default={}) or {}
    scopes = field(meta, "required_scopes", "requiredScopes") or field(
        obj, "required_scopes", "requiredScopes"
    )
    if not scopes:
        return ()
    if isinstance(scopes, str):
        return tuple(scopes.split())
    return tuple(str(s) for s in scopes)


def tool_to_mcp(tool: Tool, *, name: str | None = None) -> types.Tool:
    """A neutral :class:`~mcs.tools.Tool` as MCP lists it (annotations mapped by key),
    under ``name`` when the server serves it by another name than ``tool.name``."""
    annotations: dict[str, Any] = {}
    for key, value in (tool.annotations or {}).items():
        attr = _ANNOTATION_KEYS.get(key) or (key if key in _ANNOTATION_KEYS.values() else None)
        if attr is not None:
            annotations[attr] = value
    return types.Tool(
        name=name or tool.name,
        title=tool.title,
        description=tool.description or None,
        input_schema=dict(tool.input_schema),
        output_schema=object_schema(tool.output_schema),
        annotations=types.ToolAnnotations(**annotations) if annotations else None,
    )


def object_schema(schema: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """MCP output schemas describe ``structuredContent``, an object; others are left out."""
    if schema is None or schema.get("type") != "object":
        return None
    return dict(schema)


def error_result(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], is_error=True)


def tool_error_result(error: ToolCallError) -> types.CallToolResult:
    """``isError: true`` with the message written for the LLM, and in ``_meta`` the MCS
    code (``mcs/error``) and, when known, ``mcs/retryable`` and ``mcs/retry_after`` (s)."""
    result = error_result(error.message)
    meta: dict[str, Any] = {"mcs/error": error.code.value}
    for key in ("retryable", "retry_after"):
        if key in error.details:
            meta[f"mcs/{key}"] = error.details[key]
    result.meta = meta
    return result


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _is_content(value: Any) -> bool:
    return isinstance(value, _CONTENT_TYPES)


def binary_block(data: bytes, mime_type: str | None, uri: str = "mcs://result") -> Any:
    """Bytes as the MCP block their MIME type calls for."""
    encoded = base64.b64encode(data).decode("ascii")
    mime = mime_type or "application/octet-stream"
    if mime.startswith("image/"):
        return types.ImageContent(type="image", data=encoded, mime_type=mime)
    if mime.startswith("audio/"):
        return types.AudioContent(type="audio", data=encoded, mime_type=mime)
    return types.EmbeddedResource(
        type="resource",
        resource=types.BlobResourceContents(uri=uri, mime_type=mime, blob=encoded),
    )


def content_block(value: Any) -> Any:
    """An :mod:`mcs.content` object (or a string) as the MCP content block it stands for."""
    if isinstance(value, str):
        return types.TextContent(type="text", text=value)
    if isinstance(value, mcs_content.Image | mcs_content.Audio):
        return binary_block(value.data, value.mime_type)
    if isinstance(value, mcs_content.EmbeddedResource):
        if value.data is not None:
            resource: Any = types.BlobResourceContents(
                uri=value.uri, mime_type=value.mime_type, blob=base64.b64encode(value.data).decode("ascii")
            )
        else:
            resource = types.TextResourceContents(uri=value.uri, mime_type=value.mime_type, text=value.text or "")
        return types.EmbeddedResource(type="resource", resource=resource)
    return value


def _is_block_list(value: Any) -> bool:
    """A non-empty list of content (MCP blocks, :mod:`mcs.content` objects, strings) with
    at least one non-string: such a list is a set of blocks, not a JSON value."""
    if not isinstance(value, list | tuple) or not value:
        return False
    usable = all(_is_content(v) or mcs_content.is_content(v) or isinstance(v, str) for v in value)
    return usable and any(not isinstance(v, str) for v in value)


def to_call_result(
    value: Any, tool: Tool | None = None, *, check: Callable[[Any], None] | None = None
) -> types.CallToolResult:
    """A tool's return value as an MCP ``CallToolResult`` (see the module rules).

    ``check`` validates the structured content of a tool with an object output schema.

    Raises:
        ExecutionError: the tool declares an object output schema and the value is not a
            JSON object, or ``check`` refused it.
    """
    if isinstance(value, types.CallToolResult):
        return value
    if check is not None and tool is not None:
        return _structured_result(value, tool, check)
    if _is_content(value) or mcs_content.is_content(value):
        return types.CallToolResult(content=[content_block(value)])
    if _is_block_list(value):
        return types.CallToolResult(content=[content_block(v) for v in value])
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    if isinstance(value, mcs_content.Binary):
        return types.CallToolResult(content=[binary_block(value.data, value.content_type)])
    if isinstance(value, bytes | bytearray):
        mime = field(tool.meta, "mime_type", "mimeType") if tool is not None else None
        return types.CallToolResult(content=[binary_block(bytes(value), mime)])
    if isinstance(value, str):
        return types.CallToolResult(content=[types.TextContent(type="text", text=value)])
    if isinstance(value, Mapping):
        structured = {str(k): v for k, v in value.items()}
        text = _json_text(structured)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structured_content=json.loads(text),
        )
    return types.CallToolResult(content=[types.TextContent(type="text", text=_json_text(value))])


def _structured_result(value: Any, tool: Tool, check: Callable[[Any], None]) -> types.CallToolResult:
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    data: Any = value
    if isinstance(value, str):
        try:
            data = json.loads(value)
        except ValueError:
            data = None
    if not isinstance(data, Mapping):
        excerpt = value if isinstance(value, str) else _json_text(value)
        excerpt = excerpt if len(excerpt) <= 200 else excerpt[:200] + "..."
        raise ExecutionError(
            f"{tool.name} declares an output schema, so its result must be a JSON object; it returned "
            f"{type(value).__name__} {excerpt!r}.",
            tool=tool.name,
        )
    check(data)
    text = _json_text(data)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=json.loads(text))


# ----------------------------------------------------------------------------- prompts


def prompt_to_mcp(prompt: Any) -> types.Prompt:
    """A prompt from ``driver.prompts()`` (object or mapping) as MCP lists it."""
    if isinstance(prompt, types.Prompt):
        return prompt
    arguments = []
    for arg in field(prompt, "arguments", default=()) or ():
        arguments.append(
            types.PromptArgument(
                name=str(field(arg, "name")),
                title=field(arg, "title"),
                description=field(arg, "description"),
                required=bool(field(arg, "required", default=False)),
            )
        )
    if not arguments:
        arguments = _arguments_from_schema(field(prompt, "input_schema", "inputSchema"))
    return types.Prompt(
        name=str(field(prompt, "name")),
        title=field(prompt, "title"),
        description=field(prompt, "description") or None,
        arguments=arguments or None,
    )


def _arguments_from_schema(schema: Any) -> list[types.PromptArgument]:
    if not isinstance(schema, Mapping):
        return []
    required = set(schema.get("required") or ())
    return [
        types.PromptArgument(
            name=str(name),
            description=(spec or {}).get("description") if isinstance(spec, Mapping) else None,
            required=name in required,
        )
        for name, spec in (schema.get("properties") or {}).items()
    ]


def _message(item: Any) -> types.PromptMessage:
    if isinstance(item, types.PromptMessage):
        return item
    if isinstance(item, str):
        return types.PromptMessage(role="user", content=types.TextContent(type="text", text=item))
    if mcs_content.is_content(item) or _is_content(item):
        return types.PromptMessage(role="user", content=content_block(item))
    role = field(item, "role", default="user")
    content = field(item, "content", "text", default="")
    if isinstance(content, str):
        block: Any = types.TextContent(type="text", text=content)
    elif _is_content(content) or mcs_content.is_content(content):
        block = content_block(content)
    elif isinstance(content, Mapping):
        block = types.PromptMessage.model_validate({"role": role, "content": content}).content
    else:
        block = types.TextContent(type="text", text=_json_text(content))
    return types.PromptMessage(role=role, content=block)


def to_prompt_result(value: Any, description: str | None = None) -> types.GetPromptResult:
    """What ``driver.render_prompt`` returned as a ``GetPromptResult``."""
    if isinstance(value, types.GetPromptResult):
        return value
    if isinstance(value, Mapping) and "messages" in value:
        description = value.get("description") or description
        value = value["messages"]
    elif not isinstance(value, str | list | tuple | Mapping) and hasattr(value, "messages"):
        description = getattr(value, "description", None) or description
        value = list(value.messages)
    items: Iterable[Any] = value if isinstance(value, list | tuple) else [value]
    return types.GetPromptResult(description=description, messages=[_message(i) for i in items])


# ----------------------------------------------------------------------------- resources


def resource_to_mcp(resource: Any) -> types.Resource:
    if isinstance(resource, types.Resource):
        return resource
    return types.Resource(
        uri=str(field(resource, "uri")),
        name=str(field(resource, "name", "uri")),
        title=field(resource, "title"),
        description=field(resource, "description") or None,
        mime_type=field(resource, "mime_type", "mimeType"),
        size=field(resource, "size"),
    )


def template_to_mcp(template: Any) -> types.ResourceTemplate:
    if isinstance(template, types.ResourceTemplate):
        return template
    return types.ResourceTemplate(
        uri_template=str(field(template, "uri_template", "uriTemplate")),
        name=str(field(template, "name", "uri_template", "uriTemplate")),
        title=field(template, "title"),
        description=field(template, "description") or None,
        mime_type=field(template, "mime_type", "mimeType"),
    )


def to_read_result(value: Any, uri: str, mime_type: str | None = None) -> types.ReadResourceResult:
    """What ``driver.read_resource`` returned as a ``ReadResourceResult``.

    ``str`` -> text; ``bytes`` -> base64 blob; a mapping with ``text`` or ``blob``
    (and optional ``mime_type``) as given; other values -> JSON text.
    """
    if isinstance(value, types.ReadResourceResult):
        return value
    contents: list[Any] = []
    items = value if isinstance(value, list | tuple) else [value]
    for item in items:
        if isinstance(item, types.TextResourceContents | types.BlobResourceContents):
            contents.append(item)
            continue
        if isinstance(item, mcs_content.Image | mcs_content.Audio):
            item = {"blob": item.data, "mime_type": item.mime_type}
        elif isinstance(item, mcs_content.EmbeddedResource):
            item = {"uri": item.uri, "mime_type": item.mime_type,
                    **({"blob": item.data} if item.data is not None else {"text": item.text})}
        mime = mime_type
        if not isinstance(item, str | bytes | bytearray | Mapping) and (
            hasattr(item, "text") or hasattr(item, "blob")
        ):
            item = {k: getattr(item, k) for k in ("uri", "mime_type", "text", "blob")
                    if getattr(item, k, None) is not None}
        if isinstance(item, Mapping) and ("text" in item or "blob" in item):
            mime = item.get("mime_type") or item.get("mimeType") or mime
            item_uri = str(item.get("uri") or uri)
            if "blob" in item:
                blob = item["blob"]
                encoded = base64.b64encode(blob).decode() if isinstance(blob, bytes) else str(blob)
                contents.append(types.BlobResourceContents(uri=item_uri, mime_type=mime, blob=encoded))
            else:
                contents.append(types.TextResourceContents(uri=item_uri, mime_type=mime, text=str(item["text"])))
        elif isinstance(item, bytes | bytearray):
            contents.append(
                types.BlobResourceContents(
                    uri=uri, mime_type=mime or "application/octet-stream",
                    blob=base64.b64encode(bytes(item)).decode(),
                )
            )
        elif isinstance(item, str):
            contents.append(types.TextResourceContents(uri=uri, mime_type=mime or "text/plain", text=item))
        else:
            contents.append(
                types.TextResourceContents(uri=uri, mime_type=mime or "application/json", text=_json_text(item))
            )
    return types.ReadResourceResult(contents=contents)
