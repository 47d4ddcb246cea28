"""What the transports serve: an :class:`McpServer`, or any core driver (``mcs serve``).

Transports only need :class:`Backend`: a name, a version, a body limit, the
capabilities document, and ``execute`` (blocking) and ``aexecute`` (for async
transports), which never raise a tool error.

Both backends follow one rule for hooks (RFC-0001 section 12): ``on_execute_start``
fires for every execution, before the tool is even resolved, and exactly one terminal
hook follows, so an audit hook sees unknown tools, invalid arguments and denials too
(:func:`observed`).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from mcs import discovery, pipeline
from mcs.context import AgentContext
from mcs.driver import ToolDriver
from mcs.errors import (
    ExecutionError,
    InvalidInputError,
    ToolCallError,
    ToolNotFoundError,
    ToolTimeoutError,
)
from mcs.pipeline import Controls, Invocation
from mcs.redaction import redact, secret_values
from mcs.server.tools import ToolMetadata
from mcs.server.wire import DEFAULT_MAX_BODY_BYTES, PROTOCOL_VERSION, Outcome
from mcs.tools import Tool, ToolCall


class Backend(Protocol):
    """The surface transports use (implemented by :class:`~mcs.server.McpServer`)."""

    name: str
    version: str
    max_body_bytes: int

    def capabilities(self) -> dict[str, Any]: ...

    def execute(
        self, tool: str, arguments: Mapping[str, Any] | None = None,
        context: AgentContext | None = None,
    ) -> Outcome: ...

    async def aexecute(
        self, tool: str, arguments: Mapping[str, Any] | None = None,
        context: AgentContext | None = None,
    ) -> Outcome: ...


def observed(
    controls: Controls, tool: str, arguments: Any, context: AgentContext, run: Callable[[], Any],
    *, driver: ToolDriver | None = None,
) -> Outcome:
    """Run one execution under the RFC's hook rule; never raises a tool error.

    ``controls``' start hooks fire first, then ``run()`` (which resolves, validates,
    checks policies and calls the tool, with no hooks of its own), then exactly one of
    the end hooks (with a private copy of the result) or the error hooks.

    With the ``driver`` that runs it, secret-typed arguments are redacted in the hooks'
    events and scrubbed from the error, and ``controls.hook_failure`` can fail the call
    closed when a start hook raised (see :class:`~mcs.pipeline.Controls`).
    """
    mask = driver.secret_mask_of(tool) if driver is not None else None
    seen, audited = _started(controls, tool, arguments, context, mask)
    started = time.perf_counter()
    try:
        if not audited and _refuses_unaudited(controls, driver, tool):
            raise _unaudited(tool)
        result = run()
    except Exception as exc:
        return _failed(controls, tool, context, seen, started, exc, secret_values(arguments, mask))
    return _succeeded(controls, tool, context, seen, started, result)


async def aobserved(
    controls: Controls, tool: str, arguments: Any, context: AgentContext,
    run: Callable[[], Awaitable[Any]], *, driver: ToolDriver | None = None,
) -> Outcome:
    """The async twin of :func:`observed`: ``run()`` is awaited; hooks fire on the loop's thread."""
    mask = driver.secret_mask_of(tool) if driver is not None else None
    seen, audited = _started(controls, tool, arguments, context, mask)
    started = time.perf_counter()
    try:
        if not audited and _refuses_unaudited(controls, driver, tool):
            raise _unaudited(tool)
        result = await run()
    except Exception as exc:
        return _failed(controls, tool, context, seen, started, exc, secret_values(arguments, mask))
    return _succeeded(controls, tool, context, seen, started, result)


#: What the terminal hooks' event keeps of the start: the hooks' (redacted, private) copy of
#: the arguments and the start time.
_Seen = tuple[dict[str, Any], float]


def _started(
    controls: Controls, tool: str, arguments: Any, context: AgentContext, mask: Any,
) -> tuple[_Seen | None, bool]:
    """Fire the start hooks: what the terminal hooks' event keeps of the start (``None``
    without hooks), and whether every start hook succeeded. The start event is built only
    when a start hook is there to receive it."""
    if not (controls.start_hooks or controls.end_hooks or controls.error_hooks):
        return None, True
    seen = (redact(_copy(arguments), mask), time.time())
    if not controls.start_hooks:
        return seen, True
    return seen, controls.fire(controls.start_hooks, pipeline.new_event(tool, seen[0], context, seen[1]))


def _unaudited(tool: str) -> ExecutionError:
    return ExecutionError(
        f"{tool} was not run: the audit hook failed, and calls that change things fail closed.",
        tool=tool, details={"category": "audit_failed", "retryable": True},
    )


