"""The gRPC driver: every method of a gRPC service as an MCS tool."""

from __future__ import annotations

import fnmatch
import os
import re
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from google.protobuf.descriptor import MethodDescriptor

from mcs.driver import DriverMeta, ToolDriver, refuse_unknown_options
from mcs.errors import ConfigurationError, ExecutionError
from mcs.pipeline import Invocation
from mcs.tools import Tool, unique_tool_names
from mcs.validation import ArgumentValidator
from mcs_grpc import _catalog
from mcs_grpc._any import AnyCheck
from mcs_grpc._calls import MESSAGES, REQUEST, Caller, Cut, Method, StreamBounds
from mcs_grpc._catalog import MAX_NESTING, Catalog, choose_methods, idempotency_level, nesting_depth
from mcs_grpc._channel import ChannelSettings, MetadataProvider, MetadataSource, RetryPolicy
from mcs_grpc._messages import Normalizer, direct_builder, direct_reader, to_json_function
from mcs_grpc._schema import OBJECT_WELL_KNOWN, WELL_KNOWN, SchemaBuilder

__version__ = "0.1.0"

_NO_SIDE_EFFECTS, _IDEMPOTENT = 1, 2
PathLike = str | os.PathLike[str]


#: The check of what arguments pack in ``Any`` values: ``(arguments, as_sent) -> arguments``.
AfterCheck = Callable[[dict[str, Any], bool], dict[str, Any]]


class _NormalizingValidator(ArgumentValidator):
    """The core's validator, after the arguments are rewritten toward their JSON names and
    forms; then ``after`` (the check of what the arguments pack in ``Any`` values), if given.

    Both ways of checking do both steps: :meth:`validate` (with the core's repairs) and
    :meth:`validate_as_sent` (strict RFC-0001 serving: no repairs, in the packed messages
    either). The JSON names and forms are protobuf's JSON mapping, not repairs."""

    __slots__ = ("_after", "_normalize")

    def __init__(self, schema: Mapping[str, Any], tool: str, normalize: Callable[[Any], Any],
                 after: AfterCheck | None = None) -> None:
        super().__init__(schema, tool)
        self._normalize = normalize
        self._after = after

    def validate(self, arguments: Any) -> dict[str, Any]:
        checked = super().validate(self._normalize(arguments))
        return checked if self._after is None else self._after(checked, False)

    def validate_as_sent(self, arguments: Any) -> dict[str, Any]:
        checked = super().validate_as_sent(self._normalize(arguments))
        return checked if self._after is None else self._after(checked, True)


def _paths(value: PathLike | Sequence[PathLike] | None) -> list[PathLike]:
    if value is None:
        return []
    if isinstance(value, str | os.PathLike):
        return [value]
    return list(value)


def _globs(value: str | Sequence[str] | None, option: str) -> list[str] | None:
    if value is None:
        return None
    items = [value] if isinstance(value, str) else list(value)
    if not all(isinstance(item, str) and item for item in items):
        raise ConfigurationError(f"{option} must be a list of names or glob patterns")
    return items


def _matches(patterns: Sequence[str], method: MethodDescriptor) -> bool:
    names = (f"{method.containing_service.full_name}/{method.name}", method.name)
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns for name in names)


