"""Any MCS driver as an MCP server, on the official SDK's low-level ``Server``.

:func:`build_server` registers ``tools/list`` and ``tools/call`` for every driver, and
``prompts/*`` / ``resources/*`` when the driver has them (the gen-mcp file driver does:
``prompts()``, ``render_prompt()``, ``resources()``, ``resource_templates()``,
``read_resource()``; :class:`mcs.FunctionDriver` and :class:`mcs.Toolbox` have them too),
``completion/complete`` when the driver completes prompt arguments or template variables
(``acomplete()``), ``resources/subscribe`` and ``list_changed`` notifications when the
driver announces changes (the ``list_changed`` capability) and the transport keeps a
connection per client, plus ``logging/setLevel``. A capability is advertised only when
it is backed. Every call goes through
``driver.acall_tool`` so the driver's validation, policies and hooks apply; a
:class:`~mcs.errors.ToolCallError` becomes a result with ``isError: true``, an unknown
tool a JSON-RPC ``-32602`` error.

What is served is what the driver offers, in MCP's own terms:

* a tool keeps the name its spec gave it when MCP allows that name and only the
  provider alphabet changed it (a gen-mcp tool ``users.get`` is served as ``users.get``,
  not ``users_get``); a prefixed or renamed tool is served under its MCS name;
* prompts and resources a driver serves natively are not listed as tools too;
* a tool with an object ``outputSchema`` answers with ``structuredContent`` (read from a
  JSON text result when needed) that is checked against the schema, or with a clear
  ``isError`` result about the output, never a result the client must refuse;
* a driver in discovery mode (above its token budget) is listed as its meta-tools only:
  ``search_tools``, ``describe_tool`` and ``call_tool``, which calls a found tool by name
  (checked against that tool's scopes, and run as that tool's call); the group index
  goes into the server's ``instructions``, unless options give instructions or ask for
  ``all_tools``.

The caller's identity reaches the driver as an :class:`~mcs.AgentContext`: ``agent_id``
is, with OAuth, the token's ``sub`` (else its ``client_id`` or ``azp``: always the token's,
never what the client declares; ``<iss>#<sub>`` when several issuers are trusted); without OAuth, the client's declared name, which is
untrusted. ``request_id`` is the JSON-RPC id, and ``metadata`` the incoming HTTP headers as
``"header:<name>"`` except credentials (``authorization``, ``cookie``,
``proxy-authorization``, ``x-api-key``...), which never reach a driver. Its ``session`` is an
:class:`~mcs_mcp.serving.session.McpSession`: progress, sampling, elicitation and roots
reach the client through it.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar, cast

import mcp_types as types
from mcp.server.connection import allowed_log_levels
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.shared.exceptions import MCPError

from mcs import discovery
from mcs.context import AgentContext
from mcs.errors import ConfigurationError, ToolCallError, ToolNotFoundError
from mcs.tools import Tool, sanitize_tool_name
from mcs.validation import ResultValidator, compile_result_validator
from mcs_mcp.mcpfile.results import CREDENTIAL_HEADERS
from mcs_mcp.serving import results
from mcs_mcp.serving.logs import MCP_LEVELS, McpLogForwarder
from mcs_mcp.serving.notify import Subscribers
from mcs_mcp.serving.options import ServeOptions
from mcs_mcp.serving.session import McpSession

logger = logging.getLogger("mcs_mcp.serving")

#: Called as ``extension(server, driver)``; what it returns is ignored.
Extension = Callable[[Server[Any], Any], object]
RESOURCE_NOT_FOUND = -32002  # the MCP spec's code for an unknown resource URI
_LEVEL_KEY = "mcs.log_level"
#: Request headers kept out of ``AgentContext.metadata``: the credential headers the MCP file
#: driver knows (MCP forbids token passthrough; an API key is a token too).
HIDDEN_HEADERS = CREDENTIAL_HEADERS
#: Tool names MCP allows (spec 2025-11-25, "Tool names"): dots included.
MCP_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,128}$")
#: Tools that stand for a prompt or resource (``Tool.meta["mcp_kind"]``, the gen-mcp file driver's).
_NATIVE_KINDS = {"prompt": "has_prompts", "resource": "has_resources", "resource_template": "has_resources"}
#: Above this many listed tools the server warns: OpenAI's limit, which many MCP clients
#: inherit when they pass the server's tools on to a model.
TOOL_LIMIT = 128
T = TypeVar("T")


class DriverCatalog:
    """The driver's tools, prompts and resources, and the scopes each needs.

    Tools are read once (drivers cache them) and looked up by name; prompts and
    resources are read from the driver when asked, because a driver may change them.
    """

    def __init__(self, driver: Any) -> None:
        self.driver = driver
        if not callable(getattr(driver, "list_tools", None)):
            raise ConfigurationError(
                f"{type(driver).__name__} has no list_tools(): only drivers built on ToolDriver "
                "(or a Toolbox) can be served over MCP"
            )
        if not callable(getattr(driver, "acall_tool", None)) and not callable(
            getattr(driver, "call_tool", None)
        ):
            raise ConfigurationError(f"{type(driver).__name__} has neither acall_tool() nor call_tool()")
        self._tools: dict[str, Tool] | None = None
        self._output_validators: dict[str, ResultValidator] = {}
        self.scope_rules: dict[str, Callable[[Mapping[str, Any]], tuple[str, ...]]] = {}

    def add_scope_rule(self, method: str, rule: Callable[[Mapping[str, Any]], tuple[str, ...]]) -> None:
        """Declare the scopes a custom JSON-RPC method needs (for extensions that add methods
        reaching tools, so OAuth refuses them with 403 like ``tools/call``)."""
        self.scope_rules[method] = rule

    @property
    def has_prompts(self) -> bool:
        return callable(getattr(self.driver, "prompts", None)) and callable(
            getattr(self.driver, "render_prompt", None)
        )

    @property
    def has_resources(self) -> bool:
        return callable(getattr(self.driver, "resources", None)) and callable(
            getattr(self.driver, "read_resource", None)
        )

    @property
    def has_templates(self) -> bool:
        return callable(getattr(self.driver, "resource_templates", None))

    def offers_prompts(self) -> bool:
        """Prompts to serve now (a driver with the methods but no prompts has none)."""
        return self.has_prompts and bool(self.prompts())

    def offers_resources(self) -> bool:
        return self.has_resources and bool(self.resources() or self.templates())

    def offers_completions(self) -> bool:
        """The driver completes something: it has ``acomplete`` and, if it says, completers."""
        if not callable(getattr(self.driver, "acomplete", None)):
            return False
        has = getattr(self.driver, "has_completions", None)
        return bool(has()) if callable(has) else True

    @property
    def announces_changes(self) -> bool:
        """The driver tells listeners when its offer changes (the ``list_changed`` capability)."""
        meta = getattr(self.driver, "meta", None)
        return "list_changed" in getattr(meta, "capabilities", ()) and callable(
            getattr(self.driver, "add_change_listener", None)
        )

    @property
    def announces_resource_updates(self) -> bool:
        """The driver announces new content of a resource (``resource_updated(uri)``), so
        subscriptions can be honoured."""
        return self.announces_changes and callable(getattr(self.driver, "resource_updated", None))

    def forget_tools(self) -> None:
        """Read the tools again on next use (after the driver said they changed)."""
        self._tools = None

    async def complete(self, kind: str, name: str, argument: str, value: str, arguments: dict[str, str]) -> list[str]:
        values: list[str] = await self.driver.acomplete(kind, name, argument, value, arguments)
        return values

    def tools(self) -> dict[str, Tool]:
        """The served tools by their MCP name (see the module doc for the naming rule)."""
        if self._tools is None:
            listed = [t for t in self.driver.list_tools() if not self._served_natively(t)]
            taken = {t.name for t in listed}
            served: dict[str, Tool] = {}
            for tool in listed:
                original = tool.original_name
                keeps_spec_name = (
                    original != tool.name and sanitize_tool_name(original) == tool.name
                    and MCP_TOOL_NAME.match(original) is not None and original not in taken
                )
                served[original if keeps_spec_name else tool.name] = tool
            self._tools = served
        return self._tools

    def _served_natively(self, tool: Tool) -> bool:
        """A tool that stands for a prompt or resource this server lists as one."""
        flag = _NATIVE_KINDS.get(str(tool.meta.get("mcp_kind", "")))
        return flag is not None and bool(getattr(self, flag))

    def output_check(self, tool: Tool) -> ResultValidator | None:
        """The check of a result against ``tool``'s object output schema (compiled once)."""
        schema = results.object_schema(tool.output_schema)
        if schema is None:
            return None
        validator = self._output_validators.get(tool.name)
        if validator is None:
            validator = compile_result_validator(schema, tool=tool.name, source="its outputSchema")
            self._output_validators[tool.name] = validator
        return validator

    def tool(self, name: str) -> Tool | None:
        """The served tool ``name`` names (its MCP name, or an alias the driver knows)."""
        found = self.tools().get(name)
        if found is None:
            get_tool = getattr(self.driver, "get_tool", None)
            if callable(get_tool):
                found = get_tool(name)
            if found is not None and self._served_natively(found):
                found = None
        return found

    def listed(self, *, all_tools: bool = False) -> dict[str, Tool]:
        """The tools ``tools/list`` shows, by MCP name: the meta-tools only in discovery
        mode, unless ``all_tools``; every tool stays callable by name either way."""
        tools = self.tools()
        meta = {name: tool for name, tool in tools.items() if discovery.is_meta_tool(tool)}
        if all_tools or not meta:
            return {name: tool for name, tool in tools.items() if not discovery.is_meta_tool(tool)}
        return meta

    def resolve(self, tool: Tool, arguments: Mapping[str, Any] | None) -> tuple[Tool, dict[str, Any]]:
        """The tool a call of ``tool`` runs and the arguments it gets: for ``call_tool``,
        the named tool (read by :func:`mcs.discovery.unwrap_call`, as the driver reads it)
        with the inner arguments; else ``tool`` itself. The one resolution both the scope
        check and the call use, so they cannot disagree on which tool runs.

        Raises:
            ToolNotFoundError: ``call_tool`` names no tool this server serves as a tool.
            InvalidInputError: ``call_tool``'s own arguments are malformed.
        """
        if not discovery.is_call_tool(tool):
            return tool, dict(arguments or {})
        name, inner = discovery.unwrap_call(tool, arguments or {})
        found = self.tool(name)
        if found is None or discovery.is_call_tool(found):
            raise ToolNotFoundError(
                f"There is no tool named {name!r}. Use {discovery.SEARCH_TOOL} to find one.", tool=name
            )
        return found, inner

    def described(self, tool: Tool, arguments: Mapping[str, Any] | None) -> list[Tool]:
        """The tools a call of ``tool`` shows whole: for ``describe_tool``, the tool its
        ``name`` names (as served, and as the driver looks it up); else none. Describing a
        tool needs its scopes, as ``tools/list`` hides it from a token without them."""
        if not discovery.is_describe_tool(tool):
            return []
        name = (arguments or {}).get("name")
        if not isinstance(name, str):
            return []
        get_tool = getattr(self.driver, "get_tool", None)
        found = [self.tool(name), get_tool(name) if callable(get_tool) else None]
        return [item for item in found if item is not None]

    def target(self, tool: Tool, arguments: Mapping[str, Any] | None) -> Tool | None:
        """The tool a call of ``tool`` runs (see :meth:`resolve`); ``None`` when it names none."""
        try:
            return self.resolve(tool, arguments)[0]
        except ToolCallError:
            return None

    def index(self) -> str | None:
        """The discovery index (groups and how to find tools) when the driver is in
        discovery mode, for the server's instructions; else ``None``."""
        tools = list(self.tools().values())
        meta = [tool for tool in tools if discovery.is_meta_tool(tool)]
        if len(meta) < 2:
            return None
        own = [tool for tool in tools if not discovery.is_meta_tool(tool)]
        return discovery.render_description(own, meta, schemas=False)

    def prompts(self) -> list[Any]:
        return list(self.driver.prompts()) if self.has_prompts else []

    def prompt(self, name: str) -> Any:
        return next((p for p in self.prompts() if results.field(p, "name") == name), None)

    def resources(self) -> list[Any]:
        return list(self.driver.resources()) if self.has_resources else []

    def templates(self) -> list[Any]:
        return list(self.driver.resource_templates()) if self.has_templates else []

    def resource(self, uri: str) -> Any:
        """The resource or template ``uri`` reads, or ``None``: the one resolution both the
        scope check and the read use (a driver's own ``resource_for(uri)`` when it has one,
        else the static resource with that URI, else the first template matching it)."""
        resolve = getattr(self.driver, "resource_for", None)
        if callable(resolve):
            return resolve(uri)
        found = next((r for r in self.resources() if str(results.field(r, "uri")) == uri), None)
        if found is None:
            found = next((t for t in self.templates() if _template_matches(t, uri)), None)
        return found

    async def render_prompt(self, name: str, arguments: dict[str, Any], context: AgentContext) -> Any:
        render = getattr(self.driver, "arender_prompt", None)
        if callable(render):
            return await render(name, arguments, context)
        return await _off_loop(self.driver.render_prompt, name, arguments, context)

    async def read_resource(self, uri: str, context: AgentContext) -> Any:
        read = getattr(self.driver, "aread_resource", None)
        if callable(read):
            return await read(uri, context)
        return await _off_loop(self.driver.read_resource, uri, context)

    def required_scopes(self, method: str, params: Mapping[str, Any]) -> tuple[str, ...]:
        """The OAuth scopes one JSON-RPC request needs (empty when none)."""
        rule = self.scope_rules.get(method)
        if rule is not None:
            return tuple(rule(params))
        name = params.get("name")
        if method == "tools/call" and isinstance(name, str):
            tool = self.tool(name)
            arguments = params.get("arguments")
            args = arguments if isinstance(arguments, Mapping) else None
            if tool is None:
                return ()
            shown = self.described(tool, args)
            target = self.target(tool, args)
            scopes = [s for item in [target, *shown] if item is not None for s in results.required_scopes(item)]
            return tuple(dict.fromkeys(scopes))
        if method == "prompts/get" and isinstance(name, str) and self.has_prompts:
            prompt = self.prompt(name)
            return results.required_scopes(prompt) if prompt is not None else ()
        uri = params.get("uri")
        if method == "resources/read" and isinstance(uri, str) and self.has_resources:
            resource = self.resource(uri)
            return results.required_scopes(resource) if resource is not None else ()
        if method == "completion/complete":
            owner = self.completion_owner(params.get("ref"))
            return results.required_scopes(owner) if owner is not None else ()
        return ()

    def completion_owner(self, ref: Any) -> Any:
        """The prompt or resource template a ``completion/complete`` request completes for
        (``ref/prompt`` by name, ``ref/resource`` by its URI template as listed), or ``None``:
        the one lookup both the scope check and the completion use."""
        if isinstance(ref, Mapping):
            kind, name, uri = ref.get("type"), ref.get("name"), ref.get("uri")
        else:
            kind, name, uri = getattr(ref, "type", None), getattr(ref, "name", None), getattr(ref, "uri", None)
        if kind == "ref/prompt" and isinstance(name, str):
            return self.prompt(name)
        if kind == "ref/resource" and uri is not None:
            text = str(uri)
            return next((t for t in self.templates()
                         if str(results.field(t, "uri_template", "uriTemplate", default="")) == text), None)
        return None

    def all_scopes(self) -> set[str]:
        scopes: set[str] = set()
        for tool in self.tools().values():
            scopes.update(results.required_scopes(tool))
        for item in [*self.prompts(), *self.resources(), *self.templates()]:
            scopes.update(results.required_scopes(item))
        return scopes

    async def call(self, name: str, arguments: Mapping[str, Any], context: AgentContext) -> Any:
        acall = getattr(self.driver, "acall_tool", None)
        if callable(acall):
            return await acall(name, dict(arguments), context=context)
        import asyncio

        return await asyncio.to_thread(self.driver.call_tool, name, dict(arguments), context=context)


