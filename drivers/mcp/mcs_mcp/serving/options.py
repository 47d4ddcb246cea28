"""How a driver is served: transport, address, TLS, OAuth, logging (plain frozen data).

:class:`ServeOptions` is the one configuration object both front doors build: the CLI
from flags, and gen-mcp files from their ``runtime`` block
(:meth:`ServeOptions.from_runtime_settings`). gen-mcp's ``GENMCP_``-prefixed environment
overrides are applied by :func:`apply_genmcp_env` before that, the way gen-mcp reads
them (``GENMCP_STREAMABLEHTTPCONFIG_PORT=9000``, comma lists for arrays).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

from mcs.errors import ConfigurationError
from mcs.server.connections import (
    DEFAULT_BODY_TIMEOUT,
    DEFAULT_HEAD_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS,
    ConnectionLimits,
)

Transport = Literal["stdio", "streamablehttp"]
LOG_LEVELS = ("debug", "info", "warn", "warning", "error", "dpanic", "panic", "fatal", "critical")


@dataclass(frozen=True, slots=True)
class TLSOptions:
    """PEM files for HTTPS; both are read once when the server starts."""

    cert_file: str
    key_file: str


@dataclass(frozen=True, slots=True)
class OAuthOptions:
    """The server as an OAuth 2.0 resource server (RFC 9728, RFC 9068 access tokens).

    ``jwks_uri`` is where signing keys are fetched (with a timeout, cached); without it
    they are discovered from the issuer's RFC 8414 or OpenID metadata;
    ``issuer`` is compared exactly to the token's ``iss`` (default: the only
    authorization server, when there is exactly one); ``audience`` to its ``aud``
    (default: ``resource``, the canonical URI of this server, computed from the bind
    address and base path when not given). Only ``algorithms`` are accepted.
    """

    authorization_servers: tuple[str, ...] = ()
    jwks_uri: str | None = None
    issuer: str | None = None
    audience: str | None = None
    resource: str | None = None
    algorithms: tuple[str, ...] = ("RS256", "ES256", "PS256")
    jwks_timeout: float = 5.0
    jwks_cache_seconds: float = 300.0
    leeway: float = 30.0


@dataclass(frozen=True, slots=True)
class LoggingOptions:
    """gen-mcp's ``loggingConfig``, which follows zap's ``Config`` (see :mod:`.logs`).

    ``output_paths`` and ``error_output_paths`` hold ``stdout``, ``stderr``, file paths
    or ``file://`` URLs; ``initial_fields`` go into every record; ``disable_caller``
    drops the ``caller`` (file:line) of records; stack traces are added from ``error``
    up (from ``warn`` up with ``development``) unless ``disable_stacktrace``.
    """

    level: str = "info"
    encoding: Literal["json", "console"] = "console"
    output_paths: tuple[str, ...] = ("stderr",)
    enable_mcp_logs: bool = True
    error_output_paths: tuple[str, ...] = ("stderr",)
    initial_fields: tuple[tuple[str, Any], ...] = ()
    development: bool = False
    disable_caller: bool = False
    disable_stacktrace: bool = False


@dataclass(frozen=True, slots=True)
class ServeOptions:
    """Everything :func:`mcs_mcp.serving.build_app` and the runners need.

    Defaults are the safe ones: stdio, or HTTP bound to ``127.0.0.1`` with Host and
    Origin checked against DNS rebinding (``allowed_hosts``/``allowed_origins`` widen
    it; the loopback names are always allowed when bound to loopback).
    ``json_response`` answers each POST with one JSON body instead of an SSE stream:
    faster, but no log notifications reach the client during a call.
    ``event_store`` (the SDK's ``EventStore``, for instance
    :class:`~mcs_mcp.serving.events.MemoryEventStore`) makes stateful streams resumable;
    ``retry_interval`` (milliseconds) is the reconnection delay suggested to clients.
    ``all_tools`` lists every tool even when the driver is in discovery mode (by default
    such a driver is listed as its meta-tools, with its index as ``instructions``).
    ``head_timeout`` and ``body_timeout`` (seconds) bound the time a client takes to send a
    request's head and body, ``max_connections`` how many connections are held at once
    (:mod:`mcs.server.connections`).
    """

    transport: Transport = "stdio"
    host: str = "127.0.0.1"
    port: int = 3000
    base_path: str = "/mcp"
    stateless: bool = True
    tls: TLSOptions | None = None
    auth: OAuthOptions | None = None
    logging: LoggingOptions = field(default_factory=LoggingOptions)
    name: str = "mcs"
    version: str = "0.1.0"
    instructions: str | None = None
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    max_request_body: int = 4 * 1024 * 1024
    json_response: bool = False
    event_store: Any = None
    retry_interval: int | None = None
    all_tools: bool = False
    head_timeout: float = DEFAULT_HEAD_TIMEOUT
    body_timeout: float = DEFAULT_BODY_TIMEOUT
    max_connections: int = DEFAULT_MAX_CONNECTIONS

    def __post_init__(self) -> None:
        # A bad timeout or count is refused here, naming it, rather than when serving starts.
        ConnectionLimits(self.head_timeout, self.body_timeout, self.max_connections)
        if self.transport not in ("stdio", "streamablehttp"):
            raise ConfigurationError(
                f"transport must be 'stdio' or 'streamablehttp', got {self.transport!r}"
            )
        if not 0 <= self.port <= 65535:
            raise ConfigurationError(f"port must be between 0 and 65535, got {self.port}")
        if not self.base_path.startswith("/"):
            object.__setattr__(self, "base_path", "/" + self.base_path)
        if len(self.base_path) > 1 and self.base_path.endswith("/"):
            object.__setattr__(self, "base_path", self.base_path.rstrip("/"))
        if self.event_store is not None and self.stateless and self.transport == "streamablehttp":
            raise ConfigurationError(
                "an event store makes sessions resumable, and stateless serving has no sessions: "
                "add -s stateful=true (ServeOptions(stateless=False))"
            )

    @property
    def connection_limits(self) -> ConnectionLimits:
        """The bounds on slow and numerous clients these options set."""
        return ConnectionLimits(self.head_timeout, self.body_timeout, self.max_connections)

    @property
    def has_sessions(self) -> bool:
        """True when each client has a lasting connection (stdio, or stateful HTTP):
        only then can the server send it requests and change notifications."""
        return self.transport == "stdio" or not self.stateless

    @property
    def scheme(self) -> str:
        return "https" if self.tls is not None else "http"

    @property
    def url(self) -> str:
        """The endpoint a client on this machine uses (``http://127.0.0.1:3000/mcp``)."""
        host = self.host
        if host in ("0.0.0.0", "::", ""):
            host = "127.0.0.1"
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"
        return f"{self.scheme}://{host}:{self.port}{self.base_path}"

    def with_overrides(self, **changes: Any) -> ServeOptions:
        """A copy with the given fields replaced; ``None`` values are ignored."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    @classmethod
    def from_runtime_settings(cls, d: Mapping[str, Any]) -> ServeOptions:
        """Build from the mcpfile driver's ``runtime_settings()`` dict.

        Keys: ``transport``, ``port``, ``base_path``, ``stateless``, ``tls``
        (``{cert_file, key_file}`` or ``None``), ``auth`` (``{authorization_servers,
        jwks_uri, issuer, audience}`` or ``None``), ``logging`` (see :func:`logging_options`),
        ``name``, ``version``, ``instructions``.
        Missing keys take the defaults.
        """
        kwargs: dict[str, Any] = {}
        transport = d.get("transport")
        if transport:
            kwargs["transport"] = _transport(str(transport))
        for key in ("port",):
            if d.get(key) is not None:
                kwargs[key] = _int(d[key], key)
        if d.get("base_path"):
            kwargs["base_path"] = str(d["base_path"])
        if d.get("stateless") is not None:
            kwargs["stateless"] = bool(d["stateless"])
        for key in ("name", "version", "instructions"):
            if d.get(key):
                kwargs[key] = str(d[key])
        tls = d.get("tls")
        if tls:
            if not tls.get("cert_file") or not tls.get("key_file"):
                raise ConfigurationError("tls needs both certFile and keyFile")
            kwargs["tls"] = TLSOptions(str(tls["cert_file"]), str(tls["key_file"]))
        auth = d.get("auth")
        if auth:
            kwargs["auth"] = OAuthOptions(
                authorization_servers=tuple(auth.get("authorization_servers") or ()),
                jwks_uri=auth.get("jwks_uri") or None,
                issuer=auth.get("issuer") or None,
                audience=auth.get("audience") or None,
                resource=auth.get("resource") or None,
            )
        logging_d = d.get("logging")
        if logging_d:
            kwargs["logging"] = logging_options(logging_d)
        return cls(**kwargs)


def logging_options(d: Mapping[str, Any], base: LoggingOptions | None = None) -> LoggingOptions:
    """``{level, encoding, output_paths, error_output_paths, initial_fields, development,
    disable_caller, disable_stacktrace, enable_mcp_logs}`` -> :class:`LoggingOptions`;
    a key that is missing keeps its value in ``base`` (default: the defaults).

    Raises:
        ConfigurationError: an unknown level or encoding, or an output that is not
            ``stdout``, ``stderr``, a path or a ``file://`` URL.
    """
    base = base or LoggingOptions()
    level = str(d.get("level") or base.level).lower()
    if level not in LOG_LEVELS:
        raise ConfigurationError(f"logging level must be one of {', '.join(LOG_LEVELS)}, got {level!r}")
    encoding = str(d.get("encoding") or base.encoding).lower()
    if encoding not in ("json", "console"):
        raise ConfigurationError(f"logging encoding must be 'json' or 'console', got {encoding!r}")
    fields = d.get("initial_fields")
    if fields is not None and not isinstance(fields, Mapping):
        raise ConfigurationError(f"logging initialFields must be a mapping, got {fields!r}")
    enable = d.get("enable_mcp_logs")
    return LoggingOptions(
        level=level,
        encoding=encoding,  # type: ignore[arg-type]
        output_paths=_sinks(d.get("output_paths"), base.output_paths, "outputPaths"),
        enable_mcp_logs=base.enable_mcp_logs if enable is None else bool(enable),
        error_output_paths=_sinks(d.get("error_output_paths"), base.error_output_paths, "errorOutputPaths"),
        initial_fields=tuple((str(k), v) for k, v in fields.items()) if fields is not None else base.initial_fields,
        development=bool(d.get("development", base.development)),
        disable_caller=bool(d.get("disable_caller", base.disable_caller)),
        disable_stacktrace=bool(d.get("disable_stacktrace", base.disable_stacktrace)),
    )


def sink_path(sink: str, where: str = "outputPaths") -> str:
    """``stdout``, ``stderr`` or the file a zap sink names (a path, or a ``file://`` URL).

    Raises:
        ConfigurationError: a URL of another scheme (zap needs a registered sink for those).
    """
    if sink in ("stdout", "stderr"):
        return sink
    scheme, sep, _ = sink.partition("://")
    if not sep:
        return sink
    if scheme.lower() != "file":
        raise ConfigurationError(
            f"logging {where} entry {sink!r}: only stdout, stderr, file paths and file:// URLs are supported"
        )
    parsed = urlsplit(sink)
    if parsed.netloc not in ("", "localhost") or parsed.query or parsed.fragment:
        raise ConfigurationError(f"logging {where} entry {sink!r}: a file:// URL names a local file, file:///path")
    return unquote(parsed.path)


def _sinks(value: Any, default: tuple[str, ...], where: str) -> tuple[str, ...]:
    if not value:
        return default
    items = [p for p in value.split(",") if p] if isinstance(value, str) else [str(p) for p in value]
    return tuple(sink_path(item, where) for item in items)


def _transport(value: str) -> Transport:
    lowered = value.lower().replace("-", "").replace("_", "")
    if lowered in ("http", "streamablehttp"):
        return "streamablehttp"
    if lowered == "stdio":
        return "stdio"
    raise ConfigurationError(f"transport must be 'stdio' or 'streamablehttp', got {value!r}")


def _int(value: Any, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ConfigurationError(f"{key} must be an integer, got {value!r}")
    try:
        return int(value)
    except ValueError:
        raise ConfigurationError(f"{key} must be an integer, got {value!r}") from None


# gen-mcp's environment names (the upper-cased JSON path of the runtime field) mapped to
# the runtime_settings() path they override, with how the text is decoded.
_GENMCP_ENV: dict[str, tuple[tuple[str, ...], str]] = {
    "TRANSPORTPROTOCOL": (("transport",), "str"),
    "STREAMABLEHTTPCONFIG_PORT": (("port",), "int"),
    "STREAMABLEHTTPCONFIG_BASEPATH": (("base_path",), "str"),
    "STREAMABLEHTTPCONFIG_STATELESS": (("stateless",), "bool"),
    "STREAMABLEHTTPCONFIG_TLS_CERTFILE": (("tls", "cert_file"), "str"),
    "STREAMABLEHTTPCONFIG_TLS_KEYFILE": (("tls", "key_file"), "str"),
    "STREAMABLEHTTPCONFIG_AUTH_AUTHORIZATIONSERVERS": (("auth", "authorization_servers"), "list"),
    "STREAMABLEHTTPCONFIG_AUTH_JWKSURI": (("auth", "jwks_uri"), "str"),
    "STREAMABLEHTTPCONFIG_AUTH_ISSUER": (("auth", "issuer"), "str"),
    "STREAMABLEHTTPCONFIG_AUTH_AUDIENCE": (("auth", "audience"), "str"),
    "LOGGINGCONFIG_LEVEL": (("logging", "level"), "str"),
    "LOGGINGCONFIG_ENCODING": (("logging", "encoding"), "str"),
    "LOGGINGCONFIG_OUTPUTPATHS": (("logging", "output_paths"), "list"),
    "LOGGINGCONFIG_ENABLEMCPLOGS": (("logging", "enable_mcp_logs"), "bool"),
    "LOGGINGCONFIG_ERROROUTPUTPATHS": (("logging", "error_output_paths"), "list"),
    "LOGGINGCONFIG_DEVELOPMENT": (("logging", "development"), "bool"),
    "LOGGINGCONFIG_DISABLECALLER": (("logging", "disable_caller"), "bool"),
    "LOGGINGCONFIG_DISABLESTACKTRACE": (("logging", "disable_stacktrace"), "bool"),
}
GENMCP_ENV_PREFIX = "GENMCP_"


def genmcp_env_names() -> list[str]:
    """Every ``GENMCP_`` variable :func:`apply_genmcp_env` reads, for the docs."""
    return [GENMCP_ENV_PREFIX + name for name in _GENMCP_ENV]


def apply_genmcp_env(
    settings: Mapping[str, Any], environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """``settings`` with gen-mcp's ``GENMCP_*`` runtime overrides applied (a new dict).

    Integers must be bare digits (``"\\"9000\\""`` is refused, as gen-mcp does), booleans
    ``true``/``false``/``1``/``0``, lists comma-separated.

    Raises:
        ConfigurationError: a variable's value does not decode to its field's type.
    """
    env = os.environ if environ is None else environ
    out: dict[str, Any] = {k: (dict(v) if isinstance(v, Mapping) else v) for k, v in settings.items()}
    for suffix, (path, kind) in _GENMCP_ENV.items():
        name = GENMCP_ENV_PREFIX + suffix
        raw = env.get(name)
        if raw is None:
            continue
        value = _decode_env(name, raw, kind)
        target = out
        for part in path[:-1]:
            existing = target.get(part)
            target[part] = dict(existing) if isinstance(existing, Mapping) else {}
            target = target[part]
        target[path[-1]] = value
    return out


def _decode_env(name: str, raw: str, kind: str) -> Any:
    text = raw.strip()
    if kind == "int":
        if not text.isdigit():
            raise ConfigurationError(f"{name} must be an integer, got {raw!r}")
        return int(text)
    if kind == "bool":
        lowered = text.lower()
        if lowered in ("true", "1", "yes"):
            return True
        if lowered in ("false", "0", "no"):
            return False
        raise ConfigurationError(f"{name} must be true or false, got {raw!r}")
    if kind == "list":
        if text.startswith("["):
            try:
                decoded = json.loads(text)
            except ValueError:
                raise ConfigurationError(f"{name} is not a valid JSON list: {raw!r}") from None
            if not isinstance(decoded, list):
                raise ConfigurationError(f"{name} must be a list, got {raw!r}")
            return [str(v) for v in decoded]
        return [part.strip() for part in text.split(",") if part.strip()]
    return text


def split_csv(values: Sequence[str] | None) -> tuple[str, ...]:
    """``["a,b", "c"]`` -> ``("a", "b", "c")`` (repeatable, comma-separable CLI flags)."""
    out: list[str] = []
    for value in values or ():
        out.extend(part.strip() for part in value.split(",") if part.strip())
    return tuple(out)
