"""The pipeline events of the inspector's own calls: each policy's decision and each hook.

:class:`CallRecorder` attaches to a driver's :class:`~mcs.pipeline.Controls`: it wraps
each registered policy (the decision is recorded, then returned unchanged) and adds one
hook per stage. Events are kept by the call's ``AgentContext.request_id``, so the page
shows the events of one call, and of the calls of one reply (``id``, ``id.1``...).
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from typing import Any

from mcs.context import AgentContext, PolicyDecision
from mcs.pipeline import Controls, ExecutionEvent, Policy

#: Events kept for calls nobody collected (a call still running when its page gave up).
MAX_PENDING_CALLS = 256


class CallRecorder:
    """Collects policy decisions and hook firings by request id; thread-safe."""

    def __init__(self) -> None:
        self._events: dict[str, list[dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def attach(self, controls: Controls, where: str) -> None:
        """Record the policies and hooks of ``controls`` (labelled ``where`` on the page)."""
        controls.policies[:] = [self._recording(policy, where) for policy in controls.policies]
        for stage, hooks in (
            ("on_execute_start", controls.start_hooks),
            ("on_execute_end", controls.end_hooks),
            ("on_execute_error", controls.error_hooks),
        ):
            hooks.append(functools.partial(self._hook, stage, where, hooks))

    def take(self, request_id: str, since: float) -> list[dict[str, Any]]:
        """The events of ``request_id`` and its numbered sub-calls, in order, then forgotten.

        ``at_ms`` of each event counts from ``since`` (a ``time.perf_counter()`` instant).
        """
        with self._lock:
            keys = [k for k in self._events if k == request_id or k.startswith(request_id + ".")]
            events = [event for key in keys for event in self._events.pop(key)]
        events.sort(key=lambda event: event["at"])
        return [
            {**{k: v for k, v in event.items() if k != "at"}, "at_ms": round((event["at"] - since) * 1000, 2)}
            for event in events
        ]

    def _add(self, context: AgentContext, event: dict[str, Any]) -> None:
        event["at"] = time.perf_counter()
        event["request_id"] = context.request_id
        with self._lock:
            if context.request_id not in self._events and len(self._events) >= MAX_PENDING_CALLS:
                self._events.pop(next(iter(self._events)))
            self._events.setdefault(context.request_id, []).append(event)

    def _recording(self, policy: Policy, where: str) -> Policy:
        name = _name_of(policy)

        def recorded(context: AgentContext, tool: str, arguments: dict[str, Any]) -> PolicyDecision:
            try:
                decision = policy(context, tool, arguments)
            except Exception as exc:
                self._add(context, {"kind": "policy", "name": name, "where": where, "tool": tool,
                                    "outcome": "raised", "detail": type(exc).__name__})
                raise
            allowed = isinstance(decision, PolicyDecision) and decision.allowed
            detail = getattr(decision, "reason", None) if isinstance(decision, PolicyDecision) else "no PolicyDecision"
            self._add(context, {"kind": "policy", "name": name, "where": where, "tool": tool,
                                "outcome": "allow" if allowed else "deny", "detail": detail})
            return decision

        recorded.__qualname__ = name
        return recorded

    def _hook(self, stage: str, where: str, hooks: list[Any], event: ExecutionEvent) -> None:
        record: dict[str, Any] = {"kind": "hook", "name": stage, "where": where, "tool": event.tool,
                                  "hooks": [_name_of(h) for h in hooks if not _is_ours(h)]}
        if event.duration_ms is not None:
            record["duration_ms"] = round(event.duration_ms, 2)
        if event.error is not None:
            record["outcome"] = event.error.code.value
            record["detail"] = event.error.message
        self._add(event.context, record)


def _is_ours(hook: Any) -> bool:
    return isinstance(hook, functools.partial) and isinstance(getattr(hook.func, "__self__", None), CallRecorder)


def _name_of(function: Callable[..., Any]) -> str:
    return str(getattr(function, "__qualname__", None) or getattr(function, "__name__", None) or repr(function))
