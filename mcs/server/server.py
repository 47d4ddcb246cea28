"""``McpServer``: the RFC-0001 server, built on the core pipeline.

Every execution takes the same path whatever the transport (HTTP, WebSocket, STDIO):

    on_execute_start                       always, first
    resolve the tool (exact name)          TOOL_NOT_FOUND
    validate arguments (schema, model)     INVALID_INPUT    strict: "5" is not 5
    policies, in order; first denial wins  POLICY_DENIED
    the tool, under its timeout_ms         TIMEOUT / EXECUTION_ERROR
    output checked against its model       EXECUTION_ERROR
    on_execute_end | on_execute_error      exactly one, last

Resolution, validation, policies, the deadline and error mapping are the core's
(:class:`mcs.ToolDriver` and :mod:`mcs.pipeline`). The server fires the start hook
before resolution, so that every execution, including one that is refused, is
observed once and ended once (RFC-0001 section 12): an audit hook sees denied calls.
Arguments are checked strictly, as sent (section 3): the repairs the MCS driver path
makes for LLM output are opt-in here (``strict=False``).

No global state: each server owns its tools, policies, hooks and worker threads.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import functools
import logging
import sys
import uuid
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from mcs import pipeline, prompts
from mcs.context import AgentContext, default_context
from mcs.driver import DriverMeta, ToolDriver
from mcs.errors import (
    ConfigurationError,
    InvalidInputError,
    MissingDependencyError,
    ToolNotFoundError,
    ToolTimeoutError,
)
from mcs.pipeline import Controls, Invocation
from mcs.server.backend import aobserved, observed, timed_out
from mcs.server.connections import ConnectionLimits
from mcs.server.tools import ServerTool, ToolDefinitionError, ToolMetadata
from mcs.server.wire import DEFAULT_MAX_BODY_BYTES, PROTOCOL_VERSION, Outcome
from mcs.tools import Tool, ToolCall

if TYPE_CHECKING:
    from collections.abc import Callable

    from starlette.applications import Starlette

Transport = Literal["http", "websocket", "stdio"]
TRANSPORTS: tuple[str, ...] = ("http", "websocket", "stdio")
_NAMESPACE = uuid.UUID("2b0a3f0e-8d1c-4d57-9b8e-6f7c1e0a0001")
logger = logging.getLogger("mcs.server")
SERVER_EXTRA = "pip install 'mcs-framework[server]'"


def require_server_extra(feature: str) -> None:
    """Raise :class:`MissingDependencyError` naming the extra when the HTTP stack is missing."""
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise MissingDependencyError(
            f"{feature} needs {exc.name!r}, which is not installed: {SERVER_EXTRA}",
            install=SERVER_EXTRA,
        ) from None


class _ToolsDriver(ToolDriver):
    """The server's tools as a core driver, so calls take the core pipeline.

    Deadlines are per tool (``timeout_ms``) and enforced here, on the server's own
    worker threads, so one server's stuck tools cannot starve another server.
    """

    enforces_deadline = True

    def __init__(self, server: McpServer, controls: Controls, max_workers: int) -> None:
        super().__init__(timeout=None, description_mode="inline", on_unknown_tool="error",
                         controls=controls)
        self.meta = DriverMeta(
            id=str(uuid.uuid5(_NAMESPACE, f"{server.name}/{server.version}")),
            name=server.name[:40] or "server",
            version=server.version,
            protocol="RFC-0001",
            transport="in-process",
            spec_format="Pydantic models",
            target_llms=prompts.target_llms(self.prompt_templates),
        )
        self._server = server
        self._executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=max_workers, thread_name_prefix=f"mcs-server-{self.meta.name}"
        )

    def _list_tools(self) -> Iterable[Tool]:
        tools = []
        for server_tool in self._server._tools.values():
            data = server_tool.metadata.model_dump(mode="json")
            tools.append(Tool(
                name=data["name"],
                description=data["description"] or "",
                input_schema=data["input_schema"],
                output_schema=data["output_schema"],
                annotations={"idempotentHint": data["idempotent"]},
            ))
        return tools

    def _builtin_tools(self, tools: Mapping[str, Tool]) -> list[Tool]:
        """None: the wire protocol has no meta-tools, and a server's tool keeps its own name
        (the base class would offer ``describe_tool`` for deep schemas and rename a server
        tool of that name, whose calls would then reach the meta-tool's schema or code)."""
        return []

    def prepare(self, call: ToolCall, context: AgentContext | None = None) -> Invocation:
        return self._prepared(self._resolve(call.name), call.arguments, context)

    def _prepared(self, tool: Tool, arguments: Any, context: AgentContext | None) -> Invocation:
        """The call of ``tool`` (resolved) with ``arguments`` validated once: as sent when the
        server is strict (valid arguments come back unchanged, so the core's repairing check
        would find nothing to do), else with the core's repairs."""
        server_tool = self._server._tools.get(tool.name)
        plan = self._core_tool_plan(tool)
        if server_tool is None or plan.unwraps:  # not one of the server's own tools
            return self._prepared_by_core(tool, arguments, context)
        validator = plan.validator
        checked = validator.validate_as_sent(arguments) if self._server.strict else validator.validate(arguments)
        # ``timeout`` carries the tool's timeout_ms; the deadline is enforced when the tool
        # is handed to a thread, with the RFC's message (a core deadline too would race it).
        return pipeline.new_invocation(tool, checked, context or default_context(), None,
                                       server_tool.metadata.timeout_ms / 1000.0, validator.secret_mask,
                                       plan.upstream)

    def _prepared_by_core(self, tool: Tool, arguments: Any, context: AgentContext | None) -> Invocation:
        if self._server.strict:
            self._validator(tool).validate_as_sent(arguments)
        invocation = super().prepare(ToolCall(name=tool.name, arguments=arguments), context)
        seconds = self._server._tools[invocation.tool.name].metadata.timeout_ms / 1000.0
        return dataclasses.replace(invocation, deadline=None, timeout=seconds)

    async def acall_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, *,
        context: AgentContext | None = None,
    ) -> Any:
        """:meth:`ToolDriver.acall_tool` of one of the server's tools: resolved, validated
        once, run through the core pipeline (policies, limits, the deadline, error mapping)."""
        tool = self._resolve(name)
        if tool.name not in self._server._tools:
            return await super().acall_tool(name, arguments, context=context)
        invocation = self._prepared(tool, dict(arguments or {}), context)
        return await pipeline.run_async(invocation, self._acall_tool, controls=self.controls,
                                        check_output=self._output_check(tool))

    def _call_tool(self, invocation: Invocation) -> Any:
        server_tool = self._server._tools[invocation.tool.name]
        invoke = functools.partial(server_tool.invoke, strict=self._server.strict)
        future = self._executor.submit(invoke, invocation.arguments, invocation.context)
        try:
            return future.result(timeout=invocation.timeout)
        except concurrent.futures.TimeoutError:
            pipeline.abandon(future)  # a rate limit's slot is held until the thread ends
            raise _timed_out(server_tool.metadata) from None

    async def _acall_tool(self, invocation: Invocation) -> Any:
        """The tool on one of the server's threads, awaited from the event loop: one
        hand-off per call (the sync path takes two when a transport calls it from async code)."""
        server_tool = self._server._tools[invocation.tool.name]
        # loop.run_in_executor(...) without its checks and a partial for the keyword
        future = self._executor.submit(
            server_tool.invoke, invocation.arguments, invocation.context, strict=self._server.strict)
        deadline = asyncio.timeout(invocation.timeout)
        try:
            async with deadline:
                return await asyncio.wrap_future(future)
        except TimeoutError:
            if deadline.expired():
                pipeline.abandon(future)  # a rate limit's slot is held until the thread ends
                raise _timed_out(server_tool.metadata) from None
            raise
        except asyncio.CancelledError:  # the caller left
            pipeline.abandon(future)
            raise

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