def _failed(
    controls: Controls, tool: str, context: AgentContext, seen: _Seen | None, started: float,
    exc: Exception, secrets: list[str],
) -> Outcome:
    error = pipeline.map_exception(exc, tool, secrets)
    if seen is not None and controls.error_hooks:
        controls.fire(controls.error_hooks, pipeline.new_event(
            tool, seen[0], context, seen[1], _ms(started), error=error), owned=True)
    return Outcome(tool=tool, request_id=context.request_id, error=error)


def _succeeded(
    controls: Controls, tool: str, context: AgentContext, seen: _Seen | None, started: float,
    result: Any,
) -> Outcome:
    if seen is not None and controls.end_hooks:
        controls.fire(controls.end_hooks, pipeline.new_event(
            tool, seen[0], context, seen[1], _ms(started), pipeline._private_copy(result)), owned=True)
    return Outcome(tool=tool, request_id=context.request_id, result=result)


def _refuses_unaudited(controls: Controls, driver: ToolDriver | None, tool: str) -> bool:
    if controls.hook_failure == "continue":
        return False
    found = driver.get_tool(tool) if driver is not None else None
    return found is None or controls.refuses_after_hook_failure(found)


def without_hooks(controls: Controls) -> Controls:
    """``controls`` with its policies (and everything else) but no hooks: :func:`observed` fires those."""
    return dataclasses.replace(controls, start_hooks=[], end_hooks=[], error_hooks=[])


