"""Building instances of the core's frozen slotted dataclasses for the cost of plain assignments.

A frozen dataclass refuses ``obj.field = value``, so its ``__init__`` (and anything else
that builds one) sets each field through ``object.__setattr__`` or the slot's descriptor:
a C call with an argument tuple per field. The core builds an :class:`~mcs.context.AgentContext`
and an :class:`~mcs.pipeline.Invocation` for every call, so it fills a :func:`fillable`
object instead, whose slots are the same and whose attributes are set by plain assignment,
then gives it the frozen class (``obj.__class__ = cls``, which Python allows between
classes with the same slots and base). The object is the frozen class's from then on:
same type, equality, hash and ``repr``, and assignments refused.
"""

from __future__ import annotations

from typing import Any


def fillable(cls: type) -> type:
    """A class with exactly ``cls``'s slots, the same base (``object``) and no methods.

    Fill every slot of an instance, then assign ``instance.__class__ = cls``; a slot left
    unset reads as a missing attribute, as it would on ``object.__new__(cls)``.

    Raises:
        TypeError: ``cls`` is not a slotted class directly below ``object``.
    """
    slots: Any = cls.__dict__.get("__slots__")
    if cls.__bases__ != (object,) or not isinstance(slots, tuple) or "__dict__" in slots:
        raise TypeError(f"{cls.__name__} is not a slotted class directly below object")
    twin = type(f"_Fillable{cls.__name__}", (), {"__slots__": slots, "__module__": cls.__module__})
    probe = twin()
    probe.__class__ = cls  # a layout Python refuses to swap is refused here, at import, not per call
    return twin
