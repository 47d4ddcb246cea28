"""The MCS driver contract, and the base class drivers are built on.

:class:`MCSDriver` is the seed's contract (``model-context-standard-spec.md``, section 3):
a function description, a system message, and ``process_llm_response`` that executes
the call(s) it finds and returns the raw result, or the input object itself when the
response holds no call for this driver, so drivers chain (``result is llm_response``).

:class:`ToolDriver` is what a driver author subclasses. Like python-can's ``BusABC`` it
asks for two things only:

* :meth:`ToolDriver._list_tools`: the driver's tools as neutral :class:`~mcs.Tool`\\ s;
* :meth:`ToolDriver._call_tool`: run one tool with validated arguments
  (and optionally :meth:`ToolDriver._acall_tool`, its native async twin).

Everything shared lives here once: rendering, prompt selection, parsing, name
resolution, argument repair and validation, policies, hooks, deadlines, error mapping.

This is a package so that the MCS reference SDK's drivers (``mcs.driver.core``,
``mcs.driver.rest``...) can sit beside it: ``__path__`` is extended over every
``mcs/driver`` folder on ``sys.path``.
"""

from __future__ import annotations

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)

import functools
import math
import time
from abc import ABC, abstractmethod
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Mapping,
)
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar, Literal, NamedTuple, Self

from mcs import discovery, pipeline, prompts
from mcs.context import AgentContext, default_context, new_context
from mcs.driver import _identity
from mcs.errors import (
    ConfigurationError,
    ExecutionError,
    InvalidInputError,
    ToolCallError,
    ToolNotFoundError,
)
from mcs.limits import CircuitBreaker, RateLimit
from mcs.pipeline import Controls, Invocation
from mcs.redaction import SecretMask
from mcs.tools import Tool, ToolCall, sanitize_tool_name

# Imported where first used, so that importing a driver stays cheap: the parser (on the first
# model output), the JSON Schema validators (on the first call), YAML (with the first prompt
# template), asyncio (on the first async call).
if TYPE_CHECKING:
    from mcs.driver._meta import DriverMeta as DriverMeta
    from mcs.validation import ArgumentValidator, ResultValidator

MCS_SPEC_VERSION = "0.1"
#: How many calls one model output may run at most, unless a driver says otherwise.
DEFAULT_MAX_CALLS_PER_RESPONSE = 32

KNOWN_CAPABILITIES = frozenset(
    {"healthcheck", "cache", "status", "stream", "prompts", "resources", "completions", "list_changed"}
)
#: ``Tool.meta`` key of the ``describe_tool`` an inline description with cut schemas points
#: to: callable, not in :meth:`ToolDriver.list_tools` (listed tools carry whole schemas).
_UNLISTED = "mcs_inline_describe"

_CAPABILITY_METHODS = {
    "healthcheck": "healthcheck",
    "cache": "warmup",
    "status": "get_status",
    "stream": "stream_call",
    "prompts": "prompts",
    "resources": "resources",
    "completions": "complete",
    "list_changed": "add_change_listener",
}

#: What changed, for :meth:`ToolDriver.add_change_listener`: a list of tools, prompts or
#: resources, or (``"resource"``) the content of one resource, whose URI is given.
ChangeKind = Literal["tools", "prompts", "resources", "resource"]
ChangeListener = Callable[[ChangeKind, "str | None"], object]