# ----------------------------------------------------------------------------- request data


def _http_request(ctx: Any) -> Any:
    request = getattr(ctx, "request", None)
    return request if request is not None and hasattr(request, "headers") else None


def principal_of(ctx: Any) -> Any:
    """The verified OAuth principal of this request, or ``None`` (no auth, or stdio)."""
    request = _http_request(ctx)
    if request is None:
        return None
    return request.scope.get("mcs.principal")


def granted_scopes(ctx: Any) -> frozenset[str] | None:
    """The token's scopes, or ``None`` when the server does not use OAuth."""
    principal = principal_of(ctx)
    return None if principal is None else principal.scopes


def agent_context(ctx: Any, *, stateless: bool = False) -> AgentContext:
    """The :class:`AgentContext` a driver sees for this MCP request (see module doc).

    ``stateless``: the transport keeps no session, so the context's session refuses
    server-to-client requests with an error that says to serve stateful.
    """
    principal = principal_of(ctx)
    # A verified token names the caller (sub, else its client); a clientInfo name is no identity.
    agent_id = principal.agent_id if principal is not None else None
    if agent_id is None:
        params = getattr(ctx.session, "client_params", None)
        info = getattr(params, "client_info", None)
        agent_id = getattr(info, "name", None) or "anonymous"
    metadata: dict[str, str] = {}
    request = _http_request(ctx)
    if request is not None:
        for key, value in request.headers.items():
            lowered = key.lower()
            if lowered not in HIDDEN_HEADERS:
                metadata["header:" + lowered] = value
    session = McpSession(ctx, stateless=stateless)
    request_id = ctx.request_id
    if request_id is None:
        return AgentContext(agent_id=str(agent_id), metadata=metadata, session=session)
    return AgentContext(agent_id=str(agent_id), request_id=str(request_id), metadata=metadata, session=session)


