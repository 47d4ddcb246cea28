"""``MCPFileDriver``: a gen-mcp file as an MCS driver (entry point ``mcpfile``).

    driver = mcs.load_driver("mcpfile", path="mcpfile.yaml")
    driver = mcs.load_driver("mcpfile", path="tools.yaml", server_config="server.yaml")  # 0.2.0
    result = driver.process_llm_response(llm_output)

The file's tools are the driver's tools. Prompts and resources are tools too (named
``prompt_<name>``, ``resource_<name>`` and ``resource_template_<name>``), and a server gets
them structured through :meth:`MCPFileDriver.prompts`, :meth:`~MCPFileDriver.render_prompt`,
:meth:`~MCPFileDriver.resources`, :meth:`~MCPFileDriver.resource_templates` and
:meth:`~MCPFileDriver.read_resource`. Every path runs through the MCS pipeline (validation,
policies, hooks, deadline). :meth:`~MCPFileDriver.runtime_settings` tells a server how the
file wants to be served.
"""

from __future__ import annotations

import asyncio
import shutil
import ssl
import threading
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

from mcs import http as mcs_http
from mcs import pipeline, prompts
from mcs.context import AgentContext
from mcs.driver import DriverMeta, ToolDriver, refuse_unknown_options
from mcs.errors import ConfigurationError, ExecutionError, ToolCallError, ToolNotFoundError
from mcs.event_loops import PerLoop, close_outside_loops
from mcs.pipeline import Invocation
from mcs.tools import Tool, ToolCall, sanitize_tool_name
from mcs.urls import EgressPolicy
from mcs.validation import ArgumentValidator, compile_validator
from mcs_mcp.mcpfile import model
from mcs_mcp.mcpfile.cli import CliInvoker, CliOptions
from mcs_mcp.mcpfile.http import HttpInvoker, HttpOptions
from mcs_mcp.mcpfile.loader import LoadedFile, Primitive, load
from mcs_mcp.mcpfile.results import CREDENTIAL_HEADERS, InvokeResult, env_value

_HEALTH_SECONDS = 5.0
_PER_CALL = "mcs-per-call"
_TOOL_PREFIX = {"tool": "", "prompt": "prompt_", "resource": "resource_", "resource_template": "resource_template_"}


@dataclass(frozen=True, slots=True)
class PromptArgumentSpec:
    """One argument of a prompt, as MCP ``prompts/list`` shows it."""

    name: str
    title: str | None
    description: str | None
    required: bool


@dataclass(frozen=True, slots=True)
class PromptSpec:
    """A prompt of the file: what ``prompts/list`` needs, plus its scopes and schema."""

    name: str
    title: str | None
    description: str
    arguments: tuple[PromptArgumentSpec, ...]
    input_schema: Mapping[str, Any]
    required_scopes: tuple[str, ...]
    tool_name: str  # the same prompt as a tool


@dataclass(frozen=True, slots=True)
class PromptMessage:
    role: str  # "assistant", as gen-mcp answers
    text: str


@dataclass(frozen=True, slots=True)
class RenderedPrompt:
    """What ``prompts/get`` returns: a description and the messages."""

    description: str
    messages: tuple[PromptMessage, ...]


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    """A static resource: what ``resources/list`` needs, plus its scopes."""

    name: str
    title: str | None
    description: str
    uri: str
    mime_type: str | None
    size: int | None
    required_scopes: tuple[str, ...]
    tool_name: str


@dataclass(frozen=True, slots=True)
class ResourceTemplateSpec:
    """A resource template: what ``resources/templates/list`` needs, plus its scopes."""

    name: str
    title: str | None
    description: str
    uri_template: str
    mime_type: str | None
    input_schema: Mapping[str, Any]
    required_scopes: tuple[str, ...]
    tool_name: str


@dataclass(frozen=True, slots=True)
class ResourceContents:
    """What ``resources/read`` returns for one URI."""

    uri: str
    mime_type: str | None
    text: str


def _items(option: Sequence[Any] | str) -> list[tuple[Any, Any]]:
    """The entries of a list option given as a list or as one comma-separated string (the
    command line's form): ``(as given, stripped when text)`` each."""
    items = option.split(",") if isinstance(option, str) else list(option)
    return [(item, item.strip() if isinstance(item, str) else item) for item in items]