class GrpcDriver(ToolDriver):
    """One MCS tool per method of a gRPC service.

    The services come from exactly one source: ``proto`` (``.proto`` files compiled at load,
    with ``include_paths``), ``descriptor_set`` (a serialized ``FileDescriptorSet``, path or
    bytes), or, when neither is given, the server's reflection service at ``target``.

    Keyword arguments, besides :class:`mcs.ToolDriver`'s (``timeout``, ``prefix``,
    ``description_mode``...):

    * ``target``: where calls go (``host:port``, ``dns:///host:443``, ``unix:path``). Only
      configuration names it; a model never chooses a destination.
    * ``services`` / ``methods``: names or globs (``pkg.Service``, ``pkg.Service/Method`` or
      ``Method``) choosing what becomes a tool; every method otherwise, except the
      reflection and health services. ``read_only=True`` keeps the methods whose
      ``idempotency_level`` is ``NO_SIDE_EFFECTS``.
    * ``tls`` (default: on when a certificate option is given), ``root_certificates``,
      ``client_certificate`` and ``client_key`` (mTLS), each PEM text or a file path;
      ``tls_server_name`` overrides the name checked in the server's certificate.
    * ``metadata``: sent with every call; a mapping, or a callable returning one, asked
      before each call (for tokens that expire).
    * ``keepalive_time`` / ``keepalive_timeout`` (seconds) / ``keepalive_without_calls``;
      ``max_receive_message_bytes`` / ``max_send_message_bytes`` (4 MiB each);
      ``channel_options``: more gRPC channel arguments.
    * ``max_stream_messages`` (100), ``max_stream_bytes`` (1 MiB), ``stream_window``
      (seconds, or ``None``: the call's deadline) bound what a stream returns;
      ``max_input_messages`` (1,000) bounds the list a client stream sends.
    * ``retries`` (2), ``retry_backoff`` (0.1 s), ``retry_codes`` (``["UNAVAILABLE"]``):
      gRPC's own retries, only for idempotent methods (``idempotency_level``, or matched by
      ``idempotent_methods``), always within the call's deadline.
    * ``include_defaults``: results show fields at their default value (True).
    * ``wait_for_ready``: wait for the channel to connect (up to the deadline) instead of
      failing at once when the server is down (False).
    * ``load_timeout``: seconds for server reflection at load (10).
    * ``name``: the driver's name (default: the first service's package).

    Raises:
        ConfigurationError: no source, an unreadable or invalid file (the message names it
            and the place), a reflection failure, or a bad option.
    """

    enforces_deadline = True
    path_options = frozenset({"include_paths", "descriptor_set"})

    def __init__(
        self,
        target: str | None = None,
        *,
        proto: PathLike | Sequence[PathLike] | None = None,
        include_paths: PathLike | Sequence[PathLike] | None = None,
        descriptor_set: PathLike | bytes | None = None,
        services: str | Sequence[str] | None = None,
        methods: str | Sequence[str] | None = None,
        read_only: bool = False,
        tls: bool | None = None,
        root_certificates: str | bytes | os.PathLike[str] | None = None,
        client_certificate: str | bytes | os.PathLike[str] | None = None,
        client_key: str | bytes | os.PathLike[str] | None = None,
        tls_server_name: str | None = None,
        metadata: MetadataSource | None = None,
        keepalive_time: float | None = None,
        keepalive_timeout: float = 20.0,
        keepalive_without_calls: bool = False,
        max_receive_message_bytes: int = 4 * 1024 * 1024,
        max_send_message_bytes: int = 4 * 1024 * 1024,
        channel_options: Mapping[str, Any] | Sequence[tuple[str, Any]] | None = None,
        max_stream_messages: int = 100,
        max_stream_bytes: int = 1024 * 1024,
        stream_window: float | None = None,
        max_input_messages: int = 1000,
        retries: int = 2,
        retry_backoff: float = 0.1,
        retry_codes: Sequence[str] = ("UNAVAILABLE",),
        idempotent_methods: str | Sequence[str] | None = None,
        include_defaults: bool = True,
        wait_for_ready: bool = False,
        load_timeout: float = 10.0,
        name: str | None = None,
        **options: Any,
    ) -> None:
        refuse_unknown_options(GrpcDriver, options, "the gRPC driver")
        super().__init__(**options)
        for option, number in (("max_stream_messages", max_stream_messages), ("max_stream_bytes", max_stream_bytes),
                               ("max_input_messages", max_input_messages)):
            if not isinstance(number, int) or number < 1:
                raise ConfigurationError(f"{option} must be a positive integer")
        if stream_window is not None and stream_window <= 0:
            raise ConfigurationError("stream_window must be a positive number of seconds, or None")
        if not isinstance(retries, int) or retries < 0:
            raise ConfigurationError("retries must be a non-negative integer")
        self.target = target
        self.max_input_messages = max_input_messages
        retry = RetryPolicy(
            max_attempts=retries + 1, initial_backoff=retry_backoff,
            max_backoff=max(retry_backoff * 10, retry_backoff), codes=tuple(retry_codes),
        )
        settings = None
        if target is not None:
            settings = ChannelSettings.build(
                target, tls=tls, root_certificates=root_certificates, client_certificate=client_certificate,
                client_key=client_key, server_name=tls_server_name,
                max_receive_message_bytes=max_receive_message_bytes, max_send_message_bytes=max_send_message_bytes,
                keepalive_time=keepalive_time, keepalive_timeout=keepalive_timeout,
                keepalive_without_calls=keepalive_without_calls, service_config=None,
                channel_options=channel_options,
            )
        self._metadata = MetadataProvider(metadata)
        self._listed: list[str] | None = None  # the services reflection listed
        service_filter = _globs(services, "services")
        self.catalog = Catalog(self._load_files(
            proto, include_paths, descriptor_set, settings, service_filter, load_timeout,
        ))
        chosen = choose_methods(self.catalog, service_filter, _globs(methods, "methods"), self._listed)
        if read_only:
            chosen = [m for m in chosen if idempotency_level(m) == _NO_SIDE_EFFECTS]
        marked = _globs(idempotent_methods, "idempotent_methods") or []
        self._schemas = SchemaBuilder(self.catalog)
        self._normalizer = Normalizer()
        self._any = AnyCheck(self.catalog.pool, self._schemas, self._normalizer)
        self._methods: dict[str, Method] = {}
        self._op_tools: list[Tool] = []
        names = unique_tool_names(f"{m.containing_service.name}_{m.name}" for m in chosen)
        for descriptor in chosen:
            _check_nesting(descriptor)
        for tool_name, descriptor in zip(names, chosen, strict=True):
            level = idempotency_level(descriptor)
            request_cls = self.catalog.message_class(descriptor.input_type)
            response_cls = self.catalog.message_class(descriptor.output_type)
            method = Method(
                tool=tool_name,
                path=f"/{descriptor.containing_service.full_name}/{descriptor.name}",
                descriptor=descriptor,
                request_cls=request_cls,
                response_cls=response_cls,
                idempotent=level in (_NO_SIDE_EFFECTS, _IDEMPOTENT) or _matches(marked, descriptor),
                wrapped=descriptor.input_type.full_name in WELL_KNOWN
                and descriptor.input_type.full_name not in OBJECT_WELL_KNOWN,
                direct_build=direct_builder(request_cls),
                direct_json=direct_reader(response_cls, include_defaults),
            )
            self._methods[tool_name] = method
            self._op_tools.append(self._tool(method, level))
        package = chosen[0].containing_service.file.package if chosen else ""
        self.meta = DriverMeta(
            id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"mcs-driver-grpc:{target or ''}:{package}")),
            name=name or _slug(package) or "grpc",
            version=__version__,
            protocol="gRPC",
            transport="HTTP/2",
            spec_format="Protobuf",
            capabilities=("healthcheck", "stream"),
            prefix=self.prefix,
        )
        self._caller: Caller | None = None
        if settings is not None:
            idempotent = [
                (m.descriptor.containing_service.full_name, m.descriptor.name)
                for m in self._methods.values() if m.idempotent
            ]
            self._caller = Caller(
                replace(settings, service_config=retry.service_config(idempotent)),
                pool=self.catalog.pool, metadata=self._metadata,
                bounds=StreamBounds(max_stream_messages, max_stream_bytes, stream_window),
                to_json=to_json_function(self.catalog.pool, include_defaults, "the call"),
                wait_for_ready=wait_for_ready,
            )

    # ------------------------------------------------------------------ loading

    def _load_files(
        self, proto: Any, include_paths: Any, descriptor_set: Any, settings: ChannelSettings | None,
        services: list[str] | None, load_timeout: float,
    ) -> list[Any]:
        from mcs_grpc import _protoc

        if proto is not None and descriptor_set is not None:
            raise ConfigurationError("give proto or descriptor_set, not both")
        if descriptor_set is not None:
            return list(_protoc.read_descriptor_set(descriptor_set).file)
        if proto is not None:
            return list(_protoc.compile_protos(_paths(proto), _paths(include_paths)).file)
        if settings is None:
            raise ConfigurationError(
                "the gRPC driver needs a target (for server reflection), proto files (proto=...) "
                "or a descriptor set (descriptor_set=...)"
            )
        from mcs_grpc._reflection import MAX_TOTAL_BYTES, fetch_files

        # Descriptors are bounded by the reflection reader, not by the limit set for calls.
        channel = replace(settings, max_receive_message_bytes=MAX_TOTAL_BYTES).open()
        try:
            self._listed, files = fetch_files(
                channel, settings.target, timeout=load_timeout, wanted=_catalog.wanted_service(services),
                metadata=self._load_metadata(),
            )
        finally:
            channel.close()
        return files

    def _load_metadata(self) -> Any:
        """The metadata for reflection at load; a failing metadata source is a configuration error."""
        try:
            return self._metadata.current()
        except ExecutionError as exc:
            raise ConfigurationError(exc.message) from None

    # ------------------------------------------------------------------ tools

    def _tool(self, method: Method, level: int) -> Tool:
        descriptor = method.descriptor
        full = f"{descriptor.containing_service.full_name}/{descriptor.name}"
        description = self.catalog.comment(f"{descriptor.containing_service.full_name}.{descriptor.name}")
        notes = [description or f"Calls the gRPC method {full}."]
        if method.client_streaming:
            notes.append(f"Sends a stream: give the request messages as a list in `{MESSAGES}`.")
        if method.server_streaming:
            notes.append(f"Answers with a stream: the result is {{\"{MESSAGES}\": [...]}}, "
                         "with \"truncated\" when a limit cut it.")
        read_only = level == _NO_SIDE_EFFECTS
        return Tool(
            name=method.tool,
            description=" ".join(notes),
            input_schema=self._input_schema(method),
            annotations={"readOnlyHint": read_only, "destructiveHint": not read_only,
                         "idempotentHint": method.idempotent, "openWorldHint": False},
            meta={"original_name": full, "grpc_method": method.path,
                  "client_streaming": method.client_streaming, "server_streaming": method.server_streaming},
        )

    def _input_schema(self, method: Method) -> dict[str, Any]:
        schema, needs = self._schemas.message(method.descriptor.input_type)
        if method.wrapped:
            schema = {"type": "object", "properties": {REQUEST: schema}, "required": [REQUEST],
                      "additionalProperties": False}
        if method.client_streaming:
            items = schema
            schema = {"type": "object", "properties": {MESSAGES: {
                "type": "array", "items": items, "maxItems": self.max_input_messages,
                "description": "the messages to send, in order",
            }}, "required": [MESSAGES], "additionalProperties": False}
        return self._schemas.with_defs(schema, needs)

    def _list_tools(self) -> Iterable[Tool]:
        return self._op_tools

    @property
    def methods(self) -> Mapping[str, Method]:
        """The methods by tool name (without prefix)."""
        return self._methods

    def _validator(self, tool: Tool) -> ArgumentValidator:
        validator = self._validators.get(tool.name)
        if validator is not None:
            return validator
        method = self._methods.get(tool.unprefixed_name)
        packs_any = method is not None and self._any.reaches_any(method.descriptor.input_type)
        if method is None or method.wrapped or (
            not packs_any and not method.client_streaming
            and self._normalizer.changes_nothing(method.descriptor.input_type)
        ):
            return super()._validator(tool)
        validator = _NormalizingValidator(tool.input_schema, tool.name, self._normalize_for(method),
                                          self._any_check_for(method, tool.name) if packs_any else None)
        self._validators[tool.name] = validator
        return validator

    def _any_check_for(self, method: Method, tool: str) -> AfterCheck:
        """``(arguments, as_sent) -> arguments`` with what they pack in ``Any`` values checked
        (:mod:`mcs_grpc._any`)."""
        message, check = method.descriptor.input_type, self._any.check
        if not method.client_streaming:
            return lambda arguments, as_sent: check(arguments, message, tool, as_sent=as_sent)

        def each(arguments: dict[str, Any], as_sent: bool) -> dict[str, Any]:
            items = arguments.get(MESSAGES)
            if not isinstance(items, list):
                return arguments
            return {**arguments, MESSAGES: [check(item, message, tool, as_sent=as_sent) for item in items]}

        return each

    def _normalize_for(self, method: Method) -> Callable[[Any], Any]:
        message = method.descriptor.input_type
        normalize = self._normalizer.message
        if not method.client_streaming:
            return lambda arguments: normalize(arguments, message)

        def each(arguments: Any) -> Any:
            items = arguments.get(MESSAGES) if isinstance(arguments, dict) else None
            if not isinstance(items, list):
                return arguments
            return {**arguments, MESSAGES: [normalize(item, message) for item in items]}

        return each

    # ------------------------------------------------------------------ calls

    def _route(self, invocation: Invocation) -> tuple[Caller, Method]:
        if self._caller is None:
            raise ExecutionError(
                f"{invocation.tool.name} cannot be called: this driver was loaded without a target "
                "(configure target=host:port).", tool=invocation.tool.name,
            )
        return self._caller, self._methods[invocation.tool.unprefixed_name]

    def _call_tool(self, invocation: Invocation) -> Any:
        caller, method = self._route(invocation)
        return caller.call(method, invocation)

    async def _acall_tool(self, invocation: Invocation) -> Any:
        caller, method = self._route(invocation)
        return await caller.acall(method, invocation)

    def _stream_tool(self, invocation: Invocation) -> Iterator[Any]:
        caller, method = self._route(invocation)
        if not method.server_streaming:
            yield caller.call(method, invocation)
            return
        for item in caller.stream(method, invocation):
            yield {"truncated": item.text} if isinstance(item, Cut) else item

    async def _astream_tool(self, invocation: Invocation) -> AsyncIterator[Any]:
        caller, method = self._route(invocation)
        if not method.server_streaming:
            yield await caller.acall(method, invocation)
            return
        async for item in caller.astream(method, invocation):
            yield {"truncated": item.text} if isinstance(item, Cut) else item

    # ------------------------------------------------------------------ health, closing

    def healthcheck(self, service: str = "") -> dict[str, Any]:
        """The server's health from ``grpc.health.v1.Health/Check`` for ``service`` ("" is the
        whole server): ``{"status": "ok", "serving": "SERVING", ...}``, or ``"error"`` with a
        ``detail``. A server without the health service counts as healthy when it answers."""
        import grpc
        from grpc_health.v1 import health_pb2

        if self._caller is None:
            return {"status": "error", "detail": "no target is configured"}
        check = self._caller.sync.channel().unary_unary(
            "/grpc.health.v1.Health/Check",
            request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
            response_deserializer=health_pb2.HealthCheckResponse.FromString,
        )
        try:
            response = check(health_pb2.HealthCheckRequest(service=service),
                             timeout=min(self.timeout or 5.0, 5.0), metadata=self._metadata.current())
        except grpc.RpcError as error:
            code = error.code() if isinstance(error, grpc.Call) else grpc.StatusCode.UNKNOWN
            if code == grpc.StatusCode.UNIMPLEMENTED:
                return {"status": "ok", "serving": None, "target": self.target,
                        "detail": "the server answers but has no grpc.health.v1 service"}
            details = error.details() if isinstance(error, grpc.Call) else ""
            return {"status": "error", "target": self.target, "detail": f"{code.name}: {details}"}
        except ExecutionError as error:
            return {"status": "error", "target": self.target, "detail": error.message}
        serving = health_pb2.HealthCheckResponse.ServingStatus.Name(response.status)
        return {"status": "ok" if serving == "SERVING" else "error", "serving": serving,
                "service": service, "target": self.target}

    def close(self) -> None:
        """Close the channel (an async channel closes with its event loop, or by :meth:`aclose`)."""
        if self._caller is not None:
            self._caller.close()

    async def aclose(self) -> None:
        """Close the channels from inside the event loop that used them."""
        if self._caller is not None:
            await self._caller.aclose()


def _slug(text: str) -> str:
    return re.sub(r"[^a-zA-Z0-9]+", "_", text).strip("_").lower()[:40]


__all__ = ["GrpcDriver"]


def _check_nesting(method: MethodDescriptor) -> None:
    for role, message in (("request", method.input_type), ("response", method.output_type)):
        if nesting_depth(message) > MAX_NESTING:
            raise ConfigurationError(
                f"{method.full_name}: its {role} {message.full_name} nests messages more than {MAX_NESTING} "
                "levels deep, more than protobuf parses; leave the method out with the methods or services option."
            )
