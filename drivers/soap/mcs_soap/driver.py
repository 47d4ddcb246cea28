"""The SOAP driver: every operation of a WSDL as an MCS tool, called through zeep."""

from __future__ import annotations

import base64
import os
import threading
import time
import uuid
import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mcs.driver import ToolDriver, non_negative_int, non_negative_seconds, refuse_unknown_options
from mcs.errors import ConfigurationError, ExecutionError
from mcs.event_loops import PerLoop, close_outside_loops
from mcs.pipeline import Invocation
from mcs.tools import Tool
from mcs.urls import encode_path_segment, same_origin
from mcs_soap import _cache, _collector
from mcs_soap._callstate import CALL, CallState, HttpOptions
from mcs_soap._loading import (
    DocumentReader,
    LoadPolicy,
    WsdlError,
    entry_location,
    is_url,
    normalise_allow,
)
from mcs_soap._operations import tool_from_dict, tool_to_dict

if TYPE_CHECKING:
    import httpx

# zeep, lxml and httpx are imported when first needed (a parse, a call, warmup()): a driver
# whose tools come from the disk cache lists and describes them without importing them.
# asyncio (async calls) and DriverMeta (pydantic, at construction) are imported where used
# as well, so that importing the package stays cheap.

__version__ = "0.1.0"
_BAD_HEADER_CHARS = "\r\n\0"


