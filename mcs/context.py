"""Who is calling, what the caller's client can do, and what policies answer.

:class:`AgentContext` travels with every call through the pipeline: policies and hooks
receive it, and tools that declare a parameter of this type get it injected. Its content
comes from the caller and is untrusted input (RFC-0001, section 17).

A tool can also talk back to the caller's client through it: report progress
(``await ctx.report_progress(done, total, message)``), ask the user for input
(``await ctx.elicit(message, schema)``), ask the client's model for a completion
(``await ctx.sample(prompt)``) or read the client's roots (``await ctx.list_roots()``).
What answers is the context's :class:`Session`: ``mcs serve`` attaches one that speaks
MCP to the client; everywhere else the default session drops progress and refuses the
rest with a :class:`~mcs.errors.SessionUnavailableError` the model can read. A loop that
wants to answer itself passes ``AgentContext(session=MySession())``.
"""

from __future__ import annotations

import os
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from mcs._frozen import fillable
from mcs.errors import SessionUnavailableError

_ID_BATCH = 256
# Request ids drawn ahead from os.urandom in one read (one system call per _ID_BATCH ids);
# list.pop is atomic, so two threads never get the same id. A forked child draws its own.
_spare_ids: list[str] = []
os.register_at_fork(after_in_child=_spare_ids.clear)


def _new_request_id() -> str:
    """32 random hex digits, the form of ``uuid.uuid4().hex`` (without building a UUID)."""
    try:
        return _spare_ids.pop()
    except IndexError:
        # The hex digits of each 16 bytes apart, split by the C code of bytes.hex and str.split.
        batch = os.urandom(16 * _ID_BATCH).hex(" ", 16).split(" ")
        first = batch.pop()
        _spare_ids.extend(batch)
        return first


_NO_METADATA: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Root:
    """A root the client exposes (a folder or a repository the user works in)."""

    uri: str
    name: str | None = None


@dataclass(frozen=True, slots=True)
class Elicited:
    """The user's answer to :meth:`AgentContext.elicit`.

    ``action`` is ``"accept"`` (``content`` holds the form's values), ``"decline"`` or
    ``"cancel"``.
    """

    action: Literal["accept", "decline", "cancel"]
    content: Mapping[str, Any] | None = None

    @property
    def accepted(self) -> bool:
        return self.action == "accept"


@dataclass(frozen=True, slots=True)
class Sampled:
    """The client model's reply to :meth:`AgentContext.sample`.

    ``text`` is the reply's text (empty when it is not text; ``content`` then holds the
    block as the client sent it).
    """

    text: str
    model: str | None = None
    stop_reason: str | None = None
    content: Any = None


