"""The REST driver: any OpenAPI 3.0/3.1 or Swagger 2.0 API as MCS tools."""

from __future__ import annotations

import fnmatch
import os
import re
import threading
import time
import uuid
import warnings
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from mcs import discovery, prompts
from mcs.driver import (
    AuthOption,
    ToolDriver,
    non_negative_int,
    non_negative_seconds,
    refuse_unknown_options,
)
from mcs.errors import ConfigurationError, ExecutionError, ToolCallError
from mcs.event_loops import PerLoop, close_outside_loops
from mcs.pipeline import Invocation
from mcs.tools import Tool
from mcs.urls import EgressPolicy, ip_literal
from mcs.validation import ArgumentValidator
from mcs_rest import _auth
from mcs_rest._check import InvalidOperations, SpecReport
from mcs_rest._operations import Operation, Selection, build_operations
from mcs_rest._repair import BodyShapeValidator
from mcs_rest._request import HttpOptions, build
from mcs_rest._results import json_safe
from mcs_rest._schema import SchemaConverter
from mcs_rest._shaping import inline_refs
from mcs_rest._spec import Spec, SpecError

if TYPE_CHECKING:
    import httpx

    from mcs_rest._contract import ResponseContract, SwaggerBodies, Verdict
    from mcs_rest._transport import Plan, Response

__version__ = "0.1.0"

#: Model-name globs whose clients reject ``$ref`` in tool schemas; their tools get refs inlined.
INLINE_REF_MODELS: tuple[str, ...] = ("gemini*", "*gemini*", "models/gemini*", "gemma*")

_VARIABLE = re.compile(r"\{([^}]+)\}")
_HEALTH_PATHS = frozenset({"/health", "/healthz", "/livez", "/readyz", "/ping", "/status"})
_HEALTH_SECONDS = 10.0
_REPORT_LINES = 20  # problems quoted in a warning or error; mcs rest check lists them all


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-zA-Z0-9]+", "_", text).strip("_").lower()
    return (slug or "rest")[:40]


