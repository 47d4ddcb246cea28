"""Channels as configuration describes them: the target, TLS or mTLS, keepalive, message size
limits, and gRPC's own retry policy (the A6 design, run by grpcio's core) for the methods that
are safe to repeat. Also the metadata sent with every call, static or from a callable.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import grpc.aio

from mcs.errors import ConfigurationError, ExecutionError

Metadata = tuple[tuple[str, str | bytes], ...]
MetadataSource = Mapping[str, str | bytes] | Callable[[], Mapping[str, str | bytes]]

_KEY = re.compile(r"^[0-9a-z_.-]+$")
_MAX_ATTEMPTS = 5  # gRPC caps retry attempts at 5 whatever the config says
_RECENT_VALUES = 16  # metadata values kept to scrub from errors: enough for a few refreshed tokens


def _pem(value: str | bytes | os.PathLike[str] | None, what: str) -> bytes | None:
    """PEM bytes given inline, or read from a file path."""
    if value is None:
        return None
    if isinstance(value, bytes):
        return value
    text = os.fspath(value)
    if "-----BEGIN" in text:
        return text.encode()
    try:
        return Path(text).read_bytes()
    except OSError as exc:
        raise ConfigurationError(f"{what}: cannot read {text} ({exc.strerror})") from None


def check_target(target: Any) -> str:
    if not isinstance(target, str) or not target.strip() or any(c in target for c in "\r\n\0 \t"):
        raise ConfigurationError(
            f"target must be a gRPC target such as 'localhost:50051' or 'dns:///host:443', got {target!r}"
        )
    return target


def check_metadata(items: Mapping[str, str | bytes], where: str) -> Metadata:
    """Metadata as gRPC accepts it: lower-case ASCII keys, text values without line breaks,
    bytes only for ``-bin`` keys. The values are never shown in an error (they hold secrets)."""
    out: list[tuple[str, str | bytes]] = []
    for key, value in items.items():
        if not isinstance(key, str) or not _KEY.match(key) or key.startswith("grpc-"):
            raise ConfigurationError(
                f"{where}: metadata key {key!r} must be lower-case ASCII (a-z 0-9 - _ .), not grpc-*"
            )
        if key.endswith("-bin"):
            if not isinstance(value, bytes | str):
                raise ConfigurationError(f"{where}: metadata {key!r} must be bytes")
            value = value.encode("utf-8") if isinstance(value, str) else value  # gRPC sends bytes only
        elif not isinstance(value, str) or any(c in value for c in "\r\n\0") or not value.isascii():
            raise ConfigurationError(
                f"{where}: metadata {key!r} must be printable ASCII text without line breaks"
            )
        out.append((key, value))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Retries of idempotent methods, by gRPC itself, within the call's deadline."""

    max_attempts: int = 3
    initial_backoff: float = 0.1
    max_backoff: float = 1.0
    multiplier: float = 2.0
    codes: tuple[str, ...] = ("UNAVAILABLE",)

    def __post_init__(self) -> None:
        if not 1 <= self.max_attempts <= _MAX_ATTEMPTS:
            raise ConfigurationError(f"retries must be between 0 and {_MAX_ATTEMPTS - 1}")
        if self.initial_backoff <= 0 or self.max_backoff < self.initial_backoff or self.multiplier < 1:
            raise ConfigurationError("retry_backoff must be positive, max_backoff not below it")
        for code in self.codes:
            if code not in grpc.StatusCode.__members__ or code == "OK":
                raise ConfigurationError(
                    f"retry_codes: {code!r} is not a gRPC status name (UNAVAILABLE, ABORTED...)"
                )

    def service_config(self, methods: Sequence[tuple[str, str]]) -> str | None:
        """The channel's service config: a retry policy for each ``(service, method)``."""
        if self.max_attempts < 2 or not methods:
            return None
        return json.dumps({"methodConfig": [{
            "name": [{"service": service, "method": method} for service, method in methods],
            "retryPolicy": {
                "maxAttempts": self.max_attempts,
                "initialBackoff": f"{self.initial_backoff:g}s",
                "maxBackoff": f"{self.max_backoff:g}s",
                "backoffMultiplier": self.multiplier,
                "retryableStatusCodes": list(self.codes),
            },
        }]})


