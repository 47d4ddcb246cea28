"""The ``meta`` a :class:`~mcs.ToolDriver` gets when its author did not build one.

A driver written as the README shows declares what it speaks as class attributes::

    class WeatherDriver(mcs.ToolDriver):
        protocol = "REST"
        transport = "HTTP"
        spec_format = "none"

and gets a :class:`~mcs.DriverMeta` derived from the class: ``name`` from a ``name``
class attribute, else the name the class is registered under in the ``mcs.drivers``
entry-point group, else the class name (``WeatherDriver`` -> ``weather``); ``id`` a UUID
computed from that name, so it is the same in every process; ``version`` from a
``version`` class attribute, else the registering distribution's version, else
``0.0.0``; capabilities from the optional methods the class defines.
"""

from __future__ import annotations

import re
import uuid
from functools import cache
from typing import TYPE_CHECKING

from mcs.errors import ConfigurationError

if TYPE_CHECKING:
    from mcs.driver import DriverMeta, ToolDriver

#: Namespace of the ids derived from driver names (uuid5).
NAMESPACE = uuid.UUID("9a3e3c1e-5c57-4f0b-b7e5-3d1f0c6a2e41")
REQUIRED = ("protocol", "transport", "spec_format")
_EXAMPLES = {"protocol": '"REST"', "transport": '"HTTP"', "spec_format": '"OpenAPI"'}
_OPTIONAL_METHODS = {"healthcheck": "healthcheck", "warmup": "cache", "get_status": "status"}
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def name_from_class(cls: type) -> str:
    """``WeatherDriver`` -> ``weather``, ``OpenAPIDriver`` -> ``open_api``."""
    base = cls.__name__.removesuffix("Driver") or cls.__name__
    return _CAMEL.sub("_", base).lower()[:40]


def _registration(cls: type) -> tuple[str, str | None] | None:
    """The entry-point name ``cls`` is registered under, and its distribution's version."""
    # imported here: reading entry points is its only use, and it is costly to import
    from importlib import metadata

    target = f"{cls.__module__}:{cls.__qualname__}"
    for entry_point in metadata.entry_points(group="mcs.drivers"):
        if entry_point.value.replace(" ", "") == target:
            return entry_point.name, entry_point.dist.version if entry_point.dist else None
    return None


def _declared(cls: type, attribute: str) -> str | None:
    value = getattr(cls, attribute, None)
    return value if isinstance(value, str) and value else None


@cache
def default_meta(cls: type[ToolDriver]) -> DriverMeta:
    """The meta of a driver class that does not set ``self.meta``.

    Raises:
        ConfigurationError: the class does not declare ``protocol``, ``transport`` and
            ``spec_format``; the message names the missing ones and both ways to fix it.
    """
    from mcs.driver import DriverMeta

    missing = [attribute for attribute in REQUIRED if _declared(cls, attribute) is None]
    if missing:
        lines = "; ".join(f"{a} = {_EXAMPLES[a]}" for a in missing)
        raise ConfigurationError(
            f"{cls.__qualname__} does not say what it speaks: declare {', '.join(missing)} as "
            f"class attributes (e.g. {lines}), or set self.meta = mcs.DriverMeta(...) in __init__"
        )
    registered = _registration(cls)
    name = _declared(cls, "name") or (registered[0] if registered else name_from_class(cls))
    version = _declared(cls, "version") or (registered[1] if registered else None) or "0.0.0"
    capabilities = [cap for method, cap in _OPTIONAL_METHODS.items() if callable(getattr(cls, method, None))]
    if _overrides_stream(cls):
        capabilities.append("stream")
    return DriverMeta(
        id=str(uuid.uuid5(NAMESPACE, name)),
        name=name,
        version=version,
        protocol=str(_declared(cls, "protocol")),
        transport=str(_declared(cls, "transport")),
        spec_format=str(_declared(cls, "spec_format")),
        capabilities=tuple(capabilities),
    )


def _overrides_stream(cls: type) -> bool:
    from mcs.driver import ToolDriver

    return any("_stream_tool" in vars(k) or "_astream_tool" in vars(k) for k in cls.__mro__ if k is not ToolDriver and issubclass(k, ToolDriver))