class Session:
    """What the caller's client can do for a running tool; the base class can do nothing.

    Progress is dropped; :meth:`sample`, :meth:`elicit`, :meth:`elicit_url` and
    :meth:`list_roots` raise :class:`~mcs.errors.SessionUnavailableError`, whose message
    tells the model the tool needs an interactive client. Subclass it to answer from your
    own loop (ask on the terminal, call your own model) and pass the instance as
    ``AgentContext(session=...)``; ``mcs serve`` attaches one that speaks MCP.
    """

    #: What the session is, for messages ("none", "mcp", ...).
    kind: str = "none"

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Tell the client how far the call is; a no-op when nobody listens."""
        return None

    async def sample(
        self,
        messages: str | Sequence[Mapping[str, Any]],
        *,
        max_tokens: int = 1000,
        system_prompt: str | None = None,
        temperature: float | None = None,
        stop_sequences: Sequence[str] | None = None,
        model_preferences: Mapping[str, Any] | None = None,
    ) -> Sampled:
        """Ask the client's model for a completion (MCP ``sampling/createMessage``).

        ``messages`` is a prompt, or ``[{"role": "user"|"assistant", "content": str}]``.
        """
        raise self.unavailable("sampling", "ask the client's language model for a completion")

    async def elicit(self, message: str, schema: Mapping[str, Any]) -> Elicited:
        """Ask the user to fill a form: ``schema`` is a flat JSON Schema object of
        strings, numbers, booleans and enums (defaults allowed)."""
        raise self.unavailable("elicitation", "ask the user for input")

    async def elicit_url(self, message: str, url: str, elicitation_id: str) -> Elicited:
        """Send the user to ``url`` for something that must not pass through the model
        (a login, a payment); the answer says whether they agreed to go."""
        raise self.unavailable("elicitation", "send the user to a web page")

    async def list_roots(self) -> list[Root]:
        """The roots (folders, repositories) the client exposes."""
        raise self.unavailable("roots", "read the client's roots")

    async def close_stream(self) -> None:
        """Let go of the client's connection while the call goes on (the client
        reconnects and receives the result); a no-op where there is no such stream."""
        return None

    def unavailable(self, feature: str, purpose: str) -> SessionUnavailableError:
        """The error for a feature this session cannot provide (subclasses reuse it)."""
        return SessionUnavailableError(
            f"This tool needs to {purpose} ({feature}), which is only possible when it is "
            "called by an interactive client (an MCP client connected to `mcs serve`). "
            "It cannot do that here: answer without this tool, or ask the user yourself.",
            details={"feature": feature, "session": self.kind},
        )


#: The session of a context nobody attached one to.
NO_SESSION = Session()


@dataclass(frozen=True, slots=True)
class AgentContext:
    """The identity and request data of one agent call (RFC-0001, section 10).

    Immutable: a policy or hook cannot change what the next one sees. ``session`` is
    what the caller's client can do for the tool (see the module docstring); it is not
    part of equality or ``repr``.
    """

    agent_id: str = "anonymous"
    model: str | None = None
    request_id: str = field(default_factory=_new_request_id)
    metadata: Mapping[str, str] = field(default_factory=dict)
    session: Session = field(default=NO_SESSION, compare=False, repr=False)

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
            session=self.session,
        )

    # -- talking back to the caller's client (see Session)

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report how far the call is (``notifications/progress`` under ``mcs serve``);
        a no-op when the caller asked for no progress or there is no client."""
        await self.session.report_progress(progress, total, message)

    async def sample(self, messages: str | Sequence[Mapping[str, Any]], **options: Any) -> Sampled:
        """Ask the client's model for a completion; see :meth:`Session.sample`.

        Raises:
            SessionUnavailableError: no client here can sample (the message says why).
        """
        return await self.session.sample(messages, **options)

    async def elicit(self, message: str, schema: Mapping[str, Any]) -> Elicited:
        """Ask the user to fill a form; see :meth:`Session.elicit`.

        Raises:
            SessionUnavailableError: no client here can ask the user.
        """
        return await self.session.elicit(message, schema)

    async def elicit_url(self, message: str, url: str, elicitation_id: str) -> Elicited:
        """Send the user to a URL; see :meth:`Session.elicit_url`."""
        return await self.session.elicit_url(message, url, elicitation_id)

    async def list_roots(self) -> list[Root]:
        """The client's roots; see :meth:`Session.list_roots`."""
        return await self.session.list_roots()


_FillableContext = fillable(AgentContext)


def default_context() -> AgentContext:
    """``AgentContext()`` (an anonymous agent, a new request id, no metadata, no session),
    built as :func:`new_context` builds it: the pipeline makes one for every call that comes
    without a context."""
    return new_context()


def new_context(
    agent_id: str = "anonymous", model: str | None = None, request_id: str | None = None,
    metadata: Mapping[str, str] | None = None,
) -> AgentContext:
    """``AgentContext(agent_id=..., model=..., request_id=..., metadata=...)`` (no session;
    a new request id when none is given), built without the frozen dataclass's per-field
    machinery (filled as a :func:`~mcs._frozen.fillable` object, then made an
    ``AgentContext``): a transport makes one for every request, the core one for every call
    that comes without one."""
    context: Any = _FillableContext()
    context.agent_id = agent_id
    context.model = model
    if request_id is None:
        try:
            request_id = _spare_ids.pop()  # _new_request_id()'s first step, without its frame
        except IndexError:
            request_id = _new_request_id()
    context.request_id = request_id
    context.metadata = MappingProxyType(dict(metadata)) if metadata else _NO_METADATA
    context.session = NO_SESSION
    context.__class__ = AgentContext
    made: AgentContext = context
    return made


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