class DriverBackend:
    """Serve any :class:`~mcs.ToolDriver` (a toolbox too) over the RFC-0001 wire protocol.

    The driver's own pipeline applies (its policies, its timeout); tool names must match
    exactly. The driver's hooks follow the RFC's rule (see :func:`observed`): its start
    hook fires for every execution, refused ones included. With ``strict`` (the default,
    the RFC's section 3) arguments must fit the input schema as sent: the repairs the MCS
    driver path makes for LLM output (``"5"`` read as 5) are not made. That check is the
    driver's own, so what it adds applies (the gRPC driver's protobuf JSON forms, its check
    of ``google.protobuf.Any`` values). Each tool's
    ``timeout_ms`` is the driver's timeout (``0`` when it has none); ``idempotent`` comes
    from the tool's ``idempotentHint`` (or ``readOnlyHint``) annotation and is ``False``
    when the spec does not say.

    The advertised ``timeout_ms`` holds whatever the driver does with its timeout (a
    :class:`~mcs.FunctionDriver` runs a sync function inline, unbounded): each call runs on
    one of the backend's ``max_workers`` threads and the caller waits at most the timeout,
    counted from when the request arrived, then gets ``TIMEOUT``. As with
    :class:`~mcs.server.McpServer`, an overrunning call is not stopped: it keeps its
    thread until it returns, and its result is discarded.
    """

    def __init__(
        self, driver: ToolDriver, *, name: str | None = None, version: str | None = None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES, strict: bool = True, max_workers: int = 32,
    ) -> None:
        self.driver = driver
        self.name = name or driver.meta.name
        self.version = version or driver.meta.version
        self.max_body_bytes = max_body_bytes
        self.strict = strict
        self._executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=max_workers, thread_name_prefix=f"mcs-serve-{self.name[:40]}")

    def _metadata(self, tool: Tool) -> ToolMetadata:
        return ToolMetadata(
            name=tool.name,
            description=tool.description or None,
            input_schema=dict(tool.input_schema),
            output_schema=dict(tool.output_schema or {}),
            timeout_ms=_timeout_ms(self.driver.timeout),
            idempotent=_idempotent(tool),
        )

    def capabilities(self) -> dict[str, Any]:
        return {
            "server": self.name,
            "version": self.version,
            "description": None,
            "protocol": PROTOCOL_VERSION,
            "tools": [self._metadata(t).model_dump(mode="json") for t in self.driver.list_tools()],
        }

    def execute(
        self, tool: str, arguments: Mapping[str, Any] | None = None,
        context: AgentContext | None = None,
    ) -> Outcome:
        """Run one execution; blocks at most the tool's timeout (never raises a tool error)."""
        return self._execute(tool, arguments, context, time.monotonic())

    async def aexecute(
        self, tool: str, arguments: Mapping[str, Any] | None = None,
        context: AgentContext | None = None,
    ) -> Outcome:
        """:meth:`execute` on a worker thread; the timeout counts from this call, so time
        spent waiting for that thread is part of it."""
        return await asyncio.to_thread(self._execute, tool, arguments, context, time.monotonic())

    def _execute(
        self, tool: str, arguments: Mapping[str, Any] | None, context: AgentContext | None, arrived: float,
    ) -> Outcome:
        from mcs.cli import to_jsonable

        context = context or AgentContext()
        named, named_arguments = self._named(tool, arguments)
        # The result made JSON inside the execution: one that cannot be (nested too deeply
        # to walk) is the tool's EXECUTION_ERROR, seen by the error hooks.
        return observed(self.driver.controls, named, named_arguments, context,
                        lambda: to_jsonable(self._run(tool, arguments, context, arrived)), driver=self.driver)

    def close(self) -> None:
        """Stop the worker threads (calls still running are abandoned)."""
        self._executor.shutdown(wait=False, cancel_futures=True)

    def _named(self, name: str, arguments: Any) -> tuple[str, Any]:
        """The tool and arguments the hooks see: for discovery mode's ``call_tool``, the tool
        it names (with that tool's secrets to redact), as on the driver's own path; the
        call itself still goes through ``call_tool``. Unchanged when nothing is named."""
        meta = self.driver.get_tool(name)
        if meta is None or not discovery.is_call_tool(meta) or not isinstance(arguments, Mapping):
            return name, arguments
        try:
            inner_name, inner = discovery.unwrap_call(meta, arguments)
        except ToolCallError:
            return name, arguments
        target = self.driver.get_tool(inner_name.strip())
        if target is None or discovery.is_meta_tool(target):
            return name, arguments
        return target.name, inner

    def _run(self, name: str, arguments: Any, context: AgentContext, arrived: float) -> Any:
        if not isinstance(arguments, Mapping):
            raise InvalidInputError("'arguments' must be a JSON object.", tool=name)
        tools = {t.name: t for t in self.driver.list_tools()}
        tool = tools.get(name)
        if tool is None:
            names = ", ".join(list(tools)[:20])
            raise ToolNotFoundError(f"There is no tool named {name!r}. Available tools: {names}.", tool=name)
        if self.strict:  # the driver's own check (a driver may read more forms than the schema's)
            self.driver._validator(tool).validate_as_sent(dict(arguments))
        driver = self.driver
        invocation = driver.prepare(ToolCall(name=name, arguments=dict(arguments)), context)
        handler, controls = driver._handler(invocation.tool), without_hooks(driver.controls)
        if invocation.timeout is None:
            return driver._run(invocation, handler, controls)
        return self._within_timeout(
            dataclasses.replace(invocation, deadline=arrived + invocation.timeout),
            lambda inv: driver._run(inv, handler, controls))

    def _within_timeout(self, invocation: Invocation, run: Callable[[Invocation], Any]) -> Any:
        """``run(invocation)`` on one of the backend's threads, waited for until the deadline."""
        future = self._executor.submit(run, invocation)
        try:
            return future.result(timeout=invocation.remaining())
        except concurrent.futures.TimeoutError:
            if future.done():  # the call's own TimeoutError, or it ended at the deadline
                return future.result()
            future.cancel()
            tool = invocation.tool
            raise timed_out(tool.name, _timeout_ms(invocation.timeout), _idempotent(tool)) from None


def _timeout_ms(timeout: float | None) -> int:
    """A driver's timeout as the ``timeout_ms`` its tools advertise (``0``: none), rounded
    to the millisecond (``int()`` read 1.001 s as 1000 ms)."""
    return round(timeout * 1000) if timeout else 0


def _idempotent(tool: Tool) -> bool:
    """Whether a retry of ``tool`` is safe, as its annotations say (``idempotentHint``, else
    ``readOnlyHint``; ``False`` when they do not)."""
    hints = tool.annotations
    return bool(hints.get("idempotentHint", hints.get("readOnlyHint", False)))


def timed_out(tool: str, timeout_ms: int, idempotent: bool) -> ToolTimeoutError:
    """The ``TIMEOUT`` of a call that overran ``timeout_ms``; it says whether a retry is safe."""
    retry = (
        "It is idempotent: retrying is safe."
        if idempotent
        else "It is not idempotent and may still complete: check its effect before retrying."
    )
    return ToolTimeoutError(
        f"{tool} did not finish within its timeout of {timeout_ms} ms; "
        f"its result will be discarded. {retry}",
        tool=tool,
    )


def _copy(arguments: Any) -> dict[str, Any]:
    if not isinstance(arguments, Mapping):
        return {}
    try:
        return pipeline.private_arguments(arguments)
    except Exception:
        return dict(arguments)


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0
