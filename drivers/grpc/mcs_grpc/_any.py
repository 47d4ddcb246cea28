"""What a model may pack in a ``google.protobuf.Any``, checked before anything is sent.

The tool's schema says only that an Any is ``@type`` and some fields. What a caller can rely
on once :meth:`AnyCheck.check` has passed:

* ``@type`` is ``type.googleapis.com/`` and the full name of a message in the driver's own
  descriptor pool: the service's ``.proto`` files and what they import. Any other name is
  refused (``INVALID_INPUT``), so a model cannot make the request carry a type the service
  does not know;
* the other keys are that message's fields, checked as a request of that message would be:
  the same JSON Schema (unknown fields, wrong types, integers out of range, base64 that is
  not base64, a missing ``REQUIRED`` field, an ``OUTPUT_ONLY`` field are refused) after the
  same normalisation (original field names, numbers for 64-bit integers, enum numbers);
* a packed well-known type with a JSON form of its own (Timestamp, Duration, Struct, Value,
  ListValue, FieldMask, a wrapper, Any) gives that form as ``value``, checked by its schema;
* an Any packed inside another is checked the same way, at most :data:`MAX_DEPTH` deep.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from google.protobuf.descriptor import Descriptor

from mcs.errors import InvalidInputError
from mcs.validation import ArgumentValidator
from mcs_grpc._messages import Normalizer
from mcs_grpc._schema import WELL_KNOWN, SchemaBuilder, is_map

ANY = "google.protobuf.Any"
_EMPTY = "google.protobuf.Empty"  # packed as its (no) fields, not as a "value"
#: How deep Anys may nest in one another.
MAX_DEPTH = 8


class AnyCheck:
    """Checks the ``google.protobuf.Any`` values of requests (see the module docstring)."""

    def __init__(self, pool: Any, schemas: SchemaBuilder, normalizer: Normalizer) -> None:
        self._pool = pool
        self._schemas = schemas
        self._normalizer = normalizer
        self._reaches: dict[str, bool] = {}
        self._validators: dict[str, ArgumentValidator] = {}

    def reaches_any(self, message: Descriptor) -> bool:
        """Whether a value of ``message`` can hold an Any (itself, or in a message it holds)."""
        name = message.full_name
        known = self._reaches.get(name)
        if known is not None:
            return known
        self._reaches[name] = name == ANY  # while walking: a message that holds itself adds nothing
        found = name == ANY or (name not in WELL_KNOWN and any(
            field.message_type is not None and self.reaches_any(field.message_type) for field in message.fields
        ))
        self._reaches[name] = found
        return found

    def check(self, value: Any, message: Descriptor, tool: str, *, as_sent: bool = False) -> Any:
        """``value`` (arguments valid for ``message``'s schema) with every Any in it checked
        and its fields normalised; the input is not modified. With ``as_sent`` (strict
        RFC-0001 serving) a packed message's fields must fit its schema as they are: the
        repairs made for what LLMs write (``"2"`` read as 2) are not made.

        Raises:
            InvalidInputError: an Any names a type outside the pool, its fields do not fit that
                message, or Anys nest deeper than :data:`MAX_DEPTH`; the message names the field.
        """
        return self._message(value, message, _Where(tool, as_sent), "", 0)

    def _message(self, value: Any, message: Descriptor, call: _Where, path: str, depth: int) -> Any:
        if message.full_name == ANY:
            return self._any(value, call, path, depth)
        if not isinstance(value, dict) or not self.reaches_any(message):
            return value
        out = dict(value)
        for field in message.fields:
            target = field.message_type
            key = field.json_name if field.json_name in value else field.name
            if target is None or key not in value:
                continue
            item, where = value[key], f"{path}.{key}" if path else key
            if is_map(field):
                inner = target.fields_by_name["value"].message_type
                if inner is not None and isinstance(item, dict) and self.reaches_any(inner):
                    out[key] = {k: self._message(v, inner, call, f"{where}[{k!r}]", depth) for k, v in item.items()}
            elif field.is_repeated:
                if isinstance(item, list) and self.reaches_any(target):
                    out[key] = [self._message(v, target, call, f"{where}[{i}]", depth) for i, v in enumerate(item)]
            elif self.reaches_any(target):
                out[key] = self._message(item, target, call, where, depth)
        return out

    def _any(self, value: Any, call: _Where, path: str, depth: int) -> Any:
        if not isinstance(value, dict) or not isinstance(value.get("@type"), str):
            return value  # the schema (type object, @type a string) refuses it
        if depth >= MAX_DEPTH:
            raise _refused(call, path, f"Anys nest more than {MAX_DEPTH} deep here; pack fewer levels")
        url = value["@type"]
        name = url.partition("/")[2]
        try:
            packed = self._pool.FindMessageTypeByName(name)
        except KeyError:
            raise _refused(
                call, path, f"@type {url!r} names no message of this service (its .proto files and their "
                "imports); give type.googleapis.com/ and the full name of one of its messages",
            ) from None
        fields = {k: v for k, v in value.items() if k != "@type"}
        if packed.full_name in WELL_KNOWN and packed.full_name != _EMPTY:
            checked = self._validated({"type": "object", "properties": {"value": WELL_KNOWN[packed.full_name]},
                                       "required": ["value"], "additionalProperties": False},
                                      packed.full_name + "#value", fields, call, path, url)
            if packed.full_name == ANY:
                checked = {"value": self._any(checked["value"], call, f"{path}.value" if path else "value", depth + 1)}
        else:
            normalised = self._normalizer.message(fields, packed)
            checked = self._validated(self._schemas.input_schema(packed), packed.full_name, normalised,
                                      call, path, url)
            checked = self._message(checked, packed, call, path, depth + 1)
        return {"@type": url, **checked}

    def _validated(self, schema: dict[str, Any], key: str, fields: dict[str, Any], call: _Where, path: str,
                   url: str) -> Any:
        """``fields`` checked by ``schema`` (and repaired, unless ``call.as_sent``), the
        validator kept under ``key``."""
        validator = self._validators.get(key)
        if validator is None:
            validator = self._validators[key] = ArgumentValidator(schema, key)
        try:
            return validator.validate_as_sent(fields) if call.as_sent else validator.validate(fields)
        except InvalidInputError as exc:
            reason = exc.message.removeprefix(f"Invalid arguments for {key}: ")
            raise _refused(call, path, f"its fields do not fit {url}: {reason}") from None


class _Where(NamedTuple):
    """The call a check is for: the tool's name, and whether its arguments count as sent."""

    name: str
    as_sent: bool


def _refused(call: _Where, path: str, reason: str) -> InvalidInputError:
    """The refusal of the Any at ``path`` (``""``: the request itself is the Any)."""
    where = path or "the request"
    return InvalidInputError(f"Invalid arguments for {call.name}: the Any in {where}: {reason}", tool=call.name,
                             details={"field": where, "reason": reason})