def _program_names(names: Sequence[str] | str) -> frozenset[str]:
    """The ``cli_trusted_programs`` option: a list, or one comma-separated string."""
    out: set[str] = set()
    for item, name in _items(names):
        if not isinstance(name, str) or not name or any(c.isspace() for c in name):
            raise ConfigurationError(
                f"cli_trusted_programs takes program names as the file writes them (kubectl, ./deploy.sh), "
                f"got {item!r}"
            )
        out.add(name)
    return frozenset(out)


def _write_roots(roots: Sequence[str | Path] | str) -> tuple[str, ...]:
    """The ``cli_write_roots`` option: absolute directories, a list or one comma-separated string."""
    return _roots(roots, "cli_write_roots", "where a command may write, replace or delete the paths a model's "
                  "value names (besides its working directory)")


def _read_roots(roots: Sequence[str | Path] | str) -> tuple[str, ...]:
    """The ``cli_read_roots`` option: absolute directories, a list or one comma-separated string."""
    return _roots(roots, "cli_read_roots", "where a command may read the paths a model's value names (besides "
                  "its working directory and cli_write_roots)")


def _roots(roots: Sequence[str | Path] | str, option: str, purpose: str) -> tuple[str, ...]:
    """Absolute directories, each once, in order; anything else is refused naming ``option``."""
    out: list[str] = []
    for item, root in _items(roots):
        if not isinstance(root, (str, Path)) or not str(root) or not Path(root).is_absolute():
            raise ConfigurationError(f"{option} takes absolute directories {purpose}, got {item!r}")
        out.append(str(root))
    return tuple(dict.fromkeys(out))