class RestDriver(ToolDriver):
    """One MCS tool per operation of an OpenAPI 3.0/3.1 or Swagger 2.0 spec.

    ``spec`` is a path, an ``http(s)`` URL, or an already parsed mapping (JSON or YAML).
    Keyword arguments, besides :class:`mcs.ToolDriver`'s (``timeout``, ``prefix``,
    ``description_mode``, ``token_budget``, ...):

    * ``base_url``: where requests go; overrides the spec's ``servers`` / ``host``.
      The host of every request comes from here (or the spec), never from the LLM.
    * ``server_variables``: values for the variables of the spec's server URL.
    * ``auth``: credentials by security scheme name (see :mod:`mcs_rest._auth`): a token or
      key, ``"user:password"``, OAuth client credentials, or a callable returning a token
      (called again after a 401). :meth:`auth_options` lists what the spec declares.
    * ``headers``: static headers sent with every request.
    * ``include`` / ``exclude``: ``{"tags": [...], "paths": [globs], "methods": [...],
      "operations": [operationIds]}`` to choose operations.
    * ``allow_external_refs``: follow ``$ref``\\ s outside the spec's folder (``True``, or
      allowed folders: one path, or a sequence of them).
    * ``spec_redirect_hosts``: hosts a redirect may lead to when the spec (or a remote
      ``$ref``) is fetched from a URL; redirects within that URL's origin are followed
      without it, at most 5.
    * ``max_response_bytes`` (1 MiB), ``retries`` (2), ``backoff`` (0.25 s),
      ``max_redirects`` (5), ``redirect_hosts`` (hosts a redirect may leave the origin
      for; credentials are stripped, and the target must pass the egress block list),
      ``egress_allow`` (private addresses or networks, or ``"localhost"``, that such a
      redirect may reach; an IP address or ``localhost`` named in ``redirect_hosts`` is
      allowed already), ``egress`` (a whole :class:`mcs.urls.EgressPolicy` instead),
      ``idempotency_header`` (e.g. ``"Idempotency-Key"``:
      POST/PATCH get a fresh key and become retryable), ``verify`` (TLS).
    * ``validate_spec``: validate the spec with prance (openapi-spec-validator) at load;
      every problem is in :attr:`spec_report` and a warning (off by default: it costs
      seconds on large specs; ``pip install 'mcs-framework-rest[validation]'``).
    * ``invalid_operations``: ``"refuse"`` (default) raises on an operation the loader cannot
      build; ``"skip"`` leaves it out with a warning naming the place.
    * ``validate_responses``: check each 2xx answer against the spec with openapi-core
      (status, media type, headers, body schema and formats). An answer that breaks it,
      or carries fields the spec does not promise, comes back as ``{"result": ...,
      "contract_note": "..."}``, the note naming each place. ``strict_responses=True``
      makes a broken answer an ``EXECUTION_ERROR`` instead (and implies
      ``validate_responses``); unpromised fields alone are only noted.
    * ``max_description_chars`` (600): a tool's description (plain text) is cut there;
      ``describe_tool`` answers with the whole text.
    * ``transport`` / ``async_transport``: an httpx transport to send through (for example
      ``httpx.MockTransport`` in a user's tests); default: pooled HTTP transports.
    * ``name``: the driver's name (default: from the spec's title).

    Raises:
        ConfigurationError: the spec cannot be read or is invalid (the message names the
            document and the place), or an option is wrong.
    """

    enforces_deadline = True
    path_options = frozenset({"allow_external_refs"})  # a toolbox file's folders, from its own folder

    def __init__(
        self,
        spec: str | os.PathLike[str] | Mapping[str, Any],
        *,
        base_url: str | None = None,
        server_variables: Mapping[str, str] | None = None,
        auth: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        include: Mapping[str, Any] | None = None,
        exclude: Mapping[str, Any] | None = None,
        allow_external_refs: bool | Sequence[str] = False,
        spec_redirect_hosts: Iterable[str] = (),
        max_response_bytes: int = 1_048_576,
        retries: int = 2,
        backoff: float = 0.25,
        max_redirects: int = 5,
        redirect_hosts: Iterable[str] = (),
        egress_allow: Iterable[str] = (),
        egress: EgressPolicy | None = None,
        idempotency_header: str | None = None,
        validate_responses: bool = False,
        strict_responses: bool = False,
        validate_spec: bool = False,
        invalid_operations: InvalidOperations = "refuse",
        max_description_chars: int = 600,
        verify: bool | str = True,
        transport: httpx.BaseTransport | None = None,
        async_transport: httpx.AsyncBaseTransport | None = None,
        name: str | None = None,
        **options: Any,
    ) -> None:
        refuse_unknown_options(RestDriver, options, "the REST driver")
        super().__init__(**options)
        retries, max_redirects = non_negative_int("retries", retries), non_negative_int("max_redirects", max_redirects)
        backoff = non_negative_seconds("backoff", backoff)
        allow = _allowed_folders(allow_external_refs)
        self.spec = Spec.load(spec, allow_external=allow, redirect_hosts=spec_redirect_hosts)
        info = self.spec.root.get("info") or {}
        title = str(info.get("title") or "rest") if isinstance(info, Mapping) else "rest"
        # pydantic: imported by the first driver built, not by `import mcs_rest`
        from mcs.driver import DriverMeta

        self.meta = DriverMeta(
            id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"mcs-driver-rest:{title}")),
            name=name or _slug(title),
            version=__version__,
            protocol="REST",
            transport="HTTP",
            spec_format="Swagger 2.0" if self.spec.is_swagger else f"OpenAPI {self.spec.version}",
            target_llms=prompts.target_llms(self.prompt_templates),
            capabilities=("healthcheck",),
            prefix=self.prefix,
        )
        static = tuple((str(k), str(v)) for k, v in (headers or {}).items())
        for key, value in static:
            if any(c in key + value for c in "\r\n\0"):
                raise ConfigurationError(f"header {key!r} contains a line break or NUL")
        if max_response_bytes < 1:
            raise ConfigurationError("max_response_bytes must be at least 1")
        redirect_hosts = frozenset(redirect_hosts)
        self.http = HttpOptions(
            max_response_bytes=int(max_response_bytes),
            retries=retries,
            backoff=backoff,
            max_redirects=max_redirects,
            redirect_hosts=redirect_hosts,
            egress=egress or EgressPolicy(allow=[*egress_allow, *_named_local(redirect_hosts)]),
            idempotency_header=idempotency_header,
            headers=static,
        )
        self.validate_responses = validate_responses or strict_responses
        self.strict_responses = strict_responses
        self._verify = verify
        self._given_transport = transport
        self._given_async_transport = async_transport
        self._server_variables = dict(server_variables or {})
        self._base_url = base_url.rstrip("/") if base_url else None
        if self._base_url is not None:
            _check_base(self._base_url)
        self._schemes = _auth.build_schemes(self.spec.root, self.spec.is_swagger, auth or {})
        for scheme in self._schemes.values():
            oauth = scheme.oauth
            if isinstance(oauth, _auth.OAuthClientCredentials) and not oauth.token_url.startswith(("http://", "https://")):
                base = self._base_url or self._spec_base(None)
                if base is None:
                    raise ConfigurationError(
                        f"security scheme {scheme.name!r}: the tokenUrl is relative and there is no base_url"
                    )
                oauth.token_url = urljoin(base, oauth.token_url)
        if invalid_operations not in ("refuse", "skip"):
            raise ConfigurationError("invalid_operations must be 'refuse' or 'skip'")
        #: With ``validate_spec=True``: every problem prance sees, and what the loader does about it.
        self.spec_report: SpecReport | None = None
        if validate_spec:
            from mcs_rest._check import check_spec

            self.spec_report = check_spec(self.spec, invalid_operations)
        self._converter = SchemaConverter(self.spec)
        failed: dict[tuple[str, str], str] | None = {} if invalid_operations == "skip" else None
        try:
            built = build_operations(
                self.spec, self._converter,
                Selection.from_option(include, "include"), Selection.from_option(exclude, "exclude"), failed,
            )
        except SpecError as exc:
            if self.spec_report is None:
                raise
            raise SpecError(f"{exc}\n{self.spec_report.render(_REPORT_LINES)}") from None
        for (path, method), why in (failed or {}).items():
            warnings.warn(f"{why}; {method.upper()} {path} is left out (invalid_operations='skip')", UserWarning, stacklevel=2)
        if self.spec_report is not None and self.spec_report.problems:
            warnings.warn(self.spec_report.render(_REPORT_LINES), UserWarning, stacklevel=2)
        self._operations: dict[str, Operation] = {op.name: op for op in built}
        if max_description_chars < 40:
            raise ConfigurationError("max_description_chars must be at least 40")
        self.max_description_chars = int(max_description_chars)
        self._op_tools = [op.tool(self.max_description_chars) for op in self._operations.values()]
        self._client: httpx.Client | None = None
        self._transport: httpx.BaseTransport | None = None
        self._aclients: PerLoop[tuple[httpx.AsyncClient, httpx.AsyncBaseTransport]] = PerLoop(_aclose_pair)
        self._lock = threading.RLock()
        self._contract: ResponseContract | SwaggerBodies | None = None  # built on the first answer to check
        self._call_plans: dict[str, _CallPlan] = {}  # per operation, on its first call

    def auth_options(self) -> list[AuthOption]:
        """The spec's security schemes, each with the ``auth`` entry that sets it."""
        return [
            AuthOption(d.name, d.kind, f"-o auth='{{\"{d.name}\": {d.credential}}}'", d.name in self._schemes)
            for d in _auth.describe_schemes(self.spec.root, self.spec.is_swagger)
        ]

    # ------------------------------------------------------------------ tools

    def _list_tools(self) -> Iterable[Tool]:
        return self._op_tools

    @property
    def operations(self) -> Mapping[str, Operation]:
        """The operations by tool name (without prefix), in spec order."""
        return self._operations

    def get_function_description(self, model_name: str | None = None) -> str:
        """Like :class:`mcs.ToolDriver`'s, with ``$ref``\\ s inlined for models whose clients reject them."""
        if self.custom_tool_description is not None or not _rejects_refs(model_name):
            return super().get_function_description(model_name)
        tools = self._tool_map()
        own = [t for t in tools.values() if not discovery.is_meta_tool(t)]
        if self._resolved_mode(tools) == "discovery":
            return discovery.render_description(own, discovery.meta_tools(self.prefix), model_name=model_name)
        describe = [t for t in tools.values() if discovery.is_meta_tool(t)]  # offered when a schema is cut
        return prompts.render_function_description([*(inline_refs(t) for t in own), *describe], model_name=model_name)

    def shaped_tools(self, model_name: str | None) -> list[Tool]:
        """The tools as a client for ``model_name`` should receive them (refs inlined if needed)."""
        tools = list(self.list_tools())
        return [inline_refs(t) for t in tools] if _rejects_refs(model_name) else tools

    def _handler(self, tool: Tool) -> Callable[[Invocation], Any] | None:
        """The core's meta-tools; ``describe_tool`` answers with an operation's whole description."""
        handler = super()._handler(tool)
        if handler is None or not tool.name.endswith(discovery.DESCRIBE_TOOL):
            return handler

        def describe(invocation: Invocation) -> Any:
            answer = handler(invocation)
            described = self.get_tool(str(invocation.arguments.get("name", "")))
            full = described.meta.get("full_description") if described is not None else None
            if isinstance(answer, dict) and isinstance(full, str):
                answer = {**answer, "description": full}
            return answer

        return describe

    def _validator(self, tool: Tool) -> ArgumentValidator:
        """The core's validator, with the body repair of :mod:`mcs_rest._repair` for operations with a body."""
        validator = self._validators.get(tool.name)
        if validator is not None:
            return validator
        op = None if discovery.is_meta_tool(tool) else self._operations.get(tool.unprefixed_name)
        if op is None or op.body is None:
            return super()._validator(tool)
        body_arg = next((p.arg for p in op.params if p.location == "body" and not p.name), None)
        flat = frozenset(p.arg for p in op.params if p.location == "body" and p.name and p.arg == p.name)
        validator = BodyShapeValidator(tool.input_schema, tool.name, body_arg=body_arg, flat_fields=flat)
        self._validators[tool.name] = validator
        return validator

    # ------------------------------------------------------------------ calls

    def base_url_for(self, op: Operation) -> str:
        """The base URL requests of ``op`` go to (configured, else from the spec)."""
        if self._base_url is not None:
            return self._base_url
        servers = op.servers if op.servers else None
        url = self._spec_base(servers)
        if url is None:
            raise ExecutionError(
                f"{op.name} cannot be called: the spec names no absolute server URL and the driver "
                "has no base_url option.", tool=op.name,
            )
        return url

    def _spec_base(self, servers: list[Mapping[str, Any]] | None) -> str | None:
        root = self.spec.root
        if self.spec.is_swagger:
            host = root.get("host")
            if not host:
                return self._relative(str(root.get("basePath") or ""))
            schemes = list(root.get("schemes") or ["https"])
            scheme = "https" if "https" in schemes else str(schemes[0])
            return f"{scheme}://{host}{root.get('basePath') or ''}".rstrip("/")
        servers = servers if servers is not None else list(root.get("servers") or [])
        if not servers:
            return self._relative("")
        server = servers[0]
        url = str(server.get("url", ""))
        variables = server.get("variables") or {}

        def value(match: re.Match[str]) -> str:
            name = match.group(1)
            if name in self._server_variables:
                return str(self._server_variables[name])
            spec_var = variables.get(name) or {}
            return str(spec_var.get("default", ""))

        url = _VARIABLE.sub(value, url)
        if url.startswith(("http://", "https://")):
            return url.rstrip("/")
        return self._relative(url)

    def _relative(self, path: str) -> str | None:
        location = self.spec.location
        if location.startswith(("http://", "https://")):
            return urljoin(location, path or "/").rstrip("/")
        return None

    def _call_plan(self, op: Operation) -> _CallPlan:
        """What every call of ``op`` shares, worked out on its first call."""
        plan = self._call_plans.get(op.name)
        if plan is None:
            from mcs_rest._transport import sensitive_names  # httpx loads on the first call

            schemes = _auth.choose(op.security, self._schemes)
            plan = _CallPlan(
                base_url=self.base_url_for(op), schemes=schemes, sensitive=sensitive_names(schemes, self.http),
                retryable=op.idempotent or any(k.lower() == "idempotency-key" for k, _ in self.http.headers),
                key_header=self.http.idempotency_header if op.method in ("POST", "PATCH") else None,
            )
            self._call_plans[op.name] = plan
        return plan

    def _plan(self, invocation: Invocation) -> tuple[Operation, Plan]:
        from mcs_rest._transport import Plan

        tool = invocation.tool
        op = self._operations[tool.unprefixed_name]
        shared = self._call_plan(op)
        built = build(op, invocation.arguments, shared.base_url)
        retryable = shared.retryable
        key_header = shared.key_header
        if key_header:
            if not any(k.lower() == key_header.lower() for k, _ in built.headers):
                built.headers.append((key_header, uuid.uuid4().hex))
            retryable = True
        elif not retryable and any(k.lower() == "idempotency-key" for k, _ in built.headers):
            retryable = True
        return op, Plan(
            built=built, schemes=shared.schemes, options=self.http, tool=tool.name, path=op.path,
            deadline=invocation.deadline, retryable=retryable, sensitive=shared.sensitive,
        )

    def _finish(self, op: Operation, response: Response, invocation: Invocation) -> Any:
        tool = invocation.tool.name
        if not 200 <= response.status < 300:
            from mcs_rest._transport import error_for

            raise error_for(response, op.method, op.path, tool, invocation.secrets())
        if self.validate_responses:
            verdict = self._broken_contract(op, response)
            if verdict is not None and (verdict.violations or verdict.unpromised):
                from mcs_rest._contract import note

                if self.strict_responses and verdict.violations:
                    raise ExecutionError(
                        f"{op.method} {op.path} answered, but the answer breaks the API's own spec: "
                        + "; ".join(verdict.violations), tool=tool,
                        details={"status": response.status, "violations": verdict.violations},
                    )
                return {"result": json_safe(response.value, response.wide_ints),
                        "contract_note": note(verdict.violations, verdict.unpromised)}
        return json_safe(response.value, response.wide_ints)

    def _call_tool(self, invocation: Invocation) -> Any:
        from mcs_rest._transport import send_sync

        op, plan = self._plan(invocation)
        client = self._sync_client()
        assert self._transport is not None
        return self._finish(op, send_sync(client, self._transport, plan), invocation)

    async def _acall_tool(self, invocation: Invocation) -> Any:
        from mcs_rest._transport import send_async

        op, plan = self._plan(invocation)
        client, transport = await self._async_client()
        response = await send_async(client, transport, plan)
        return self._finish(op, response, invocation)

    # ------------------------------------------------------------------ capabilities

    def healthcheck(self) -> dict[str, Any]:
        """Whether the API answers (the ``healthcheck`` capability); never raises.

        When the spec names a GET operation without required parameters at a health path
        (``/health``, ``/healthz``, ``/livez``, ``/readyz``, ``/ping``, ``/status``), that
        operation is called with the driver's credentials and must answer 2xx; otherwise a
        ``HEAD`` of the base URL shows the API is reachable (any HTTP answer counts). One
        attempt, within the driver's timeout (at most 10 s). Policies and hooks do not run:
        it is not a tool call.

        Returns ``{"status": "ok" | "error", "check": "GET /health" | "HEAD <url>",
        "http_status": int}``, with ``"detail"`` instead of ``http_status`` when no answer came.
        """
        import httpx

        from mcs_rest._transport import Plan, send_sync, sensitive_names

        seconds = min(self.timeout or _HEALTH_SECONDS, _HEALTH_SECONDS)
        op = self._health_operation()
        check = f"GET {op.path}" if op is not None else "HEAD"
        try:
            if op is not None:
                schemes = _auth.choose(op.security, self._schemes)
                options = replace(self.http, retries=0)
                plan = Plan(
                    built=build(op, {}, self.base_url_for(op)), schemes=schemes, options=options, tool=op.name,
                    path=op.path, deadline=time.monotonic() + seconds, retryable=False,
                    sensitive=sensitive_names(schemes, options),
                )
                client = self._sync_client()
                assert self._transport is not None
                status = send_sync(client, self._transport, plan).status
                return {"status": "ok" if 200 <= status < 300 else "error", "check": check, "http_status": status}
            base = self._base_url or self._spec_base(None)
            if base is None:
                return {"status": "error", "check": check,
                        "detail": "the spec names no absolute server URL and the driver has no base_url"}
            check = f"HEAD {base}"
            response = self._sync_client().request("HEAD", base, headers=list(self.http.headers), timeout=seconds)
            return {"status": "ok", "check": check, "http_status": response.status_code}
        except (ToolCallError, httpx.HTTPError) as exc:
            detail = exc.message if isinstance(exc, ToolCallError) else f"{type(exc).__name__}: {exc}"
            return {"status": "error", "check": check, "detail": detail}

    def _health_operation(self) -> Operation | None:
        for op in self._operations.values():
            required = op.input_schema.get("required") if isinstance(op.input_schema, Mapping) else None
            if op.method == "GET" and op.path.rstrip("/").lower() in _HEALTH_PATHS and not required:
                return op
        return None

    # ------------------------------------------------------------------ response validation

    def _broken_contract(self, op: Operation, response: Response) -> Verdict | None:
        """Where a 2xx answer breaks what the spec promises, and the fields it does not
        promise (see :mod:`mcs_rest._contract`); ``None`` for a cut body, which cannot be judged,
        and for JSON nested too deeply to be walked."""
        if response.truncated or response.too_deep:
            return None
        from mcs_rest._contract import ResponseContract, SwaggerBodies

        if self._contract is None:
            with self._lock:
                if self._contract is None:
                    self._contract = (
                        SwaggerBodies(self.spec, self._converter) if self.spec.is_swagger
                        else ResponseContract(self.spec)
                    )
        if isinstance(self._contract, SwaggerBodies):
            with self._lock:  # the converter keeps a stack while it walks: one walker at a time
                return self._contract.check(op, response)
        return self._contract.check(op, response)

    # ------------------------------------------------------------------ clients

    def _sync_client(self) -> httpx.Client:
        client = self._client
        if client is None:
            import httpx

            from mcs import http as mcs_http

            with self._lock:
                if self._client is None:
                    transport = self._given_transport or mcs_http.transport(verify=self._verify)
                    # The client owns the transport (closing it closes the pool) and
                    # fetches OAuth tokens; requests go to the transport directly.
                    self._client = httpx.Client(transport=transport, follow_redirects=False, timeout=self.timeout)
                    self._transport = transport
                    # A driver dropped without close() still releases its sockets.
                    weakref.finalize(self, self._client.close)
                client = self._client
        return client

    async def _async_client(self) -> tuple[httpx.AsyncClient, httpx.AsyncBaseTransport]:
        """One pool per event loop, closed by that loop's shutdown (see :class:`~mcs.event_loops.PerLoop`)."""
        import httpx

        from mcs import http as mcs_http

        pair = self._aclients.current()
        if pair is None or pair[0].is_closed:
            transport = self._given_async_transport or mcs_http.async_transport(verify=self._verify)
            client = httpx.AsyncClient(transport=transport, follow_redirects=False, timeout=self.timeout)
            pair = await self._aclients.add((client, transport))
        return pair

    def _release_pools(self) -> list[tuple[httpx.AsyncClient, httpx.AsyncBaseTransport]]:
        """Close the sync pool and forget the async ones; returns those for the caller to close."""
        if self._client is not None:
            self._client.close()
            self._client = None
            self._transport = None
        return self._aclients.release()

    def close(self) -> None:
        """Close the HTTP connection pools (the async ones too, when no loop runs them)."""
        close_outside_loops([pair for pair in self._release_pools() if not pair[0].is_closed], _aclose_pair)

    async def aclose(self) -> None:
        """Close the pools from inside the event loop that used them."""
        for pair in self._release_pools():
            await _aclose_pair(pair)


