"""Who is calling, and what policies answer.

:class:`AgentContext` travels with every call through the pipeline: policies and hooks
receive it, and tools that declare a parameter of this type get it injected. Its content
comes from the caller and is untrusted input (RFC-0001, section 17).
"""

from __future__ import annotations

import os
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any


def _new_request_id() -> str:
    """32 random hex digits, the form of ``uuid.uuid4().hex`` (without building a UUID)."""
    return os.urandom(16).hex()


_NO_METADATA: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class AgentContext:
    """The identity and request data of one agent call (RFC-0001, section 10).

    Immutable: a policy or hook cannot change what the next one sees.
    """

    agent_id: str = "anonymous"
    model: str | None = None
    request_id: str = field(default_factory=_new_request_id)
    metadata: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        metadata = MappingProxyType(dict(self.metadata)) if self.metadata else _NO_METADATA
        object.__setattr__(self, "metadata", metadata)

    def with_request_id(self, request_id: str | None = None) -> AgentContext:
        """A copy with a new (or given) request id, for the next call of the same agent."""
        return AgentContext(
            agent_id=self.agent_id,
            model=self.model,
            request_id=request_id or _new_request_id(),
            metadata=dict(self.metadata),
        )


def is_context_annotation(annotation: Any) -> bool:
    """Whether a parameter annotated ``annotation`` receives the caller's :class:`AgentContext`.

    True for ``AgentContext`` and for ``AgentContext | None`` (``Optional[AgentContext]``):
    an optional context parameter is injected too (RFC-0001, section 10).
    """
    if annotation is AgentContext:
        return True
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        options = typing.get_args(annotation)
        return AgentContext in options and all(o is AgentContext or o is type(None) for o in options)
    return False


@dataclass(frozen=True, slots=True)
class PolicyDecision:
    """What a policy answers: ``PolicyDecision.allow()`` or ``PolicyDecision.deny(reason)``."""

    allowed: bool
    reason: str | None = None

    @classmethod
    def allow(cls) -> PolicyDecision:
        return _ALLOW

    @classmethod
    def deny(cls, reason: str) -> PolicyDecision:
        if not reason:
            raise ValueError("a denial needs a reason the agent can read")
        return cls(allowed=False, reason=reason)


_ALLOW = PolicyDecision(allowed=True)
