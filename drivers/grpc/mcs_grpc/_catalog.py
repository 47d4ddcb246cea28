"""The services a driver offers: a private descriptor pool built from file descriptors, the
comments of their source info, and the methods chosen by the service and method filters.

The pool is the driver's own (never protobuf's default pool), so two drivers, or a driver
and generated code in the same process, never clash over a file or a symbol.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import Descriptor, MethodDescriptor, ServiceDescriptor

from mcs.errors import ConfigurationError
from mcs.tools import visible_text

#: Infrastructure services, left out unless a filter names them: reflection is how the
#: driver loads, health is its ``healthcheck``.
INFRASTRUCTURE = ("grpc.reflection.*", "grpc.health.v1.Health")

_WELL_KNOWN_MODULES = (
    "any_pb2", "api_pb2", "descriptor_pb2", "duration_pb2", "empty_pb2", "field_mask_pb2",
    "source_context_pb2", "struct_pb2", "timestamp_pb2", "type_pb2", "wrappers_pb2",
)
# FileDescriptorProto field numbers, as SourceCodeInfo paths use them.
_MESSAGE, _ENUM, _SERVICE = 4, 5, 6
_FIELD, _NESTED, _NESTED_ENUM = 2, 3, 4
_ENUM_VALUE, _METHOD = 2, 2
_LINK = re.compile(r"\[([^\]]+)\]\s?(?:\[[^\]]*\]|\([^)]*\))")
_SPACES = re.compile(r"[ \t]+")


#: How deep messages may nest (message in message, recursion aside): protobuf's own
#: default for parsing (binary and ``json_format``); deeper descriptors cannot be used,
#: and building their classes exhausts Python's recursion limit.
MAX_NESTING = 100


def nesting_depth(root: Descriptor, limit: int = MAX_NESTING) -> int:
    """How many messages deep ``root`` nests (itself 1), a message that contains itself
    counted once; walked without recursion, and stopped once past ``limit``."""
    depth: dict[str, int] = {}
    deepest: dict[str, int] = {root.full_name: 0}  # the deepest child seen so far, per open message
    path: list[tuple[Descriptor, Any]] = [(root, iter(root.fields))]
    while path:
        message, fields = path[-1]
        field = next(fields, None)
        if field is None:
            path.pop()
            depth[message.full_name] = 1 + deepest.pop(message.full_name)
            if path:
                parent = path[-1][0].full_name
                deepest[parent] = max(deepest[parent], depth[message.full_name])
            continue
        child = field.message_type
        if child is None or child.full_name in deepest:  # a scalar, or a message already open above
            continue
        if child.full_name in depth:
            deepest[message.full_name] = max(deepest[message.full_name], depth[child.full_name])
        elif len(path) >= limit:
            return limit + 1
        else:
            deepest[child.full_name] = 0
            path.append((child, iter(child.fields)))
    return depth[root.full_name]


def _well_known_files() -> dict[str, descriptor_pb2.FileDescriptorProto]:
    import importlib

    files = {}
    for name in _WELL_KNOWN_MODULES:
        module = importlib.import_module(f"google.protobuf.{name}")
        proto = descriptor_pb2.FileDescriptorProto.FromString(module.DESCRIPTOR.serialized_pb)
        files[proto.name] = proto
    return files


def plain_text(comment: str) -> str:
    """A proto comment as plain text: links reduced to their words, lines rejoined, and no
    invisible format characters (Unicode category Cf: zero-width, bidi overrides, the tag
    block that spells hidden ASCII), so no description carries words its reader cannot see."""
    comment = visible_text(comment)
    lines = [line.strip() for line in comment.strip().splitlines()]
    paragraphs = "\n".join(lines).split("\n\n")
    text = "\n\n".join(" ".join(p.split("\n")).strip() for p in paragraphs if p.strip())
    text = _LINK.sub(r"\1", text)
    return _SPACES.sub(" ", text).replace("`", "")


def _comments(proto: descriptor_pb2.FileDescriptorProto) -> dict[str, str]:
    """Leading comments by the full name of what they document (``pkg.Msg.field``...)."""
    by_path = {
        tuple(location.path): location.leading_comments
        for location in proto.source_code_info.location
        if location.leading_comments.strip()
    }
    if not by_path:
        return {}
    prefix = f"{proto.package}." if proto.package else ""
    found: dict[str, str] = {}

    def enum(node: descriptor_pb2.EnumDescriptorProto, scope: str, path: tuple[int, ...]) -> None:
        name = scope + node.name
        if path in by_path:
            found[name] = by_path[path]
        for index, value in enumerate(node.value):
            value_path = (*path, _ENUM_VALUE, index)
            if value_path in by_path:
                found[f"{name}.{value.name}"] = by_path[value_path]

    def message(node: descriptor_pb2.DescriptorProto, scope: str, path: tuple[int, ...]) -> None:
        name = scope + node.name
        if path in by_path:
            found[name] = by_path[path]
        for index, item in enumerate(node.field):
            if (*path, _FIELD, index) in by_path:
                found[f"{name}.{item.name}"] = by_path[(*path, _FIELD, index)]
        for index, nested in enumerate(node.nested_type):
            message(nested, name + ".", (*path, _NESTED, index))
        for index, nested_enum in enumerate(node.enum_type):
            enum(nested_enum, name + ".", (*path, _NESTED_ENUM, index))

    for index, item in enumerate(proto.message_type):
        message(item, prefix, (_MESSAGE, index))
    for index, top_enum in enumerate(proto.enum_type):
        enum(top_enum, prefix, (_ENUM, index))
    for index, service in enumerate(proto.service):
        name = prefix + service.name
        if (_SERVICE, index) in by_path:
            found[name] = by_path[(_SERVICE, index)]
        for method_index, method in enumerate(service.method):
            if (_SERVICE, index, _METHOD, method_index) in by_path:
                found[f"{name}.{method.name}"] = by_path[(_SERVICE, index, _METHOD, method_index)]
    return found


def _proto3_optional(proto: descriptor_pb2.FileDescriptorProto) -> set[str]:
    """Full names of the fields declared ``optional`` in proto3 (their oneof is synthetic)."""
    found: set[str] = set()
    pending = [(f"{proto.package}." if proto.package else "", m) for m in proto.message_type]
    while pending:
        scope, node = pending.pop()
        name = scope + node.name
        found.update(f"{name}.{item.name}" for item in node.field if item.proto3_optional)
        pending.extend((name + ".", nested) for nested in node.nested_type)
    return found


def _in_dependency_order(
    files: Iterable[descriptor_pb2.FileDescriptorProto],
) -> list[descriptor_pb2.FileDescriptorProto]:
    by_name = {proto.name: proto for proto in files}
    for name, proto in _well_known_files().items():
        by_name.setdefault(name, proto)
    ordered: list[descriptor_pb2.FileDescriptorProto] = []
    state: dict[str, int] = {}  # 1: being visited, 2: done
    for root in list(by_name):
        stack: list[tuple[str, int]] = [(root, 0)]
        while stack:
            name, next_dep = stack.pop()
            if next_dep == 0:
                if state.get(name) == 2:
                    continue
                state[name] = 1
            found = by_name.get(name)
            if found is None:
                importer = stack[-1][0] if stack else "?"
                raise ConfigurationError(f"{importer}: imports {name}, which none of the given files defines")
            deps = list(found.dependency)
            if next_dep < len(deps):
                stack.append((name, next_dep + 1))
                dep = deps[next_dep]
                if state.get(dep) == 1:
                    raise ConfigurationError(f"{name}: imports {dep}, which imports it back (an import cycle)")
                if state.get(dep) != 2:
                    stack.append((dep, 0))
                continue
            state[name] = 2
            ordered.append(found)
    return ordered


@dataclass(frozen=True, slots=True)
class FieldBehavior:
    """``google.api.field_behavior`` annotations of one field, where the files use them."""

    required: bool = False
    output_only: bool = False


class Catalog:
    """A private descriptor pool over ``files``, their comments, and message classes."""

    def __init__(self, files: Iterable[descriptor_pb2.FileDescriptorProto]) -> None:
        self.pool = descriptor_pool.DescriptorPool()
        self.comments: dict[str, str] = {}
        self.proto3_optional: set[str] = set()
        ordered = _in_dependency_order(files)
        for proto in ordered:
            try:
                self.pool.Add(proto)
            except Exception as exc:  # upb names the symbol in its message
                raise ConfigurationError(f"{proto.name}: not a valid file descriptor: {exc}") from None
            self.comments.update(_comments(proto))
            self.proto3_optional |= _proto3_optional(proto)
        self.file_names = [proto.name for proto in ordered]
        self._classes: dict[str, Any] = {}
        self._behavior_ext: Any = None
        self._field_options: Any = None
        try:
            self._behavior_ext = self.pool.FindExtensionByName("google.api.field_behavior")
            options = self.pool.FindMessageTypeByName("google.protobuf.FieldOptions")
            self._field_options = message_factory.GetMessageClass(options)
        except KeyError:
            pass

    def services(self) -> list[ServiceDescriptor]:
        found: list[ServiceDescriptor] = []
        for name in self.file_names:
            found.extend(self.pool.FindFileByName(name).services_by_name.values())
        return found

    def message_class(self, descriptor: Descriptor) -> Any:
        """The (cached) message class of ``descriptor``, from this catalog's pool."""
        cls = self._classes.get(descriptor.full_name)
        if cls is None:
            cls = message_factory.GetMessageClass(descriptor)
            self._classes[descriptor.full_name] = cls
        return cls

    def comment(self, full_name: str) -> str:
        raw = self.comments.get(full_name)
        return plain_text(raw) if raw else ""

    def behavior(self, field: Any) -> FieldBehavior:
        if self._behavior_ext is None or not field.has_options:
            return FieldBehavior()
        options = self._field_options.FromString(field.GetOptions().SerializeToString())
        values = set(options.Extensions[self._behavior_ext])
        return FieldBehavior(required=2 in values, output_only=3 in values)


