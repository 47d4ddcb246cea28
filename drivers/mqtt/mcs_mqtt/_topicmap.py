"""The topic map: a short YAML file for brokers that have no AsyncAPI document.

    name: plant                          # optional: the driver's name
    content_type: application/json       # optional: the default for every topic
    discover: ["plant/+/temp"]           # optional: what discover_topics watches (default: the
                                         # map's own topics; wider, such as "plant/#" or "#",
                                         # only where the subscribe_allow option allows it)
    topics:
      line_temperature:                  # the tool's name
        topic: plant/{line}/temp         # {line} is one topic level the caller fills
        action: receive                  # receive (a read tool) or send (a publish tool)
        description: Temperature of a production line, in Celsius.
        parameters: {line: {enum: [line1, line2]}}   # a JSON Schema per parameter
        payload: {type: object, properties: {celsius: {type: number}}}
      valve_setpoint:
        topic: plant/{line}/valve/setpoint
        action: send
        payload: {type: object, properties: {setpoint_c: {type: number, maximum: 120}},
                  required: [setpoint_c], additionalProperties: false}
        qos: 1                           # optional: QoS and retain are configuration only
        retain: false
        destructive: true                # optional: false drops the destructiveHint

Schemas may use ``$ref`` into the same file. Unknown keys are refused, so a typo does not
silently change what is published.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcs.tools import visible_text
from mcs_mqtt._refs import Documents, SpecError, pointer_of
from mcs_mqtt._schema import SchemaConverter, plain_text
from mcs_mqtt._spec import (
    DEFAULT_CONTENT_TYPE,
    ApiSpec,
    Message,
    Operation,
    Parameter,
    parameter_names,
)

_ROOT_KEYS = {"name", "title", "version", "description", "content_type", "discover", "topics"}
_TOPIC_KEYS = {"topic", "action", "description", "summary", "parameters", "payload", "content_type",
               "qos", "retain", "destructive"}


def load_topic_map(docs: Documents) -> ApiSpec:
    root = docs.root
    doc = docs.location
    unknown = sorted(set(root) - _ROOT_KEYS)
    if unknown:
        raise SpecError(doc, "#", f"unknown key(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(sorted(_ROOT_KEYS))}")
    topics = root.get("topics")
    if not isinstance(topics, Mapping) or not topics:
        raise SpecError(doc, "#/topics", "must map tool names to topics")
    default_type = str(root.get("content_type") or DEFAULT_CONTENT_TYPE)
    converter = SchemaConverter(docs)
    operations = [
        _operation(str(name), entry, doc, converter, default_type) for name, entry in topics.items()
    ]
    discover = root.get("discover", ["#"])
    default = "discover" not in root
    if isinstance(discover, str):
        discover = [discover]
    if not isinstance(discover, list) or not all(isinstance(f, str) and f for f in discover):
        raise SpecError(doc, "#/discover", "must be a list of topic filters")
    return ApiSpec(
        title=visible_text(str(root.get("name") or root.get("title") or "")) or "mqtt",
        version=str(root.get("version") or ""),
        spec_format="MQTT topic map",
        location=doc,
        operations=operations,
        discover=tuple(discover),
        discover_default=default,
        defs=converter.defs,
    )


def _operation(name: str, entry: Any, doc: str, converter: SchemaConverter, default_type: str) -> Operation:
    where = pointer_of(["topics", name])
    if not isinstance(entry, Mapping):
        raise SpecError(doc, where, "must be an object with at least 'topic' and 'action'")
    unknown = sorted(set(entry) - _TOPIC_KEYS)
    if unknown:
        raise SpecError(doc, where, f"unknown key(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(sorted(_TOPIC_KEYS))}")
    topic = entry.get("topic")
    if not isinstance(topic, str) or not topic:
        raise SpecError(doc, f"{where}/topic", "must be a topic such as plant/{line}/temp")
    action = entry.get("action")
    if action not in ("send", "receive"):
        raise SpecError(doc, f"{where}/action", f"must be 'send' or 'receive', got {action!r}")
    declared = entry.get("parameters") or {}
    if not isinstance(declared, Mapping):
        raise SpecError(doc, f"{where}/parameters", "must map parameter names to JSON Schemas")
    names = parameter_names(topic)
    extra = sorted(set(map(str, declared)) - set(names))
    if extra:
        raise SpecError(doc, f"{where}/parameters", f"{', '.join(extra)} not in the topic {topic!r}")
    params = []
    for pname in names:
        schema = converter.convert(declared.get(pname, {}), doc, f"{where}/parameters/{pname}")
        schema = dict(schema) if isinstance(schema, Mapping) else {}
        schema.setdefault("type", "string")
        params.append(Parameter(pname, schema))
    payload = entry.get("payload")
    schema = converter.convert(payload, doc, f"{where}/payload") if payload is not None else None
    qos = entry.get("qos")
    if qos is not None and qos not in (0, 1, 2):
        raise SpecError(doc, f"{where}/qos", "must be 0, 1 or 2")
    for flag in ("retain", "destructive"):
        if entry.get(flag) is not None and not isinstance(entry.get(flag), bool):
            raise SpecError(doc, f"{where}/{flag}", "must be true or false")
    content_type = str(entry.get("content_type") or default_type)
    return Operation(
        name=name,
        action=action,
        address=topic,
        parameters=tuple(params),
        messages=(Message(name=name, content_type=content_type, schema=schema),),
        summary=plain_text(entry.get("summary")),
        description=plain_text(entry.get("description")),
        qos=qos,
        retain=entry.get("retain"),
        destructive=entry.get("destructive"),
        where=where,
    )