def _permitted(item: Any, granted: frozenset[str] | None) -> bool:
    """Whether a token with ``granted`` scopes (``None``: no OAuth) may use a tool, prompt or resource."""
    return granted is None or all(scope in granted for scope in results.required_scopes(item))


def _visible(items: Iterable[T], ctx: Any) -> list[T]:
    """The ``items`` this request's token may see, in order (all of them without OAuth)."""
    granted = granted_scopes(ctx)
    return [item for item in items if _permitted(item, granted)]


# ----------------------------------------------------------------------------- the server


def refuse_credential_forwarding(driver: Any) -> None:
    """Refuse a driver that forwards callers' credentials (``driver.forwarded_credentials``).

    An MCP server never hands a caller's ``Authorization`` or ``Cookie`` to a driver (MCP
    forbids token passthrough), so such a driver could only fail every call; it is
    refused before serving starts instead.

    Raises:
        ConfigurationError: naming where the driver forwards credentials.
    """
    forwarded = getattr(driver, "forwarded_credentials", ())
    if forwarded:
        raise ConfigurationError(
            f"the driver forwards callers' credentials ({'; '.join(forwarded)}), which a served driver "
            "cannot do: MCP forbids token passthrough, so a caller's Authorization or Cookie never "
            "reaches it. Give the downstream its own credential ({env.API_TOKEN}) and drop "
            "allow_credential_forwarding, or call the driver from your own code"
        )


