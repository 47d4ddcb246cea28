"""The REST driver: any OpenAPI 3.0/3.1 or Swagger 2.0 API as MCS tools."""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import os
import re
import threading
import time
import uuid
import weakref
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from mcs import discovery, prompts
from mcs.driver import AuthOption, DriverMeta, ToolDriver
from mcs.errors import ConfigurationError, ExecutionError, ToolCallError
from mcs.pipeline import Invocation
from mcs.tools import Tool
from mcs.urls import EgressPolicy, ip_literal
from mcs_rest import _auth
from mcs_rest._operations import Operation, Selection, build_operations
from mcs_rest._request import HttpOptions, build
from mcs_rest._schema import SchemaConverter
from mcs_rest._shaping import inline_refs
from mcs_rest._spec import Spec, SpecError

if TYPE_CHECKING:
    import httpx

    from mcs_rest._transport import Plan, Response

__version__ = "0.1.0"

#: Model-name globs whose clients reject ``$ref`` in tool schemas; their tools get refs inlined.
INLINE_REF_MODELS: tuple[str, ...] = ("gemini*", "*gemini*", "models/gemini*", "gemma*")

_VARIABLE = re.compile(r"\{([^}]+)\}")
_HEALTH_PATHS = frozenset({"/health", "/healthz", "/livez", "/readyz", "/ping", "/status"})
_HEALTH_SECONDS = 10.0


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
    * ``auth``: credentials by security scheme name (see :mod:`mcs_rest._auth`).
    * ``headers``: static headers sent with every request.
    * ``include`` / ``exclude``: ``{"tags": [...], "paths": [globs], "methods": [...],
      "operations": [operationIds]}`` to choose operations.
    * ``allow_external_refs``: follow ``$ref``\\ s outside the spec's folder (``True``, or a
      tuple of allowed folders).
    * ``max_response_bytes`` (1 MiB), ``retries`` (2), ``backoff`` (0.25 s),
      ``max_redirects`` (5), ``redirect_hosts`` (hosts a redirect may leave the origin
      for; credentials are stripped, and the target must pass the egress block list),
      ``egress_allow`` (private addresses or networks, or ``"localhost"``, that such a
      redirect may reach; an IP address or ``localhost`` named in ``redirect_hosts`` is
      allowed already), ``egress`` (a whole :class:`mcs.urls.EgressPolicy` instead),
      ``idempotency_header`` (e.g. ``"Idempotency-Key"``:
      POST/PATCH get a fresh key and become retryable), ``verify`` (TLS).
    * ``validate_responses``: check JSON responses against the spec's response schema.
    * ``transport`` / ``async_transport``: an httpx transport to send through (for example
      ``httpx.MockTransport`` in a user's tests); default: pooled HTTP transports.
    * ``name``: the driver's name (default: from the spec's title).

    Raises:
        ConfigurationError: the spec cannot be read or is invalid (the message names the
            document and the place), or an option is wrong.
    """

    enforces_deadline = True

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
        max_response_bytes: int = 1_048_576,
        retries: int = 2,
        backoff: float = 0.25,
        max_redirects: int = 5,
        redirect_hosts: Iterable[str] = (),
        egress_allow: Iterable[str] = (),
        egress: EgressPolicy | None = None,
        idempotency_header: str | None = None,
        validate_responses: bool = False,
        verify: bool | str = True,
        transport: httpx.BaseTransport | None = None,
        async_transport: httpx.AsyncBaseTransport | None = None,
        name: str | None = None,
        **options: Any,
    ) -> None:
        try:
            super().__init__(**options)
        except TypeError:
            import inspect

            known = sorted(
                {*inspect.signature(RestDriver.__init__).parameters, *inspect.signature(ToolDriver.__init__).parameters}
                - {"self", "options", "spec"}
            )
            unknown = sorted(set(options) - set(known))
            if not unknown:
                raise
            raise ConfigurationError(
                f"the REST driver has no option {', '.join(map(repr, unknown))}; options: {', '.join(known)}"
            ) from None
        allow = allow_external_refs if isinstance(allow_external_refs, bool) else tuple(allow_external_refs)
        self.spec = Spec.load(spec, allow_external=allow)
        info = self.spec.root.get("info") or {}
        title = str(info.get("title") or "rest") if isinstance(info, Mapping) else "rest"
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
            retries=max(0, int(retries)),
            backoff=float(backoff),
            max_redirects=int(max_redirects),
            redirect_hosts=redirect_hosts,
            egress=egress or EgressPolicy(allow=[*egress_allow, *_named_local(redirect_hosts)]),
            idempotency_header=idempotency_header,
            headers=static,
        )
        self.validate_responses = validate_responses
        self._verify = verify
        self._given_transport = transport
        self._given_async_transport = async_transport
        self._server_variables = dict(server_variables or {})
        self._base_url = base_url.rstrip("/") if base_url else None
        if self._base_url is not None:
            _check_base(self._base_url)
        self._schemes = _auth.build_schemes(self.spec.root, self.spec.is_swagger, auth or {})
        for scheme in self._schemes.values():
            if scheme.oauth is not None and not scheme.oauth.token_url.startswith(("http://", "https://")):
                base = self._base_url or self._spec_base(None)
                if base is None:
                    raise ConfigurationError(
                        f"security scheme {scheme.name!r}: the tokenUrl is relative and there is no base_url"
                    )
                scheme.oauth.token_url = urljoin(base, scheme.oauth.token_url)
        self._converter = SchemaConverter(self.spec)
        self._operations: dict[str, Operation] = {
            op.name: op
            for op in build_operations(
                self.spec, self._converter,
                Selection.from_option(include, "include"), Selection.from_option(exclude, "exclude"),
            )
        }
        self._op_tools = [op.tool() for op in self._operations.values()]
        self._client: httpx.Client | None = None
        self._transport: httpx.BaseTransport | None = None
        self._aclients: dict[int, tuple[httpx.AsyncClient, httpx.AsyncBaseTransport]] = {}
        self._closers: dict[int, AsyncIterator[None]] = {}
        self._lock = threading.RLock()
        self._response_validators: dict[tuple[str, int], Any] = {}

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
        return prompts.render_function_description([inline_refs(t) for t in own], model_name=model_name)

    def shaped_tools(self, model_name: str | None) -> list[Tool]:
        """The tools as a client for ``model_name`` should receive them (refs inlined if needed)."""
        tools = list(self.list_tools())
        return [inline_refs(t) for t in tools] if _rejects_refs(model_name) else tools

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

    def _plan(self, invocation: Invocation) -> tuple[Operation, Plan]:
        from mcs_rest._transport import Plan, sensitive_names  # httpx loads on the first call

        tool = invocation.tool
        op = self._operations[tool.unprefixed_name]
        built = build(op, invocation.arguments, self.base_url_for(op))
        retryable = op.idempotent
        key_header = self.http.idempotency_header
        if key_header and op.method in ("POST", "PATCH"):
            if not any(k.lower() == key_header.lower() for k, _ in built.headers):
                built.headers.append((key_header, uuid.uuid4().hex))
            retryable = True
        elif any(k.lower() == "idempotency-key" for k, _ in (*built.headers, *self.http.headers)):
            retryable = True
        schemes = _auth.choose(op.security, self._schemes)
        return op, Plan(
            built=built, schemes=schemes, options=self.http, tool=tool.name, path=op.path,
            deadline=None if invocation.deadline is None else invocation.deadline,
            retryable=retryable, sensitive=sensitive_names(schemes, self.http),
        )

    def _finish(self, op: Operation, response: Response, tool: str) -> Any:
        if not 200 <= response.status < 300:
            from mcs_rest._transport import error_for

            raise error_for(response, op.method, op.path, tool)
        if self.validate_responses:
            self._validate_response(op, response, tool)
        return response.value

    def _call_tool(self, invocation: Invocation) -> Any:
        from mcs_rest._transport import send_sync

        op, plan = self._plan(invocation)
        client = self._sync_client()
        assert self._transport is not None
        return self._finish(op, send_sync(client, self._transport, plan), invocation.tool.name)

    async def _acall_tool(self, invocation: Invocation) -> Any:
        from mcs_rest._transport import send_async

        op, plan = self._plan(invocation)
        client, transport = await self._async_client()
        response = await send_async(client, transport, plan)
        return self._finish(op, response, invocation.tool.name)

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

    def _validate_response(self, op: Operation, response: Response, tool: str) -> None:
        if response.truncated or isinstance(response.value, bytes | str) or response.value is None:
            return
        key = (op.name, response.status)
        if key not in self._response_validators:
            with self._lock:  # the converter keeps a stack while it walks: one walker at a time
                if key not in self._response_validators:
                    self._response_validators[key] = self._response_validator(op, response.status)
        validator = self._response_validators[key]
        if validator is None:
            return
        errors = [e.message for _, e in zip(range(3), validator.iter_errors(response.value), strict=False)]
        if errors:
            raise ExecutionError(
                f"{op.method} {op.path} answered, but the response does not match the API's spec: "
                + "; ".join(errors), tool=tool, details={"status": response.status},
            )

    def _response_validator(self, op: Operation, status: int) -> Any:
        import jsonschema_rs

        responses = op.raw.get("responses") or {}
        picked = None
        for key in (str(status), f"{str(status)[0]}XX", f"{str(status)[0]}xx", "default"):
            for candidate in responses:
                if str(candidate) == key:
                    picked = responses[candidate]
                    break
            if picked is not None:
                break
        if picked is None:
            return None
        where = f"{op.where}.responses.{status}"
        picked, document = self.spec.deref(picked, op.document, where)
        if not isinstance(picked, Mapping):
            return None
        if self.spec.is_swagger:
            raw = picked.get("schema")
        else:
            content = picked.get("content") or {}
            media = next((m for m in content if "json" in str(m)), None)
            raw = (content.get(media) or {}).get("schema") if media else None
        if raw is None:
            return None
        schema, needs = self._converter.convert(raw, document, where)
        if not isinstance(schema, dict):
            return None
        if needs:
            schema = {**schema, "$defs": self._converter.defs_for(needs)}
        try:
            return jsonschema_rs.validator_for(schema)
        except Exception:
            return None

    # ------------------------------------------------------------------ clients

    def _sync_client(self) -> httpx.Client:
        import httpx

        from mcs import http as mcs_http

        client = self._client
        if client is None:
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
        """One pool per event loop, closed by that loop's shutdown (see :func:`_close_at_shutdown`)."""
        import httpx

        from mcs import http as mcs_http

        loop = id(asyncio.get_running_loop())
        pair = self._aclients.get(loop)
        if pair is None or pair[0].is_closed:
            transport = self._given_async_transport or mcs_http.async_transport(verify=self._verify)
            client = httpx.AsyncClient(transport=transport, follow_redirects=False, timeout=self.timeout)
            closer = _close_at_shutdown(client)
            await closer.__anext__()
            self._closers[loop] = closer
            pair = (client, transport)
            self._aclients[loop] = pair
        return pair

    def _release_pools(self) -> list[httpx.AsyncClient]:
        """Close the sync pool and forget the async ones; returns those for the caller to close."""
        if self._client is not None:
            self._client.close()
            self._client = None
            self._transport = None
        clients, self._aclients = [c for c, _ in self._aclients.values()], {}
        self._closers = {}
        return clients

    def close(self) -> None:
        """Close the HTTP connection pools (the async ones too, when no loop runs them)."""
        for client in self._release_pools():
            if client.is_closed:
                continue
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                with contextlib.suppress(Exception):  # its loop is gone; the sockets went with it
                    asyncio.run(client.aclose())
            else:
                raise ConfigurationError("call `await driver.aclose()` to close a driver inside an event loop")

    async def aclose(self) -> None:
        """Close the pools from inside the event loop that used them."""
        for client in self._release_pools():
            await client.aclose()


async def _close_at_shutdown(client: httpx.AsyncClient) -> AsyncIterator[None]:
    """Suspended for the life of the loop; ``loop.shutdown_asyncgens()`` (run by
    ``asyncio.run`` and ``asyncio.Runner``) finalises it, closing the pool on its own loop.
    Without this, a pool left open when its loop ends could never close its sockets."""
    try:
        yield
    finally:
        await client.aclose()


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

