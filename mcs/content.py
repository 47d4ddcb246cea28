"""Typed content a function tool (or a prompt) can return besides plain values.

    @mcs.tool
    def chart(days: int) -> mcs.Image:
        return mcs.Image(render_png(days), "image/png")

A tool returns one of these, or a list mixing them with strings. ``mcs serve`` turns
them into MCP content blocks (image, audio, embedded resource, text); a tool annotated
to return them publishes no output schema, since its result is content, not a JSON
object. In a plain LLM loop the objects come back as they are.
"""

from __future__ import annotations

import base64
import types
import typing
from dataclasses import dataclass
from typing import Any, Union, get_args, get_origin


@dataclass(frozen=True, slots=True)
class Image:
    """Image bytes with their MIME type (``image/png``, ``image/jpeg``...)."""

    data: bytes
    mime_type: str = "image/png"


@dataclass(frozen=True, slots=True)
class Audio:
    """Audio bytes with their MIME type (``audio/wav``, ``audio/mpeg``...)."""

    data: bytes
    mime_type: str = "audio/wav"


@dataclass(frozen=True, slots=True)
class EmbeddedResource:
    """A resource's contents carried inside a result: ``text`` or ``data`` (bytes)."""

    uri: str
    text: str | None = None
    data: bytes | None = None
    mime_type: str | None = None

    def __post_init__(self) -> None:
        if (self.text is None) == (self.data is None):
            raise ValueError("an EmbeddedResource needs exactly one of text or data")


class Binary(dict[str, Any]):
    """Bytes a driver returns, in a form ``json.dumps`` writes as it is.

    It is the JSON object ``{"content_type": "image/png", "base64": "iVBORw0K..."}``, with
    ``"truncated": true`` added when the bytes were cut at a size cap. Build one with
    :meth:`of`. ``mcs serve`` turns it into the MCP block its content type calls for (an
    image, audio, or an embedded blob resource); a plain LLM loop reads it as JSON.
    """

    @classmethod
    def of(cls, data: bytes, content_type: str = "application/octet-stream", *, truncated: bool = False) -> Binary:
        """``data`` with its content type (and whether it was cut at a cap), base64-encoded."""
        form = cls(content_type=content_type, base64=base64.b64encode(data).decode("ascii"))
        if truncated:
            form["truncated"] = True
        return form

    @property
    def data(self) -> bytes:
        """The bytes themselves."""
        return base64.b64decode(str(self.get("base64", "")))

    @property
    def content_type(self) -> str:
        """The content type, ``application/octet-stream`` when none was given."""
        return str(self.get("content_type") or "application/octet-stream")


#: The content types above, for ``isinstance`` checks.
CONTENT_TYPES: tuple[type, ...] = (Image, Audio, EmbeddedResource)


def is_content(value: Any) -> bool:
    """True for an :class:`Image`, :class:`Audio` or :class:`EmbeddedResource`."""
    return isinstance(value, CONTENT_TYPES)


def returns_content(annotation: Any) -> bool:
    """True when a return annotation is, or may hold, typed content or raw bytes.

    ``Image``, ``list[Image | str]``, ``Image | None``, ``bytes``... all count: such a
    result is published as content blocks, so it has no output schema.
    """
    if annotation in (bytes, bytearray) or (isinstance(annotation, type) and issubclass(annotation, CONTENT_TYPES)):
        return True
    origin = get_origin(annotation)
    if origin is typing.Annotated:
        return returns_content(get_args(annotation)[0])
    if origin in (Union, types.UnionType, list, tuple, typing.Sequence) or (
        origin is not None and getattr(origin, "__name__", "") in ("Sequence", "Iterable", "list", "tuple")
    ):
        return any(returns_content(arg) for arg in get_args(annotation) if arg is not Ellipsis)
    return False
