"""A FunctionDriver that implements media.player.v1 under its own tool names, for ``mcs serve``.

Served with ``mcs serve served_player:PlayerDriver`` (this folder on ``PYTHONPATH``);
``WrongPlayerDriver`` takes the volume as a string, so it does not conform.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel

from mcs import FunctionDriver, tool


class Playing(BaseModel):
    status: Literal["playing"]


class Paused(BaseModel):
    status: Literal["paused"]


class Done(BaseModel):
    success: bool


@tool
def start(ctx_note: str = "") -> Playing:
    """Starts the music."""
    return Playing(status="playing")


@tool
def hold() -> Paused:
    """Holds the music."""
    return Paused(status="paused")


@tool
def loudness(volume: float) -> Done:
    """Knob."""
    return Done(success=0.0 <= volume <= 1.0)


@tool
def loudness_text(volume: str) -> Done:
    """Knob, as text."""
    return Done(success=True)


@tool
def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


MAPPING = {"play": "start", "pause": "hold", "set_volume": "loudness"}


class PlayerDriver(FunctionDriver):
    implements: ClassVar[dict[str, dict[str, str]]] = {"media.player.v1": MAPPING}

    def __init__(self, **options: Any) -> None:
        super().__init__([start, hold, loudness, multiply], **options)


class WrongPlayerDriver(FunctionDriver):
    implements: ClassVar[dict[str, dict[str, str]]] = {"media.player.v1": {**MAPPING, "set_volume": "loudness_text"}}

    def __init__(self, **options: Any) -> None:
        super().__init__([start, hold, loudness_text, multiply], **options)