async def _aclose_pair(pair: tuple[httpx.AsyncClient, httpx.AsyncBaseTransport]) -> None:
    await pair[0].aclose()


@dataclass(frozen=True, slots=True)
class _CallPlan:
    """The parts of a request that depend on the operation and the options only."""

    base_url: str
    schemes: list[_auth.Scheme]
    sensitive: frozenset[str]
    retryable: bool
    key_header: str | None


def _rejects_refs(model_name: str | None) -> bool:
    if not model_name:
        return False
    lowered = model_name.lower()
    return any(fnmatch.fnmatchcase(lowered, pattern) for pattern in INLINE_REF_MODELS)


def _named_local(hosts: Iterable[str]) -> list[str]:
    """The entries of ``redirect_hosts`` that name a local destination outright (an IP
    address or ``localhost``): configuration chose them, so the block list lets them by."""
    return [h for h in hosts if h.lower() == "localhost" or ip_literal(h) is not None]


def _check_base(url: str) -> None:
    parsed = urlsplit(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise ConfigurationError(f"base_url must be an absolute http(s) URL, got {url!r}")


__all__ = ["RestDriver", "SpecError"]



def _allowed_folders(allow: bool | Sequence[str]) -> bool | tuple[str, ...]:
    """``allow_external_refs`` as the loader takes it: a bool, or the allowed folders. One
    path given alone from Python (text or a path object) is one folder, never a folder per
    character; a toolbox file must write a list (its option check refuses text)."""
    if isinstance(allow, bool):
        return allow
    if isinstance(allow, str | os.PathLike):
        return (os.fspath(allow),)
    return tuple(os.fspath(folder) for folder in allow)
