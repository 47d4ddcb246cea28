"""From an AsyncAPI document (2.0-2.6, 3.x) or a topic map to the operations the driver offers.

AsyncAPI 2.x names operations from the point of view of *other* applications: a channel's
``publish`` operation is what the described application *receives*, ``subscribe`` what it
*sends* (the same flip the 3.0 migration guide makes explicit). 3.x says ``action: send``
or ``action: receive``. Either way the driver acts as the described application: it
publishes what the application sends and reads what it receives.

QoS and retain come from the MQTT bindings of the operation (and its traits); content
types from the message, else ``defaultContentType``, else JSON.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from mcs.tools import visible_text
from mcs_mqtt._refs import Documents, SpecError, pointer_of
from mcs_mqtt._schema import SchemaConverter, plain_text

Action = Literal["send", "receive"]
DEFAULT_CONTENT_TYPE = "application/json"
_PARAM = re.compile(r"\{([^{}]+)\}")
_MQTT_PROTOCOLS = {"mqtt": False, "mqtts": True, "secure-mqtt": True, "mqtt5": False, "tcp": False,
                   "ssl": True, "tls": True}


@dataclass(frozen=True, slots=True)
class Parameter:
    """A channel parameter: one topic level the caller fills (``{streetlightId}``)."""

    name: str
    schema: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Message:
    """One message an operation carries: its payload schema and content type."""

    name: str
    content_type: str
    schema: Any  # a JSON Schema, or None when the spec gives none (any value)
    description: str = ""


@dataclass(slots=True)
class Operation:
    """One send or receive operation on one channel, ready to become a tool."""

    name: str
    action: Action
    address: str
    parameters: tuple[Parameter, ...]
    messages: tuple[Message, ...]
    summary: str = ""
    description: str = ""
    qos: int | None = None
    retain: bool | None = None
    destructive: bool | None = None
    where: str = ""


@dataclass(frozen=True, slots=True)
class Server:
    """A broker named by the spec (used when no ``host`` option is given)."""

    host: str
    port: int | None
    tls: bool
    client_id: str | None = None
    clean_session: bool | None = None
    keepalive: int | None = None


@dataclass(slots=True)
class ApiSpec:
    """What the driver needs from a spec or a topic map."""

    title: str
    version: str
    spec_format: str
    location: str
    operations: list[Operation]
    servers: dict[str, Server] = field(default_factory=dict)
    discover: tuple[str, ...] | None = None  # topic maps: filters the discovery tool watches
    discover_default: bool = False  # the map named none: its own channels, or "#" where subscribe_allow allows it
    defs: dict[str, Any] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)


def load(spec: str | os.PathLike[str] | Mapping[str, Any]) -> ApiSpec:
    """Load an AsyncAPI document or a topic map (told apart by their ``asyncapi``/``topics`` key).

    Raises:
        SpecError: the file cannot be read or is not a usable spec; the message names the
            file and the place.
    """
    docs = Documents.load(spec)
    root = docs.root
    if not isinstance(root, Mapping):
        raise SpecError(docs.location, "", "is not a mapping (expected an AsyncAPI document or a topic map)")
    if "asyncapi" in root:
        return _AsyncApi(docs).load()
    if "topics" in root:
        from mcs_mqtt._topicmap import load_topic_map

        return load_topic_map(docs)
    raise SpecError(docs.location, "", "has neither an 'asyncapi' version nor a 'topics' map")


def merged(base: Any, overlay: Any) -> Any:
    """Trait merging: ``overlay`` (the object itself) wins over ``base`` (its traits), deeply."""
    if isinstance(base, Mapping) and isinstance(overlay, Mapping):
        out = dict(base)
        for key, value in overlay.items():
            out[key] = merged(out[key], value) if key in out else value
        return out
    return overlay


def parameter_names(address: str) -> list[str]:
    """The ``{names}`` of a channel address, in order."""
    return _PARAM.findall(address)


class _AsyncApi:
    def __init__(self, docs: Documents) -> None:
        self.docs = docs
        self.root: Mapping[str, Any] = docs.root
        self.doc = docs.location
        version = str(self.root.get("asyncapi", ""))
        major = version.split(".", 1)[0]
        if major not in ("2", "3"):
            raise SpecError(self.doc, "#/asyncapi", f"AsyncAPI {version!r} is not supported (2.0-2.6 and 3.x are)")
        self.version = version
        self.v3 = major == "3"
        self.converter = SchemaConverter(docs)
        self.default_content_type = str(self.root.get("defaultContentType") or DEFAULT_CONTENT_TYPE)

    def load(self) -> ApiSpec:
        info = self.root.get("info") if isinstance(self.root.get("info"), Mapping) else {}
        assert isinstance(info, Mapping)
        spec = ApiSpec(
            title=visible_text(str(info.get("title") or "")) or "mqtt",
            version=str(info.get("version") or ""),
            spec_format=f"AsyncAPI {self.version}",
            location=self.doc,
            operations=[],
            servers=self._servers(),
        )
        spec.operations = self._operations_v3(spec) if self.v3 else self._operations_v2()
        spec.defs = self.converter.defs
        return spec

    # ------------------------------------------------------------------ helpers

    def _map(self, node: Any, where: str, what: str) -> Mapping[str, Any]:
        node, _, _ = self.docs.deref(node, self.doc, where)
        if node is None:
            return {}
        if not isinstance(node, Mapping):
            raise SpecError(self.doc, where, f"{what} must be an object")
        return node

    def _with_traits(self, node: Mapping[str, Any], where: str) -> Mapping[str, Any]:
        traits = node.get("traits")
        if not isinstance(traits, list):
            return node
        result: Any = {}
        for index, trait in enumerate(traits):
            trait_node = self._map(trait, f"{where}/traits/{index}", "a trait")
            result = merged(result, trait_node)
        return dict(merged(result, {k: v for k, v in node.items() if k != "traits"}))

    def _servers(self) -> dict[str, Server]:
        servers = self.root.get("servers")
        found: dict[str, Server] = {}
        if not isinstance(servers, Mapping):
            return found
        for name, raw in servers.items():
            where = pointer_of(["servers", str(name)])
            node = self._map(raw, where, "a server")
            protocol = str(node.get("protocol") or "").lower()
            if protocol not in _MQTT_PROTOCOLS:
                continue
            address = str(node.get("host") if self.v3 else node.get("url") or "")
            variables = node.get("variables") if isinstance(node.get("variables"), Mapping) else {}
            assert isinstance(variables, Mapping)

            def value(match: re.Match[str], variables: Mapping[str, Any] = variables) -> str:
                var = variables.get(match.group(1))
                return str(var.get("default", "")) if isinstance(var, Mapping) else ""

            address = _PARAM.sub(value, address)
            parsed = urlsplit(address if "://" in address else f"//{address}")
            try:
                port = parsed.port
            except ValueError:
                port = None
            binding = _mqtt_binding(node)
            found[str(name)] = Server(
                host=parsed.hostname or "",
                port=port,
                tls=_MQTT_PROTOCOLS[protocol] or parsed.scheme in ("mqtts", "ssl", "wss"),
                client_id=_str_or_none(binding.get("clientId")),
                clean_session=binding.get("cleanSession") if isinstance(binding.get("cleanSession"), bool) else None,
                keepalive=binding.get("keepAlive") if isinstance(binding.get("keepAlive"), int) else None,
            )
        return found

    def _parameters(self, raw: Any, address: str, where: str) -> tuple[Parameter, ...]:
        declared = self._map(raw, f"{where}/parameters", "parameters") if raw is not None else {}
        params = []
        for name in parameter_names(address):
            place = f"{where}/parameters/{name}"
            node, doc, pointer = self.docs.deref(declared.get(name, {}), self.doc, place)
            if not isinstance(node, Mapping):
                raise SpecError(self.doc, place, "a parameter must be an object")
            if "schema" in node:  # 2.x: a full schema
                schema = self.converter.convert(node["schema"], doc, f"{pointer}/schema")
                schema = dict(schema) if isinstance(schema, Mapping) else {}
            else:  # 3.x: enum / default / examples, always strings
                schema = {"type": "string"}
                for key in ("enum", "default", "examples"):
                    if isinstance(node.get(key), list | str):
                        schema[key] = node[key]
            description = plain_text(node.get("description"))
            if description:
                schema["description"] = description
            params.append(Parameter(name, schema))
        return tuple(params)

    def _message(self, raw: Any, where: str, fallback_name: str) -> Message:
        node, doc, pointer = self.docs.deref(raw, self.doc, where)
        if not isinstance(node, Mapping):
            raise SpecError(self.doc, where, "a message must be an object")
        node = self._with_traits(node, pointer)
        content_type = str(node.get("contentType") or self.default_content_type)
        payload = node.get("payload")
        schema: Any = None
        if payload is not None:
            schema_format = ""
            if self.v3 and isinstance(payload, Mapping) and "schemaFormat" in payload and "schema" in payload:
                schema_format, payload = str(payload["schemaFormat"]), payload["schema"]
            if not schema_format or "schema+json" in schema_format or "asyncapi" in schema_format:
                schema = self.converter.convert(payload, doc, f"{pointer}/payload")
        description = plain_text(node.get("description") or node.get("summary") or node.get("title"))
        name = str(node.get("name") or fallback_name)
        return Message(name=name, content_type=content_type, schema=schema, description=description)

    def _op_fields(self, op: Mapping[str, Any]) -> dict[str, Any]:
        binding = _mqtt_binding(op)
        qos = binding.get("qos")
        retain = binding.get("retain")
        destructive = op.get("x-mcs-destructive")
        return {
            "summary": plain_text(op.get("summary")),
            "description": plain_text(op.get("description")),
            "qos": qos if isinstance(qos, int) and qos in (0, 1, 2) else None,
            "retain": retain if isinstance(retain, bool) else None,
            "destructive": destructive if isinstance(destructive, bool) else None,
        }

    # ------------------------------------------------------------------ 2.x

    def _operations_v2(self) -> list[Operation]:
        channels = self.root.get("channels")
        operations: list[Operation] = []
        if not isinstance(channels, Mapping):
            return operations
        for address, raw in channels.items():
            where = pointer_of(["channels", str(address)])
            channel = self._map(raw, where, "a channel")
            params: tuple[Parameter, ...] | None = None
            # 2.x 'subscribe': others subscribe to what the application sends.
            for verb, action in (("subscribe", "send"), ("publish", "receive")):
                if verb not in channel:
                    continue
                op_where = f"{where}/{verb}"
                op = self._with_traits(self._map(channel[verb], op_where, "an operation"), op_where)
                if params is None:
                    params = self._parameters(channel.get("parameters"), str(address), where)
                messages = self._messages_v2(op.get("message"), f"{op_where}/message", str(address))
                name = str(op.get("operationId") or f"{action}_{address}")
                operations.append(Operation(
                    name=name, action=action, address=str(address), parameters=params,  # type: ignore[arg-type]
                    messages=messages, where=op_where, **self._op_fields(op),
                ))
        return operations

    def _messages_v2(self, raw: Any, where: str, address: str) -> tuple[Message, ...]:
        if raw is None:
            return (Message(name=address, content_type=self.default_content_type, schema=None),)
        node, _, _ = self.docs.deref(raw, self.doc, where)
        if isinstance(node, Mapping) and isinstance(node.get("oneOf"), list) and "payload" not in node:
            return tuple(self._message(m, f"{where}/oneOf/{i}", f"{address}_{i}") for i, m in enumerate(node["oneOf"]))
        return (self._message(raw, where, address),)

    # ------------------------------------------------------------------ 3.x

    def _operations_v3(self, spec: ApiSpec) -> list[Operation]:
        ops = self.root.get("operations")
        operations: list[Operation] = []
        if not isinstance(ops, Mapping):
            return operations
        for key, raw in ops.items():
            where = pointer_of(["operations", str(key)])
            op = self._with_traits(self._map(raw, where, "an operation"), where)
            action = op.get("action")
            if action not in ("send", "receive"):
                raise SpecError(self.doc, f"{where}/action", f"action must be 'send' or 'receive', got {action!r}")
            channel_ref = op.get("channel")
            if not isinstance(channel_ref, Mapping) or not isinstance(channel_ref.get("$ref"), str):
                raise SpecError(self.doc, f"{where}/channel", "an operation names its channel with a $ref")
            channel, _, channel_where = self.docs.deref(channel_ref, self.doc, f"{where}/channel")
            if not isinstance(channel, Mapping):
                raise SpecError(self.doc, channel_where, "a channel must be an object")
            address = channel.get("address", channel_where.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~"))
            if not isinstance(address, str) or not address:
                spec.skipped.append(f"{key}: its channel has no address (dynamic); no tool")
                continue
            params = self._parameters(channel.get("parameters"), address, channel_where)
            raw_messages = op.get("messages")
            if isinstance(raw_messages, list) and raw_messages:
                messages = tuple(
                    self._message(m, f"{where}/messages/{i}", f"{key}_{i}") for i, m in enumerate(raw_messages)
                )
            else:
                channel_messages = self._map(channel.get("messages"), f"{channel_where}/messages", "messages")
                messages = tuple(
                    self._message(m, f"{channel_where}/messages/{name}", str(name))
                    for name, m in channel_messages.items()
                ) or (Message(name=str(key), content_type=self.default_content_type, schema=None),)
            operations.append(Operation(
                name=str(key), action=action, address=address, parameters=params, messages=messages,
                where=where, **self._op_fields(op),
            ))
        return operations


def _mqtt_binding(node: Mapping[str, Any]) -> Mapping[str, Any]:
    bindings = node.get("bindings")
    if isinstance(bindings, Mapping):
        mqtt = bindings.get("mqtt") or bindings.get("mqtt5")
        if isinstance(mqtt, Mapping):
            return mqtt
    return {}


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
