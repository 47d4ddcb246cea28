"""The path every tool call takes, shared by all drivers (DESIGN.md, section 4).

    resolve the tool          TOOL_NOT_FOUND
    repair + validate args    INVALID_INPUT
    policies                  POLICY_DENIED    all must allow; the first denial stops
    circuit breaker           EXECUTION_ERROR  the upstream failed N times in a row (retry_after)
    rate and concurrency      POLICY_DENIED    per agent, refused at once (retry_after)
    on_execute_start          always fires once the call is admitted
    driver call + deadline    TIMEOUT / EXECUTION_ERROR
    output validation         EXECUTION_ERROR
    on_execute_end | on_execute_error   exactly one fires

Guarantees a caller can rely on:

* Policies run before any side effect; a denied call never reaches the driver. The calls
  of one model output are judged together first (:func:`admit_batch`): one refused call
  runs none of them.
* A call refused by a policy, the circuit breaker or the rate limit fires the
  ``on_execute_error`` hooks once with its error, and no ``on_execute_start`` hook: an
  audit log on the end and error hooks sees every admitted or refused call exactly once.
* Once ``on_execute_start`` fired, exactly one of ``on_execute_end`` /
  ``on_execute_error`` fires, also when the call is cancelled or interrupted (the
  ``CancelledError`` or ``KeyboardInterrupt`` then propagates unchanged).
* Policies receive ``args`` as a plain ``dict`` (RFC-0001 section 11), each its own deep
  copy, so ``json.dumps(args)`` works and a policy cannot change the call.
* Hooks observe, they cannot change: they receive a frozen :class:`ExecutionEvent` whose
  ``arguments`` is a private ``dict`` copy, and a private copy of the result; what they
  return is ignored and what they raise is logged (logger ``mcs.pipeline``, with the
  hook, the tool and the phase) and swallowed, so a broken hook never breaks a call.
* Secret-typed arguments (see :mod:`mcs.redaction`) reach the tool only: hooks see
  ``[redacted]``, and their values are scrubbed from every error message and, while the
  call (or its stream) runs, from the records of the libraries drivers send through
  (:data:`~mcs.redaction.LIBRARY_LOGGERS`; gql logs a request's variables at ``DEBUG``).
* An unexpected exception from a tool reaches the caller as a generic
  ``EXECUTION_ERROR`` naming its type only; its text and traceback go to the
  ``mcs.pipeline`` log. Raise a :class:`~mcs.ToolCallError` subclass for a message the
  model should read.
* A call over its deadline raises ``TIMEOUT``. A call whose deadline passed before it
  could start (slow policies or hooks) is not handed to the driver at all, with or
  without controls (``TIMEOUT``, ``details["category"] == "not_started"``). A synchronous call with a deadline that
  the driver does not enforce itself (``enforces_deadline``) runs on a worker thread;
  when that thread overruns, its eventual result is discarded (Python cannot stop a
  thread): tools with side effects should take their own timeouts too. In-process
  function tools run inline by default (:class:`mcs.FunctionDriver`).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import contextvars
import copy
import functools
import logging
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeVar

from mcs._frozen import fillable
from mcs.context import AgentContext, PolicyDecision, new_context
from mcs.errors import (
    ExecutionError,
    PolicyDeniedError,
    ToolCallError,
    ToolTimeoutError,
)
from mcs.limits import CircuitBreaker, RateLimit
from mcs.redaction import SecretMask, redact, scrub, scrub_value, scrubbed_logs, secret_values
from mcs.tools import Tool

logger = logging.getLogger("mcs.pipeline")
_monotonic = time.monotonic  # one global lookup on the bare path, not a module attribute too

Policy = Callable[[AgentContext, str, dict[str, Any]], PolicyDecision]


@dataclass(frozen=True, slots=True)
class ExecutionEvent:
    """What hooks see of one call. ``result``/``error`` are set for the terminal hooks.

    ``arguments`` is a plain ``dict``, a private copy for each hook.
    """

    tool: str
    arguments: dict[str, Any]
    context: AgentContext
    started_at: float
    duration_ms: float | None = None
    result: Any = None
    error: ToolCallError | None = None


Hook = Callable[[ExecutionEvent], object]

_FillableEvent = fillable(ExecutionEvent)


def new_event(
    tool: str, arguments: dict[str, Any], context: AgentContext, started_at: float,
    duration_ms: float | None = None, result: Any = None, error: ToolCallError | None = None,
) -> ExecutionEvent:
    """``ExecutionEvent(tool, arguments, ...)`` built without the frozen dataclass's
    ``__init__`` (filled as a :func:`~mcs._frozen.fillable` object, then made an
    ``ExecutionEvent``): every hooked call makes one when it starts and one when it ends."""
    event: Any = _FillableEvent()
    event.tool = tool
    event.arguments = arguments
    event.context = context
    event.started_at = started_at
    event.duration_ms = duration_ms
    event.result = result
    event.error = error
    event.__class__ = ExecutionEvent
    made: ExecutionEvent = event
    return made


def _event_with(event: ExecutionEvent, arguments: dict[str, Any]) -> ExecutionEvent:
    """``dataclasses.replace(event, arguments=arguments)`` (a hook's own copy of the event)
    for the cost of setting its fields: ``replace`` inspects the dataclass's fields on
    every call, and every hook of every call asks for a copy."""
    return new_event(event.tool, arguments, event.context, event.started_at, event.duration_ms, event.result,
                     event.error)


F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True, slots=True)
class Invocation:
    """One admitted call, as a driver receives it.

    ``arguments`` are validated and repaired. ``deadline`` is a ``time.monotonic()``
    instant or ``None``; network drivers turn :meth:`remaining` into their I/O timeouts.
    ``secret_mask`` locates secret-typed arguments (:mod:`mcs.redaction`); ``upstream``
    names the system the call goes to, for a per-upstream circuit breaker.
    """

    tool: Tool
    arguments: dict[str, Any]
    context: AgentContext
    deadline: float | None = None
    timeout: float | None = None
    secret_mask: SecretMask | None = None
    upstream: str = ""

    def secrets(self) -> list[str]:
        """The secret argument values, to scrub from any text that leaves the call."""
        return secret_values(self.arguments, self.secret_mask)

    def remaining(self) -> float | None:
        """Seconds left before the deadline (never negative), or ``None`` if unbounded."""
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - time.monotonic())


_FillableInvocation = fillable(Invocation)
_context_slot = Invocation.__dict__["context"]
_read_context_slot, _write_context_slot = _context_slot.__get__, _context_slot.__set__
_first_read = threading.Lock()


class _ContextOnRead(Invocation):
    """An :class:`Invocation` built without a context (:func:`new_invocation` with
    ``context=None``): its context is made, as :func:`~mcs.context.new_context` makes one
    (an anonymous agent, a new request id), when something first reads it, and is the same
    object on every later read. Frozen like any invocation."""

    __slots__ = ()

    @property
    def context(self) -> AgentContext:
        context: AgentContext | None = _read_context_slot(self)
        if context is None:
            with _first_read:  # two threads reading it first see one context
                context = _read_context_slot(self)
                if context is None:
                    context = new_context()
                    _write_context_slot(self, context)
        return context

    @context.setter
    def context(self, context: AgentContext) -> None:
        # Reached only through object.__setattr__: the dataclass's __init__ (dataclasses.replace, copies).
        _write_context_slot(self, context)


def new_invocation(
    tool: Tool, arguments: dict[str, Any], context: AgentContext | None, deadline: float | None,
    timeout: float | None, secret_mask: SecretMask | None, upstream: str,
) -> Invocation:
    """``Invocation(tool, arguments, ...)`` with every field given, built without the
    frozen dataclass's ``__init__`` (filled as a :func:`~mcs._frozen.fillable` object, then
    made an ``Invocation``): the driver makes one for every call. The object is the same:
    nothing runs in ``__init__`` but the assignments, and the fields are slots.

    ``context=None``: the call's context is made when first read (an :class:`Invocation`
    whose ``context`` is a property, see :class:`_ContextOnRead`), so a call whose context
    nobody reads (a driver's lane with nothing configured around it) draws no request id."""
    invocation: Any = _FillableInvocation()
    invocation.tool = tool
    invocation.arguments = arguments
    invocation.context = context
    invocation.deadline = deadline
    invocation.timeout = timeout
    invocation.secret_mask = secret_mask
    invocation.upstream = upstream
    invocation.__class__ = Invocation if context is not None else _ContextOnRead
    made: Invocation = invocation
    return made


@dataclass
class Controls:
    """Policies, hooks and limits; a driver and a toolbox each own one and can be combined.

    ``rate_limit`` (a :class:`~mcs.limits.RateLimit`) bounds calls per agent;
    ``circuit_breaker`` (a :class:`~mcs.limits.CircuitBreaker`) fails fast once an
    upstream keeps failing. Both are checked after the policies (see :mod:`mcs.limits`).
    """

    policies: list[Policy] = field(default_factory=list)
    start_hooks: list[Hook] = field(default_factory=list)
    end_hooks: list[Hook] = field(default_factory=list)
    error_hooks: list[Hook] = field(default_factory=list)
    rate_limit: RateLimit | None = None
    circuit_breaker: CircuitBreaker | None = None
    #: When a start hook (an audit log) raises: ``"continue"`` (default), ``"refuse_writes"``
    #: (tools not annotated ``readOnlyHint`` fail closed, read-only tools go on) or
    #: ``"refuse_all"``. A refused call gets ``EXECUTION_ERROR`` and its error hooks.
    hook_failure: Literal["continue", "refuse_writes", "refuse_all"] = "continue"

    def add_policy(self, policy: F) -> F:
        """Register ``policy(context, tool_name, args) -> PolicyDecision``; usable as a decorator."""
        self.policies.append(policy)
        return policy

    def on_execute_start(self, hook: F) -> F:
        self.start_hooks.append(hook)
        return hook

    def on_execute_end(self, hook: F) -> F:
        self.end_hooks.append(hook)
        return hook

    def on_execute_error(self, hook: F) -> F:
        self.error_hooks.append(hook)
        return hook

    def __add__(self, inner: Controls) -> Controls:
        """Outer controls first, then inner (a toolbox's policies run before its drivers')."""
        return Controls(
            policies=[*self.policies, *inner.policies],
            start_hooks=[*self.start_hooks, *inner.start_hooks],
            end_hooks=[*self.end_hooks, *inner.end_hooks],
            error_hooks=[*self.error_hooks, *inner.error_hooks],
            rate_limit=self.rate_limit or inner.rate_limit,
            circuit_breaker=self.circuit_breaker or inner.circuit_breaker,
            hook_failure=self.hook_failure if self.hook_failure != "continue" else inner.hook_failure,
        )

    def is_empty(self) -> bool:
        """Whether there is nothing to run around a call: no policy, hook or limit."""
        return not (
            self.policies or self.start_hooks or self.end_hooks or self.error_hooks
            or self.rate_limit is not None or self.circuit_breaker is not None
        )

    def check_policies(
        self, tool: str, arguments: Mapping[str, Any], context: AgentContext, secrets: Sequence[str] = ()
    ) -> None:
        """Raise :class:`PolicyDeniedError` at the first denial; a policy that breaks denies.

        Policies see the real arguments, so what one raises or gives as a denial's reason
        may quote a secret one: ``secrets`` (the call's secret argument values) are scrubbed
        from its log record and from the denial's message.
        """
        if not self.policies:
            return
        for policy in self.policies:
            try:
                decision = policy(context, tool, private_arguments(arguments))
            except Exception as exc:
                log_exception(exc, secrets, "policy %r raised; the call is denied", policy)
                raise PolicyDeniedError(
                    f"The call to {tool} was denied: a policy could not decide ({type(exc).__name__}).",
                    tool=tool,
                ) from None
            if not isinstance(decision, PolicyDecision):
                raise PolicyDeniedError(
                    f"The call to {tool} was denied: a policy returned no PolicyDecision.",
                    tool=tool,
                )
            if not decision.allowed:  # a reason may quote the arguments: never a secret one
                reason = scrub(str(decision.reason), secrets) if secrets else decision.reason
                raise PolicyDeniedError(f"The call to {tool} was denied by policy: {reason}", tool=tool)

    def judged(self) -> Controls:
        """These controls without their policies, for the calls of a batch whose policies
        :func:`admit_batch` judged already and nothing changed since. The hooks
        and limits are these controls' own objects: the rate budget and the circuit stay shared."""
        return replace(self, policies=[])

    def fire(self, hooks: list[Hook], event: ExecutionEvent, *, owned: bool = False) -> bool:
        """Call each hook with its own copy of ``event``; a hook that raises is logged and
        skipped. ``False`` when one of them raised.

        ``owned``: ``event`` and its ``arguments`` were made for these hooks and nothing
        else holds them, so the last hook is handed ``event`` itself (still its own: every
        other hook got a copy); a terminal event with one hook is not copied again."""
        ok = True
        last = len(hooks) - 1 if owned else -1
        for index, hook in enumerate(hooks):
            try:
                hook(event if index == last else _event_with(event, private_arguments(event.arguments)))
            except Exception:
                ok = False
                phase = "start" if event.duration_ms is None else "error" if event.error is not None else "end"
                logger.exception(
                    "%s hook %s raised on %s; the call goes on",
                    phase, getattr(hook, "__qualname__", repr(hook)), event.tool,
                )
        return ok

    def refuses_after_hook_failure(self, tool: Tool) -> bool:
        """Whether a start hook that raised stops a call of ``tool`` (see ``hook_failure``)."""
        if self.hook_failure == "continue":
            return False
        return self.hook_failure == "refuse_all" or not tool.annotations.get("readOnlyHint", False)


_SCALARS = (str, int, float, bool, type(None))


_SCALAR_TYPES = frozenset(_SCALARS)


def private_arguments(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A ``dict`` copy of ``arguments`` nothing can change the original through: flat
    arguments (the common case) are copied shallowly, nested ones deeply."""
    for value in arguments.values():
        if type(value) not in _SCALAR_TYPES and not isinstance(value, _SCALARS):
            break
    else:
        return dict(arguments)
    copied: dict[str, Any] = _private_copy(dict(arguments))
    return copied


_EMPTY = Controls()
_worker_pool: concurrent.futures.ThreadPoolExecutor | None = None


def _pool() -> concurrent.futures.ThreadPoolExecutor:
    global _worker_pool
    if _worker_pool is None:
        _worker_pool = concurrent.futures.ThreadPoolExecutor(thread_name_prefix="mcs-tool")
    return _worker_pool


#: The attribute (set through ``extra``) of log records written for the operator only: a
#: failure's text and stack. A server that forwards logs to its clients (``mcs serve``'s
#: MCP logging) leaves these records out.
OPERATOR_ONLY = "mcs_operator_only"


def log_exception(exc: BaseException, secrets: Sequence[str], message: str, *args: Any) -> None:
    """Log ``exc`` (its type, text and frames) on ``mcs.pipeline`` with ``secrets`` scrubbed
    from its text, where ``logger.exception`` would write the text as it is; the record is
    :data:`OPERATOR_ONLY` (internals a client must not see: hosts, paths, connection strings)."""
    import traceback

    detail = scrub(f"{type(exc).__name__}: {exc}", list(secrets))
    frames = "".join(traceback.format_tb(exc.__traceback__))
    logger.error(message + ": %s\n%s", *args, detail, frames.rstrip(), extra={OPERATOR_ONLY: True})


def map_exception(exc: BaseException, tool: str, secrets: list[str] | None = None) -> ToolCallError:
    """Translate whatever a driver raised into the error the LLM sees (once, here).

    A :class:`ToolCallError` keeps its message; any other exception becomes a generic
    ``EXECUTION_ERROR`` naming only its type (its text may hold internals: a password,
    a path, a host), and its text and traceback are logged on ``mcs.pipeline``.
    ``secrets`` (secret argument values) are scrubbed from the message, the details and
    the log.
    """
    if isinstance(exc, ToolCallError):
        if exc.tool is None:
            exc.tool = tool
        if secrets:  # the details reach the caller and the error hooks too (a peer's answer quoted there)
            exc.message = scrub(exc.message, secrets)
            exc.args = (exc.message,)
            # (values only: the keys are the driver's own, which the circuit breaker reads)
            exc.details = {key: scrub_value(value, secrets) for key, value in exc.details.items()}
        return exc
    if isinstance(exc, TimeoutError):  # asyncio.TimeoutError too: the same class since 3.11
        return ToolTimeoutError(f"{tool} did not finish in time.", tool=tool)
    log_exception(exc, secrets or (), "%s failed unexpectedly", tool)
    return ExecutionError(
        f"{tool} failed unexpectedly ({type(exc).__name__}); the details are in the server's log.",
        tool=tool,
        details={"category": "internal", "retryable": False},
    )


_ATOMS: frozenset[type] = frozenset({str, int, float, bool, type(None), bytes})
_FAST_COPY_DEPTH = 16


def _private_copy(value: Any, depth: int = 0) -> Any:
    """A deep copy for hooks to keep: JSON-shaped data is copied directly (the common case,
    several times cheaper than :func:`copy.deepcopy`); other objects, and data nested
    deeper than a few levels (which may be cyclic), go through ``copy.deepcopy``. A value
    that cannot be copied is handed over as it is."""
    kind = type(value)
    if kind in _ATOMS:
        return value
    if depth < _FAST_COPY_DEPTH:  # atoms inside are kept as they are, without a call each
        if kind is dict:
            return {key: item if type(item) in _ATOMS else _private_copy(item, depth + 1)
                    for key, item in value.items()}
        if kind is list:
            return [item if type(item) in _ATOMS else _private_copy(item, depth + 1) for item in value]
    try:
        return copy.deepcopy(value)
    except Exception:
        return value


@dataclass(slots=True)
class _Admitted:
    """An admitted call: its hook event (``None`` without hooks) and what to give back."""

    event: ExecutionEvent | None
    release: Callable[[], None] | None = None
    probe: bool = False


def _admit(invocation: Invocation, controls: Controls) -> _Admitted:
    """Check the policies, the circuit breaker and the rate limit, then fire the start
    hooks.

    A refused call fires the error hooks once, with its error, and never the start hooks:
    an audit log on the end and error hooks records every call exactly once, refusals
    included (SECURITY.md F3), and nothing reads a refused call as started.

    Raises:
        PolicyDeniedError: a policy or the rate limit refused the call.
        ExecutionError: the upstream's circuit is open; or a start hook failed and
            ``controls.hook_failure`` refuses the call.
    """
    tool = invocation.tool.name
    hooked = bool(controls.start_hooks or controls.end_hooks or controls.error_hooks)
    try:
        controls.check_policies(tool, invocation.arguments, invocation.context,
                                invocation.secrets() if controls.policies else ())
        probe = False
        if controls.circuit_breaker is not None:
            probe = controls.circuit_breaker.admit(invocation.upstream, tool)
        release = None
        if controls.rate_limit is not None:
            try:
                release = controls.rate_limit.acquire(invocation.context.agent_id, tool)
            except PolicyDeniedError:
                if probe and controls.circuit_breaker is not None:
                    controls.circuit_breaker.abandon(invocation.upstream)
                raise
    except ToolCallError as denial:
        if controls.error_hooks:
            controls.fire(controls.error_hooks, _event_of(invocation, refused_by=denial))
        raise
    if not hooked:
        return _Admitted(None, release, probe)
    event = _event_of(invocation)
    admitted = _Admitted(event, release, probe)
    if not controls.fire(controls.start_hooks, event) and controls.refuses_after_hook_failure(invocation.tool):
        refusal = ExecutionError(
            f"{tool} was not run: the audit hook failed, and calls that change things fail closed.",
            tool=tool, details={"category": "audit_failed", "retryable": True},
        )
        _finish(controls, admitted, invocation, time.perf_counter(), error=refusal, counts=False)
        raise refusal
    return admitted


def admit_batch(batch: Sequence[tuple[int, Invocation, Controls]], count: int) -> None:
    """Judge the policies of every call of one model output before any of them runs.

    ``batch`` holds each call's place in the output (1-based), its invocation and the
    controls whose policies apply to it; ``count`` is how many calls the output holds. The
    first denial stops the judging: its call's error hooks fire once with the refusal (no
    other hook fires: nothing ran) and the refusal is raised.

    Raises:
        PolicyDeniedError: naming the refused call's place and tool, the policy's reason,
            and that none of the ``count`` calls ran (``details``: ``call``, ``calls``,
            ``ran: 0``).
    """
    for place, invocation, controls in batch:
        if not controls.policies:
            continue
        tool = invocation.tool.name
        try:
            controls.check_policies(tool, invocation.arguments, invocation.context, invocation.secrets())
        except PolicyDeniedError as denial:
            refusal = PolicyDeniedError(
                f"{denial.message.rstrip('.')}. It was call {place} of {count} in this response, so none of "
                f"the {count} calls ran; send the others again without it.",
                tool=tool, details={**denial.details, "call": place, "calls": count, "ran": 0},
            )
            if controls.error_hooks:
                controls.fire(controls.error_hooks, _event_of(invocation, refused_by=refusal))
            raise refusal from None


def _event_of(invocation: Invocation, refused_by: ToolCallError | None = None) -> ExecutionEvent:
    """The hooks' view of a call about to run (redacted private arguments, the start time),
    or of a call ``refused_by`` an admission check (no time taken, its error)."""
    return ExecutionEvent(
        tool=invocation.tool.name,
        arguments=redact(private_arguments(invocation.arguments), invocation.secret_mask),
        context=invocation.context,
        started_at=time.time(),
        duration_ms=None if refused_by is None else 0.0,
        error=refused_by,
    )


def _finish(
    controls: Controls, admitted: _Admitted, invocation: Invocation, started: float, *, result: Any = None,
    error: ToolCallError | None = None, counts: bool = True,
) -> None:
    """Give back the rate-limit slot, tell the circuit breaker, and fire the end hooks (or
    the error hooks when ``error`` is set). ``counts=False``: the call was interrupted,
    which says nothing about the upstream."""
    if admitted.release is not None:
        admitted.release()
    breaker = controls.circuit_breaker
    if breaker is not None:
        if counts:
            breaker.record(invocation.upstream, error, probe=admitted.probe)
        elif admitted.probe:  # an interrupted probe says nothing of the upstream: another may go
            breaker.abandon(invocation.upstream)
    event = admitted.event
    hooks = controls.error_hooks if error is not None else controls.end_hooks
    if event is None or not hooks:
        return
    done = ExecutionEvent(
        tool=event.tool,
        arguments=event.arguments,
        context=event.context,
        started_at=event.started_at,
        duration_ms=(time.perf_counter() - started) * 1000.0,
        result=_private_copy(result) if error is None else None,
        error=error,
    )
    controls.fire(hooks, done)


def started_now(invocation: Invocation) -> Invocation:
    """``invocation`` with its deadline started again: ``timeout`` seconds from now. A call
    of a batch gets it as it starts, so the calls before it do not use up its time. An
    invocation without a deadline, or without a ``timeout`` to restart it from, is returned
    as it is (the RFC-0001 server's calls carry a timeout it enforces itself, no deadline)."""
    timeout = invocation.timeout
    if invocation.deadline is None or timeout is None:
        return invocation
    return replace(invocation, deadline=time.monotonic() + timeout)


def run_sync(
    invocation: Invocation,
    call: Callable[[Invocation], Any],
    *,
    controls: Controls = _EMPTY,
    enforces_deadline: bool = False,
    check_output: Callable[[Any], None] | None = None,
) -> Any:
    """Run an admitted call: policies, hooks, deadline, error mapping. Returns the raw result."""
    if controls.is_empty():
        return run_bare(invocation, call, enforces_deadline, check_output)
    tool = invocation.tool.name
    admitted = _admit(invocation, controls)
    started = time.perf_counter()
    _refuse_if_late(controls, admitted, invocation, started)
    # a driver that abandons its thread at the deadline hands the slot on to it (abandon)
    holder = _holding_call.set(admitted) if admitted.release is not None else None
    try:
        result = _call_within_deadline(invocation, call, enforces_deadline, check_output, admitted)
    except BaseException as exc:
        if not isinstance(exc, Exception):  # KeyboardInterrupt, SystemExit: report, never swallow
            _finish(controls, admitted, invocation, started, error=_interrupted(tool, exc), counts=False)
            raise
        error = map_exception(exc, tool, invocation.secrets())
        _finish(controls, admitted, invocation, started, error=error)
        raise error from (None if error is exc else exc)
    finally:
        if holder is not None:
            _holding_call.reset(holder)
    _finish(controls, admitted, invocation, started, result=result)
    return result


def run_bare(
    invocation: Invocation, call: Callable[[Invocation], Any], enforces_deadline: bool = True,
    check_output: Callable[[Any], None] | None = None,
) -> Any:
    """:func:`run_sync` when no policy, hook or limit is set: nothing to admit or report,
    the same deadline and the same error mapping. The defaults are a call whose deadline the
    callee enforces and whose result has no check (a driver's lane, see ``ToolDriver``).
    A call whose deadline passed already is refused as :func:`run_sync` refuses it
    (``TIMEOUT``, ``not_started``), without calling ``call``."""
    deadline = invocation.deadline
    if deadline is not None and deadline <= _monotonic():
        raise _not_started(invocation)
    try:
        if enforces_deadline and check_output is None and invocation.secret_mask is None:
            return call(invocation)  # all _call_within_deadline would do: nothing to scrub, wait for or check
        return _call_within_deadline(invocation, call, enforces_deadline, check_output)
    except Exception as exc:
        error = map_exception(exc, invocation.tool.name, invocation.secrets())
        raise error from (None if error is exc else exc)


def _call_within_deadline(
    invocation: Invocation, call: Callable[[Invocation], Any], enforces_deadline: bool,
    check_output: Callable[[Any], None] | None, admitted: _Admitted | None = None,
) -> Any:
    """``call(invocation)`` inline when there is no deadline or the driver enforces it,
    else on a worker thread abandoned at the deadline (``TIMEOUT``); then the output check.

    An abandoned call that is still running keeps ``admitted``'s rate-limit slot until its
    thread ends: ``concurrent=N`` bounds the calls really running, not those awaited.

    A call with secret-typed arguments runs inside :func:`~mcs.redaction.scrubbed_logs` of
    their values (on the thread that runs it, for as long as it runs)."""
    if invocation.secret_mask is not None:
        call = functools.partial(_call_scrubbed, call)
    if enforces_deadline or invocation.deadline is None:
        result = call(invocation)
    else:
        future = _pool().submit(call, invocation)
        try:
            result = future.result(timeout=invocation.remaining())
        except concurrent.futures.TimeoutError:
            if future.done():  # the call's own TimeoutError (or it ended at the deadline): its answer stands
                return _checked(future.result(), check_output)
            _abandon(future, admitted)
            tool = invocation.tool.name
            raise ToolTimeoutError(
                f"{tool} did not finish within {_seconds(invocation)} and was abandoned.",
                tool=tool,
            ) from None
    return _checked(result, check_output)


def _call_scrubbed(call: Callable[[Invocation], Any], invocation: Invocation) -> Any:
    """``call(invocation)`` with the call's secret argument values kept out of the records
    the libraries a driver sends through write (gql logs a request's variables at ``DEBUG``)."""
    with scrubbed_logs(invocation.secrets):
        return call(invocation)


async def _acall_scrubbed(call: Callable[[Invocation], Awaitable[Any]], invocation: Invocation) -> Any:
    """The async twin of :func:`_call_scrubbed`."""
    with scrubbed_logs(invocation.secrets):
        return await call(invocation)


def _scrubbing(invocation: Invocation) -> contextlib.AbstractContextManager[None]:
    """:func:`~mcs.redaction.scrubbed_logs` of the call's secret argument values, or nothing
    to do when its tool has none (for a stream, open across its items)."""
    if invocation.secret_mask is None:
        return contextlib.nullcontext()
    return scrubbed_logs(invocation.secrets)


def _checked(result: Any, check_output: Callable[[Any], None] | None) -> Any:
    if check_output is not None:
        check_output(result)
    return result


async def run_async(
    invocation: Invocation,
    call: Callable[[Invocation], Awaitable[Any]],
    *,
    controls: Controls = _EMPTY,
    check_output: Callable[[Any], None] | None = None,
) -> Any:
    """The async twin of :func:`run_sync`; the deadline cancels the awaited call."""
    import asyncio  # loaded already when this runs; imported here so the sync path never needs it

    tool = invocation.tool.name
    admitted = _admit(invocation, controls)
    started = time.perf_counter()
    _refuse_if_late(controls, admitted, invocation, started)
    # run_in_thread, under this call, hands the slot on to a thread that outlives it
    holder = _holding_call.set(admitted) if admitted.release is not None else None
    if invocation.secret_mask is not None:
        call = functools.partial(_acall_scrubbed, call)
    try:
        remaining = invocation.remaining()
        if remaining is None:
            result = await call(invocation)
        else:
            try:
                # asyncio.timeout, not wait_for: no extra task per call (Python 3.11+).
                async with asyncio.timeout(remaining) as scope:
                    result = await call(invocation)
            except ToolCallError:
                raise  # the driver's own answer, even one it gave on being cancelled at the deadline
            except TimeoutError:
                if not scope.expired():
                    raise  # the call's own TimeoutError, not the deadline
                raise ToolTimeoutError(
                    f"{tool} did not finish within {_seconds(invocation)} and was cancelled.",
                    tool=tool,
                ) from None
        if check_output is not None:
            check_output(result)
    except asyncio.CancelledError as exc:  # the caller gave up: report, then let it propagate
        _finish(controls, admitted, invocation, started, error=_interrupted(tool, exc), counts=False)
        raise
    except Exception as exc:
        error = map_exception(exc, tool, invocation.secrets())
        _finish(controls, admitted, invocation, started, error=error)
        raise error from (None if error is exc else exc)
    finally:
        if holder is not None:
            _holding_call.reset(holder)
    _finish(controls, admitted, invocation, started, result=result)
    return result


#: The admitted call :func:`run_async` is awaiting (when it holds a rate-limit slot).
_holding_call: contextvars.ContextVar[_Admitted | None] = contextvars.ContextVar("mcs_holding_call", default=None)


async def run_in_thread(call: Callable[[Invocation], Any], invocation: Invocation) -> Any:
    """``await call(invocation)`` run on a worker thread (``asyncio.to_thread``'s job, with
    the context copied). When the awaiting task is cancelled (its deadline, its caller) while
    the thread still runs, the call's rate-limit slot stays taken until the thread ends:
    ``concurrent=N`` bounds the calls really running (:class:`~mcs.ToolDriver`'s default
    ``_acall_tool`` runs ``_call_tool`` this way)."""
    import asyncio

    if invocation.secret_mask is not None:  # a thread that outlives a cancelled call stays scrubbed
        call = functools.partial(_call_scrubbed, call)
    future = _pool().submit(contextvars.copy_context().run, call, invocation)
    try:
        return await asyncio.wrap_future(future)
    except asyncio.CancelledError:
        abandon(future)
        raise


def abandon(future: concurrent.futures.Future[Any]) -> None:
    """Give up waiting for ``future``, the thread that runs the current call (a driver that
    enforces its own deadline calls this when it passes): cancelled if it has not started,
    else the call's rate-limit slot stays taken until the thread ends, so ``concurrent=N``
    bounds the calls really running. For a call run by :func:`run_sync` or
    :func:`run_async`."""
    _abandon(future, _holding_call.get())


def _abandon(future: concurrent.futures.Future[Any], admitted: _Admitted | None) -> None:
    """:func:`abandon` for the call ``admitted`` (``None``: one that holds no slot)."""
    if not future.cancel() and admitted is not None and admitted.release is not None:
        release, admitted.release = admitted.release, None
        future.add_done_callback(lambda _: release())


def _streamed(count: int) -> dict[str, int]:
    """What the end hooks of a stream see as its result: how many items it yielded."""
    return {"streamed": count}


def stream_sync(
    invocation: Invocation,
    open_stream: Callable[[Invocation], Iterator[Any]],
    *,
    controls: Controls = _EMPTY,
) -> Iterator[Any]:
    """Run an admitted streaming call: policies and the start hook before the first item.

    Yields the driver's items as they come. The driver bounds the stream itself (count,
    bytes, time window, ``invocation.deadline``); this function maps its errors once and
    fires exactly one terminal hook, whose result is ``{"streamed": n}``, also when the
    consumer stops early (the driver's iterator is then closed, releasing the stream).
    """
    tool = invocation.tool.name
    admitted = _admit(invocation, controls)
    started = time.perf_counter()
    _refuse_if_late(controls, admitted, invocation, started)
    count = 0
    with _scrubbing(invocation):  # open as long as the stream: its libraries log while it runs
        try:
            stream = open_stream(invocation)  # in the try: a driver that fails opening it is reported too
            for item in stream:
                count += 1
                yield item
        except GeneratorExit:
            _close(stream)
            _finish(controls, admitted, invocation, started, result=_streamed(count))
            raise
        except Exception as exc:
            error = map_exception(exc, tool, invocation.secrets())
            _finish(controls, admitted, invocation, started, error=error)
            raise error from (None if error is exc else exc)
        except BaseException as exc:
            _finish(controls, admitted, invocation, started, error=_interrupted(tool, exc), counts=False)
            raise
    _finish(controls, admitted, invocation, started, result=_streamed(count))


async def stream_async(
    invocation: Invocation,
    open_stream: Callable[[Invocation], AsyncIterator[Any]],
    *,
    controls: Controls = _EMPTY,
) -> AsyncIterator[Any]:
    """The async twin of :func:`stream_sync`."""
    import asyncio

    tool = invocation.tool.name
    admitted = _admit(invocation, controls)
    started = time.perf_counter()
    _refuse_if_late(controls, admitted, invocation, started)
    count = 0
    with _scrubbing(invocation):  # open as long as the stream: its libraries log while it runs
        try:
            stream = open_stream(invocation)  # in the try: a driver that fails opening it is reported too
            async for item in stream:
                count += 1
                yield item
        except GeneratorExit:
            await _aclose(stream)
            _finish(controls, admitted, invocation, started, result=_streamed(count))
            raise
        except asyncio.CancelledError as exc:
            await _aclose(stream)
            _finish(controls, admitted, invocation, started, error=_interrupted(tool, exc), counts=False)
            raise
        except Exception as exc:
            error = map_exception(exc, tool, invocation.secrets())
            _finish(controls, admitted, invocation, started, error=error)
            raise error from (None if error is exc else exc)
    _finish(controls, admitted, invocation, started, result=_streamed(count))


def _close(stream: Iterator[Any]) -> None:
    close = getattr(stream, "close", None)
    if callable(close):
        close()


async def _aclose(stream: AsyncIterator[Any]) -> None:
    aclose = getattr(stream, "aclose", None)
    if callable(aclose):
        await aclose()


def _refuse_if_late(controls: Controls, admitted: _Admitted, invocation: Invocation, started: float) -> None:
    """Raise ``TIMEOUT`` without calling the driver when the call's deadline passed while it
    was being admitted (a slow policy or hook): a call reported as timed out must not go on
    to act. Its terminal hook fires; the circuit breaker does not count it (the upstream
    was never asked)."""
    deadline = invocation.deadline
    if deadline is None or deadline > _monotonic():
        return
    late = _not_started(invocation)
    _finish(controls, admitted, invocation, started, error=late, counts=False)
    raise late


def _not_started(invocation: Invocation) -> ToolTimeoutError:
    """The ``TIMEOUT`` of a call not handed to its driver: its deadline passed first."""
    tool = invocation.tool.name
    return ToolTimeoutError(
        f"{tool} was not run: its deadline ({_seconds(invocation)}) passed before it could start.",
        tool=tool, details={"category": "not_started", "retryable": True},
    )


def _interrupted(tool: str, exc: BaseException) -> ToolCallError:
    return ExecutionError(f"{tool} was interrupted ({type(exc).__name__}) before it finished.", tool=tool)


def _seconds(invocation: Invocation) -> str:
    return f"{invocation.timeout:g} s" if invocation.timeout else "its deadline"