class ServedServer(Server[Any]):
    """The SDK's low-level ``Server`` advertising the ``listChanged`` flags it can back."""

    notification_options: NotificationOptions = NotificationOptions()

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or self.notification_options, experimental_capabilities, extensions
        )


def build_server(
    driver: Any,
    options: ServeOptions | None = None,
    *,
    extensions: Sequence[Extension] = (),
) -> Server[Any]:
    """A low-level MCP ``Server`` exposing ``driver`` (a ToolDriver or a Toolbox).

    Each of ``extensions`` is called as ``extension(server, driver)`` after the
    handlers are registered (the Interfaces layer adds its methods this way).
    The returned server carries ``mcs_catalog`` (a :class:`DriverCatalog`),
    ``mcs_log_forwarder`` (installed by the runners) and ``mcs_subscribers`` (the
    connections change notifications go to) for :func:`build_app`.
    """
    options = options or ServeOptions()
    refuse_credential_forwarding(driver)
    catalog = DriverCatalog(driver)
    forwarder = McpLogForwarder()
    subscribers = Subscribers()
    enable_logs = options.logging.enable_mcp_logs
    stateless = not options.has_sessions
    notifies = catalog.announces_changes and options.has_sessions
    instructions = options.instructions
    if instructions is None and not options.all_tools:
        instructions = catalog.index()
    shown = len(catalog.listed(all_tools=options.all_tools))
    if shown > TOOL_LIMIT:
        logger.warning(
            "listing %d tools: many MCP clients hand tools to model APIs that accept at most %d "
            "(discovery mode lists 3; see the driver's token_budget and description_mode)",
            shown, TOOL_LIMIT,
        )

    def connection_state(ctx: Any) -> dict[str, Any] | None:
        # The SDK builds a ServerSession per request; the Connection behind it (and its
        # ``state`` dict) lives as long as the client's session, so the level goes there.
        connection = getattr(ctx.session, "_connection", None)
        state = getattr(connection, "state", None)
        return state if isinstance(state, dict) else None

    def client_level(ctx: Any) -> int:
        state = connection_state(ctx)
        level = state.get(_LEVEL_KEY) if state is not None else None
        return level if isinstance(level, int) else logging.DEBUG

    def log_threshold(ctx: Any) -> int | None:
        """The lowest level this request's client receives, or ``None`` for nothing.

        Handshake protocol versions: what ``logging/setLevel`` chose (default all).
        2026-07-28 and later: only what the request opted into in its ``_meta``.
        """
        meta = ctx.meta if isinstance(ctx.meta, Mapping) else None
        allowed = allowed_log_levels(str(ctx.protocol_version), meta)
        if not allowed:
            return None
        return max(client_level(ctx), min(MCP_LEVELS[str(level)] for level in allowed))

    aconnect = getattr(driver, "aconnect", None) if notifies else None

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        subscribers.seen(ctx)
        if callable(aconnect):
            # A driver with sessions of its own (the MCP bridge) connects on the serving
            # loop, so its servers' changes are heard as they come and relayed at once,
            # not when a later synchronous call happens to read them.
            await aconnect()
        granted = granted_scopes(ctx)
        return types.ListToolsResult(tools=[
            results.tool_to_mcp(tool, name=name)
            for name, tool in catalog.listed(all_tools=options.all_tools).items() if _permitted(tool, granted)
        ])

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        name = params.name
        tool = catalog.tool(name)
        if tool is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {name!r}")
        try:
            # call_tool runs as the tool it names, resolved here once for the scope check and the call
            target, arguments = catalog.resolve(tool, params.arguments)
        except ToolCallError as error:
            return results.tool_error_result(error)
        granted = granted_scopes(ctx)
        for needed in (target, tool, *catalog.described(tool, params.arguments)):
            if not _permitted(needed, granted):
                # The HTTP layer answers 403 before this; kept for any other route in.
                return results.error_result(f"the access token lacks the scope {needed.name} needs")
        subscribers.seen(ctx)
        context = agent_context(ctx, stateless=stateless)
        started = time.perf_counter()

        async def send_log(level: str, logger_name: str, data: Any) -> None:
            notification = types.LoggingMessageNotification(
                params=types.LoggingMessageNotificationParams(
                    level=cast(types.LoggingLevel, level), logger=logger_name, data=data
                )
            )
            await ctx.session.send_notification(notification, related_request_id=ctx.request_id)

        min_level = log_threshold(ctx)
        if not enable_logs or min_level is None:
            return await _run_call(catalog, target, arguments, context, started)
        with forwarder.capture(send_log, min_level) as captured:
            outcome = await _run_call(catalog, target, arguments, context, started)
        await forwarder.drain(captured)
        return outcome

    async def set_level(ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
        state = connection_state(ctx)
        if state is not None:
            state[_LEVEL_KEY] = MCP_LEVELS.get(str(params.level), logging.DEBUG)
        return types.EmptyResult()

    server = ServedServer(
        options.name,
        version=options.version,
        instructions=instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    # Registered directly: the constructor argument warns that the logging capability
    # is deprecated in the newest protocol, while clients of 2025 versions still use it.
    server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)

    prompts, resources = catalog.offers_prompts(), catalog.offers_resources()
    if prompts:
        _register_prompts(server, catalog, stateless, subscribers)
    if resources:
        _register_resources(server, catalog, stateless, subscribers)
        if notifies and catalog.announces_resource_updates:
            _register_subscriptions(server, catalog, subscribers)
    if catalog.offers_completions() and (prompts or resources):
        _register_completions(server, catalog)
    server.notification_options = NotificationOptions(
        prompts_changed=notifies and prompts, resources_changed=notifies and resources, tools_changed=notifies
    )

    def changed(kind: str, uri: str | None) -> None:
        if kind == "tools":
            catalog.forget_tools()
        if notifies:
            subscribers.on_change(kind, uri)

    if callable(getattr(driver, "add_change_listener", None)):
        driver.add_change_listener(changed)

    server.mcs_catalog = catalog  # type: ignore[attr-defined]
    server.mcs_log_forwarder = forwarder  # type: ignore[attr-defined]
    server.mcs_subscribers = subscribers  # type: ignore[attr-defined]
    for extension in extensions:
        extension(server, driver)
    return server


async def _run_call(
    catalog: DriverCatalog,
    tool: Tool,
    arguments: dict[str, Any],
    context: AgentContext,
    started: float,
) -> types.CallToolResult:
    try:
        value = await catalog.call(tool.name, arguments, context)
    except ToolCallError as error:
        logger.info(
            "tools/call %s by %s: %s in %.1f ms",
            tool.name, context.agent_id, error.code.value, (time.perf_counter() - started) * 1000,
        )
        return results.tool_error_result(error)
    except Exception as exc:  # the process keeps serving; no stack trace reaches the client
        logger.exception("tools/call %s failed unexpectedly", tool.name)
        return results.error_result(f"{tool.name} failed: {type(exc).__name__}")
    logger.info(
        "tools/call %s by %s: ok in %.1f ms",
        tool.name, context.agent_id, (time.perf_counter() - started) * 1000,
    )
    try:
        validator = catalog.output_check(tool)
        return results.to_call_result(value, tool, check=validator.validate if validator is not None else None)
    except ToolCallError as error:
        return results.tool_error_result(error)


def _register_prompts(server: Server[Any], catalog: DriverCatalog, stateless: bool, subscribers: Subscribers) -> None:
    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        subscribers.seen(ctx)
        return types.ListPromptsResult(prompts=[results.prompt_to_mcp(p) for p in _visible(catalog.prompts(), ctx)])

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        prompt = catalog.prompt(params.name)
        if prompt is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown prompt: {params.name!r}")
        if not _permitted(prompt, granted_scopes(ctx)):
            raise MCPError(types.INVALID_PARAMS, f"the access token lacks the scope {params.name} needs")
        try:
            value = await catalog.render_prompt(
                params.name, dict(params.arguments or {}), agent_context(ctx, stateless=stateless)
            )
        except ToolCallError as error:
            raise MCPError(types.INVALID_PARAMS, error.message) from None
        return results.to_prompt_result(value, results.field(prompt, "description"))

    server.add_request_handler("prompts/list", types.PaginatedRequestParams, list_prompts)
    server.add_request_handler("prompts/get", types.GetPromptRequestParams, get_prompt)


def _register_resources(
    server: Server[Any], catalog: DriverCatalog, stateless: bool, subscribers: Subscribers
) -> None:
    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        subscribers.seen(ctx)
        return types.ListResourcesResult(
            resources=[results.resource_to_mcp(r) for r in _visible(catalog.resources(), ctx)]
        )

    async def list_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[results.template_to_mcp(t) for t in _visible(catalog.templates(), ctx)]
        )

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        resource = catalog.resource(uri)
        if resource is None:  # nothing the scope check could judge is ever read
            raise MCPError(RESOURCE_NOT_FOUND, f"Unknown resource: {uri}")
        if not _permitted(resource, granted_scopes(ctx)):
            raise MCPError(types.INVALID_PARAMS, f"the access token lacks the scope {uri} needs")
        try:
            value = await catalog.read_resource(uri, agent_context(ctx, stateless=stateless))
        except ToolCallError as error:
            raise MCPError(RESOURCE_NOT_FOUND if _is_not_found(error) else types.INVALID_PARAMS,
                           error.message) from None
        except (KeyError, LookupError):
            raise MCPError(RESOURCE_NOT_FOUND, f"Unknown resource: {uri}") from None
        return results.to_read_result(value, uri, results.field(resource, "mime_type", "mimeType"))

    server.add_request_handler("resources/list", types.PaginatedRequestParams, list_resources)
    server.add_request_handler("resources/read", types.ReadResourceRequestParams, read_resource)
    if catalog.has_templates:
        server.add_request_handler("resources/templates/list", types.PaginatedRequestParams, list_templates)