@dataclass(frozen=True, slots=True)
class ChannelSettings:
    """Everything needed to open the driver's channels (sync and one per event loop)."""

    target: str
    root_certificates: bytes | None = None
    private_key: bytes | None = None
    certificate_chain: bytes | None = None
    tls: bool = False
    server_name: str | None = None
    max_receive_message_bytes: int = 4 * 1024 * 1024
    max_send_message_bytes: int = 4 * 1024 * 1024
    keepalive_time: float | None = None
    keepalive_timeout: float = 20.0
    keepalive_without_calls: bool = False
    service_config: str | None = None
    extra_options: tuple[tuple[str, Any], ...] = field(default=())

    @classmethod
    def build(
        cls, target: str, *, tls: bool | None, root_certificates: Any, client_certificate: Any,
        client_key: Any, server_name: str | None, max_receive_message_bytes: int,
        max_send_message_bytes: int, keepalive_time: float | None, keepalive_timeout: float,
        keepalive_without_calls: bool, service_config: str | None,
        channel_options: Mapping[str, Any] | Sequence[tuple[str, Any]] | None,
    ) -> ChannelSettings:
        root = _pem(root_certificates, "root_certificates")
        chain = _pem(client_certificate, "client_certificate")
        key = _pem(client_key, "client_key")
        if (chain is None) != (key is None):
            raise ConfigurationError("mTLS needs both client_certificate and client_key")
        secure = bool(tls) if tls is not None else any(v is not None for v in (root, chain, server_name))
        if not secure and (root or chain):
            raise ConfigurationError("certificates were given but tls=False; remove one or the other")
        for name, value in (("max_receive_message_bytes", max_receive_message_bytes),
                            ("max_send_message_bytes", max_send_message_bytes)):
            if not isinstance(value, int) or value < 1:
                raise ConfigurationError(f"{name} must be a positive number of bytes")
        if keepalive_time is not None and keepalive_time <= 0:
            raise ConfigurationError("keepalive_time must be a positive number of seconds, or None")
        extra = tuple(channel_options.items()) if isinstance(channel_options, Mapping) else tuple(channel_options or ())
        return cls(
            target=check_target(target), root_certificates=root, private_key=key, certificate_chain=chain,
            tls=secure, server_name=server_name,
            max_receive_message_bytes=max_receive_message_bytes, max_send_message_bytes=max_send_message_bytes,
            keepalive_time=keepalive_time, keepalive_timeout=keepalive_timeout,
            keepalive_without_calls=keepalive_without_calls, service_config=service_config,
            extra_options=tuple((str(k), v) for k, v in extra),
        )

    def options(self) -> list[tuple[str, Any]]:
        options: list[tuple[str, Any]] = [
            ("grpc.max_receive_message_length", self.max_receive_message_bytes),
            ("grpc.max_send_message_length", self.max_send_message_bytes),
            # A restarted peer is found again quickly (gRPC's default waits up to 120 s).
            ("grpc.initial_reconnect_backoff_ms", 200),
            ("grpc.min_reconnect_backoff_ms", 200),
            ("grpc.max_reconnect_backoff_ms", 2000),
            ("grpc.enable_retries", 1),
            # Own subchannels: a channel opened after a failure does not inherit its backoff.
            ("grpc.use_local_subchannel_pool", 1),
        ]
        if self.service_config is not None:
            options.append(("grpc.service_config", self.service_config))
            options.append(("grpc.service_config_disable_resolution", 1))
        if self.keepalive_time is not None:
            options += [
                ("grpc.keepalive_time_ms", int(self.keepalive_time * 1000)),
                ("grpc.keepalive_timeout_ms", int(self.keepalive_timeout * 1000)),
                ("grpc.keepalive_permit_without_calls", int(self.keepalive_without_calls)),
                ("grpc.http2.max_pings_without_data", 0),
            ]
        if self.server_name:
            options.append(("grpc.ssl_target_name_override", self.server_name))
            options.append(("grpc.default_authority", self.server_name))
        return options + list(self.extra_options)

    def _credentials(self) -> grpc.ChannelCredentials:
        return grpc.ssl_channel_credentials(
            root_certificates=self.root_certificates, private_key=self.private_key,
            certificate_chain=self.certificate_chain,
        )

    def open(self) -> grpc.Channel:
        if self.tls:
            return grpc.secure_channel(self.target, self._credentials(), options=self.options())
        return grpc.insecure_channel(self.target, options=self.options())

    def open_async(self) -> grpc.aio.Channel:
        """Must be called inside the event loop the channel will serve."""
        if self.tls:
            return grpc.aio.secure_channel(self.target, self._credentials(), options=self.options())
        return grpc.aio.insecure_channel(self.target, options=self.options())


