"""fillable: a frozen slotted dataclass filled by plain assignments is that dataclass."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from mcs._frozen import fillable


@dataclasses.dataclass(frozen=True, slots=True)
class Point:
    x: int
    y: int = 0


def test_a_filled_object_given_the_class_is_an_instance_of_it() -> None:
    point: Any = fillable(Point)()
    point.x, point.y = 1, 2
    point.__class__ = Point
    assert type(point) is Point and point == Point(1, 2) and hash(point) == hash(Point(1, 2))
    assert repr(point) == "Point(x=1, y=2)"
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 3


def test_a_slot_left_unset_reads_as_a_missing_attribute() -> None:
    point: Any = fillable(Point)()
    point.x = 1
    point.__class__ = Point
    with pytest.raises(AttributeError):
        _ = point.y


def test_a_class_without_slots_of_its_own_is_refused() -> None:
    @dataclasses.dataclass(frozen=True)
    class Plain:
        x: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Below(Point):
        z: int = 0

    for cls in (Plain, Below):
        with pytest.raises(TypeError, match="not a slotted class directly below object"):
            fillable(cls)
