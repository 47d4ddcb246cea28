"""URL pieces built from values a caller (an LLM) supplies, for drivers that send HTTP."""

from __future__ import annotations

from urllib.parse import quote


def encode_path_segment(text: str) -> str:
    """``text`` percent-encoded as exactly one path segment, whatever it holds.

    Every reserved character is encoded (``/`` becomes ``%2F``, ``?`` ``%3F``, ``#``
    ``%23``), and the dot segments ``.`` and ``..`` become ``%2E`` and ``%2E%2E``, which
    clients and servers do not collapse: a value such as ``../admin`` can never move the
    request to another path (SECURITY.md B1).
    """
    encoded = quote(text, safe="")
    if encoded in (".", ".."):
        return "%2E" * len(encoded)
    return encoded
