"""The tools a CAN database becomes: one send tool per sendable message, and four shared ones.

* ``send_<Message>``: the message's signals as named physical arguments (units, ranges
  and choices from the database, narrowed by configured limits), plus ``dry_run``,
  ``period_ms`` (start or change a periodic send) and, for high-risk messages,
  ``approval_token``.
* ``read``: the latest decoded value(s) of a message or one signal, from the history.
* ``monitor``: a message's frames over a bounded time window, decoded, count-capped.
* ``stop_periodic``: stop one periodic send, or all of them.
* ``bus_status``: armed or not, periodic sends, allow-list, bus errors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from mcs.tools import Tool, unique_tool_names
from mcs_can._signals import Controls, MessageSpec, number

READ, MONITOR, STOP, STATUS = "read", "monitor", "stop_periodic", "bus_status"
SEND = "send"

_READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": True}
_SEND = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True}
_STOP = {"readOnlyHint": False, "destructiveHint": False, "idempotentHint": True, "openWorldHint": True}


@dataclass(frozen=True, slots=True)
class Limits:
    """What the shared tools' schemas promise."""

    history_size: int
    max_wait_s: float
    monitor_max_frames: int
    monitor_max_seconds: float
    min_period_ms: float


def send_tool(
    name: str, spec: MessageSpec, ranges: Mapping[str, tuple[float | None, float | None]],
    controls: Controls, *, high_risk: bool, min_period_ms: float,
) -> Tool:
    schema = spec.input_schema(ranges)
    properties = schema["properties"]
    properties[controls.dry_run] = {
        "type": "boolean", "default": False,
        "description": "Return the exact frame that would be sent, without sending it.",
    }
    properties[controls.period_ms] = {
        "type": "number", "minimum": number(min_period_ms), "maximum": 60000,
        "description": "Send every period_ms milliseconds until stop_periodic (or change a running "
                       "periodic send of this message); omit to send once.",
    }
    kind = "extended" if spec.is_extended else "standard"
    words = [f"Send {spec.name} (frame 0x{spec.frame_id:X}, {kind} id, {spec.length} bytes"
             f"{', CAN FD' if spec.is_fd else ''}{f', cycle {spec.cycle_time} ms' if spec.cycle_time else ''})."]
    if spec.comment:
        words.append(spec.comment)
    if spec.multiplexed:
        words.append("Multiplexed: the multiplexer values choose which signals the frame carries.")
    words.append("Refused unless the operator has armed the bus.")
    if high_risk:
        properties[controls.approval_token] = {
            "type": "string", "maxLength": 64,
            "description": "The token a first call returned; only the identical frame is sent with it, once.",
        }
        words.append("High risk: the first call returns the frame and an approval_token; call again with the "
                     "same arguments and that token to send it.")
    return Tool(
        name=name, description=" ".join(words), input_schema=schema, title=f"Send {spec.name}",
        annotations=_SEND, meta={"kind": SEND, "message": spec.name, "original_name": f"send_{spec.name}"},
    )


def shared_tools(messages: Sequence[str], sendable: Sequence[str], limits: Limits) -> list[Tool]:
    tools = []
    if messages:
        message = {"type": "string", "enum": list(messages), "description": "the message's name in the database"}
        tools.append(Tool(
            name=READ, title="Read the latest value",
            description="The latest decoded value(s) of a message, or of one of its signals, as last received "
                        "on the bus, with timestamps. Returns at once unless wait_s asks to wait for a new frame.",
            input_schema={
                "type": "object",
                "properties": {
                    "message": message,
                    "signal": {"type": "string", "maxLength": 128,
                               "description": "one signal of that message; omit for all"},
                    "count": {"type": "integer", "minimum": 1, "maximum": limits.history_size, "default": 1,
                              "description": "how many of the latest frames"},
                    "wait_s": {"type": "number", "minimum": 0, "maximum": limits.max_wait_s, "default": 0,
                               "description": "wait up to this long for a new frame"},
                },
                "required": ["message"], "additionalProperties": False,
            },
            annotations=_READ_ONLY, meta={"kind": READ},
        ))
        tools.append(Tool(
            name=MONITOR, title="Monitor a message",
            description="Collect a message's frames as they arrive over a time window, decoded, with "
                        "timestamps; stops at max_frames.",
            input_schema={
                "type": "object",
                "properties": {
                    "message": message,
                    "duration_s": {"type": "number", "exclusiveMinimum": 0, "maximum": limits.monitor_max_seconds,
                                   "default": min(1.0, limits.monitor_max_seconds),
                                   "description": "the window, in seconds"},
                    "max_frames": {"type": "integer", "minimum": 1, "maximum": limits.monitor_max_frames,
                                   "default": min(50, limits.monitor_max_frames)},
                },
                "required": ["message"], "additionalProperties": False,
            },
            annotations=_READ_ONLY, meta={"kind": MONITOR},
        ))
    if sendable:
        tools.append(Tool(
            name=STOP, title="Stop periodic sends",
            description="Stop the periodic send of one message, or every periodic send when message is omitted. "
                        "Always allowed.",
            input_schema={
                "type": "object",
                "properties": {"message": {"type": "string", "enum": list(sendable)}},
                "additionalProperties": False,
            },
            annotations=_STOP, meta={"kind": STOP},
        ))
    tools.append(Tool(
        name=STATUS, title="Bus status",
        description="Whether sending is armed, the periodic sends running, the messages that may be sent, "
                    "and bus errors.",
        input_schema={"type": "object", "properties": {}, "additionalProperties": False},
        annotations=_READ_ONLY, meta={"kind": STATUS},
    ))
    return tools


def send_names(messages: Sequence[str]) -> list[str]:
    """``send_<Message>`` for each message, in the provider alphabet and unique."""
    return unique_tool_names(f"send_{name}" for name in messages)