class MCPFileDriver(ToolDriver):
    """A gen-mcp MCP file (``mcpFileVersion: 0.1.0``, or a 0.2.0 pair) as a driver.

    Args:
        path: the MCP file, or for 0.2.0 the ``kind: MCPToolDefinitions`` file.
        server_config: for 0.2.0, the ``kind: MCPServerConfig`` file (optional; without it
            the runtime is gen-mcp's default, streamable HTTP on port 3000).
        expose_prompts / expose_resources: also list prompts / resources as tools (default yes).
        max_response_bytes: cap on an HTTP response body (default 5 MiB).
        retries / backoff: retries of idempotent HTTP requests answered 408, 429, 502, 503
            or 504 or failing in transport (default 2, from 0.25 s, within the deadline).
        max_output_bytes: cap on a command's output (default 1 MiB).
        allow_credential_forwarding: let HTTP header templates forward the caller's
            ``Authorization``/``Cookie`` (token passthrough; off by default).
        allow_dynamic_hosts: let arguments choose the host of a URL (off by default); such
            hosts must still pass the egress block list (public addresses only).
        egress_allow: IP addresses or networks (``"10.0.0.0/8"``), or ``"localhost"``, that
            a caller-chosen host may reach although they are not public: a URL's host with
            ``allow_dynamic_hosts``, and the repository of a command's ``git clone``,
            ``fetch``, ``pull`` or ``ls-remote`` that a value names (always checked; only
            http(s), pinned to the checked address).
        egress: a whole :class:`mcs.urls.EgressPolicy` instead (an allow-list of hosts, a resolver).
        allow_control_characters: let command values contain line breaks (NUL never).
        cli_cwd: working directory of commands (default: the current one).
        cli_trusted_programs: programs the operator vouches keep their arguments and
            input as data (``["kubectl", "./deploy.sh"]``, names as the file writes them; a
            comma-separated string on the command line), added to the built-in allow-list
            of programs a placeholder may reach. Inline-code and command options stay
            refused (``python3 -c {x}``); see ``docs/mcpfile.md``.
        cli_write_roots: absolute directories where a command may also write, replace or
            delete a path a model's value names (``cp``, ``mv``, ``ln``, ``rm``, ``touch``,
            ``mkdir``, ``git clone``'s directory...); without them such a path must be
            inside the command's working directory (a comma-separated string on the command line).
        cli_read_roots: absolute directories where a command may also read a path a model's
            value names (``cat``, ``head``, ``grep``, ``ls``, ``jq``'s files, ``git diff``,
            ``< {file}``...); without them such a path must be inside the command's working
            directory or ``cli_write_roots``, and never in ``/proc``, ``/sys`` or ``/dev``
            unless a read root is there (a comma-separated string on the command line).
        apply_env_overrides: read ``GENMCP_*`` runtime overrides (default yes).
        **options: the :class:`mcs.ToolDriver` options (``timeout``, ``prefix``...).

    Raises:
        ConfigurationError: the file is refused; the message names the file, primitive and field.
    """

    enforces_deadline = True

    def __init__(
        self,
        path: str | Path,
        server_config: str | Path | None = None,
        *,
        expose_prompts: bool = True,
        expose_resources: bool = True,
        max_response_bytes: int = 5 * 1024 * 1024,
        retries: int = 2,
        backoff: float = 0.25,
        max_output_bytes: int = 1024 * 1024,
        allow_credential_forwarding: bool = False,
        allow_dynamic_hosts: bool = False,
        egress_allow: Iterable[str] = (),
        egress: EgressPolicy | None = None,
        allow_control_characters: bool = False,
        cli_cwd: str | Path | None = None,
        cli_trusted_programs: Sequence[str] | str = (),
        cli_write_roots: Sequence[str | Path] | str = (),
        cli_read_roots: Sequence[str | Path] | str = (),
        apply_env_overrides: bool = True,
        **options: Any,
    ) -> None:
        # Every constructor argument, whatever the signature holds, for reload().
        arguments = {k: v for k, v in locals().items() if k not in ("self", "options", "__class__")}
        self._constructed_with: tuple[dict[str, Any], dict[str, Any]] = (arguments, dict(options))
        refuse_unknown_options(MCPFileDriver, options, "the MCP file driver")
        super().__init__(**options)
        policy = egress or EgressPolicy(allow=egress_allow)
        self.file: LoadedFile = load(
            path,
            server_config,
            http_options=HttpOptions(
                max_response_bytes=max_response_bytes,
                allow_credential_forwarding=allow_credential_forwarding,
                allow_dynamic_hosts=allow_dynamic_hosts,
                retries=max(0, int(retries)),
                backoff=max(0.0, float(backoff)),
                egress=policy,
            ),
            cli_options=CliOptions(
                max_output_bytes=max_output_bytes,
                allow_control_characters=allow_control_characters,
                cwd=str(cli_cwd) if cli_cwd is not None else None,
                trusted_programs=_program_names(cli_trusted_programs),
                egress=policy,
                write_roots=_write_roots(cli_write_roots),
                read_roots=_read_roots(cli_read_roots),
            ),
            apply_env_overrides=apply_env_overrides,
        )
        self.expose_prompts = expose_prompts
        self.expose_resources = expose_resources
        kinds = {type(p.invoker) for p in self.file.primitives}
        transport = ", ".join(
            name for name, cls in (("HTTP", HttpInvoker), ("CLI", CliInvoker)) if cls in kinds
        ) or "none"
        self.meta = DriverMeta(
            id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"mcs-mcpfile:{self.file.name}")),
            name=sanitize_tool_name(self.file.name, max_length=40),
            version=self.file.version,
            protocol="MCP",
            transport=transport,
            spec_format="MCP File",
            target_llms=prompts.target_llms(self.prompt_templates),
            capabilities=("healthcheck",),
            prefix=self.prefix,
        )
        self._by_tool: dict[str, Primitive] = {}
        self._primitive_tools: dict[tuple[str, str], Tool] = {}
        for primitive in self.file.primitives:
            tool = _as_tool(primitive)
            if tool.name in self._by_tool:
                other = self._by_tool[tool.name]
                raise ConfigurationError(
                    f"{self.file.path}: {primitive.kind} {primitive.name!r} and {other.kind} {other.name!r} "
                    f"both become the tool name {tool.name!r}"
                )
            self._by_tool[tool.name] = primitive
            self._primitive_tools[(primitive.kind, primitive.name)] = tool
        self._prim_validators: dict[str, ArgumentValidator] = {}
        self._client: httpx.Client | None = None
        self._client_lock = threading.Lock()
        # one async pool per event loop, closed by that loop's shutdown (see mcs.event_loops)
        self._aclients: PerLoop[httpx.AsyncClient] = PerLoop(_aclose_client)
        self._ssl: ssl.SSLContext | bool | None = None
        # reload() announces a changed file to change listeners (mcs serve: list_changed).
        self.meta = self.meta.model_copy(update={"capabilities": (*self.meta.capabilities, "list_changed")})

    def reload(self) -> None:
        """Read the file again and announce its tools, prompts and resources as changed.

        ``mcs serve`` turns the announcement into ``list_changed`` notifications, so
        connected clients list again. Policies, hooks and change listeners stay; the
        driver's HTTP connections are reopened. A file that is now refused raises and
        leaves the driver as it was.

        Raises:
            ConfigurationError: the file is refused; the message names the file and field.
        """
        arguments, options = self._constructed_with
        fresh = type(self)(**arguments, **options)
        listeners, controls = self._listeners(), self.controls
        self._drop_pools()
        self.__dict__.update(fresh.__dict__)
        self._change_listeners, self.controls = listeners, controls
        self.notify_changed("tools")
        self.notify_changed("prompts")
        self.notify_changed("resources")

    # ------------------------------------------------------------------ ToolDriver

    def _list_tools(self) -> Iterable[Tool]:
        for primitive in self.file.primitives:
            if primitive.kind == "prompt" and not self.expose_prompts:
                continue
            if primitive.kind.startswith("resource") and not self.expose_resources:
                continue
            yield self._primitive_tools[(primitive.kind, primitive.name)]

    def _primitive(self, invocation: Invocation) -> Primitive:
        name = invocation.tool.unprefixed_name
        primitive = self._by_tool.get(name)
        if primitive is None:
            raise ExecutionError(f"{invocation.tool.name} is not part of this MCP file.", tool=invocation.tool.name)
        return primitive

    def _call_tool(self, invocation: Invocation) -> Any:
        primitive = self._primitive(invocation)
        return self._shape(primitive, self._invoke(primitive, invocation))

    async def _acall_tool(self, invocation: Invocation) -> Any:
        primitive = self._primitive(invocation)
        return self._shape(primitive, await self._ainvoke(primitive, invocation))

    @staticmethod
    def _shape(primitive: Primitive, result: InvokeResult) -> Any:
        return result.value() if primitive.kind == "tool" else result.text

    def _invoke(self, primitive: Primitive, invocation: Invocation) -> InvokeResult:
        metadata = invocation.context.metadata
        invoker = primitive.invoker
        if isinstance(invoker, HttpInvoker):
            request = invoker.build(invocation.arguments, metadata)
            secrets = invoker.credentials(request, metadata, invocation.secrets())
            return invoker.send(self._http_client(), request, invocation.deadline, secrets=secrets)
        return invoker.run(invocation.arguments, metadata, invocation.deadline, invocation.timeout)

    async def _ainvoke(self, primitive: Primitive, invocation: Invocation) -> InvokeResult:
        metadata = invocation.context.metadata
        invoker = primitive.invoker
        if isinstance(invoker, HttpInvoker):
            request = invoker.build(invocation.arguments, metadata)
            secrets = invoker.credentials(request, metadata, invocation.secrets())
            return await invoker.asend(await self._async_client(), request, invocation.deadline, secrets=secrets)
        return await invoker.arun(invocation.arguments, metadata, invocation.deadline, invocation.timeout)

    def _http_client(self) -> httpx.Client:
        """The one pooled client of the sync path, made on first use."""
        with self._client_lock:
            if self._client is None:
                transport = mcs_http.transport(verify=self._verify())
                self._client = httpx.Client(transport=transport, follow_redirects=False, timeout=None)
            return self._client

    async def _async_client(self) -> httpx.AsyncClient:
        """The running event loop's pooled client, made on its first call there and closed by
        that loop's shutdown (:class:`~mcs.event_loops.PerLoop`)."""
        client = self._aclients.current()
        if client is None or client.is_closed:
            transport = mcs_http.async_transport(verify=self._verify())
            client = await self._aclients.add(httpx.AsyncClient(transport=transport, follow_redirects=False, timeout=None))
        return client

    def _verify(self) -> ssl.SSLContext | bool:
        """One TLS context for every client (building one per async call costs ~20 ms)."""
        if self._ssl is None:
            verify = self.file.http_options.verify
            self._ssl = httpx.create_ssl_context() if verify is True else verify
        return self._ssl

    def healthcheck(self) -> dict[str, Any]:
        """Whether what the file's tools reach can be reached (the ``healthcheck`` capability).

        Every HTTP origin the file's URLs name answers a ``HEAD`` (any HTTP status counts:
        the host is up), and the shell that runs CLI commands is installed. Nothing is
        invoked, so no tool runs and no hook fires. Never raises.

        Returns ``{"status": "ok" | "error", "checks": {origin or "bash": "ok" | reason}}``;
        an origin chosen per call (``allow_dynamic_hosts``) is not checked.
        """
        checks: dict[str, str] = {}
        seconds = min(self.timeout or _HEALTH_SECONDS, _HEALTH_SECONDS)
        for primitive in self.file.primitives:
            invoker = primitive.invoker
            if isinstance(invoker, CliInvoker):
                shell = invoker.options.shell
                if shell not in checks:
                    checks[shell] = "ok" if shutil.which(shell) else f"{shell} is not installed"
                continue
            try:
                origin = _origin(invoker)
            except ToolCallError as exc:
                checks[f"{primitive.kind} {primitive.name}"] = exc.message
                continue
            if origin is None or origin in checks:
                continue
            try:
                self._http_client().request("HEAD", origin, timeout=seconds)
                checks[origin] = "ok"
            except httpx.HTTPError as exc:
                checks[origin] = f"unreachable ({type(exc).__name__})"
        ok = all(v == "ok" for v in checks.values())
        return {"status": "ok" if ok else "error", "checks": checks}

    def _release_pools(self) -> list[httpx.AsyncClient]:
        """Close the sync pool and forget the async ones; returns those for the caller to close."""
        with self._client_lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()
        return self._aclients.release()

    def _drop_pools(self) -> None:
        """Close every pool that can be closed from here: inside a running event loop the async
        pools are left to their loops, which close them (as they do at shutdown)."""
        released = [client for client in self._release_pools() if not client.is_closed]
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            close_outside_loops(released, _aclose_client)

    def close(self) -> None:
        """Close the pooled HTTP connections (the async ones too, when no event loop runs them).

        Raises:
            ConfigurationError: called inside a running event loop while async pools are
                open; ``await driver.aclose()`` there instead.
        """
        close_outside_loops([client for client in self._release_pools() if not client.is_closed], _aclose_client)

    async def aclose(self) -> None:
        """Close the pooled HTTP connections from inside the event loop that used them."""
        for client in self._release_pools():
            await client.aclose()

    async def __aenter__(self) -> MCPFileDriver:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # ------------------------------------------------------------------ serving

    @property
    def forwarded_credentials(self) -> tuple[str, ...]:
        """Where the file forwards a caller's credentials (``allow_credential_forwarding``):
        ``"tool 'x': {headers.Authorization}"`` entries, empty when it does not.

        A server refuses to serve such a file (see docs/serving.md): credential forwarding
        is for applications that call the driver themselves and pass the header in
        ``AgentContext.metadata``.
        """
        found: list[str] = []
        for primitive in self.file.primitives:
            invoker = primitive.invoker
            if not isinstance(invoker, HttpInvoker):
                continue
            for template in invoker.headers.values():
                found.extend(
                    f"{primitive.kind} {primitive.name!r}: {part.text}" for part in template.placeholders
                    if part.source == "header" and part.name.lower() in CREDENTIAL_HEADERS
                )
        return tuple(dict.fromkeys(found))

    def runtime_settings(self) -> dict[str, Any]:
        """How the file wants to be served, after defaults and ``GENMCP_*`` overrides.

        Keys: ``transport`` (``"stdio"`` or ``"streamablehttp"``), ``port`` (int),
        ``base_path`` (str), ``stateless`` (bool), ``tls`` (``None`` or ``{"cert_file",
        "key_file"}``), ``auth`` (``None`` or ``{"authorization_servers", "jwks_uri",
        "issuer", "audience"}``), ``logging`` (``{"level", "encoding", "output_paths",
        "error_output_paths", "initial_fields", "development", "disable_caller",
        "disable_stacktrace", "enable_mcp_logs"}``), ``name``, ``version``, ``instructions``.
        """
        runtime = self.file.runtime
        http = runtime.streamable_http_config or model.StreamableHTTPConfig.model_validate({})
        tls = None
        if http.tls is not None and http.tls.cert_file and http.tls.key_file:
            tls = {"cert_file": http.tls.cert_file, "key_file": http.tls.key_file}
        auth = None
        if http.auth is not None and (http.auth.authorization_servers or http.auth.jwks_uri):
            auth = {
                "authorization_servers": list(http.auth.authorization_servers),
                "jwks_uri": http.auth.jwks_uri or None,
                "issuer": None,
                "audience": None,
            }
        logging = runtime.logging_config or model.LoggingConfig.model_validate({})
        return {
            "transport": runtime.transport_protocol,
            "port": http.port or model.DEFAULT_PORT,
            "base_path": http.base_path or model.DEFAULT_BASE_PATH,
            "stateless": True if http.stateless is None else http.stateless,
            "tls": tls,
            "auth": auth,
            "logging": {
                "level": logging.level or "info",
                "encoding": logging.encoding or "json",
                "output_paths": list(logging.output_paths) or ["stderr"],
                "error_output_paths": list(logging.error_output_paths) or ["stderr"],
                "initial_fields": dict(logging.initial_fields or {}),
                "development": logging.development,
                "disable_caller": logging.disable_caller,
                "disable_stacktrace": logging.disable_stacktrace,
                "enable_mcp_logs": True if logging.enable_mcp_logs is None else logging.enable_mcp_logs,
            },
            "name": self.file.name,
            "version": self.file.version,
            "instructions": self.file.instructions,
        }

    def health_settings(self) -> dict[str, Any] | None:
        """0.2.0 health endpoints: ``{"enabled", "liveness_path", "readiness_path"}``.

        ``None`` for 0.1.0 files and for stdio, which have none.
        """
        http = self.file.runtime.streamable_http_config
        if self.file.format_version == "0.1.0" or http is None or self.file.runtime.transport_protocol != "streamablehttp":
            return None
        health = http.health or model.HealthConfig.model_validate({})
        return {
            "enabled": True if health.enabled is None else health.enabled,
            "liveness_path": health.liveness_path or model.DEFAULT_LIVENESS_PATH,
            "readiness_path": health.readiness_path or model.DEFAULT_READINESS_PATH,
        }

    def prompts(self) -> list[PromptSpec]:
        """The file's prompts, in file order (a list of :class:`PromptSpec`)."""
        return [
            PromptSpec(
                name=p.name, title=p.title or None, description=p.description,
                arguments=tuple(
                    PromptArgumentSpec(a.name, a.title or None, a.description or None, a.required)
                    for a in p.arguments
                ) or _arguments_from_schema(p.input_schema),
                input_schema=p.input_schema, required_scopes=p.required_scopes,
                tool_name=self._tool_of(p).name,
            )
            for p in self.file.primitives if p.kind == "prompt"
        ]

    def resources(self) -> list[ResourceSpec]:
        """The file's static resources, in file order (a list of :class:`ResourceSpec`)."""
        return [
            ResourceSpec(
                name=p.name, title=p.title or None, description=p.description, uri=p.uri,
                mime_type=p.mime_type or None, size=p.size or None, required_scopes=p.required_scopes,
                tool_name=self._tool_of(p).name,
            )
            for p in self.file.primitives if p.kind == "resource"
        ]

    def resource_templates(self) -> list[ResourceTemplateSpec]:
        """The file's resource templates, in file order (a list of :class:`ResourceTemplateSpec`)."""
        return [
            ResourceTemplateSpec(
                name=p.name, title=p.title or None, description=p.description,
                uri_template=p.uri_template.text if p.uri_template else "", mime_type=p.mime_type or None,
                input_schema=p.input_schema, required_scopes=p.required_scopes, tool_name=self._tool_of(p).name,
            )
            for p in self.file.primitives if p.kind == "resource_template"
        ]

    def call_tool_result(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, context: AgentContext | None = None
    ) -> InvokeResult:
        """Like :meth:`call_tool`, but return the whole :class:`InvokeResult`.

        For a server that answers as gen-mcp does: ``text`` is always the body (or the
        command's output), ``structured`` is set for a JSON object, ``truncated`` tells
        that the size cap cut it. The call goes through the same pipeline.
        """
        invocation = self.prepare(ToolCall(name=name, arguments=dict(arguments or {})), context)
        primitive = self._primitive(invocation)
        result: InvokeResult = pipeline.run_sync(
            invocation, lambda inv: self._invoke(primitive, inv), controls=self.controls, enforces_deadline=True
        )
        return result

    async def acall_tool_result(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, context: AgentContext | None = None
    ) -> InvokeResult:
        """Async twin of :meth:`call_tool_result`."""
        invocation = self.prepare(ToolCall(name=name, arguments=dict(arguments or {})), context)
        primitive = self._primitive(invocation)

        async def call(inv: Invocation) -> InvokeResult:
            return await self._ainvoke(primitive, inv)

        result: InvokeResult = await pipeline.run_async(invocation, call, controls=self.controls)
        return result

    def render_prompt(
        self, name: str, arguments: Mapping[str, Any] | None = None, context: AgentContext | None = None
    ) -> RenderedPrompt:
        """Run prompt ``name`` and return its messages (``prompts/get``).

        Raises:
            ToolNotFoundError: no prompt has that name.
            ToolCallError: the arguments are invalid, a policy denied it, or the call failed.
        """
        primitive = self._find("prompt", name)
        text = self._run_primitive(primitive, arguments or {}, context)
        return _rendered(primitive, text)

    async def arender_prompt(
        self, name: str, arguments: Mapping[str, Any] | None = None, context: AgentContext | None = None
    ) -> RenderedPrompt:
        """Async twin of :meth:`render_prompt`."""
        primitive = self._find("prompt", name)
        text = await self._arun_primitive(primitive, arguments or {}, context)
        return _rendered(primitive, text)

    def read_resource(self, uri: str, context: AgentContext | None = None) -> ResourceContents:
        """Read ``uri``: a static resource's URI, or one that matches a resource template.

        Raises:
            ToolNotFoundError: no resource or template matches ``uri``.
            ToolCallError: the read failed.
        """
        primitive, arguments = self._match_uri(uri)
        text = self._run_primitive(primitive, arguments, context)
        return ResourceContents(uri=uri, mime_type=primitive.mime_type or "text/plain", text=text)

    async def aread_resource(self, uri: str, context: AgentContext | None = None) -> ResourceContents:
        """Async twin of :meth:`read_resource`."""
        primitive, arguments = self._match_uri(uri)
        text = await self._arun_primitive(primitive, arguments, context)
        return ResourceContents(uri=uri, mime_type=primitive.mime_type or "text/plain", text=text)

    # ------------------------------------------------------------------ helpers

    def _tool_of(self, primitive: Primitive) -> Tool:
        return self._primitive_tools[(primitive.kind, primitive.name)]

    def _find(self, kind: str, name: str) -> Primitive:
        for primitive in self.file.primitives:
            if primitive.kind == kind and primitive.name == name:
                return primitive
        known = ", ".join(p.name for p in self.file.primitives if p.kind == kind) or "none"
        raise ToolNotFoundError(f"There is no {kind} named {name!r}. Available: {known}.", tool=name)

    def resource_for(self, uri: str) -> ResourceSpec | ResourceTemplateSpec | None:
        """The resource or template that :meth:`read_resource` would read for ``uri``.

        A server checks scopes on exactly this (the same resolution as the read), so a
        URI cannot be judged by one template and read through another.
        """
        found = self._resolve_uri(uri)
        if found is None:
            return None
        primitive = found[0]
        if primitive.kind == "resource":
            return next(r for r in self.resources() if r.name == primitive.name)
        return next(t for t in self.resource_templates() if t.name == primitive.name)

    def _resolve_uri(self, uri: str) -> tuple[Primitive, dict[str, Any]] | None:
        for primitive in self.file.primitives:
            if primitive.kind == "resource" and primitive.uri == uri:
                return primitive, {}
        for primitive in self.file.primitives:
            if primitive.kind == "resource_template" and primitive.uri_template is not None:
                values = primitive.uri_template.match(uri)
                if values is not None:
                    return primitive, dict(values)
        return None

    def _match_uri(self, uri: str) -> tuple[Primitive, dict[str, Any]]:
        found = self._resolve_uri(uri)
        if found is None:
            raise ToolNotFoundError(f"No resource or resource template matches {uri!r}.", tool=uri)
        return found

    def _prepared(self, primitive: Primitive, arguments: Mapping[str, Any], context: AgentContext | None) -> Invocation:
        tool = self._tool_of(primitive)
        validator = self._prim_validators.get(tool.name)
        if validator is None:
            validator = compile_validator(tool.input_schema, tool=tool.name)
            self._prim_validators[tool.name] = validator
        checked = validator.validate(dict(arguments))
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        return Invocation(tool=tool, arguments=checked, context=context or AgentContext(), deadline=deadline,
                          timeout=self.timeout, secret_mask=validator.secret_mask)

    def _run_primitive(self, primitive: Primitive, arguments: Mapping[str, Any], context: AgentContext | None) -> str:
        invocation = self._prepared(primitive, arguments, context)
        result = pipeline.run_sync(invocation, lambda inv: self._invoke(primitive, inv).text,
                                   controls=self.controls, enforces_deadline=True)
        return str(result)

    async def _arun_primitive(self, primitive: Primitive, arguments: Mapping[str, Any],
                              context: AgentContext | None) -> str:
        invocation = self._prepared(primitive, arguments, context)

        async def call(inv: Invocation) -> str:
            return (await self._ainvoke(primitive, inv)).text

        return str(await pipeline.run_async(invocation, call, controls=self.controls))


