"""Operations as tools: what each tool's input schema holds and how it becomes a publish or a read.

Publish tools take the channel parameters, ``payload`` (validated against the message's
schema) and ``dry_run``. Read tools take the channel parameters (optional: an omitted
one matches every value), ``mode`` (``latest`` or ``next``), ``count`` and ``wait_s``.
When a parameter's name collides with one of those, the parameters move under a
``parameters`` object. QoS and retain are never arguments: they are fixed here from the
spec's bindings or the driver's configuration.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mcs.errors import ConfigurationError
from mcs.tools import Tool, unique_tool_names
from mcs_mqtt._codec import Codec, kind_of
from mcs_mqtt._schema import attach_defs
from mcs_mqtt._spec import ApiSpec, Message, Operation
from mcs_mqtt._topics import NOT_IN_PUBLISH_TOPICS, TopicTemplate, check_publish_topic

PUBLISH_FIELDS = ("payload", "dry_run")
READ_FIELDS = ("mode", "count", "wait_s")
DISCOVER_TOOL = "discover_topics"
_OVERRIDE_KEYS = {"qos", "retain", "destructive", "clear_retained"}
_TOPIC_CACHE = 256


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on what a read returns and how long it waits."""

    max_count: int = 50
    default_wait: float = 2.0
    max_wait: float = 30.0
    max_payload_bytes: int = 65_536
    max_result_bytes: int = 262_144
    discover_window: float = 10.0
    max_topics: int = 200


