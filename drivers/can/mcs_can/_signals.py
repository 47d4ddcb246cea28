"""What the driver knows of one message and its signals, computed once from cantools.

A :class:`MessageSpec` answers the questions a send asks on every call (which signals a
multiplexer value selects, a choice's physical value, the JSON Schema the LLM fills)
without walking cantools objects again.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from cantools.database.can import Message, Signal

from mcs.errors import InvalidInputError
from mcs.tools import visible_text

_MARKUP = re.compile(r"\s+")


def plain(text: Any) -> str:
    """A DBC comment as one line of plain text, without invisible format characters
    (:func:`mcs.tools.visible_text`: no words its reader cannot see)."""
    return _MARKUP.sub(" ", visible_text(str(text or ""))).strip()


def number(value: float) -> int | float:
    return int(value) if float(value).is_integer() else float(value)


@dataclass(frozen=True, slots=True)
class Controls:
    """The names of a send tool's own arguments (a signal of the same name pushes them to ``_name``)."""

    dry_run: str
    period_ms: str
    approval_token: str

    @staticmethod
    def for_signals(signals: Mapping[str, Any]) -> Controls:
        def free(name: str) -> str:
            while name in signals:
                name = "_" + name
            return name

        return Controls(free("dry_run"), free("period_ms"), free("approval_token"))


@dataclass(frozen=True, slots=True)
class SignalSpec:
    """One signal: physical range, choices by name, unit, comment and multiplexing."""

    name: str
    scale: float
    offset: float
    minimum: float | None
    maximum: float | None
    integer: bool
    choices: Mapping[str, int]  # name -> raw value
    covers_range: bool  # the choices name every raw value the range allows
    unit: str
    comment: str
    initial: Any  # physical value, or None: the caller must give it
    is_float: bool  # an IEEE float on the bus (no raw integer steps)
    is_multiplexer: bool
    mux_parent: str | None
    mux_ids: tuple[int, ...]

    @staticmethod
    def of(signal: Signal) -> SignalSpec:
        scale, offset = float(signal.scale), float(signal.offset)
        integer = not signal.is_float and scale.is_integer() and offset.is_integer()
        minimum, maximum = signal.minimum, signal.maximum
        if not signal.is_float and (minimum is None or maximum is None):
            low, high = (-(2 ** (signal.length - 1)), 2 ** (signal.length - 1) - 1) if signal.is_signed \
                else (0, 2**signal.length - 1)
            ends = sorted((low * scale + offset, high * scale + offset))
            minimum = ends[0] if minimum is None else minimum
            maximum = ends[1] if maximum is None else maximum
        choices = {str(name): int(raw) for raw, name in (signal.choices or {}).items()}
        covers = False
        if choices and minimum is not None and maximum is not None and scale:
            raw_ends = sorted(((minimum - offset) / scale, (maximum - offset) / scale))
            span = math.floor(raw_ends[1]) - math.ceil(raw_ends[0]) + 1
            covers = 0 < span <= len(choices) and all(
                raw in set(choices.values()) for raw in range(math.ceil(raw_ends[0]), math.floor(raw_ends[1]) + 1)
            )
        initial = signal.initial
        if initial is not None and not isinstance(initial, str | int | float):
            initial = str(getattr(initial, "name", initial))
        return SignalSpec(
            name=signal.name, scale=scale, offset=offset,
            minimum=None if minimum is None else float(minimum),
            maximum=None if maximum is None else float(maximum),
            integer=integer, choices=choices, covers_range=covers, unit=str(signal.unit or ""),
            comment=plain(signal.comment), initial=initial, is_float=bool(signal.is_float),
            is_multiplexer=bool(signal.is_multiplexer),
            mux_parent=signal.multiplexer_signal, mux_ids=tuple(signal.multiplexer_ids or ()),
        )

    def raw_of(self, value: Any) -> float:
        """The raw value ``value`` (a choice name or a physical number) encodes to."""
        if isinstance(value, str):
            return float(self.choices[value])
        return (float(value) - self.offset) / self.scale if self.scale else float(value)

    def physical_of(self, value: Any) -> float:
        """``value`` as a physical number (a choice name becomes its scaled raw value); an
        integer stays an exact integer (a float holds integers only up to 2**53)."""
        if isinstance(value, str):
            return self.choices[value] * self.scale + self.offset
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        return float(value)

    def noise(self, value: float) -> float:
        """How far the value a frame carries may lie from ``value`` by float arithmetic alone
        (a millionth of the resolution, or of the value for an IEEE float signal); farther
        is the resolution's rounding."""
        return 1e-6 * (max(1.0, abs(value)) if self.is_float else abs(self.scale) or 1.0)

    def numeric_schema(self, low: float | None, high: float | None) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "integer" if self.integer else "number"}
        if low is not None:
            schema["minimum"] = number(low)
        if high is not None:
            schema["maximum"] = number(high)
        return schema

    def schema(self, low: float | None, high: float | None, mux_note: str, mux_values: list[Any]) -> dict[str, Any]:
        """The argument's JSON Schema within ``[low, high]`` (the DBC range, narrowed by limits);
        a multiplexer's is the enum ``mux_values``."""
        words = [self.comment] if self.comment else []
        if self.unit:
            words.append(f"[{self.unit}]")
        if not self.integer and self.scale and not self.choices:
            words.append(f"resolution {number(self.scale)}")
        if mux_note:
            words.append(mux_note)
        if self.is_multiplexer:
            schema: dict[str, Any] = {"enum": mux_values}
        elif self.choices and self.covers_range:
            schema = {"type": "string", "enum": list(self.choices)}
        elif self.choices:
            schema = {"anyOf": [{"type": "string", "enum": list(self.choices)}, self.numeric_schema(low, high)]}
        else:
            schema = self.numeric_schema(low, high)
        if words:
            schema["description"] = " ".join(words)
        return schema