async def _aclose_client(client: httpx.AsyncClient) -> None:
    await client.aclose()


def _origin(invoker: HttpInvoker) -> str | None:
    """``scheme://host[:port]`` of an invocation's URL (environment values filled in), or
    ``None`` when the host comes from the arguments.

    Raises:
        ExecutionError: an environment variable the URL needs is not set.
    """
    text = "".join(
        part if isinstance(part, str) else env_value(part.name, tool=invoker.tool) if part.source == "env"
        else _PER_CALL
        for part in invoker.url.parts
    )
    parts = urlsplit(text)
    if not parts.scheme or not parts.netloc or _PER_CALL in parts.netloc:
        return None
    return f"{parts.scheme}://{parts.netloc}"


def _as_tool(primitive: Primitive) -> Tool:
    name = sanitize_tool_name(_TOOL_PREFIX[primitive.kind] + primitive.name)
    description = primitive.description
    if primitive.kind == "prompt":
        description = f"{description} (prompt {primitive.name!r}: returns the prompt text)"
    elif primitive.kind == "resource":
        description = f"{description} (reads resource {primitive.uri})"
    elif primitive.kind == "resource_template" and primitive.uri_template is not None:
        description = f"{description} (reads resources {primitive.uri_template.text})"
    return Tool(
        name=name,
        description=description,
        input_schema=primitive.input_schema,
        title=primitive.title or None,
        output_schema=primitive.output_schema if primitive.kind == "tool" else None,
        annotations=dict(primitive.annotations),
        meta={
            "original_name": primitive.name,
            "required_scopes": primitive.required_scopes,
            "mcp_kind": primitive.kind,
        },
    )


def _arguments_from_schema(schema: Mapping[str, Any]) -> tuple[PromptArgumentSpec, ...]:
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    return tuple(
        PromptArgumentSpec(name, (prop or {}).get("title"), (prop or {}).get("description"), name in required)
        for name, prop in properties.items()
    )


def _rendered(primitive: Primitive, text: str) -> RenderedPrompt:
    return RenderedPrompt(description=primitive.description, messages=(PromptMessage("assistant", text),))


__all__ = [
    "InvokeResult",
    "MCPFileDriver",
    "PromptArgumentSpec",
    "PromptMessage",
    "PromptSpec",
    "RenderedPrompt",
    "ResourceContents",
    "ResourceSpec",
    "ResourceTemplateSpec",
]
