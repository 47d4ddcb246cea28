"""Values in and out: arguments to zeep's keyword arguments, zeep's results to JSON.

Results (what a caller can rely on):

* zeep objects become plain dicts (element order kept) and lists; ``None`` stays ``None``.
* ``xsd:decimal`` becomes a string (every digit kept); dates, times and date-times their
  ISO 8601 text; durations ISO 8601 (``P1DT2H``); ``base64Binary`` base64 text; XML
  content of ``any`` its serialised XML text; QNames their ``{namespace}local`` text.
* Integers beyond the 53 bits a JSON number keeps exactly in JavaScript (``xsd:long``,
  ``unsignedLong``, ``integer``) become decimal strings; smaller ones stay numbers.
* A result whose JSON text is over the cap is cut: lists lose their tail and long strings
  their end, each cut marked ``[truncated ...]``.

Arguments: validated JSON is what zeep accepts, except ``any`` content, which arrives as
XML text and is parsed here with a hardened parser (no DTD, no entity, no network).
"""

from __future__ import annotations

import base64
import datetime
import decimal
import json
from collections.abc import Mapping
from typing import Any

import isodate  # type: ignore[import-untyped]
from lxml import etree
from zeep import helpers as _helpers
from zeep.xsd import Any as AnyElement
from zeep.xsd import ComplexType, Element, Group

from mcs.errors import InvalidInputError
from mcs_soap._xsd import safe_parser

serialize_object: Any = _helpers.serialize_object
SAFE_INTEGER = 2**53 - 1
_MAX_XML_ARGUMENT = 256 * 1024


def to_json(value: Any) -> Any:
    """A zeep result as JSON-safe Python values (see the module docstring)."""
    return _jsonable(serialize_object(value, dict))


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, bool | str | float):
        return value
    if isinstance(value, int):
        return value if -SAFE_INTEGER <= value <= SAFE_INTEGER else str(value)
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, decimal.Decimal):
        return format(value, "f") if value.is_finite() else str(value)
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, datetime.timedelta | isodate.Duration):
        return str(isodate.duration_isoformat(value))
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, etree._Element):
        return etree.tostring(value, encoding="unicode")
    if isinstance(value, etree.QName):
        return value.text
    serialized = serialize_object(value, dict)
    if serialized is not value:
        return _jsonable(serialized)
    return str(value)


# ---------------------------------------------------------------------- the result cap


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def cap(value: Any, limit: int) -> Any:
    """``value`` whose JSON text fits about ``limit`` characters, cuts marked ``[truncated ...]``."""
    if _size(value) <= limit:
        return value
    return _fit(value, limit)


def _fit(value: Any, budget: int) -> Any:
    if isinstance(value, str):
        if len(value) <= budget:
            return value
        keep = max(0, budget - 80)
        return value[:keep] + f"[truncated: {len(value) - keep} more characters]"
    if isinstance(value, list):
        out: list[Any] = []
        used = 2
        for index, item in enumerate(value):
            size = _size(item)
            if used + size > budget:
                rest = len(value) - index
                if not out and budget - used > 200:
                    out.append(_fit(item, budget - used - 100))
                    rest -= 1
                if rest:
                    out.append(f"[truncated: {rest} more items; ask for fewer, e.g. with a filter or a page size]")
                return out
            out.append(item)
            used += size + 1
        return out
    if isinstance(value, dict):
        result: dict[str, Any] = {}
        used = 2
        items = list(value.items())
        for index, (key, item) in enumerate(items):
            size = _size(item) + len(key) + 4
            if used + size > budget:
                room = budget - used - len(key) - 4
                if room > 200:
                    result[key] = _fit(item, room - 100)
                    index += 1
                if index < len(items):
                    result["[truncated]"] = f"{len(items) - index} more fields left out: the result was too large"
                return result
            result[key] = item
            used += size
        return result
    return value


# ---------------------------------------------------------------------- any content in arguments


def any_paths(xsd_type: Any, seen: frozenset[int] = frozenset()) -> dict[str, Any]:
    """Where ``any`` content sits in the arguments of ``xsd_type``: ``{name: "xml" | {...}}``."""
    if not isinstance(xsd_type, ComplexType) or id(xsd_type) in seen:
        return {}
    seen = seen | {id(xsd_type)}
    plan: dict[str, Any] = {}
    for name, particle in xsd_type.elements:
        if isinstance(particle, AnyElement):
            plan[name] = "xml"
        elif isinstance(particle, Element):
            inner = any_paths(particle.type, seen)
            if inner:
                plan[name] = inner
        elif isinstance(particle, Group) or hasattr(particle, "elements"):
            items: dict[str, Any] = {}
            for sub_name, sub in particle.elements:
                if isinstance(sub, AnyElement):
                    items[sub_name] = "xml"
                elif isinstance(sub, Element):
                    inner = any_paths(sub.type, seen)
                    if inner:
                        items[sub_name] = inner
            if items:
                plan[name] = items
    return plan


def parse_xml_argument(text: str, where: str) -> etree._Element:
    """One XML element from the model, parsed with no DTD, entity, PI or network access."""
    if len(text) > _MAX_XML_ARGUMENT:
        raise InvalidInputError(f"{where}: the XML content is larger than {_MAX_XML_ARGUMENT} characters.")
    try:
        element = etree.fromstring(text.encode("utf-8"), safe_parser())
    except etree.XMLSyntaxError as exc:
        raise InvalidInputError(f"{where}: not one well-formed XML element ({exc.msg}).") from None
    if getattr(element.getroottree().docinfo, "doctype", None):
        raise InvalidInputError(f"{where}: XML content may not declare a DOCTYPE.")
    return element


def apply_any(arguments: Any, plan: Mapping[str, Any], where: str = "") -> Any:
    """``arguments`` with the ``any`` values of ``plan`` parsed into XML elements."""
    if not plan or not isinstance(arguments, dict):
        return arguments
    out = dict(arguments)
    for name, sub in plan.items():
        if name not in out or out[name] is None:
            continue
        value = out[name]
        path = f"{where}.{name}" if where else name
        if sub == "xml":
            out[name] = [parse_xml_argument(str(v), path) for v in value] if isinstance(value, list) \
                else parse_xml_argument(str(value), path)
        elif isinstance(value, list):
            out[name] = [apply_any(v, sub, path) for v in value]
        else:
            out[name] = apply_any(value, sub, path)
    return out
