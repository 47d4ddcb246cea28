"""Service descriptors read from a server's reflection service (``grpc.reflection.v1``, then
``v1alpha`` for servers that only have the older name).

Both versions carry the same messages on the wire, so grpcio-reflection's ``v1alpha``
classes serve for both. What comes back is data: serialized ``FileDescriptorProto``\\ s,
parsed and bounded in count and size, never code. The stream is read one response at a
time: the protocol answers each request once, so a server sending more responses than it
was asked for, or more than ``MAX_TOTAL_BYTES`` over the whole load, is refused and the
call cancelled before more is read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import grpc
from google.protobuf import descriptor_pb2
from grpc_reflection.v1alpha import reflection_pb2

from mcs.errors import ConfigurationError

METHODS = (
    "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
    "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
)
MAX_FILES = 5_000
MAX_TOTAL_BYTES = 64 * 1024 * 1024


class _Session:
    """Batches of requests on the reflection stream of the first version the server has."""

    def __init__(self, channel: grpc.Channel, target: str, timeout: float, metadata: Any) -> None:
        self._channel = channel
        self._metadata = metadata
        self._target = target
        self._timeout = timeout
        self._method: str | None = None
        self._received = 0  # bytes of every response read so far, names and files alike

    def ask(self, requests: Sequence[reflection_pb2.ServerReflectionRequest]) -> list[Any]:
        methods = [self._method] if self._method else list(METHODS)
        for method in methods:
            call = self._channel.stream_stream(
                method,
                request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
                response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
            )
            try:
                responses = self._read(call(iter(requests), timeout=self._timeout, metadata=self._metadata),
                                       len(requests))
            except grpc.RpcError as error:
                code = error.code() if isinstance(error, grpc.Call) else None
                if code == grpc.StatusCode.UNIMPLEMENTED and method != methods[-1]:
                    continue
                raise _load_error(self._target, error, code) from None
            self._method = method
            return responses
        raise AssertionError("unreachable: the last method either answers or raises")

    def _read(self, stream: Any, asked: int) -> list[Any]:
        """The responses to ``asked`` requests, one at a time; the call is cancelled on leaving.

        Raises:
            ConfigurationError: more responses than requests, or more than ``MAX_TOTAL_BYTES``
                received over the session.
        """
        responses: list[Any] = []
        try:
            for response in stream:
                self._received += response.ByteSize()
                if len(responses) >= asked or self._received > MAX_TOTAL_BYTES:
                    raise ConfigurationError(
                        f"server reflection on {self._target} sent more than was asked "
                        f"({asked} responses) or more than {MAX_TOTAL_BYTES} bytes; refused"
                    )
                responses.append(response)
        finally:
            stream.cancel()
        return responses


def _load_error(target: str, error: grpc.RpcError, code: grpc.StatusCode | None) -> ConfigurationError:
    details = error.details() if isinstance(error, grpc.Call) else str(error)
    if code == grpc.StatusCode.UNIMPLEMENTED:
        return ConfigurationError(
            f"{target} has no server reflection (neither grpc.reflection.v1 nor v1alpha); "
            "give the service's .proto files (proto=...) or a descriptor set (descriptor_set=...)"
        )
    name = code.name if code is not None else "UNKNOWN"
    return ConfigurationError(f"server reflection on {target} failed with {name}: {details}")


def _files_of(response: Any, target: str) -> list[bytes]:
    kind = response.WhichOneof("message_response")
    if kind == "error_response":
        error = response.error_response
        raise ConfigurationError(
            f"server reflection on {target} answered error {error.error_code}: {error.error_message}"
        )
    return list(response.file_descriptor_response.file_descriptor_proto)


def fetch_files(
    channel: grpc.Channel, target: str, *, timeout: float, wanted: Callable[[str], bool],
    metadata: Any = None,
) -> tuple[list[str], list[descriptor_pb2.FileDescriptorProto]]:
    """The service names the server lists, and the files defining the ``wanted`` ones with
    every file they import.

    Raises:
        ConfigurationError: the server has no reflection, cannot be reached, answers an
            error, or sends more than the bounds allow.
    """
    session = _Session(channel, target, timeout, metadata)
    listed = session.ask([reflection_pb2.ServerReflectionRequest(list_services="")])
    names = [service.name for response in listed for service in response.list_services_response.service]
    if len(names) > MAX_FILES:
        raise ConfigurationError(f"server reflection on {target} listed more than {MAX_FILES} services; refused")
    chosen = [name for name in names if wanted(name)]
    files: dict[str, descriptor_pb2.FileDescriptorProto] = {}
    total = 0

    def take(responses: list[Any]) -> None:
        nonlocal total
        for response in responses:
            for blob in _files_of(response, target):
                total += len(blob)
                if total > MAX_TOTAL_BYTES or len(files) >= MAX_FILES:
                    raise ConfigurationError(
                        f"server reflection on {target} sent more than {MAX_FILES} files or "
                        f"{MAX_TOTAL_BYTES} bytes of descriptors"
                    )
                proto = descriptor_pb2.FileDescriptorProto.FromString(blob)
                files.setdefault(proto.name, proto)

    if chosen:
        take(session.ask([reflection_pb2.ServerReflectionRequest(file_containing_symbol=name) for name in chosen]))
    while True:
        missing = sorted({dep for proto in files.values() for dep in proto.dependency} - set(files))
        if not missing:
            break
        take(session.ask([reflection_pb2.ServerReflectionRequest(file_by_filename=name) for name in missing]))
        if any(name not in files for name in missing):
            absent = [name for name in missing if name not in files]
            raise ConfigurationError(f"server reflection on {target} did not send {', '.join(absent)}")
    return names, list(files.values())