def _echo_texts(key: str, value: str | bytes) -> tuple[str, ...]:
    """The texts a server may echo a metadata value as: the value itself (bytes as the UTF-8
    text they hold) and, for a ``-bin`` key, the base64 it travels in, padded or not."""
    import base64

    raw = value if isinstance(value, bytes) else value.encode("utf-8")
    texts = [value] if isinstance(value, str) else [raw.decode("utf-8", "ignore")]
    if key.endswith("-bin"):
        encoded = base64.b64encode(raw).decode("ascii")
        texts += [encoded, encoded.rstrip("=")]
    return tuple(dict.fromkeys(texts))


class MetadataProvider:
    """The metadata of each call: static pairs, or a callable asked before every call (for
    tokens that expire), checked each time. Values never appear in errors or logs."""

    def __init__(self, source: MetadataSource | None) -> None:
        self._callable: Callable[[], Mapping[str, str | bytes]] | None = None
        self._static: Metadata | None = ()
        # the texts of each value sent (_echo_texts), oldest first (a few refreshed tokens)
        self._recent: dict[tuple[str, ...], None] = {}
        self._lock = threading.Lock()
        if source is None:
            return
        if callable(source):
            self._callable = source
            self._static = None
        elif isinstance(source, Mapping):
            self._static = check_metadata(source, "metadata")
            self._remember(self._static)
        else:
            raise ConfigurationError("metadata must be a mapping of key to value, or a callable returning one")

    @property
    def is_static(self) -> bool:
        return self._static is not None

    def secrets(self) -> tuple[str, ...]:
        """The text values sent lately (static, or the callable's last answers), in every form
        a server may echo them (:func:`mcs.redaction.credential_forms`): scrubbed from errors."""
        from mcs.redaction import credential_forms

        with self._lock:
            values = [text for texts in self._recent for text in texts]
        return credential_forms(values)

    def _remember(self, pairs: Metadata) -> None:
        with self._lock:
            for key, value in pairs:
                texts = _echo_texts(key, value)
                if texts and texts not in self._recent:
                    self._recent[texts] = None
                    if len(self._recent) > _RECENT_VALUES:
                        del self._recent[next(iter(self._recent))]

    def current(self) -> Metadata | None:
        """The pairs for one call (``None`` when there are none)."""
        if self._static is not None:
            return self._static or None
        assert self._callable is not None
        try:
            produced = self._callable()
            if not isinstance(produced, Mapping):
                raise ConfigurationError("it must return a mapping of key to value")
            pairs = check_metadata(produced, "metadata callable")
            self._remember(pairs)
            return pairs or None
        except Exception as exc:
            reason = str(exc) if isinstance(exc, ConfigurationError) else type(exc).__name__
            raise ExecutionError(
                f"The call was not sent: the driver's metadata source failed ({reason}). "
                "This is a configuration problem; calling again will not help."
            ) from None
