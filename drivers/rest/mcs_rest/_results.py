"""What a call returns besides plain JSON values and text."""

from __future__ import annotations


class BinaryContent(bytes):
    """A binary response body; ``content_type`` says what it is, ``truncated`` if it was cut."""

    content_type: str
    truncated: bool

    def __new__(cls, data: bytes, content_type: str, truncated: bool = False) -> BinaryContent:
        obj = super().__new__(cls, data)
        obj.content_type = content_type
        obj.truncated = truncated
        return obj

    def __repr__(self) -> str:
        return f"BinaryContent({len(self)} bytes, {self.content_type!r}{', truncated' if self.truncated else ''})"