@dataclass(frozen=True, slots=True)
class SendPlan:
    """What every send of one message reuses, worked out once (on its first send).

    ``fixed``: the message is not multiplexed, so every send carries exactly ``names``.
    ``initials``: the DBC's initial values, for the signals a call leaves out.
    ``strict``: cantools' strict check must run on every encode. It is redundant, and
    skipped, only when the driver has already proven what it checks: the message is not
    multiplexed (every send carries exactly its signals, so cantools' "required" and
    "not required" checks cannot fail), the tool's validated schema enforces each given
    value's DBC range and choice names (a range narrowed by configured limits, never
    widened; cantools even lets a value past its range by a millionth of the scale), and
    cantools itself accepted every initial value once, here.
    """

    fixed: bool
    names: frozenset[str]
    initials: Mapping[str, Any]
    strict: bool


class MessageSpec:
    """One message of the database as the driver sends and decodes it."""

    def __init__(self, message: Message) -> None:
        self.message = message
        self.name: str = message.name
        self.frame_id: int = message.frame_id
        self.is_extended: bool = bool(message.is_extended_frame)
        self.length: int = int(message.length)
        self.is_fd: bool = bool(message.is_fd)
        self.comment = plain(message.comment)
        self.cycle_time: int | None = message.cycle_time
        self.signals: dict[str, SignalSpec] = {s.name: SignalSpec.of(s) for s in message.signals}
        self.mux_ids: dict[str, set[int]] = {}
        for spec in self.signals.values():
            if spec.mux_parent is not None:
                self.mux_ids.setdefault(spec.mux_parent, set()).update(spec.mux_ids)
        self.always = tuple(name for name, s in self.signals.items() if s.mux_parent is None)
        self.controls = Controls.for_signals(self.signals)
        #: Signals with configured limits (set by the driver).
        self.limited: tuple[str, ...] = ()

    @functools.cached_property
    def plan(self) -> SendPlan:
        """The message's :class:`SendPlan`, made on first use (then an attribute of the spec:
        every send reads it)."""
        initials = {name: s.initial for name, s in self.signals.items() if s.initial is not None}
        fixed = not self.mux_ids
        return SendPlan(fixed, frozenset(self.signals), initials,
                        strict=not fixed or not self._initials_encodable(initials))

    def _initials_encodable(self, initials: Mapping[str, Any]) -> bool:
        """Whether cantools' strict check accepts every DBC initial value: asked of cantools
        itself, with each signal that has no initial value at a value its check accepts
        (the minimum, or 0 for a signal without one)."""
        values = dict(initials)
        for signal in self.message.signals:
            if signal.name not in values:
                values[signal.name] = signal.minimum if signal.minimum is not None else 0
        try:
            self.message.assert_signals_encodable(values, scaling=True)
        except Exception:
            return False
        return True

    def limited_values(self, values: Mapping[str, Any], data: bytes) -> tuple[dict[str, float], dict[str, float]]:
        """The limited signals' physical values as the encoded ``data`` carries them (what the
        limits check; integers exact), and the values asked for those the signal's resolution
        rounded."""
        names = [name for name in self.limited if name in values]
        if not names:
            return {}, {}
        decoded: Mapping[str, Any] = self.message.decode(  # type: ignore[assignment]
            data, decode_choices=False, scaling=True)
        carried: dict[str, float] = {}
        rounded: dict[str, float] = {}
        for name in names:
            signal = self.signals[name]
            asked = signal.physical_of(values[name])
            sent = decoded[name]  # an int where the signal's scale and offset are whole: exact
            if abs(sent - asked) <= signal.noise(asked):
                carried[name] = sent if type(sent) is int else asked  # an int is exact; a float may carry noise
            else:
                carried[name] = sent
                rounded[name] = asked
        return carried, rounded

    @property
    def multiplexed(self) -> bool:
        return bool(self.mux_ids)

    def mux_values(self, name: str) -> list[Any]:
        """What a multiplexer accepts: its choice names for the values it selects, and the raw values."""
        spec = self.signals[name]
        ids = sorted(self.mux_ids.get(name, ()))
        named = [choice for choice, raw in spec.choices.items() if not ids or raw in ids]
        return [*named, *ids]

    def active(self, values: Mapping[str, Any]) -> list[str]:
        """The signals the multiplexer values in ``values`` select (all signals when not multiplexed)."""
        if not self.mux_ids:
            return list(self.signals)
        chosen = list(self.always)
        seen = set(chosen)
        index = 0
        while index < len(chosen):
            name = chosen[index]
            index += 1
            if name not in self.mux_ids or name not in values:
                continue
            raw = round(self.signals[name].raw_of(values[name]))
            for child, spec in self.signals.items():
                if spec.mux_parent == name and raw in spec.mux_ids and child not in seen:
                    seen.add(child)
                    chosen.append(child)
        return chosen

    def input_schema(self, ranges: Mapping[str, tuple[float | None, float | None]]) -> dict[str, Any]:
        """The signals as JSON Schema properties; ``ranges`` narrows a signal's DBC range.

        Required: every signal sent whatever the multiplexers say that has no DBC initial
        value, and the multiplexers themselves.
        """
        properties: dict[str, Any] = {}
        required: list[str] = []
        for name, spec in self.signals.items():
            low, high = ranges.get(name, (spec.minimum, spec.maximum))
            mux = self.mux_values(name) if spec.is_multiplexer else []
            properties[name] = spec.schema(low, high, self.mux_note(spec), mux)
            if spec.mux_parent is None and (spec.initial is None or spec.is_multiplexer):
                required.append(name)
        return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}

    def mux_note(self, spec: SignalSpec) -> str:
        if spec.mux_parent is None:
            return ""
        parent = self.signals[spec.mux_parent]
        names = {raw: choice for choice, raw in parent.choices.items()}
        shown = ", ".join(f"{raw} ({names[raw]})" if raw in names else str(raw) for raw in spec.mux_ids)
        return f"Only when {spec.mux_parent} is {shown}."

    def values_for(self, arguments: Mapping[str, Any], tool: str) -> dict[str, Any]:
        """The signal values to encode: the given ones, the DBC's initial values for the rest
        (``arguments`` itself when it is a dict of exactly every signal: read it, never change it).

        Raises:
            InvalidInputError: a signal outside the selected multiplexer branch, or a
                selected signal without a value and without a DBC initial value.
        """
        plan = self.plan
        if plan.fixed:  # not multiplexed: every signal, given or initial (the general path names what is missing)
            names = plan.names
            if len(arguments) == len(names) and names.issuperset(arguments):
                # Exactly every signal given: no initial value to add, nothing to drop. The caller's dict
                # itself (the encoder and the limits only read the values; nothing writes to them).
                return arguments if type(arguments) is dict else dict(arguments)
            fixed = dict(plan.initials)
            for name, value in arguments.items():
                if name in names:
                    fixed[name] = value
            if len(fixed) == len(names):
                return fixed
        given = {name: value for name, value in arguments.items() if name in self.signals}
        active = self.active(given)
        stray = sorted(set(given) - set(active))
        if stray:
            raise InvalidInputError(
                f"{', '.join(stray)} {'is' if len(stray) == 1 else 'are'} not sent with these multiplexer "
                f"values; with them {self.name} carries: {', '.join(active)}.",
                tool=tool, details={"signals": stray},
            )
        values: dict[str, Any] = {}
        missing = []
        for name in active:
            if name in given:
                values[name] = given[name]
            elif self.signals[name].initial is not None:
                values[name] = self.signals[name].initial
            else:
                missing.append(name)
        if missing:
            raise InvalidInputError(
                f"{self.name} needs a value for {', '.join(missing)} (the database gives no initial value).",
                tool=tool, details={"signals": missing},
            )
        return values


class SpecCache(Mapping[str, MessageSpec]):
    """Message specs by name, each built on first use (a large database loads faster)."""

    def __init__(self, messages: Iterable[Message]) -> None:
        self._messages = {message.name: message for message in messages}
        self._built: dict[str, MessageSpec] = {}

    def __getitem__(self, name: str) -> MessageSpec:
        spec = self._built.get(name)
        if spec is None:
            spec = self._built[name] = MessageSpec(self._messages[name])
        return spec

    def __contains__(self, name: object) -> bool:
        return name in self._messages

    def __iter__(self) -> Iterator[str]:
        return iter(self._messages)

    def __len__(self) -> int:
        return len(self._messages)