def _register_subscriptions(server: Server[Any], catalog: DriverCatalog, subscribers: Subscribers) -> None:
    """``resources/subscribe`` and ``unsubscribe``: ``notifications/resources/updated`` for the
    URIs a connection subscribed to, when the driver announces new content."""

    async def subscribe(ctx: Any, params: types.SubscribeRequestParams) -> types.EmptyResult:
        uri = str(params.uri)
        resource = catalog.resource(uri)
        if resource is None:
            raise MCPError(RESOURCE_NOT_FOUND, f"Unknown resource: {uri}")
        if not _permitted(resource, granted_scopes(ctx)):
            raise MCPError(types.INVALID_PARAMS, f"the access token lacks the scope {uri} needs")
        subscribers.seen(ctx)
        subscribers.subscribe(ctx, uri)
        return types.EmptyResult()

    async def unsubscribe(ctx: Any, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
        subscribers.unsubscribe(ctx, str(params.uri))
        return types.EmptyResult()

    server.add_request_handler("resources/subscribe", types.SubscribeRequestParams, subscribe)
    server.add_request_handler("resources/unsubscribe", types.UnsubscribeRequestParams, unsubscribe)


def _register_completions(server: Server[Any], catalog: DriverCatalog) -> None:
    """``completion/complete`` for prompt arguments and resource-template variables."""

    async def complete(ctx: Any, params: types.CompleteRequestParams) -> types.CompleteResult:
        ref = params.ref
        if isinstance(ref, types.PromptReference):
            kind, name = "prompt", ref.name
            if catalog.prompt(name) is None:
                raise MCPError(types.INVALID_PARAMS, f"Unknown prompt: {name!r}")
        else:
            kind, name = "resource", str(ref.uri)
        owner = catalog.completion_owner(ref)
        if owner is not None and not _permitted(owner, granted_scopes(ctx)):
            # The HTTP layer answers 403 before this; kept for any other route in.
            raise MCPError(types.INVALID_PARAMS, f"the access token lacks the scope {name} needs")
        context = dict(params.context.arguments or {}) if params.context is not None else {}
        try:
            values = await catalog.complete(kind, name, params.argument.name, params.argument.value, context)
        except ToolCallError as error:
            raise MCPError(types.INVALID_PARAMS, error.message) from None
        return types.CompleteResult(
            completion=types.Completion(values=values[:100], total=len(values), has_more=False)
        )

    server.add_request_handler("completion/complete", types.CompleteRequestParams, complete)


def _is_not_found(error: ToolCallError) -> bool:
    return error.code.value == "TOOL_NOT_FOUND"


async def _off_loop(function: Callable[..., Any], *args: Any) -> Any:
    """Run a driver's sync method on a worker thread (it may do I/O); await it if async."""
    import asyncio
    import inspect

    if inspect.iscoroutinefunction(function):
        return await function(*args)
    value = await asyncio.to_thread(function, *args)
    if inspect.isawaitable(value):
        return await value
    return value


def _template_matches(template: Any, uri: str) -> bool:
    """Whether ``uri`` fits an RFC 6570 template, matched as the gen-mcp file driver does."""
    from mcs.errors import ConfigurationError
    from mcs_mcp.mcpfile.uritemplate import UriTemplate

    text = str(results.field(template, "uri_template", "uriTemplate", default=""))
    if not text:
        return False
    try:
        return UriTemplate.parse(text).match(uri) is not None
    except ConfigurationError:
        return False