@dataclass(slots=True)
class Plan:
    """One tool and what calling it does."""

    tool: Tool
    kind: str  # "publish" | "read" | "discover"
    template: TopicTemplate | None = None
    messages: tuple[Message, ...] = ()
    qos: int = 1
    retain: bool = False
    clear_retained: bool = False  # the operator allows an empty payload to delete the retained value
    nested: bool = False  # the channel parameters sit under "parameters"
    validators: list[Any] = field(default_factory=list)
    mixed: bool = False  # messages of different content types: the payload picks one
    topics: dict[tuple[Any, ...], str] = field(default_factory=dict)  # checked publish topics, by parameters
    codec: Codec = field(init=False)  # the first message's content type (JSON without messages)

    def __post_init__(self) -> None:
        self.codec = _codec(self.messages[0].content_type if self.messages else "application/json")

    def _parameter_source(self, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
        """Where the channel parameters are: the arguments, or their ``parameters`` object."""
        if not self.nested:
            return arguments
        nested = arguments.get("parameters")
        return nested if isinstance(nested, Mapping) else {}

    def parameters(self, arguments: Mapping[str, Any]) -> dict[str, Any]:
        source = self._parameter_source(arguments)
        if self.nested:
            return dict(source)
        names = self.template.names if self.template is not None else ()
        return {name: source[name] for name in names if name in source}

    def publish_topic(self, arguments: Mapping[str, Any], tool: str) -> str:
        """The concrete topic a publish goes to, every parameter and the topic checked
        (``INVALID_INPUT`` otherwise). Topics already built from the same text values are
        reused (up to ``_TOPIC_CACHE`` of them): the checks depend on nothing else."""
        assert self.template is not None
        key = tuple(map(self._parameter_source(arguments).get, self.template.names))
        topic = self.topics.get(key)
        if topic is not None:
            return topic
        topic = self.template.topic(self.parameters(arguments), tool)
        check_publish_topic(topic, tool)
        if all(type(value) is str for value in key):  # True and 1 are equal keys but different topics
            if len(self.topics) >= _TOPIC_CACHE:
                self.topics.clear()
            self.topics[key] = topic
        return topic

    def codec_for(self, payload: Any) -> Codec:
        """The content type of the first message whose schema accepts ``payload``."""
        if not self.mixed:
            return self.codec
        if not self.validators:
            import jsonschema_rs

            self.validators = [
                jsonschema_rs.validator_for(m.schema) if isinstance(m.schema, dict | bool) else None
                for m in self.messages
            ]
        for message, validator in zip(self.messages, self.validators, strict=True):
            if validator is None or validator.is_valid(payload):
                return _codec(message.content_type)
        return self.codec


@functools.lru_cache(maxsize=64)
def _codec(content_type: str) -> Codec:
    return Codec(content_type)


def _payload_schema(message: Message) -> dict[str, Any]:
    if message.schema is None:
        schema: dict[str, Any] = {} if kind_of(message.content_type) == "json" else {"type": "string"}
    elif isinstance(message.schema, bool):
        schema = {} if message.schema else {"not": {}}
    else:
        schema = dict(message.schema)
    if kind_of(message.content_type) == "binary":
        schema = {"type": "string", "contentEncoding": "base64", "contentMediaType": message.content_type}
    if message.description and "description" not in schema:
        schema["description"] = message.description
    return schema


def _parameter_block(op: Operation) -> dict[str, Any]:
    return {p.name: dict(p.schema) for p in op.parameters}


class ToolBuilder:
    """Builds every plan of a spec with the driver's configuration applied."""

    def __init__(self, spec: ApiSpec, *, default_qos: int, default_retain: bool, destructive: bool,
                 overrides: Mapping[str, Mapping[str, Any]], read_only: bool, limits: Limits,
                 format_characters: bool = False) -> None:
        self.spec = spec
        self.default_qos = default_qos
        self.default_retain = default_retain
        self.destructive = destructive
        self.overrides = overrides
        self.read_only = read_only
        self.limits = limits
        self.format_characters = format_characters  # channel parameters may hold invisible format characters
        for name, override in overrides.items():
            if name not in {op.name for op in spec.operations}:
                raise ConfigurationError(f"operations: the spec has no operation {name!r}")
            unknown = set(override) - _OVERRIDE_KEYS
            if unknown:
                raise ConfigurationError(
                    f"operations.{name}: unknown key(s) {sorted(unknown)}; allowed: {', '.join(sorted(_OVERRIDE_KEYS))}"
                )
            if "qos" in override and override["qos"] not in (0, 1, 2):
                raise ConfigurationError(f"operations.{name}.qos must be 0, 1 or 2")
            if not isinstance(override.get("clear_retained", False), bool):
                raise ConfigurationError(f"operations.{name}.clear_retained must be true or false")

    def plans(self) -> list[Plan]:
        ops = [op for op in self.spec.operations if not (self.read_only and op.action == "send")]
        extra = [DISCOVER_TOOL] if self.spec.discover is not None else []
        names = unique_tool_names([op.name for op in ops] + extra)
        plans = [self._plan(op, name) for op, name in zip(ops, names, strict=False)]
        if extra:
            plans.append(self._discover(names[-1]))
        return plans

    def _setting(self, op: Operation, key: str, spec_value: Any, default: Any) -> Any:
        override = self.overrides.get(op.name, {})
        if key in override:
            return override[key]
        return spec_value if spec_value is not None else default

    def _plan(self, op: Operation, name: str) -> Plan:
        template = TopicTemplate.of(op.address, format_characters=self.format_characters)
        if op.action == "send":
            literal = "".join(template.literals)
            if not op.address or any(c in literal for c in NOT_IN_PUBLISH_TOPICS):
                raise ConfigurationError(
                    f"operation {op.name!r} publishes to {op.address!r}, which is no topic one can publish to "
                    "(a wildcard '+' or '#', NUL, or empty); give the channel a concrete address"
                )
        qos = int(self._setting(op, "qos", op.qos, self.default_qos))
        retain = bool(self._setting(op, "retain", op.retain, self.default_retain))
        clear_retained = bool(self.overrides.get(op.name, {}).get("clear_retained", False))
        if clear_retained and not (retain and op.action == "send"):
            raise ConfigurationError(
                f"operations.{op.name}.clear_retained: the operation does not publish retained messages, "
                "so there is no retained value to clear"
            )
        reserved = PUBLISH_FIELDS if op.action == "send" else READ_FIELDS
        nested = any(p.name in reserved or p.name == "parameters" for p in op.parameters)
        properties: dict[str, Any] = {}
        required: list[str] = []
        params = _parameter_block(op)
        if nested and params:
            properties["parameters"] = {"type": "object", "properties": params, "additionalProperties": False,
                                        **({"required": list(params)} if op.action == "send" else {})}
            if op.action == "send":
                required.append("parameters")
        else:
            properties.update(params)
            if op.action == "send":
                required.extend(params)
        if op.action == "send":
            plan_kind = "publish"
            description = self._publish_text(op, qos, retain, clear_retained)
            payloads = [_payload_schema(m) for m in op.messages]
            properties["payload"] = payloads[0] if len(payloads) == 1 else {"anyOf": payloads}
            if any(m.schema is not None for m in op.messages):
                required.append("payload")
            properties["dry_run"] = {
                "type": "boolean", "default": False,
                "description": "true: return the exact topic, payload bytes, QoS and retain flag without sending.",
            }
            destructive = self._setting(op, "destructive", op.destructive, self.destructive)
            annotations = {"readOnlyHint": False, "destructiveHint": bool(destructive), "openWorldHint": True}
        else:
            plan_kind = "read"
            description = self._read_text(op)
            limits = self.limits
            properties["mode"] = {
                "type": "string", "enum": ["latest", "next"], "default": "latest",
                "description": "latest: the newest value of each matching topic (retained or already seen); "
                               "next: wait for messages that arrive from now on.",
            }
            properties["count"] = {"type": "integer", "minimum": 1, "maximum": limits.max_count, "default": 1,
                                   "description": "How many messages (next) or topics (latest) at most."}
            properties["wait_s"] = {"type": "number", "minimum": 0, "maximum": limits.max_wait,
                                    "default": limits.default_wait,
                                    "description": "How long to wait, in seconds, when nothing is there yet."}
            annotations = {"readOnlyHint": True, "openWorldHint": True}
        schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
        if required:
            schema["required"] = required
        needed = attach_defs(schema, self.spec.defs)
        tool = Tool(
            name=name,
            title=op.summary if op.description and op.summary and op.summary != op.description else None,
            description=description,
            input_schema=needed,
            annotations=annotations,
            meta={"original_name": op.name, "action": op.action, "topic": op.address, "qos": qos,
                  "retain": retain if op.action == "send" else None},
        )
        return Plan(tool=tool, kind=plan_kind, template=template, messages=op.messages, qos=qos,
                    retain=retain, clear_retained=clear_retained, nested=nested and bool(params),
                    mixed=len({m.content_type for m in op.messages}) > 1)

    def _publish_text(self, op: Operation, qos: int, retain: bool, clear_retained: bool) -> str:
        head = op.description or op.summary or (op.messages[0].description if op.messages else "")
        flags = f"QoS {qos}, {'retained' if retain else 'not retained'}"
        kinds = sorted({m.content_type for m in op.messages})
        text = f"Publishes one message to the MQTT topic {op.address} ({flags}; payload as {', '.join(kinds)})."
        if any(kind_of(k) == "binary" for k in kinds):
            text += " The payload is base64 text."
        if retain:
            text += (" An empty payload deletes the broker's retained value of the topic." if clear_retained else
                     " An empty payload is refused: it would delete the broker's retained value of the topic.")
        return f"{head}\n{text}" if head else text

    def _read_text(self, op: Operation) -> str:
        head = op.description or op.summary or (op.messages[0].description if op.messages else "")
        text = (f"Reads messages from the MQTT topic {op.address}: mode latest gives the newest value of each "
                "matching topic, mode next waits up to wait_s seconds for up to count new messages.")
        if op.parameters:
            text += f" Omit {', '.join(p.name for p in op.parameters)} to read every value of it."
        return f"{head}\n{text}" if head else text

    def _discover(self, name: str) -> Plan:
        limits = self.limits
        filters = ", ".join(self.spec.discover or ())
        schema = {
            "type": "object",
            "properties": {
                "window_s": {"type": "number", "minimum": 0.1, "maximum": limits.discover_window,
                             "default": min(2.0, limits.discover_window),
                             "description": "How long to listen, in seconds."},
                "max_topics": {"type": "integer", "minimum": 1, "maximum": limits.max_topics,
                               "default": min(50, limits.max_topics)},
            },
            "additionalProperties": False,
        }
        tool = Tool(
            name=name,
            description=(f"Lists the MQTT topics seen on {filters} within a short window: retained topics at "
                         "once, live ones as they publish; with a message count and a preview of the last payload."),
            input_schema=schema,
            annotations={"readOnlyHint": True, "openWorldHint": True},
            meta={"original_name": DISCOVER_TOOL, "action": "discover"},
        )
        return Plan(tool=tool, kind="discover")