def _timed_out(meta: ToolMetadata) -> ToolTimeoutError:
    return timed_out(meta.name, meta.timeout_ms, meta.idempotent)


class McpServer:
    """An RFC-0001 server: register tools, policies and hooks, then serve them.

        server = McpServer(name="customer-mcp", version="1.0.0")
        server.add_tool(get_customer)

        @server.add_policy
        def not_in_prod(ctx, tool_name, args): ...

        server.run(host="127.0.0.1", port=8000)      # or server.asgi_app() for any ASGI server

    Keyword arguments beyond the RFC's four: ``max_body_bytes`` (largest request
    body or frame accepted, default 1 MiB), ``max_workers`` (threads that run tools; a
    tool that overran its timeout keeps its thread until it returns), ``strict``
    (default ``True``: arguments must fit the schema as sent, section 3; ``False`` opts
    in to the repairs made for LLM output, such as ``"5"`` read as 5) and
    ``require_policies`` (refuse to serve non-idempotent tools without a policy, section
    17; without it the server logs a warning when it starts).
    """

    def __init__(
        self,
        *,
        name: str,
        version: str,
        transport: str = "http",
        description: str | None = None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        max_workers: int = 32,
        strict: bool = True,
        require_policies: bool = False,
    ) -> None:
        if not isinstance(name, str) or not name:
            raise ConfigurationError("McpServer needs a non-empty name")
        if not isinstance(version, str) or not version:
            raise ConfigurationError("McpServer needs a non-empty version")
        if transport not in TRANSPORTS:
            raise ConfigurationError(
                f"transport must be one of {', '.join(TRANSPORTS)}, got {transport!r}"
            )
        if max_body_bytes < 1024:
            raise ConfigurationError("max_body_bytes must be at least 1024")
        self.name = name
        self.version = version
        self.transport = transport
        self.description = description
        self.max_body_bytes = max_body_bytes
        self.strict = strict
        self.require_policies = require_policies
        self._tools: dict[str, ServerTool[Any, Any]] = {}
        self.controls = Controls()
        # The driver shares the policy list: policies run inside the core pipeline;
        # hooks are fired by execute() so that refused calls are observed too.
        self._driver = _ToolsDriver(self, Controls(policies=self.controls.policies), max_workers)

    # ------------------------------------------------------------------ tools

    def add_tool(self, server_tool: ServerTool[Any, Any]) -> ServerTool[Any, Any]:
        """Register a function decorated with :func:`tool`; returns it (usable as a decorator).

        Raises:
            ToolDefinitionError: not decorated with ``@tool`` (rule ``not-a-tool``), or a
                tool with that name is already registered (rule ``duplicate-name``).
        """
        if not isinstance(server_tool, ServerTool):
            label = getattr(server_tool, "__qualname__", repr(server_tool))
            raise ToolDefinitionError(
                "not-a-tool",
                f"{label} must be decorated with @tool(name=...) before it is registered",
            )
        if server_tool.name in self._tools:
            raise ToolDefinitionError(
                "duplicate-name", f"a tool named {server_tool.name!r} is already registered"
            )
        self._tools[server_tool.name] = server_tool
        self._driver.refresh_tools()
        return server_tool

    def tool(
        self,
        *,
        name: str,
        description: str | None = None,
        timeout_ms: int = 1000,
        idempotent: bool = True,
    ) -> Callable[[Callable[..., Any]], ServerTool[Any, Any]]:
        """``@tool(...)`` and :meth:`add_tool` in one decorator."""

        def wrap(func: Callable[..., Any]) -> ServerTool[Any, Any]:
            return self.add_tool(ServerTool(
                func, name=name, description=description, timeout_ms=timeout_ms,
                idempotent=idempotent, localns=sys._getframe(1).f_locals,
            ))

        return wrap

    @property
    def tools(self) -> tuple[ToolMetadata, ...]:
        """The registered tools' metadata, in registration order (immutable)."""
        return tuple(t.metadata for t in self._tools.values())

    def capabilities(self) -> dict[str, Any]:
        """The body of ``GET /mcp/capabilities`` (a fresh, plain JSON-ready dict)."""
        return {
            "server": self.name,
            "version": self.version,
            "description": self.description,
            "protocol": PROTOCOL_VERSION,
            "tools": [t.metadata.model_dump(mode="json") for t in self._tools.values()],
        }

    # ------------------------------------------------------------------ policies and hooks

    def add_policy(self, policy: pipeline.F) -> pipeline.F:
        """Register ``policy(context, tool_name, args) -> PolicyDecision``; usable as a decorator.

        Policies run in registration order after the arguments are validated; all
        must allow, the first denial stops the call (``POLICY_DENIED``), and a policy
        that raises or returns something else denies.
        """
        return self.controls.add_policy(policy)

    def on_execute_start(self, hook: pipeline.F) -> pipeline.F:
        """Register ``hook(event: ExecutionEvent)``, fired first for every execution."""
        return self.controls.on_execute_start(hook)

    def on_execute_end(self, hook: pipeline.F) -> pipeline.F:
        """Register a hook fired when an execution succeeds (``event.result`` is a copy)."""
        return self.controls.on_execute_end(hook)

    def on_execute_error(self, hook: pipeline.F) -> pipeline.F:
        """Register a hook fired when an execution fails for any reason (``event.error``)."""
        return self.controls.on_execute_error(hook)

    # ------------------------------------------------------------------ executing

    def execute(
        self, tool: str, arguments: Mapping[str, Any] | None = None,
        context: AgentContext | None = None,
    ) -> Outcome:
        """Run one execution through the whole lifecycle; never raises a :class:`ToolCallError`.

        Blocks until the tool returns or its ``timeout_ms`` passes. Hooks fire on the
        calling thread; the tool itself runs on one of the server's worker threads.
        """
        context = context or AgentContext()
        self._share_limits()
        return observed(self.controls, tool, arguments, context,
                        lambda: self._driver.call_tool(tool, self._admitted(tool, arguments), context=context),
                        driver=self._driver)

    async def aexecute(
        self, tool: str, arguments: Mapping[str, Any] | None = None,
        context: AgentContext | None = None,
    ) -> Outcome:
        """Async twin of :meth:`execute`, what the HTTP and WebSocket transports call.

        Validation, policies and hooks run on the event loop (keep policies and hooks
        quick: one that blocks holds up every connection); the tool runs on one of the
        server's worker threads under its ``timeout_ms``.
        """
        context = context or AgentContext()
        self._share_limits()
        return await aobserved(self.controls, tool, arguments, context,
                               lambda: self._driver.acall_tool(tool, self._admitted(tool, arguments), context=context),
                               driver=self._driver)

    def _share_limits(self) -> None:
        """The rate limit and circuit breaker set on :attr:`controls` apply inside the
        pipeline that runs the tool (it shares the policy list already; hooks stay here)."""
        inner = self._driver.controls
        inner.rate_limit = self.controls.rate_limit
        inner.circuit_breaker = self.controls.circuit_breaker

    def _admitted(self, tool: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        if not isinstance(arguments, Mapping):
            raise InvalidInputError("'arguments' must be a JSON object.", tool=tool)
        if tool not in self._tools:
            raise ToolNotFoundError(_not_found(tool, self._tools), tool=tool)
        return dict(arguments)

    def check_policies_present(self) -> None:
        """Section 17, "policies are mandatory for production use": called when serving starts.

        Non-idempotent tools and no policy: a ``ConfigurationError`` with
        ``require_policies``, else a warning on logger ``mcs.server``.
        """
        risky = [t.name for t in self._tools.values() if not t.metadata.idempotent]
        if not risky or self.controls.policies:
            return
        message = (
            f"McpServer {self.name!r} serves non-idempotent tools ({', '.join(risky)}) with no "
            "policy; RFC-0001 section 17 makes policies mandatory in production"
        )
        if self.require_policies:
            raise ConfigurationError(message + ": add one with server.add_policy(...) before serving")
        logger.warning("%s: add one with server.add_policy(...), or pass require_policies=True "
                       "to refuse to start without one", message)

    # ------------------------------------------------------------------ serving

    def asgi_app(
        self, *, host: str = "127.0.0.1", allowed_hosts: Iterable[str] = (),
        allowed_origins: Iterable[str] = (),
    ) -> Starlette:
        """A Starlette (ASGI) app serving HTTP and WebSocket; run it with any ASGI server.

        ``host`` is where it will be bound: on loopback (the default) only the loopback
        names are accepted in ``Host``; ``allowed_hosts`` / ``allowed_origins`` widen the
        DNS-rebinding checks (see :mod:`mcs.server.origins`).

        Raises:
            MissingDependencyError: the ``server`` extra is not installed.
        """
        require_server_extra("McpServer.asgi_app()")
        self.check_policies_present()
        from mcs.server.app import create_app

        return create_app(self, host=host, allowed_hosts=allowed_hosts, allowed_origins=allowed_origins)

    def run(
        self, *, host: str = "127.0.0.1", port: int = 8000, transport: str | None = None,
        log_level: str = "warning", limits: ConnectionLimits | None = None,
    ) -> None:
        """Serve until interrupted: HTTP and WebSocket with uvicorn, or STDIO.

        ``transport`` defaults to the one given to the constructor. ``"http"`` and
        ``"websocket"`` both start the same app (both endpoints are always there).
        ``limits`` bounds slow and numerous HTTP clients (default:
        :class:`~mcs.server.connections.ConnectionLimits`: 10 s for a request head, 30 s
        for its body, 500 connections).
        """
        chosen = transport or self.transport
        if chosen not in TRANSPORTS:
            raise ConfigurationError(f"transport must be one of {', '.join(TRANSPORTS)}")
        from mcs.server.runner import serve

        self.check_policies_present()
        serve(self, transport=chosen, host=host, port=port, log_level=log_level, limits=limits)

    def close(self) -> None:
        """Stop the worker threads (tools still running are abandoned)."""
        self._driver.close()

    def __repr__(self) -> str:
        return f"<McpServer {self.name!r} {self.version} tools={list(self._tools)}>"


def _not_found(name: str, tools: Mapping[str, Any]) -> str:
    from mcs.parsing.attempts import unknown_tool_message

    return unknown_tool_message(name, list(tools))