class MCSDriver(ABC):
    """The contract every driver honours; clients use only these members.

    ``process_llm_response`` accepts a string or a provider's structured message
    (OpenAI, Anthropic, Gemini) and returns the raw result of the call, a list of
    results when the response holds several calls, or ``llm_response`` itself (the
    same object) when it holds no call for this driver.
    """

    meta: DriverMeta

    @abstractmethod
    def get_function_description(self, model_name: str | None = None) -> str: ...

    @abstractmethod
    def get_driver_system_message(self, model_name: str | None = None) -> str: ...

    @abstractmethod
    def process_llm_response(
        self, llm_response: Any, *, context: AgentContext | None = None
    ) -> Any: ...

    async def aprocess_llm_response(
        self, llm_response: Any, *, context: AgentContext | None = None
    ) -> Any:
        """Async twin; the default runs the sync path on a worker thread."""
        import asyncio

        return await asyncio.to_thread(self.process_llm_response, llm_response, context=context)

    def supports(self, capability: str) -> bool:
        """True when ``capability`` is declared in ``meta`` and its method exists.

        Clients feature-detect with this before calling ``healthcheck()``, ``warmup()``,
        ``get_status()`` or ``stream_call()``.
        """
        method = _CAPABILITY_METHODS.get(capability, capability)
        return capability in self.meta.capabilities and callable(getattr(self, method, None))


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """The structured result of one call, for clients that prefer values to exceptions."""

    call: ToolCall
    result: Any = None
    error: ToolCallError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"tool", "id", "result"}`` or ``{"tool", "id", "error", "message"}``."""
        out: dict[str, Any] = {"tool": self.call.name, "id": self.call.id}
        if self.error is None:
            out["result"] = self.result
        else:
            out.update(self.error.to_dict())
        return out


@dataclass(frozen=True, slots=True)
class AuthOption:
    """One way the system behind a driver asks to be authenticated, and how to set it.

    ``name`` is the scheme's name in the spec, ``kind`` what it is (``"http bearer"``,
    ``"apiKey in header X-Key"``, ``"oauth2"``), ``option`` the driver option that sets
    it as written on the command line, ``configured`` whether this driver was given it.
    """

    name: str
    kind: str
    option: str
    configured: bool = False


if not TYPE_CHECKING:  # type checkers see the names imported above, so a misspelt one is an error

    def __getattr__(name: str) -> Any:
        """``DriverMeta`` (a pydantic model) loads pydantic the first time it is read (PEP 562)."""
        if name == "DriverMeta":
            from mcs.driver._meta import DriverMeta

            globals()["DriverMeta"] = DriverMeta
            return DriverMeta
        raise AttributeError(f"module 'mcs.driver' has no attribute {name!r}")


DescriptionMode = Literal["auto", "inline", "discovery"]
UnknownToolMode = Literal["passthrough", "error"]


class _ToolPlan:
    """What every call of one tool needs and no call changes, worked out on its first call
    and kept until :meth:`ToolDriver.refresh_tools`: one dictionary lookup per call
    instead of one method call for each part."""

    __slots__ = ("handler", "lane", "takes_valid_text", "tool", "unwraps", "upstream", "validator")

    def __init__(
        self, tool: Tool, validator: ArgumentValidator, upstream: str,
        handler: Callable[[Invocation], Any] | None, unwraps: bool,
        lane: Callable[[Invocation], Any] | None = None,
    ) -> None:
        from mcs.validation import ArgumentValidator

        self.tool = tool
        self.validator = validator
        #: Whether the validator's validate() is the core's own, which validate_valid_text()
        #: shortcuts (a driver's subclass may rewrite the arguments in its validate(), and
        #: is always asked through it).
        self.takes_valid_text = type(validator).validate is ArgumentValidator.validate
        self.upstream = upstream
        self.handler = handler
        self.unwraps = unwraps  # discovery's call_tool: the call names the tool to run
        #: What runs a call of this tool on the caller's thread when its driver's controls
        #: are empty (see ToolDriver._lane_of); ``None``: every call takes the pipeline.
        self.lane = lane


class _Prepared(NamedTuple):
    """One call of a model output, admitted and ready to run (a tuple: built for every call,
    it costs a third of a frozen dataclass)."""

    call: ToolCall
    invocation: Invocation
    handler: Callable[[Invocation], Any] | None  # None: the driver's own _call_tool


class ToolDriver(MCSDriver):
    """Base class for drivers: implement ``_list_tools`` and ``_call_tool``, get the rest.

    Keyword arguments (all optional, shared by every driver):

    * ``custom_tool_description`` / ``custom_system_message``: replace the generated
      text (seed, section 4).
    * ``prefix``: prepended to tool names (``prefix_name``) to avoid collisions.
    * ``timeout``: seconds per call, counted from when the call starts, also for each
      call of a response with several (``None``: no deadline). Default 30.
    * ``description_mode``: ``"inline"`` (every tool with its schema), ``"discovery"``
      (a compact index plus meta-tools that search and describe tools on demand) or
      ``"auto"`` (discovery when the inline description exceeds ``token_budget``).
    * ``validate_output``: check results against a tool's output schema.
    * ``on_unknown_tool``: ``"passthrough"`` (the MCS chaining rule, default) returns
      the response unchanged when it names no tool of this driver; ``"error"`` raises
      ``TOOL_NOT_FOUND`` for a call naming an unknown tool.
    * ``prompt_templates``: a :class:`mcs.prompts.PromptRegistry` that overrides the default.
    * ``max_calls_per_response``: the most calls one model output may run (default 32).
      A response holding more runs none of them: ``INVALID_INPUT`` asks the model to
      split the work.
    * ``rate_limit``: a :class:`mcs.limits.RateLimit`, calls and concurrency per agent.
    * ``circuit_breaker``: a :class:`mcs.limits.CircuitBreaker`, failing fast once the
      upstream keeps failing (per upstream; see :meth:`upstream_of`).
    * ``controls``: a :class:`mcs.pipeline.Controls` to share policies, hooks and limits.
    """

    #: Set by a subclass whose ``_call_tool`` honours ``Invocation.deadline`` itself
    #: (network I/O with timeouts); other drivers' calls run on a worker thread.
    enforces_deadline: ClassVar[bool] = False

    #: Constructor options that name files (besides ``spec``, ``path``, ``wsdl``...): a
    #: toolbox file resolves relative values, or lists of them, from its own folder.
    path_options: ClassVar[frozenset[str]] = frozenset()

    #: What the driver speaks, for the ``meta`` derived when a driver does not set
    #: ``self.meta`` itself (all three are required then): ``"REST"``, ``"HTTP"``,
    #: ``"OpenAPI"``... ``name`` and ``version`` are optional (see :attr:`meta`).
    protocol: ClassVar[str | None] = None
    transport: ClassVar[str | None] = None
    spec_format: ClassVar[str | None] = None
    name: ClassVar[str | None] = None
    version: ClassVar[str | None] = None

    def __init__(
        self,
        *,
        custom_tool_description: str | None = None,
        custom_system_message: str | None = None,
        prefix: str | None = None,
        timeout: float | None = 30.0,
        description_mode: DescriptionMode = "auto",
        token_budget: int = discovery.DEFAULT_TOKEN_BUDGET,
        validate_output: bool = False,
        on_unknown_tool: UnknownToolMode = "passthrough",
        prompt_templates: prompts.PromptRegistry | None = None,
        controls: Controls | None = None,
        max_calls_per_response: int = DEFAULT_MAX_CALLS_PER_RESPONSE,
        rate_limit: RateLimit | None = None,
        circuit_breaker: CircuitBreaker | None = None,
    ) -> None:
        if timeout is not None and not 0 < timeout < math.inf:  # NaN fails both comparisons
            raise ValueError("timeout must be a positive, finite number of seconds, or None")
        if description_mode not in ("auto", "inline", "discovery"):
            raise ValueError("description_mode must be 'auto', 'inline' or 'discovery'")
        if on_unknown_tool not in ("passthrough", "error"):
            raise ValueError("on_unknown_tool must be 'passthrough' or 'error'")
        if max_calls_per_response < 1:
            raise ValueError("max_calls_per_response must be at least 1")
        self.custom_tool_description = custom_tool_description
        self.custom_system_message = custom_system_message
        self.prefix = prefix
        self.timeout = timeout
        self.description_mode: DescriptionMode = description_mode
        self.token_budget = token_budget
        self.validate_output = validate_output
        self.on_unknown_tool: UnknownToolMode = on_unknown_tool
        self.prompt_templates = prompt_templates
        self.controls = controls if controls is not None else Controls()
        if rate_limit is not None:
            self.controls.rate_limit = rate_limit
        if circuit_breaker is not None:
            self.controls.circuit_breaker = circuit_breaker
        self.max_calls_per_response = max_calls_per_response
        self._tools: dict[str, Tool] | None = None
        self._aliases: dict[str, str] | None = None
        self._names: dict[str, Mapping[str, Any]] | None = None
        self._validators: dict[str, ArgumentValidator] = {}
        self._output_validators: dict[str, ResultValidator] = {}
        self._core_tool_plans: dict[str, _ToolPlan] = {}
        #: The plans with a lane, by their tool's exact name, for a driver whose names
        #: resolve as the base class resolves them (see :meth:`_core_tool_plan`).
        self._lanes: dict[str, _ToolPlan] = {}
        self._change_listeners: list[ChangeListener] = []

    @property
    def meta(self) -> DriverMeta:
        """Who this driver is: what ``__init__`` assigned, else derived from the class.

        The derived meta takes ``protocol``, ``transport`` and ``spec_format`` from class
        attributes (a :class:`~mcs.ConfigurationError` names the missing ones); ``name``
        from a ``name`` class attribute, else the ``mcs.drivers`` entry point registering
        the class, else the class name (``WeatherDriver`` -> ``weather``); ``id`` is a
        UUID computed from the name, the same in every process.
        """
        completed: DriverMeta | None = self.__dict__.get("_completed_meta")
        if completed is None:
            assigned: DriverMeta | None = self.__dict__.get("_assigned_meta")
            completed = self._complete_meta(assigned or _identity.default_meta(type(self)))
            self.__dict__["_completed_meta"] = completed
        return completed

    @meta.setter
    def meta(self, value: DriverMeta) -> None:
        self.__dict__["_assigned_meta"] = value
        self.__dict__.pop("_completed_meta", None)

    def _complete_meta(self, meta: DriverMeta) -> DriverMeta:
        """Fill what the seed's meta says of this instance where the author left defaults:
        ``prefix`` (the one tool names carry) and ``target_llms`` (the model-name globs of
        the prompt templates this driver really has)."""
        changes: dict[str, Any] = {}
        prefix = getattr(self, "prefix", None)
        if meta.prefix is None and prefix:
            changes["prefix"] = prefix
        if meta.target_llms == ("*",):
            from mcs import prompts

            targets = prompts.target_llms(getattr(self, "prompt_templates", None))
            if targets != ("*",):
                changes["target_llms"] = targets
        return meta.model_copy(update=changes) if changes else meta

    # ----------------------------------------------------------------- driver author's part

    @abstractmethod
    def _list_tools(self) -> Iterable[Tool]:
        """Return this driver's tools. Called once, then cached until :meth:`refresh_tools`."""

    @abstractmethod
    def _call_tool(self, invocation: Invocation) -> Any:
        """Run one tool with validated arguments; return the raw result.

        Raise :class:`~mcs.ToolCallError` subclasses for errors the LLM should read;
        anything else becomes ``EXECUTION_ERROR`` with the exception's text.
        """

    async def _acall_tool(self, invocation: Invocation) -> Any:
        """Native async twin of :meth:`_call_tool`; the default runs it on a thread (one that
        outlives a cancelled call keeps the call's rate-limit slot until it ends)."""
        return await pipeline.run_in_thread(self._call_tool, invocation)

    def _stream_tool(self, invocation: Invocation) -> Iterator[Any]:
        """Yield a streaming tool's items; the default yields the one result of ``_call_tool``.

        A protocol with streams (subscriptions, server streaming, monitors) overrides this
        and bounds the stream itself: a count, a byte size or a time window, and
        ``invocation.deadline``.
        """
        yield self._call_tool(invocation)

    async def _astream_tool(self, invocation: Invocation) -> AsyncIterator[Any]:
        """Async twin of :meth:`_stream_tool`; the default yields ``_acall_tool``'s result."""
        yield await self._acall_tool(invocation)

    # ----------------------------------------------------------------- tools and names

    def list_tools(self) -> tuple[Tool, ...]:
        """Every tool of this driver (with the prefix applied), in a stable order."""
        tools = self._tool_map()
        listed = getattr(self, "_mcs_listed_tools", None)
        if listed is None or listed[0] is not tools:
            listed = (tools, tuple(t for t in tools.values() if not t.meta.get(_UNLISTED)))
            self._mcs_listed_tools = listed
        return listed[1]

    def refresh_tools(self) -> None:
        """Forget cached tools, aliases and validators (after the spec changed)."""
        self._tools = None
        self._aliases = None
        self._names = None
        self._validators.clear()
        self._output_validators.clear()
        self._core_tool_plans.clear()
        self._lanes.clear()

    def get_tool(self, name: str) -> Tool | None:
        """The tool a call names, through exact names and unambiguous aliases, else ``None``.

        Aliases are the original spec name (``spotify.play``), its provider-sanitised
        form (``spotify_play``) and the names with or without this driver's prefix. No
        fuzzy matching: a name that is not one of these is not a call to this driver.
        """
        tools = self._tool_map()
        found = tools.get(name)
        if found is not None:
            return found
        target = self._alias_map().get(name)
        if target is None:
            target = self._alias_map().get(name.replace("\\_", "_"))
        return tools.get(target) if target is not None else None

    def _tool_map(self) -> dict[str, Tool]:
        if self._tools is None:
            tools: dict[str, Tool] = {}
            for tool in self._list_tools():
                if self.prefix:
                    tool = _with_prefix(tool, self.prefix)
                if tool.name in tools:
                    raise ValueError(f"{type(self).__name__} lists tool {tool.name!r} twice")
                tools[tool.name] = tool
            builtins = self._builtin_tools(tools)
            reserved = {tool.name for tool in builtins}
            if not reserved.isdisjoint(tools):
                tools = _renamed_apart(tools, reserved, type(self).__name__)
            for tool in builtins:
                tools.setdefault(tool.name, tool)
            self._tools = tools
        return self._tools

    def _known_names(self) -> dict[str, Mapping[str, Any]]:
        """Names and aliases the parser may accept a guessed call for (see mcs.parsing),
        each with its tool's input schema, which names positional arguments; computed
        once, then cached until :meth:`refresh_tools`."""
        if self._names is None:
            tools = self._tool_map()
            known: dict[str, Mapping[str, Any]] = {name: tool.input_schema for name, tool in tools.items()}
            for alias, name in self._alias_map().items():
                known.setdefault(alias, tools[name].input_schema)
            self._names = known
        return self._names

    def _alias_map(self) -> dict[str, str]:
        if self._aliases is None:
            candidates: dict[str, set[str]] = {}
            # A meta-tool's bare name (call_tool of crm_call_tool) is no alias of a tool that
            # is not that meta-tool: a prefixed driver's own call_tool, renamed crm_call_tool_op,
            # would keep it and take the model's call_tool calls meant for the meta-tool.
            meta_names = discovery.meta_tool_names(self._tool_map().values())
            for tool in self._tool_map().values():
                for alias in {
                    tool.original_name,
                    tool.original_name.replace(".", "_"),
                    tool.original_name.replace("/", "_"),
                    tool.unprefixed_name,
                    tool.name.lower(),
                    _method_name(tool),  # an interface's canonical method name (Interfaces RFC)
                }:
                    if not alias or (alias in meta_names and not discovery.is_meta_tool(tool)):
                        continue
                    candidates.setdefault(alias, set()).add(tool.name)
            self._aliases = {
                alias: next(iter(names)) for alias, names in candidates.items() if len(names) == 1
            }
        return self._aliases

    def _builtin_tools(self, tools: Mapping[str, Tool]) -> list[Tool]:
        """Meta-tools added by the base class (discovery mode's search and describe)."""
        if self._resolved_mode(tools) != "discovery":
            # Inline descriptions cut deep schemas with a pointer to describe_tool: offer it.
            own = [t for t in tools.values() if not discovery.is_meta_tool(t)]
            # It is callable from the model's text, but not listed: listed tools carry whole schemas.
            if self.custom_tool_description is None and prompts.limit_depth(own)[1]:
                describe = discovery.meta_tools(self.prefix)[1]
                return [replace(describe, meta={**describe.meta, _UNLISTED: True})]
            return []
        return [*discovery.meta_tools(self.prefix), discovery.call_meta_tool(self.prefix)]

    def _resolved_mode(self, tools: Mapping[str, Tool]) -> Literal["inline", "discovery"]:
        if self.description_mode != "auto":
            return self.description_mode
        return discovery.choose_mode(tools.values(), self.token_budget)

    def auth_options(self) -> list[AuthOption]:
        """The authentication the driver's spec declares, each with the option that sets it.

        ``mcs describe`` lists them. The default declares none; a driver reading a spec
        with security schemes (OpenAPI, GraphQL, WSDL...) overrides this.
        """
        return []

    # ----------------------------------------------------------------- descriptions

    def get_function_description(self, model_name: str | None = None) -> str:
        """The tools, rendered for ``model_name``; ``custom_tool_description`` wins."""
        if self.custom_tool_description is not None:
            return self.custom_tool_description
        from mcs import prompts

        own = self._own_tools()
        if not own:
            return prompts.NO_TOOLS_DESCRIPTION
        if self._resolved_mode(self._tool_map()) == "discovery":
            return discovery.render_description(own, discovery.meta_tools(self.prefix), model_name=model_name)
        describe = [t for t in self._tool_map().values() if discovery.is_meta_tool(t)]
        return prompts.render_function_description(
            [*own, *describe], model_name=model_name, registry=self.prompt_templates
        )

    def get_driver_system_message(self, model_name: str | None = None) -> str:
        """A complete system prompt for ``model_name``; ``custom_system_message`` wins."""
        if self.custom_system_message is not None:
            return self.custom_system_message
        from mcs import prompts

        if not self._offers_tools():
            return prompts.render_no_tools_message(self.meta.name)
        return prompts.render_system_message(
            function_description=self.get_function_description(model_name),
            model_name=model_name,
            driver_name=self.meta.name,
            registry=self.prompt_templates,
        )

    def _own_tools(self) -> list[Tool]:
        """The tools the driver offers, without discovery's meta-tools."""
        return [t for t in self._tool_map().values() if not discovery.is_meta_tool(t)]

    def _offers_tools(self) -> bool:
        """Whether any tool can be called through this driver (its own, or a member's)."""
        return bool(self._own_tools())

    # ----------------------------------------------------------------- calling

    def _validator(self, tool: Tool) -> ArgumentValidator:
        """The compiled argument check of ``tool``, made on its first call.

        Raises:
            ExecutionError: the tool's input schema does not compile; the message names
                the tool and the fault, and says it is the tool's definition, not the call.
        """
        validator = self._validators.get(tool.name)
        if validator is None:
            from mcs.validation import compile_validator

            try:
                validator = compile_validator(tool.input_schema, tool=tool.name)
            except ConfigurationError as exc:
                raise _unusable_schema(tool.name, "input schema", exc) from None
            self._validators[tool.name] = validator
        return validator

    def _output_check(self, tool: Tool) -> Callable[[Any], None] | None:
        """The result check of ``tool``: its output schema with ``validate_output``, and
        always the ``returns`` schema of an interface method (the interface's guarantee)."""
        if tool.output_schema is None:
            return None
        interface = tool.meta.get("interface")
        if not (self.validate_output or interface):
            return None
        validator = self._output_validators.get(tool.name)
        if validator is None:
            source = (
                f"the returns schema of {tool.meta.get('method', tool.name)} in {interface}"
                if interface else "its output schema"
            )
            from mcs.validation import compile_result_validator

            try:
                validator = compile_result_validator(tool.output_schema, tool=tool.name, source=source)
            except ConfigurationError as exc:
                raise _unusable_schema(tool.name, "output schema", exc) from None
            self._output_validators[tool.name] = validator
        return validator.validate

    def prepare(self, call: ToolCall, context: AgentContext | None = None) -> Invocation:
        """Resolve and validate one call without running it.

        Raises:
            ToolNotFoundError: no tool of this driver has that name.
            InvalidInputError: the arguments do not fit the tool's schema.
        """
        return self._prepare_planned(self._resolve(call.name), call.arguments, context)[0]

    def _resolve(self, name: str) -> Tool:
        """The tool ``name`` resolves to (:meth:`get_tool`); ``TOOL_NOT_FOUND`` when none does."""
        tool = self.get_tool(name)
        if tool is None:
            raise ToolNotFoundError(_unknown_tool_message(name, self._tool_map()), tool=name)
        return tool

    def _core_tool_plan(self, tool: Tool) -> _ToolPlan:
        """The :class:`_ToolPlan` of ``tool``, made on its first call."""
        plan = self._core_tool_plans.get(tool.name)
        if plan is None or plan.tool is not tool:
            unwraps = discovery.is_call_tool(tool)  # its validator goes unused: the named tool's checks
            handler = self._handler(tool)
            plan = _ToolPlan(tool, self._validator(tool), self.upstream_of(tool), handler, unwraps,
                             None if unwraps else self._lane_of(tool, handler))
            self._core_tool_plans[tool.name] = plan
            cls = type(self)
            if plan.lane is not None and cls.get_tool is ToolDriver.get_tool and cls._tool_map is ToolDriver._tool_map:
                # A call naming the tool exactly then resolves to it with no further lookup.
                self._lanes[tool.name] = plan
            else:
                self._lanes.pop(tool.name, None)
        return plan

    def _lane_of(self, tool: Tool, handler: Callable[[Invocation], Any] | None) -> Callable[[Invocation], Any] | None:
        """What :func:`pipeline.run_sync` would call for ``tool`` inline, when that is fixed
        for the tool: its handler, or :meth:`_tool_runner` when the driver enforces deadlines
        itself (``enforces_deadline``, with the base class's :meth:`_runs_inline`), when the
        driver keeps the base class's :meth:`prepare` and the tool has no output schema (so
        no result check). ``None`` otherwise: a worker-thread deadline, a result check or a
        driver's own ``prepare()`` always goes through the pipeline."""
        if tool.output_schema is not None or type(self).prepare is not ToolDriver.prepare:
            return None  # (a subclass's own prepare() decides what its calls run with)
        if handler is not None:
            return handler
        if type(self)._runs_inline is ToolDriver._runs_inline and self.enforces_deadline:
            return self._tool_runner(tool)
        return None

    def _tool_runner(self, tool: Tool) -> Callable[[Invocation], Any]:
        """The function that runs a call of ``tool``: :meth:`_call_tool`, unless a driver
        names the method its ``_call_tool`` would pick for that tool (one dispatch per tool,
        not per call). Asked once per tool, then kept until :meth:`refresh_tools`."""
        return self._call_tool

    def _call_resolved(
        self, tool: Tool, arguments: Any, context: AgentContext | None, valid_text: bool = False
    ) -> Any:
        """Run one call of ``tool`` (a driver that keeps the base class's :meth:`prepare`);
        ``valid_text``: every string in ``arguments`` is known to be valid Unicode text
        (see :meth:`_invocation`).

        With nothing configured around the driver's calls (empty controls: no policy, hook,
        breaker or limit to admit or report) a tool with a lane (:meth:`_lane_of`) is called
        through :func:`pipeline.run_bare`, the pipeline's own path for empty controls,
        without :meth:`_run`'s choice of deadline and result check (fixed for the tool);
        anything else runs through the whole pipeline."""
        plan = self._core_tool_plan(tool)
        lane = plan.lane
        if lane is not None and self.controls.is_empty():
            return pipeline.run_bare(self._invocation(plan, arguments, context, valid_text), lane)
        invocation, plan = self._prepare_planned(tool, arguments, context, valid_text)
        return self._run(invocation, plan.handler)

    def _invocation(
        self, plan: _ToolPlan, arguments: Any, context: AgentContext | None, valid_text: bool = False
    ) -> Invocation:
        """The call of ``plan``'s tool with ``arguments`` validated (repaired where the schema
        allows), its context, deadline, secret mask and upstream. ``valid_text`` vouches that
        every string and key in ``arguments`` is valid Unicode text (pydantic's JSON reader
        decoded them), so the validator does not look for a lone surrogate again. Without a
        ``context`` the call's own is made when first read (see :func:`pipeline.new_invocation`):
        a lane's call whose context nobody reads draws no request id."""
        validator = plan.validator
        timeout = self.timeout
        return pipeline.new_invocation(
            plan.tool,
            validator.validate_valid_text(arguments) if valid_text and plan.takes_valid_text
            else validator.validate(arguments),
            context,
            time.monotonic() + timeout if timeout is not None else None,
            timeout,
            validator.secret_mask,
            plan.upstream,
        )

    def _prepare_planned(
        self, tool: Tool, arguments: Any, context: AgentContext | None, valid_text: bool = False
    ) -> tuple[Invocation, _ToolPlan]:
        """:meth:`prepare` of a call whose name already resolved to ``tool`` (one lookup per
        call), with the plan of the tool that will run."""
        plan = self._core_tool_plan(tool)
        if plan.unwraps:
            # call_tool(name, arguments) is the named tool's call, addressed another way:
            # everything below (validation, policies, hooks) sees that tool.
            name, arguments = discovery.unwrap_call(tool, arguments)
            target = self.get_tool(name)
            if target is None or discovery.is_call_tool(target):
                raise ToolNotFoundError(_unknown_tool_message(name, self._tool_map()), tool=name)
            plan = self._core_tool_plan(target)
        return self._invocation(plan, arguments, context or new_context(), valid_text), plan  # (read by the pipeline)

    def secret_mask_of(self, name: str) -> SecretMask | None:
        """Where the secret-typed arguments of tool ``name`` are (``None``: none, or no such
        tool); see :mod:`mcs.redaction`."""
        tool = self.get_tool(name)
        if tool is None:
            return None
        try:
            return self._validator(tool).secret_mask
        except ExecutionError:  # a schema that does not compile: the tool cannot be called at all
            return None

    def upstream_of(self, tool: Tool) -> str:
        """The upstream system a call of ``tool`` goes to, for the circuit breaker.

        The default, ``""``, treats the driver's endpoint as one upstream; a driver that
        reaches several (one per MCP server, say) names each. Asked once per tool, then
        remembered until :meth:`refresh_tools`.
        """
        return ""

    def _check_call_count(self, count: int) -> None:
        if count > self.max_calls_per_response:
            raise InvalidInputError(
                f"The response holds {count} tool calls; at most {self.max_calls_per_response} run from one "
                "response, so none was run. Make fewer calls at a time.",
                details={"calls": count, "max_calls_per_response": self.max_calls_per_response},
            )

    def _handler(self, tool: Tool) -> Callable[[Invocation], Any] | None:
        if discovery.is_meta_tool(tool):
            return lambda invocation: discovery.run_meta_tool(invocation, self)
        return None

    def _prepare_all(
        self, llm_response: Any, context: AgentContext | None
    ) -> list[_Prepared] | None:
        return self._prepare_calls(_parse_tool_calls(llm_response, self._known_names()), context)

    def _prepare_calls(self, calls: list[ToolCall], context: AgentContext | None) -> list[_Prepared] | None:
        """Every call of ``calls`` this driver answers for, resolved and validated before any
        runs; ``None`` when there is none (the response passes through)."""
        if not calls:
            return None
        if len(calls) == 1:  # the common case: one call, its name resolved once
            call = calls[0]
            tool = self.get_tool(call.name)
            if tool is None:
                if self.on_unknown_tool == "error":
                    raise ToolNotFoundError(_unknown_tool_message(call.name, self._tool_map()), tool=call.name)
                return None
            if type(self).prepare is ToolDriver.prepare:
                invocation, plan = self._prepare_planned(tool, call.arguments, context)
                return [_Prepared(call, invocation, plan.handler)]
            invocation = self.prepare(call, context)  # a subclass's own prepare() decides
            return [_Prepared(call, invocation, self._handler(invocation.tool))]
        get_tool = self.get_tool
        mine = [call for call in calls if get_tool(call.name) is not None]
        if len(mine) != len(calls) and self.on_unknown_tool == "error":
            unknown = next(call for call in calls if get_tool(call.name) is None)
            raise ToolNotFoundError(_unknown_tool_message(unknown.name, self._tool_map()), tool=unknown.name)
        if not mine:
            return None
        self._check_call_count(len(mine))
        base = context or default_context()
        prepared: list[_Prepared] = []
        for index, call in enumerate(mine):
            ctx = base if index == 0 else base.with_request_id(f"{base.request_id}.{index}")
            invocation = self.prepare(call, ctx)
            prepared.append(_Prepared(call, invocation, self._handler(invocation.tool)))
        return prepared

    def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, *,
        context: AgentContext | None = None,
    ) -> Any:
        """Run one tool by name through the whole pipeline; returns the raw result."""
        plan = self._lanes.get(name)
        if plan is not None and plan.lane is not None and self.controls.is_empty():
            return pipeline.run_bare(self._invocation(plan, dict(arguments or {}), context), plan.lane)
        if type(self).prepare is ToolDriver.prepare:  # the tool's plan gives its handler
            return self._call_resolved(self._resolve(name), dict(arguments or {}), context)
        invocation = self.prepare(ToolCall(name=name, arguments=dict(arguments or {})), context)
        return self._run(invocation, self._handler(invocation.tool))

    async def acall_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, *,
        context: AgentContext | None = None,
    ) -> Any:
        """Async twin of :meth:`call_tool`."""
        invocation = self.prepare(ToolCall(name=name, arguments=dict(arguments or {})), context)
        return await self._arun(invocation, self._handler(invocation.tool))

    def stream_call(
        self, name: str, arguments: Mapping[str, Any] | None = None, *,
        context: AgentContext | None = None,
    ) -> Iterator[Any]:
        """Run one tool as a stream (the ``stream`` capability); yields items as they come.

        The call is resolved, validated and admitted by the policies before the first
        item, exactly as :meth:`call_tool`; the end hook reports ``{"streamed": n}``.
        A tool without a stream of its own yields its one result. Closing the iterator
        early releases the stream.

        Raises:
            ToolNotFoundError, InvalidInputError: at once, before anything runs.
            ToolCallError: ``POLICY_DENIED`` at the first ``next()``; the driver's errors
                mid-stream, mapped as for any call.
        """
        invocation = self.prepare(ToolCall(name=name, arguments=dict(arguments or {})), context)
        handler = self._handler(invocation.tool)
        opener = self._stream_tool if handler is None else (lambda inv: iter((handler(inv),)))
        return pipeline.stream_sync(invocation, opener, controls=self.controls)

    def astream_call(
        self, name: str, arguments: Mapping[str, Any] | None = None, *,
        context: AgentContext | None = None,
    ) -> AsyncIterator[Any]:
        """Async twin of :meth:`stream_call`: ``async for item in driver.astream_call(...)``."""
        invocation = self.prepare(ToolCall(name=name, arguments=dict(arguments or {})), context)
        handler = self._handler(invocation.tool)
        if handler is None:
            return pipeline.stream_async(invocation, self._astream_tool, controls=self.controls)

        async def one(inv: Invocation) -> AsyncIterator[Any]:
            yield handler(inv)

        return pipeline.stream_async(invocation, one, controls=self.controls)

    def _runs_inline(self, invocation: Invocation) -> bool:
        """Whether the sync path runs this call on the caller's thread, with no worker-thread
        deadline around it. The default: when the driver enforces deadlines itself."""
        return self.enforces_deadline

    def _run(
        self, invocation: Invocation, handler: Callable[[Invocation], Any] | None,
        controls: Controls | None = None,
    ) -> Any:
        return pipeline.run_sync(
            invocation,
            handler or self._call_tool,
            controls=self.controls if controls is None else controls,
            enforces_deadline=handler is not None or self._runs_inline(invocation),
            check_output=None if invocation.tool.output_schema is None else self._output_check(invocation.tool),
        )

    async def _arun(
        self, invocation: Invocation, handler: Callable[[Invocation], Any] | None,
        controls: Controls | None = None,
    ) -> Any:
        call: Callable[[Invocation], Awaitable[Any]] = self._acall_tool
        if handler is not None:
            local = handler

            async def call(inv: Invocation) -> Any:
                return local(inv)

        return await pipeline.run_async(
            invocation, call, controls=self.controls if controls is None else controls,
            check_output=self._output_check(invocation.tool),
        )

    def _judges(self, prepared: list[_Prepared]) -> list[tuple[int, Invocation, Controls]]:
        """The policies each call of a batch answers to before any runs (see
        :func:`pipeline.admit_batch`): this driver's controls. A toolbox adds its members'."""
        return [(place, p.invocation, self.controls) for place, p in enumerate(prepared, 1)]

    def _controls_after(self, results: list[Any], first: Controls) -> Controls:
        """The controls a call of a batch runs with once its policies were judged at
        admission: ``first`` (no policies: each decides once) while nothing of the batch
        ran yet, else all of them, judged again, since a policy may read state an earlier
        call changed (a balance, a file, a budget) and its admission verdict is stale."""
        return first if not results else self.controls

    def _run_batch(self, prepared: list[_Prepared]) -> list[Any]:
        """Run the calls of one model output, admitted whole: every call's policies are
        judged before the first runs, so a refused call runs none. A call that then fails
        as it runs (a rate limit, an open circuit, a deadline, the tool's own error) stops
        the batch: with nothing run before it, its error is raised; else the results come
        back with that error in its place and a "not run" error for each call after it.
        Each call's deadline starts when that call starts (:func:`pipeline.started_now`):
        the calls before it do not use up its ``timeout``. A call after the first is judged
        again as it runs (:meth:`_controls_after`): the calls before it may have changed
        what its policies read."""
        pipeline.admit_batch(self._judges(prepared), len(prepared))
        first = self.controls.judged()
        results: list[Any] = []
        for p in prepared:
            try:
                controls = self._controls_after(results, first)
                results.append(self._run(pipeline.started_now(p.invocation), p.handler, controls))
            except ToolCallError as error:
                if not results:
                    raise
                return _stopped(results, prepared, error)
        return results

    async def _arun_batch(self, prepared: list[_Prepared]) -> list[Any]:
        """The async twin of :meth:`_run_batch`."""
        pipeline.admit_batch(self._judges(prepared), len(prepared))
        first = self.controls.judged()
        results: list[Any] = []
        for p in prepared:
            try:
                controls = self._controls_after(results, first)
                results.append(await self._arun(pipeline.started_now(p.invocation), p.handler, controls))
            except ToolCallError as error:
                if not results:
                    raise
                return _stopped(results, prepared, error)
        return results

    def process_llm_response(self, llm_response: Any, *, context: AgentContext | None = None) -> Any:
        """Execute the call(s) in ``llm_response``; see :class:`MCSDriver`.

        Every call is resolved, validated and judged by the policies before the first one
        runs, so a response with one bad or refused call runs none. Calls then run in
        order; one that fails as it runs (a rate limit, an open circuit, a deadline, its
        own error) stops them: after calls that ran, the list of results comes back with
        that call's error (``CallOutcome.to_dict()``: ``tool``, ``id``, ``error``,
        ``message``) in its place and a ``not_run`` error for each call after it. Each
        call has its own ``timeout``, counted from when it starts, not from when the
        response was read; nothing bounds the calls of a response together.

        Raises:
            ToolCallError: with ``.code`` telling which stage refused the call.
        """
        known = self._known_names()
        found = _read_known_call(llm_response, known) if type(llm_response) is str else None
        if found is not None:  # one canonical call of a known name (the common case)
            plan = self._lanes.get(found[0])
            if plan is not None and plan.lane is not None and self.controls.is_empty():
                return pipeline.run_bare(self._invocation(plan, found[1], context, True), plan.lane)
            calls, valid_text = [ToolCall(found[0], found[1])], True
        else:
            calls, valid_text = _read_other_calls(llm_response, known), False
        if len(calls) == 1 and type(self).prepare is ToolDriver.prepare:  # the common case: its name resolved once
            tool = self.get_tool(calls[0].name)
            if tool is not None:  # (None: _prepare_calls passes the response on or refuses it)
                return self._call_resolved(tool, calls[0].arguments, context, valid_text)
        prepared = self._prepare_calls(calls, context)
        if prepared is None:
            return llm_response
        if len(prepared) == 1:
            return self._run(prepared[0].invocation, prepared[0].handler)
        return self._run_batch(prepared)

    async def aprocess_llm_response(
        self, llm_response: Any, *, context: AgentContext | None = None
    ) -> Any:
        prepared = self._prepare_all(llm_response, context)
        if prepared is None:
            return llm_response
        if len(prepared) == 1:
            return await self._arun(prepared[0].invocation, prepared[0].handler)
        return await self._arun_batch(prepared)

    def run_llm_response(
        self, llm_response: Any, *, context: AgentContext | None = None
    ) -> list[CallOutcome]:
        """Like :meth:`process_llm_response`, but every call gets a :class:`CallOutcome`.

        Never raises :class:`ToolCallError`; an empty list means the response held no call
        for this driver. Calls that fail validation get their error and the others still run.
        """
        claimed = list(self._claimed_calls(llm_response, context))
        refused = self._refused_batch(claimed)
        if refused is not None:
            return refused
        outcomes: list[CallOutcome] = []
        for call, ctx in claimed:
            try:
                invocation = self.prepare(call, ctx)
                outcomes.append(CallOutcome(call, result=self._run(invocation, self._handler(invocation.tool))))
            except ToolCallError as error:
                outcomes.append(CallOutcome(call, error=error))
        return outcomes

    async def arun_llm_response(
        self, llm_response: Any, *, context: AgentContext | None = None
    ) -> list[CallOutcome]:
        """Async twin of :meth:`run_llm_response` (tools run on the async path)."""
        claimed = list(self._claimed_calls(llm_response, context))
        refused = self._refused_batch(claimed)
        if refused is not None:
            return refused
        outcomes: list[CallOutcome] = []
        for call, ctx in claimed:
            try:
                invocation = self.prepare(call, ctx)
                result = await self._arun(invocation, self._handler(invocation.tool))
                outcomes.append(CallOutcome(call, result=result))
            except ToolCallError as error:
                outcomes.append(CallOutcome(call, error=error))
        return outcomes

    def _refused_batch(self, claimed: list[tuple[ToolCall, AgentContext]]) -> list[CallOutcome] | None:
        """Every call refused with one error when there are more than the cap, else ``None``."""
        try:
            self._check_call_count(len(claimed))
        except InvalidInputError as error:
            return [CallOutcome(call, error=error) for call, _ in claimed]
        return None

    def _claimed_calls(
        self, llm_response: Any, context: AgentContext | None
    ) -> Iterator[tuple[ToolCall, AgentContext]]:
        """The calls this driver answers for (all of them in error mode), each with its context."""
        base = context or default_context()
        for index, call in enumerate(_parse_tool_calls(llm_response, self._known_names())):
            if self.get_tool(call.name) is None and self.on_unknown_tool == "passthrough":
                continue
            yield call, base if index == 0 else base.with_request_id(f"{base.request_id}.{index}")

    # ----------------------------------------------------------------- controls

    def add_policy(self, policy: pipeline.F) -> pipeline.F:
        """Register a policy ``(context, tool_name, args) -> PolicyDecision``."""
        return self.controls.add_policy(policy)

    def on_execute_start(self, hook: pipeline.F) -> pipeline.F:
        return self.controls.on_execute_start(hook)

    def on_execute_end(self, hook: pipeline.F) -> pipeline.F:
        return self.controls.on_execute_end(hook)

    def on_execute_error(self, hook: pipeline.F) -> pipeline.F:
        return self.controls.on_execute_error(hook)

    # ----------------------------------------------------------------- change notifications

    def add_change_listener(self, listener: ChangeListener) -> Callable[[], None]:
        """Call ``listener(kind, uri)`` whenever :meth:`notify_changed` reports a change.

        ``mcs serve`` listens this way to send MCP ``list_changed`` and
        ``resources/updated`` notifications. Drivers whose offer can change say so with
        the ``list_changed`` capability. Returns a function that removes the listener.
        """
        listeners = self._listeners()
        listeners.append(listener)

        def remove() -> None:
            if listener in listeners:
                listeners.remove(listener)

        return remove

    def notify_changed(self, kind: ChangeKind, uri: str | None = None) -> None:
        """Tell listeners that this driver's tools, prompts or resources changed, or
        (``kind="resource"``) that the resource at ``uri`` has new content.

        A ``"tools"`` change also forgets the cached tools. A listener that raises is
        logged and skipped.
        """
        if kind == "tools":
            self.refresh_tools()
        for listener in list(self._listeners()):
            try:
                listener(kind, uri)
            except Exception:
                import logging

                logging.getLogger("mcs.driver").exception("change listener %r raised", listener)

    def _listeners(self) -> list[ChangeListener]:
        listeners: list[ChangeListener] | None = getattr(self, "_change_listeners", None)
        if listeners is None:  # a subclass that did not call ToolDriver.__init__
            listeners = self._change_listeners = []
        return listeners

    def close(self) -> None:
        """Release connections and other resources; the default has none."""

    async def aclose(self) -> None:
        """Release resources from async code without blocking the event loop.

        The default runs :meth:`close` on a worker thread, which suits a driver with no
        async resources. A driver that keeps resources bound to an event loop (async
        connection pools, aio channels, sessions) overrides it to close them on that loop.
        """
        import asyncio

        await asyncio.to_thread(self.close)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def refuse_unknown_options(driver_class: type[ToolDriver], options: Mapping[str, Any], what: str) -> None:
    """Raise :class:`~mcs.errors.ConfigurationError` when ``options`` (what a driver's
    ``__init__`` forwards to :class:`ToolDriver` as ``**options``) holds a keyword that
    ToolDriver does not take, naming each such keyword and every option ``driver_class``
    accepts; ``what`` names the driver in the message (``"the REST driver"``). Call it
    before ``super().__init__(**options)``."""
    unknown = sorted(set(options) - _tool_driver_keywords())
    if not unknown:
        return
    from mcs.options import declared_keywords  # the listing walks the MRO as the CLI does

    accepted = sorted(declared_keywords(driver_class)[0])
    raise ConfigurationError(f"{what} has no option {', '.join(map(repr, unknown))}; options: {', '.join(accepted)}")