class SoapDriver(ToolDriver):
    """One MCS tool per operation of every service and port of a WSDL (SOAP 1.1 and 1.2).

    ``wsdl`` is a file path or an ``http(s)`` URL. Keyword arguments, besides
    :class:`mcs.ToolDriver`'s (``timeout``, ``prefix``, ``description_mode``...):

    * ``endpoint``: where calls go, instead of the WSDL's ``soap:address``: one URL for
      every port, or a mapping from ``Port`` / ``Service/Port`` to URL. Never from the LLM.
    * ``ports``: only these ports (``Port`` or ``Service/Port``); default all.
    * ``allow_imports``: folders or URL prefixes imports may come from besides the WSDL's
      own location (``True``: anywhere).
    * ``wsse_username`` / ``wsse_password`` / ``wsse_digest``: a WS-Security UsernameToken
      (plain text, or ``PasswordDigest`` with nonce and timestamp when ``wsse_digest``).
    * ``http_basic``: ``"user:password"`` or a pair, sent as HTTP basic auth.
    * ``http_headers``: static HTTP headers. ``soap_headers``: SOAP headers on every call:
      a mapping from a header part the WSDL declares to its value, and/or XML element
      strings (parsed once, with no DTD or entity).
    * ``idempotent``: names or globs of operations that may be retried; ``retries`` (2)
      and ``backoff`` (0.25 s) apply to those only.
    * ``max_response_bytes`` (10 MiB): larger answers are refused. ``max_result_chars``
      (200,000): larger results are cut with a ``[truncated ...]`` marker.
    * ``max_wsdl_bytes`` (32 MiB per document), ``max_documents`` (256), ``load_timeout`` (30 s).
    * ``cache`` (True): reuse a WSDL parsed earlier in this process; ``cache_dir``: also keep
      the tools on disk in that folder (created if missing; an empty value is refused), so a
      new process starts without parsing (zeep parses on first call).
    * ``verify``: TLS verification (or a CA bundle path). ``name``: the driver's name.

    Raises:
        WsdlError: the WSDL or a document it imports cannot be loaded (the message names
            it and the place), or an import is refused.
        ConfigurationError: an option is wrong.
    """

    enforces_deadline = True
    path_options = frozenset({"allow_imports"})  # a toolbox file's folders, from its own folder

    def __init__(
        self,
        wsdl: str | os.PathLike[str],
        *,
        endpoint: str | Mapping[str, str] | None = None,
        ports: Sequence[str] | str | None = None,
        allow_imports: bool | Sequence[str] = False,
        wsse_username: str | None = None,
        wsse_password: str | None = None,
        wsse_digest: bool = False,
        http_basic: str | Sequence[str] | None = None,
        http_headers: Mapping[str, str] | None = None,
        soap_headers: Mapping[str, Any] | Sequence[str] | None = None,
        idempotent: Sequence[str] | str = (),
        retries: int = 2,
        backoff: float = 0.25,
        max_response_bytes: int = 10 * 1024 * 1024,
        max_result_chars: int = 200_000,
        max_wsdl_bytes: int = 32 * 1024 * 1024,
        max_documents: int = 256,
        load_timeout: float = 30.0,
        cache: bool = True,
        cache_dir: str | os.PathLike[str] | None = None,
        verify: bool | str = True,
        name: str | None = None,
        **options: Any,
    ) -> None:
        refuse_unknown_options(SoapDriver, options, "the SOAP driver")
        super().__init__(**options)
        retries, backoff = non_negative_int("retries", retries), non_negative_seconds("backoff", backoff)
        for label, value in (("max_response_bytes", max_response_bytes), ("max_result_chars", max_result_chars),
                             ("max_wsdl_bytes", max_wsdl_bytes), ("max_documents", max_documents)):
            if int(value) < 1:
                raise ConfigurationError(f"{label} must be at least 1")
        if cache_dir is not None and not os.fspath(cache_dir).strip():
            # Path("") is the working directory: an empty option must not scatter cache files there.
            raise ConfigurationError("cache_dir is empty: name the folder to keep parsed WSDLs in, "
                                     "or leave it unset (memory cache only)")
        self.location = entry_location(wsdl)
        self._endpoints = _endpoints(endpoint)
        self._selected = [ports] if isinstance(ports, str) else list(ports or [])
        self._idempotent = [idempotent] if isinstance(idempotent, str) else [str(i) for i in idempotent]
        self._policy = LoadPolicy(entry=self.location, allow=normalise_allow(allow_imports),
                                  max_bytes=int(max_wsdl_bytes), max_documents=int(max_documents),
                                  timeout=float(load_timeout), verify=verify)
        self._http = HttpOptions(headers=_static_headers(http_headers, http_basic),
                                 max_response_bytes=int(max_response_bytes), retries=retries,
                                 backoff=backoff)
        self.max_result_chars = int(max_result_chars)
        self._verify = verify
        self._wsse_options = _wsse_options(wsse_username, wsse_password, wsse_digest)
        self._wsse: Any = None  # zeep's UsernameToken, made with the first client
        self._soap_headers = _soap_headers(soap_headers)
        self._credentials = _credentials(self._http.headers, self._wsse_options, self._soap_headers)
        self._cache_dir = cache_dir
        self._use_cache = bool(cache)
        self._lock = threading.RLock()
        self._parsed = self._load()
        self._op_tools = list(self._parsed.tools)
        title = self._op_tools[0].meta.get("service") if self._op_tools else None
        # target_llms and prefix are left for ToolDriver.meta to fill on first read: the
        # globs of the prompt templates cost a read of every template file.
        from mcs.driver import DriverMeta

        self.meta = DriverMeta(
            id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"mcs-driver-soap:{self.location}")),
            name=name or _slug(str(title or os.path.basename(self.location.split("?")[0]) or "soap")),
            version=__version__,
            protocol="SOAP",
            transport="HTTP",
            spec_format="WSDL 1.1",
            capabilities=("cache",),
        )
        self._client: Any = None
        self._http_client: httpx.Client | None = None
        self._proxies: dict[str, Any] = {}
        self._any_plans: dict[str, dict[str, Any]] = {}
        # per event loop: the zeep async client, its httpx pool and its service proxies
        self._aclients: PerLoop[tuple[Any, httpx.AsyncClient, dict[str, Any]]] = PerLoop(_aclose_pool)

    # ------------------------------------------------------------------ loading

    @property
    def cache_source(self) -> str:
        """Where the tools came from: ``"parsed"``, ``"memory"`` or ``"disk"``."""
        return self._parsed.source

    def _cache_options(self) -> dict[str, Any]:
        return {"ports": self._selected, "idempotent": self._idempotent, "allow": self._policy.allow}

    def _load(self) -> _cache.Parsed:
        with _collector.paused():
            return self._load_now()

    def _load_now(self) -> _cache.Parsed:
        reader = DocumentReader(self._policy)
        try:
            entry = reader.load(self.location)
            key = _cache.content_key(self.location, entry, self._cache_options())
            if self._use_cache:
                found = _cache.from_memory(key, reader.load)
                if found is None and self._cache_dir is not None:
                    found = _cache.from_disk(self._cache_dir, key, reader.load, tool_from_dict)
                if found is not None:
                    return found
            from mcs_soap._parsing import parse_wsdl

            parsed = parse_wsdl(self.location, reader, key, selected=self._selected, idempotent=self._idempotent)
        finally:
            reader.close()
        if self._use_cache:
            _cache.to_memory(parsed)
            if self._cache_dir is not None:  # builds every input schema, to write them down
                _cache.to_disk(self._cache_dir, parsed, tool_to_dict)
        return parsed

    def _document(self) -> Any:
        """The zeep document (parsed now when the tools came from the disk cache)."""
        if self._parsed.document is None:
            with self._lock:
                if self._parsed.document is None:
                    from mcs_soap._parsing import parse_document

                    reader = DocumentReader(self._policy)
                    try:
                        with _collector.paused():
                            reader.load(self.location)
                            document, reported = parse_document(self.location, reader)
                    finally:
                        reader.close()
                    document.trees = {}
                    self._parsed = _cache.Parsed(self._parsed.key, self._parsed.dependencies, self._parsed.tools,
                                                 document, source=self._parsed.source, warnings=reported)
                    if self._use_cache:
                        _cache.to_memory(self._parsed)
        return self._parsed.document

    def warmup(self) -> dict[str, Any]:
        """Have everything ready before the first call: the WSDL parsed by zeep, the HTTP pool
        open, every tool's argument validator compiled. Returns what was done."""
        started = time.perf_counter()
        self._document()
        self._sync_client()
        tools = self._own_tools()
        for tool in tools:
            self._validator(tool)
        return {"tools": len(tools), "source": self._parsed.source,
                "seconds": round(time.perf_counter() - started, 3)}

    # ------------------------------------------------------------------ tools

    def _list_tools(self) -> Iterable[Tool]:
        return self._op_tools

    # ------------------------------------------------------------------ calls

    def _address(self, tool: Tool) -> str:
        meta = tool.meta
        for key in (f"{meta['service']}/{meta['port']}", str(meta["port"]), "*"):
            if key in self._endpoints:
                return self._endpoints[key]
        address = meta.get("address")
        if not address:
            raise ExecutionError(
                f"{tool.name} cannot be called: the WSDL gives no address for port {meta['port']} and the "
                "driver has no endpoint option.", tool=tool.name,
            )
        if is_url(self.location) and not same_origin(self.location, str(address)):
            # A served WSDL is the server's word: it may not send calls (and credentials) elsewhere.
            raise ExecutionError(
                f"{tool.name} cannot be called: the WSDL read from {self.location} gives port {meta['port']} "
                f"the address {address}, on another origin (scheme, host, port) than the WSDL's. Calls go "
                "there only when configuration names it: the driver's endpoint option. Calling again will "
                "not help.", tool=tool.name, details={"address": str(address)},
            )
        return str(address)

    def _binding(self, tool: Tool) -> Any:
        """zeep's binding object of the tool's port."""
        meta = tool.meta
        return self._document().services[meta["service"]].ports[meta["port"]].binding

    def _input(self, tool: Tool) -> Any:
        operation = self._binding(tool)._operations[tool.meta["operation"]]
        return operation.input

    def _arguments(self, tool: Tool, arguments: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        meta = tool.meta
        simple = meta.get("simple_body")
        plan = self._any_plans.get(tool.name)
        if plan is None:
            plan = self._any_plan(tool)
        if plan:
            from mcs_soap._values import apply_any

            arguments = apply_any(arguments, plan)
        kwargs: dict[str, Any] = {} if simple else dict(arguments)
        args = [arguments.get(simple)] if simple else []
        if kwargs and self._in_url(tool):
            kwargs = {name: _url_part(value) for name, value in kwargs.items()}
        if self._soap_headers:
            kwargs["_soapheaders"] = self._header_values(tool)
        return args, kwargs

    def _in_url(self, tool: Tool) -> bool:
        """Whether the operation's parts go into the URL (an HTTP binding's ``urlReplacement``),
        where zeep puts them as they are."""
        from zeep.wsdl.messages.http import UrlReplacement

        return isinstance(self._input(tool), UrlReplacement)

    def _any_plan(self, tool: Tool) -> dict[str, Any]:
        from mcs_soap._values import any_paths

        body = getattr(self._input(tool), "body", None)
        plan = any_paths(body.type) if body is not None else {}
        self._any_plans[tool.name] = plan
        return plan

    def _header_values(self, tool: Tool) -> list[Any]:
        from lxml import etree

        values: list[Any] = [element for element in self._soap_headers if isinstance(element, etree._Element)]
        declared = {k: v for item in self._soap_headers if isinstance(item, dict) for k, v in item.items()}
        if declared:
            header = getattr(self._input(tool), "header", None)
            if header is not None:
                for part_name, element in header.type.elements:
                    value = declared.get(part_name, declared.get(element.name))
                    if value is not None:
                        values.append(element(**value) if isinstance(value, Mapping) else element(value))
        return values

    def _state(self, invocation: Invocation) -> CallState:
        return CallState(tool=invocation.tool.name, deadline=invocation.deadline,
                         retryable=bool(invocation.tool.meta.get("idempotent")), credentials=self._credentials)

    def _finish(self, result: Any) -> Any:
        from mcs_soap._values import cap, to_json

        return cap(to_json(result), self.max_result_chars)

    def _call_tool(self, invocation: Invocation) -> Any:
        from mcs_soap._faults import translate_errors

        tool = invocation.tool
        token = CALL.set(self._state(invocation))
        try:
            with translate_errors(tool.name, self._credentials):
                proxy = self._proxy(tool)
                args, kwargs = self._arguments(tool, invocation.arguments)
                result = proxy[tool.meta["operation"]](*args, **kwargs)
        finally:
            CALL.reset(token)
        return self._finish(result)

    async def _acall_tool(self, invocation: Invocation) -> Any:
        import asyncio

        from mcs_soap._faults import translate_errors

        tool = invocation.tool
        token = CALL.set(self._state(invocation))
        try:
            with translate_errors(tool.name, self._credentials):
                proxy = await self._aproxy(tool)
                args, kwargs = self._arguments(tool, invocation.arguments)
                call = proxy[tool.meta["operation"]](*args, **kwargs)
                remaining = invocation.remaining()
                result = await (asyncio.wait_for(call, remaining) if remaining is not None else call)
        finally:
            CALL.reset(token)
        return self._finish(result)

    # ------------------------------------------------------------------ clients

    def _zeep_options(self) -> dict[str, Any]:
        """What every zeep client of this driver is made with: WS-Security, hardened
        settings, the fault plugin. Imports zeep (the first client does)."""
        from mcs_soap._faults import FaultRolePlugin
        from mcs_soap._parsing import hardened_settings

        if self._wsse is None and self._wsse_options is not None:
            from zeep.wsse.username import UsernameToken

            username, password, digest = self._wsse_options
            token: Any = UsernameToken
            self._wsse = token(username, password, use_digest=digest)
        return {"wsse": self._wsse, "settings": hardened_settings(), "plugins": [FaultRolePlugin()]}

    def _sync_client(self) -> Any:
        client = self._client
        if client is None:
            with self._lock:
                if self._client is None:
                    import httpx
                    import zeep

                    from mcs import http as mcs_http
                    from mcs_soap._http import SyncTransport

                    # The core's transport: its sockets obey the call's whole deadline.
                    self._http_client = httpx.Client(
                        transport=mcs_http.transport(verify=self._verify), follow_redirects=False,
                    )
                    weakref.finalize(self, self._http_client.close)
                    client_class: Any = zeep.Client
                    self._client = client_class(
                        self._document(), transport=SyncTransport(self._http_client, self._http),
                        **self._zeep_options(),
                    )
                client = self._client
        return client

    def _proxy(self, tool: Tool) -> Any:
        proxy = self._proxies.get(tool.name)
        if proxy is None:
            client = self._sync_client()
            from zeep.proxy import ServiceProxy

            proxy_class: Any = ServiceProxy
            proxy = proxy_class(client, self._binding(tool), address=self._address(tool))
            self._proxies[tool.name] = proxy
        return proxy

    async def _aproxy(self, tool: Tool) -> Any:
        import asyncio

        entry = self._aclients.current()
        if entry is None or entry[1].is_closed:
            document = await asyncio.to_thread(self._document) if self._parsed.document is None else self._parsed.document
            import httpx
            import zeep

            from mcs import http as mcs_http
            from mcs_soap._http import AsyncTransportOverHttpx

            http = httpx.AsyncClient(transport=mcs_http.async_transport(verify=self._verify), follow_redirects=False)
            async_class: Any = zeep.AsyncClient
            client = async_class(document, transport=AsyncTransportOverHttpx(http, self._http), **self._zeep_options())
            entry = await self._aclients.add((client, http, {}))
        client, _, proxies = entry
        proxy = proxies.get(tool.name)
        if proxy is None:
            from zeep.proxy import AsyncServiceProxy

            async_proxy: Any = AsyncServiceProxy
            proxy = async_proxy(client, self._binding(tool), address=self._address(tool))
            proxies[tool.name] = proxy
        return proxy

    def _release(self) -> list[tuple[Any, httpx.AsyncClient, dict[str, Any]]]:
        if self._http_client is not None:
            self._http_client.close()
        self._http_client = None
        self._client = None
        self._proxies = {}
        return self._aclients.release()

    def close(self) -> None:
        """Close the HTTP connection pools (the async ones too, when no loop runs them)."""
        close_outside_loops([entry for entry in self._release() if not entry[1].is_closed], _aclose_pool)

    async def aclose(self) -> None:
        """Close the pools from inside the event loop that used them."""
        for entry in self._release():
            await _aclose_pool(entry)


async def _aclose_pool(entry: tuple[Any, httpx.AsyncClient, dict[str, Any]]) -> None:
    await entry[1].aclose()


# ---------------------------------------------------------------------- options


def _slug(text: str) -> str:
    import re

    slug = re.sub(r"[^a-zA-Z0-9]+", "_", text).strip("_").lower()
    return (slug or "soap")[:40]


def _check_url(label: str, url: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigurationError(f"{label} must be an absolute http(s) URL, got {url!r}")
    return url


def _endpoints(endpoint: str | Mapping[str, str] | None) -> dict[str, str]:
    if endpoint is None:
        return {}
    if isinstance(endpoint, str):
        return {"*": _check_url("endpoint", endpoint)}
    if isinstance(endpoint, Mapping):
        return {str(k): _check_url(f"endpoint[{k!r}]", str(v)) for k, v in endpoint.items()}
    raise ConfigurationError("endpoint must be a URL or a mapping from port to URL")


def _static_headers(headers: Mapping[str, str] | None, basic: str | Sequence[str] | None) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    if headers is not None and not isinstance(headers, Mapping):
        raise ConfigurationError("http_headers must be a mapping from header name to value")
    for key, value in (headers or {}).items():
        if any(c in str(key) + str(value) for c in _BAD_HEADER_CHARS):
            raise ConfigurationError(f"http_headers: header {key!r} contains a line break or NUL")
        out.append((str(key), str(value)))
    if basic is not None:
        if isinstance(basic, str):
            user, sep, password = basic.partition(":")
            if not sep:
                raise ConfigurationError("http_basic must be 'user:password' or a (user, password) pair")
        else:
            pair = list(basic)
            if len(pair) != 2:
                raise ConfigurationError("http_basic must be 'user:password' or a (user, password) pair")
            user, password = str(pair[0]), str(pair[1])
        token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        out.append(("Authorization", f"Basic {token}"))
    return tuple(out)


def _wsse_options(username: str | None, password: str | None, digest: bool) -> tuple[str, str, bool] | None:
    """The WS-Security UsernameToken settings, checked (the token is made with the first client)."""
    if username is None and password is None:
        return None
    if not username or password is None:
        raise ConfigurationError("WS-Security needs both wsse_username and wsse_password")
    return username, password, bool(digest)


def _credentials(headers: Sequence[tuple[str, str]], wsse: tuple[str, str, bool] | None,
                 soap_headers: Sequence[Any]) -> tuple[str, ...]:
    """What a service could quote back of the configuration: every configured HTTP header
    value (the Basic ``Authorization`` one included), the WS-Security password, and the text
    and attribute values of the configured SOAP headers (where services take API keys)."""
    values = [value for _, value in headers]
    if wsse is not None:
        values.append(wsse[1])
    for item in soap_headers:
        if isinstance(item, Mapping):
            values.extend(_leaves(item))
        else:
            for node in item.iter():
                if isinstance(node.tag, str):  # elements, not comments or processing instructions
                    values.extend(str(v).strip() for v in (node.text, *node.attrib.values()) if v is not None)
    return tuple(dict.fromkeys(value for value in values if value))


def _leaves(value: Any) -> list[str]:
    """The text of every scalar in a SOAP header part's value (nested mappings and lists)."""
    if isinstance(value, Mapping):
        return [text for item in value.values() for text in _leaves(item)]
    if isinstance(value, list | tuple):
        return [text for item in value for text in _leaves(item)]
    return [] if value is None or isinstance(value, bool) else [str(value).strip()]


def _soap_headers(headers: Mapping[str, Any] | Sequence[str] | None) -> list[Any]:
    """Configured SOAP headers: XML strings parsed once (hardened), declared parts kept as values."""
    if not headers:
        return []
    if isinstance(headers, Mapping):
        return [dict(headers)]
    if isinstance(headers, str):
        headers = [headers]
    from lxml import etree

    from mcs_soap._xsd import safe_parser

    out: list[Any] = []
    for item in headers:
        if isinstance(item, Mapping):
            out.append(dict(item))
            continue
        try:
            element = etree.fromstring(str(item).encode("utf-8"), safe_parser())
        except etree.XMLSyntaxError as exc:
            raise ConfigurationError(f"soap_headers: not one well-formed XML element ({exc.msg})") from None
        if getattr(element.getroottree().docinfo, "doctype", None):
            raise ConfigurationError("soap_headers: an XML header may not declare a DOCTYPE")
        out.append(element)
    return out


__all__ = ["SoapDriver", "WsdlError"]


def _url_part(value: Any) -> str | None:
    """A part's value as the text zeep puts in the URL: one percent-encoded path segment
    (``../admin?x=1`` cannot leave the operation's path or add a query; SECURITY.md B1)."""
    if value is None:
        return None
    text = ("true" if value else "false") if isinstance(value, bool) else str(value)
    return encode_path_segment(text)