def _matches(patterns: Sequence[str], *names: str) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns for name in names)


def wanted_service(services: Sequence[str] | None) -> Callable[[str], bool]:
    """Whether a service (by full name) passes the ``services`` filter (infrastructure only when named)."""
    def wanted(name: str) -> bool:
        short = name.rsplit(".", 1)[-1]
        if services is not None:
            return _matches(services, name, short)
        return not _matches(INFRASTRUCTURE, name)

    return wanted


def choose_methods(
    catalog: Catalog, services: Sequence[str] | None, methods: Sequence[str] | None,
    listed: Sequence[str] | None = None,
) -> list[MethodDescriptor]:
    """The methods a driver offers: those of the services and methods the filters name (globs
    over ``pkg.Service`` and ``pkg.Service/Method`` or ``Method``), all of them otherwise;
    infrastructure services only when named.

    Raises:
        ConfigurationError: a filter matches nothing (a typo would otherwise give no tools).
    """
    chosen: list[MethodDescriptor] = []
    all_services = catalog.services()
    wanted = wanted_service(services)
    for service in all_services:
        if not wanted(service.full_name):
            continue
        for method in service.methods:
            if methods is None or _matches(methods, f"{service.full_name}/{method.name}", method.name):
                chosen.append(method)
    if (services is not None or methods is not None) and not chosen:
        known = ", ".join(listed if listed is not None else [s.full_name for s in all_services]) or "none"
        raise ConfigurationError(
            f"the services/methods filters match no method; services: {known}"
        )
    return chosen


def idempotency_level(method: MethodDescriptor) -> int:
    """``MethodOptions.idempotency_level``: 0 unknown, 1 NO_SIDE_EFFECTS, 2 IDEMPOTENT."""
    return int(method.GetOptions().idempotency_level) if method.has_options else 0