def non_negative_int(option: str, value: object) -> int:
    """``value`` if it is an integer of at least 0 (a count such as ``retries``).

    Anything else (a negative number, a bool, a float, text) raises
    :class:`~mcs.errors.ConfigurationError` naming ``option``; it is never clamped.
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigurationError(f"{option} must be a non-negative integer, not {value!r}")
    return value


def non_negative_seconds(option: str, value: object) -> float:
    """``value`` as a float if it is a finite number of at least 0 (a delay such as ``backoff``).

    Anything else raises :class:`~mcs.errors.ConfigurationError` naming ``option``.
    """
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise ConfigurationError(f"{option} must be a non-negative number of seconds, not {value!r}")
    return float(value)

@functools.cache
def _tool_driver_keywords() -> frozenset[str]:
    """The keywords :class:`ToolDriver` takes, read from its signature once, not per driver built."""
    import inspect

    return frozenset(inspect.signature(ToolDriver.__init__).parameters) - {"self"}


def _read_tool_calls(llm_response: Any, known_names: Mapping[str, Any]) -> tuple[list[ToolCall], bool]:
    """:func:`mcs.parsing.read_tool_calls` (the calls, and whether their arguments are
    already known to be valid Unicode text). Like the two readers below, imported on the
    first model output, which then puts the parser's function in this name's place: later
    calls reach it with no frame and no import statement in between (an import statement on
    every call costs more than the parse of a canonical call)."""
    from mcs.parsing import read_tool_calls

    globals()["_read_tool_calls"] = read_tool_calls
    return read_tool_calls(llm_response, known_names)


def _read_known_call(text: str, known_names: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """:func:`mcs.parsing.read_known_call`: ``(name, arguments)`` of the one canonical call
    of a known name that ``text`` is, else ``None``."""
    from mcs.parsing import read_known_call

    globals()["_read_known_call"] = read_known_call
    return read_known_call(text, known_names)


def _read_other_calls(llm_response: Any, known_names: Mapping[str, Any]) -> list[ToolCall]:
    """:func:`mcs.parsing.read_other_calls`: the calls of a response :func:`_read_known_call`
    did not read."""
    from mcs.parsing import read_other_calls

    globals()["_read_other_calls"] = read_other_calls
    return read_other_calls(llm_response, known_names)


def _parse_tool_calls(llm_response: Any, known_names: Mapping[str, Any]) -> list[ToolCall]:
    """:func:`mcs.parsing.parse_tool_calls`, through :func:`_read_tool_calls`."""
    return _read_tool_calls(llm_response, known_names)[0]


def _with_prefix(tool: Tool, prefix: str) -> Tool:
    from mcs.tools import sanitize_tool_name

    meta = dict(tool.meta)
    meta.setdefault("unprefixed_name", tool.name)
    return replace(tool, name=sanitize_tool_name(f"{prefix}_{tool.name}"), meta=meta)


#: What a driver's own tool named like one of its meta-tools is renamed with (see _renamed_apart).
_META_NAME_SUFFIX = "_op"


def _renamed_apart(tools: dict[str, Tool], reserved: set[str], owner: str) -> dict[str, Tool]:
    """``tools`` with each one named like a meta-tool in ``reserved`` (``call_tool``...)
    renamed ``<name>_op`` in its place (``_op_2``... when that is taken too), so the
    meta-tool keeps its name: a model searching or calling through ``call_tool`` must
    reach the meta-tool, and the driver's tool stays callable under its new name, which
    depends only on the tool list. Its driver still routes it by its own name
    (``unprefixed_name``); ``original_name`` stays an alias."""
    import logging

    taken = set(tools) | reserved
    renamed: dict[str, Tool] = {}
    for name, tool in tools.items():
        if name not in reserved or discovery.is_meta_tool(tool):
            renamed[name] = tool
            continue
        new_name, number = sanitize_tool_name(f"{name}{_META_NAME_SUFFIX}"), 1
        while new_name in taken:
            number += 1
            new_name = sanitize_tool_name(f"{name}{_META_NAME_SUFFIX}_{number}")
        taken.add(new_name)
        meta = {**tool.meta, "unprefixed_name": tool.unprefixed_name, "original_name": tool.original_name}
        renamed[new_name] = replace(tool, name=new_name, meta=meta)
        logging.getLogger("mcs.driver").warning(
            "%s: tool %r has the name of a discovery meta-tool, which keeps it; the tool is offered as %r",
            owner, name, new_name,
        )
    return renamed


def _stopped(results: list[Any], prepared: list[_Prepared], error: ToolCallError) -> list[Any]:
    """The answer of a batch stopped by ``error`` after ``results`` ran: those results, the
    failed call's error, and a ``not_run`` error for each call after it."""
    failed = prepared[len(results)].call
    place = len(results) + 1
    answer = [*results, CallOutcome(failed, error=error).to_dict()]
    for p in prepared[place:]:
        not_run = ExecutionError(
            f"{p.call.name} was not run: call {place} ({failed.name}) failed before it, and no call after a "
            "failure runs. Send it again if it is still needed.",
            tool=p.call.name, details={"category": "not_run", "retryable": True},
        )
        answer.append(CallOutcome(p.call, error=not_run).to_dict())
    return answer


def _unusable_schema(tool: str, which: str, exc: ConfigurationError) -> ExecutionError:
    """The error a call of ``tool`` gets when its ``which`` schema does not compile: the
    operator's fault, said so, with the compiler's first line (bounded) naming what is wrong."""
    text = str(exc)
    reason = text.split(": ", 1)[1] if ": " in text else text
    reason = reason.strip().splitlines()[0] if reason.strip() else "unknown fault"
    if len(reason) > 200:
        reason = reason[:197] + "..."
    return ExecutionError(
        f"{tool} cannot be called: its {which} is not a valid JSON Schema ({reason}). This is a fault in "
        "the tool's definition, for its operator to fix, not in your call: do not retry it; use another "
        "tool or tell the user.",
        tool=tool,
        details={"category": "invalid_tool_schema", "retryable": False},
    )


def _method_name(tool: Tool) -> str:
    method = tool.meta.get("method")
    return method if isinstance(method, str) and tool.meta.get("interface") else ""


def _unknown_tool_message(name: str, tools: Mapping[str, Tool]) -> str:
    from mcs.parsing.attempts import unknown_tool_message

    return unknown_tool_message(name, list(tools))
