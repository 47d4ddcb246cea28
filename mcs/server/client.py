"""``RFC0001Driver``: any running RFC-0001 server, used through the MCS contract.

    driver = mcs.load_driver("rfc0001", url="http://127.0.0.1:8000")
    system = driver.get_driver_system_message("gpt-4o")   # tools from /mcp/capabilities
    result = driver.process_llm_response(llm_output)        # POST /mcp/execute

The server's ``GET /mcp/capabilities`` becomes the function description; each call the
LLM makes is validated locally against the advertised input schema, then executed by
the server with the caller's :class:`~mcs.AgentContext` sent as headers. Server errors
come back as the matching :class:`~mcs.ToolCallError` (same code, same message).
"""

from __future__ import annotations

import json
import logging
import os
import time
import uuid
from collections.abc import Iterable, Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError

from mcs import prompts
from mcs.context import AgentContext
from mcs.driver import DriverMeta, ToolDriver, refuse_unknown_options
from mcs.errors import (
    ConfigurationError,
    ErrorCode,
    ExecutionError,
    MissingDependencyError,
    ToolCallError,
    ToolTimeoutError,
)
from mcs.pinning import HeldTool, PinStore
from mcs.pipeline import Invocation
from mcs.server.wire import CAPABILITIES_PATH, EXECUTE_PATH, PROTOCOL_VERSION, context_to_headers
from mcs.tools import TOOL_NAME_PATTERN, Tool
from mcs.truncation import cap_text

logger = logging.getLogger("mcs.server.client")

_NAMESPACE = uuid.UUID("2b0a3f0e-8d1c-4d57-9b8e-6f7c1e0a0002")

#: A server's error message is for the model to read; longer ones are cut (as the ``mcp`` bridge does).
MAX_ERROR_BYTES = 4096

try:
    import httpx

    from mcs import http as mcs_http
except ImportError:  # pragma: no cover - reported when the driver is created
    httpx = None  # type: ignore[assignment]


def _base_url(url: str) -> str:
    base = url.rstrip("/")
    for suffix in (CAPABILITIES_PATH, EXECUTE_PATH, "/mcp"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
            break
    if not base.startswith(("http://", "https://")):
        raise ConfigurationError(f"url must be an http:// or https:// address, got {url!r}")
    return base


def _loads(data: bytes) -> Any:
    """The JSON value of a server's answer.

    Raises:
        ValueError: not JSON, or nested too deeply to read (what a hostile server sends
            to make the parser recurse past Python's limit).
    """
    try:
        return json.loads(data)
    except RecursionError:
        raise ValueError("the JSON is nested too deeply") from None


def _check_protocol(protocol: Any, where: str) -> None:
    """Refuse a server whose wire protocol has another major version (RFC-0001 section 16).

    A document without ``protocol`` (the RFC's own example has none) is read as 1.x.
    """
    if protocol is None:
        return
    major = str(protocol).split(".", 1)[0]
    if major != PROTOCOL_VERSION.split(".", 1)[0]:
        raise ConfigurationError(
            f"{where} speaks RFC-0001 wire protocol {protocol}; this client speaks {PROTOCOL_VERSION} "
            "and a different major version is incompatible (section 16)"
        )


class _Entry(BaseModel):
    """One tool of a capabilities document, as section "GET /mcp/capabilities" gives it;
    keys added by later 1.x servers are ignored."""

    model_config = ConfigDict(extra="ignore")

    name: Annotated[StrictStr, Field(pattern=TOOL_NAME_PATTERN.pattern)]
    description: StrictStr | None = None
    input_schema: dict[str, Any] | None = None
    output_schema: dict[str, Any] | None = None
    timeout_ms: Annotated[StrictInt, Field(ge=0)] | None = None
    idempotent: StrictBool | None = None


def _entries(tools: list[Any], where: str) -> list[_Entry]:
    """The document's tools, checked: a malformed one is a :class:`ConfigurationError` naming it."""
    entries: list[_Entry] = []
    seen: set[str] = set()
    for index, item in enumerate(tools):
        try:
            entry = _Entry.model_validate(item)
        except ValidationError as exc:
            error = exc.errors()[0]
            field = "".join(f".{p}" if isinstance(p, str) else f"[{p}]" for p in error["loc"])
            raise ConfigurationError(
                f"{where}: tools[{index}]{field} is not a valid RFC-0001 tool entry: {error['msg']}"
            ) from None
        if entry.name in seen:
            raise ConfigurationError(f"{where}: tools[{index}] lists the tool {entry.name!r} twice")
        seen.add(entry.name)
        entries.append(entry)
    return entries


class RFC0001Driver(ToolDriver):
    """Drive an RFC-0001 server over HTTP.

    Options: ``url`` (the server's base address; a ``/mcp/...`` suffix is accepted),
    ``agent_id``, ``model`` and ``metadata`` (defaults for the context sent with each
    call when the caller passes none), ``headers`` (extra HTTP headers, e.g. an
    ``Authorization`` your deployment puts in front of the server),
    ``max_response_bytes`` (largest answer read, default 5 MiB; a longer one is an
    error, never read into memory), ``pins`` (a :class:`~mcs.pinning.PinStore` or a JSON
    file path) and ``trust_new_tools`` (see below), and every :class:`~mcs.ToolDriver`
    option (``timeout`` bounds each exchange as a whole: connect, headers and body).

    The server's tool definitions are pinned when first seen (SECURITY.md F2, as the
    ``mcp`` bridge does): one whose description, schemas or ``idempotent`` claim changed
    since, one that appeared later, or one whose text hides instructions is held back (not
    described, not callable) and listed by :meth:`held_tools` until :meth:`accept`.
    """

    enforces_deadline = True

    def __init__(
        self,
        url: str,
        *,
        agent_id: str | None = None,
        model: str | None = None,
        metadata: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        max_response_bytes: int = 5 * 1024 * 1024,
        pins: PinStore | str | os.PathLike[str] | None = None,
        trust_new_tools: bool = False,
        **options: Any,
    ) -> None:
        if httpx is None:
            raise MissingDependencyError(
                "the rfc0001 driver needs 'httpx': pip install 'mcs-framework[server]'",
                install="pip install 'mcs-framework[server]'",
            )
        refuse_unknown_options(RFC0001Driver, options, "the RFC-0001 driver")
        super().__init__(**options)
        self.url = _base_url(url)
        self.agent_id = agent_id
        self.model = model
        self.metadata = dict(metadata or {})
        if max_response_bytes < 1:
            raise ConfigurationError("max_response_bytes must be at least 1")
        self.max_response_bytes = max_response_bytes
        self.pins = pins if isinstance(pins, PinStore) else PinStore(pins)
        self.trust_new_tools = trust_new_tools
        self._headers = {"Accept-Encoding": mcs_http.ACCEPT_ENCODING, **dict(headers or {})}
        self._client = httpx.Client(base_url=self.url, headers=self._headers, timeout=self.timeout,
                                    transport=mcs_http.transport())
        self._server: dict[str, Any] = {}
        self.meta = DriverMeta(
            id=str(uuid.uuid5(_NAMESPACE, self.url)),
            name="rfc0001",
            version="1.0",
            protocol="RFC-0001",
            transport="HTTP",
            spec_format="RFC-0001 capabilities",
            target_llms=prompts.target_llms(self.prompt_templates),
            capabilities=("healthcheck",),
            prefix=self.prefix,
        )

    # ------------------------------------------------------------------ discovery

    def capabilities(self) -> dict[str, Any]:
        """The server's ``GET /mcp/capabilities`` document (fetched each time)."""
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        where = f"{self.url}{CAPABILITIES_PATH}"
        try:
            status, body = self._exchange(self._client.build_request("GET", CAPABILITIES_PATH), deadline, None)
        except (httpx.HTTPError, ToolCallError) as exc:
            reason = exc.message if isinstance(exc, ToolCallError) else f"{type(exc).__name__}: {exc}"
            raise ConfigurationError(f"cannot read {where}: {reason}") from None
        if status != 200:
            raise ConfigurationError(f"{where} answered HTTP {status}")
        try:
            document = _loads(body)
        except ValueError:
            document = None
        if not isinstance(document, dict) or not isinstance(document.get("tools"), list):
            raise ConfigurationError(f"{where} is not an RFC-0001 document")
        _check_protocol(document.get("protocol"), where)
        _entries(document["tools"], where)
        return document

    def _exchange(self, request: httpx.Request, deadline: float | None, tool: str | None) -> tuple[int, bytes]:
        """Send ``request`` and read the answer, bounded in size and time as a whole."""
        with mcs_http.bounded(deadline):
            response = self._client.send(request, stream=True)
            body = mcs_http.read_body(response, max_bytes=self.max_response_bytes, deadline=deadline, tool=tool)
        self._check_size(body, tool)
        return response.status_code, body.data

    def _check_size(self, body: mcs_http.Body, tool: str | None) -> None:
        if body.truncated:
            raise ExecutionError(
                f"{tool or 'the server'}: the answer exceeded {self.max_response_bytes} bytes and was not read "
                "further; ask for less.", tool=tool,
            )

    def _list_tools(self) -> Iterable[Tool]:
        document = self.capabilities()
        self._server = {k: document.get(k) for k in ("server", "version", "description")}
        entries = _entries(document["tools"], f"{self.url}{CAPABILITIES_PATH}")
        allowed, held = self.pins.review(
            self.url,
            [(e.name, e.description, e.input_schema,
              {"output_schema": e.output_schema or None, "idempotent": bool(e.idempotent)}) for e in entries],
            trust_new=self.trust_new_tools,
        )
        for hold in held:
            logger.warning("RFC-0001 server %s: %r held back until accepted (%s): %s",
                           self.url, hold.name, hold.reason, hold.detail)
        return [
            Tool(
                name=entry.name,
                description=entry.description or "",
                input_schema=entry.input_schema or {"type": "object", "properties": {}},
                output_schema=entry.output_schema or None,
                annotations={"idempotentHint": bool(entry.idempotent)},
                meta={"timeout_ms": entry.timeout_ms},
            )
            for entry in entries if entry.name in allowed
        ]

    def held_tools(self) -> list[HeldTool]:
        """Tools held back until accepted: changed, new or suspicious (see :mod:`mcs.pinning`)."""
        self._tool_map()
        return self.pins.held(self.url)

    def accept(self, name: str) -> None:
        """Approve a held tool as the server lists it now; it is offered at once.

        Raises:
            KeyError: no held tool has that name.
        """
        self.pins.accept(name, self.url)
        self.refresh_tools()

    def healthcheck(self) -> dict[str, Any]:
        """``{"status": "ok", "server", "version", "tools"}`` or ``{"status": "error", "detail"}``."""
        try:
            document = self.capabilities()
        except ConfigurationError as exc:
            return {"status": "error", "detail": str(exc)}
        return {"status": "ok", "server": document.get("server"),
                "version": document.get("version"), "tools": len(document["tools"])}

    # ------------------------------------------------------------------ calling

    def _context_headers(self, context: AgentContext) -> dict[str, str]:
        merged = AgentContext(
            agent_id=self.agent_id if self.agent_id and context.agent_id == "anonymous"
            else context.agent_id,
            model=context.model or self.model,
            request_id=context.request_id,
            metadata={**self.metadata, **context.metadata},
        )
        return context_to_headers(merged)

    def _request(self, client: httpx.Client | httpx.AsyncClient, invocation: Invocation) -> httpx.Request:
        return client.build_request(
            "POST", EXECUTE_PATH,
            json={"tool": invocation.tool.unprefixed_name, "arguments": invocation.arguments},
            headers=self._context_headers(invocation.context),
        )

    def _result(self, invocation: Invocation, status: int, data: bytes) -> Any:
        name = invocation.tool.name
        try:
            body = _loads(data)
        except ValueError:
            raise ExecutionError(
                f"{name}: the server answered HTTP {status} with a body that is not JSON.",
                tool=name,
            ) from None
        if status == 200 and isinstance(body, dict) and "result" in body:
            return body["result"]
        if isinstance(body, dict) and body.get("error") in ErrorCode.__members__:
            message = cap_text(str(body.get("message", "")), MAX_ERROR_BYTES, what="error message")
            raise ToolCallError.from_code(body["error"], message, tool=name)
        raise ExecutionError(f"{name}: the server answered HTTP {status}.", tool=name)

    def _timeout(self, invocation: Invocation, exc: Exception) -> ToolCallError:
        if isinstance(exc, httpx.TimeoutException):
            return ToolTimeoutError(
                f"{invocation.tool.name}: no answer from the server in time.", tool=invocation.tool.name)
        category, reason, retryable = mcs_http.describe_failure(exc) if isinstance(exc, httpx.HTTPError) else (
            "network", type(exc).__name__, True)
        return ExecutionError(
            f"{invocation.tool.name}: cannot reach the server: {reason}.",
            tool=invocation.tool.name, details={"category": category, "retryable": retryable},
        )

    def _call_tool(self, invocation: Invocation) -> Any:
        try:
            status, data = self._exchange(self._request(self._client, invocation), invocation.deadline,
                                          invocation.tool.name)
        except httpx.HTTPError as exc:
            raise self._timeout(invocation, exc) from None
        return self._result(invocation, status, data)

    async def _acall_tool(self, invocation: Invocation) -> Any:
        name = invocation.tool.name
        async with httpx.AsyncClient(base_url=self.url, headers=self._headers, timeout=self.timeout,
                                     transport=mcs_http.async_transport()) as client:
            try:
                with mcs_http.bounded(invocation.deadline):
                    response = await client.send(self._request(client, invocation), stream=True)
                    body = await mcs_http.aread_body(response, max_bytes=self.max_response_bytes,
                                                     deadline=invocation.deadline, tool=name)
            except httpx.HTTPError as exc:
                raise self._timeout(invocation, exc) from None
        self._check_size(body, name)
        return self._result(invocation, response.status_code, body.data)

    def close(self) -> None:
        self._client.close()
