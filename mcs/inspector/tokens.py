"""Token counts for the page, with tiktoken when it is installed and its encoding loads.

Counts use ``o200k_base`` (GPT-4o and later). tiktoken reads an encoding from its cache
(``TIKTOKEN_CACHE_DIR``) or downloads it once; when neither works, or tiktoken is not
installed, :func:`count_tokens` answers ``None`` and :func:`status` says why, so the page
shows character counts instead of failing.
"""

from __future__ import annotations

import threading
from typing import Any

ENCODING = "o200k_base"

_lock = threading.Lock()
_state: dict[str, Any] = {}


def _encoding() -> Any:
    with _lock:
        if "encoding" not in _state and "problem" not in _state:
            try:
                import tiktoken
            except ImportError:
                _state["problem"] = "tiktoken is not installed (pip install tiktoken)"
            else:
                try:
                    _state["encoding"] = tiktoken.get_encoding(ENCODING)
                except Exception as exc:  # no cached file and no network, or a broken cache
                    _state["problem"] = f"tiktoken could not load {ENCODING}: {type(exc).__name__}"
        return _state.get("encoding")


def count_tokens(text: str) -> int | None:
    """The number of ``o200k_base`` tokens in ``text``, or ``None`` without tiktoken."""
    encoding = _encoding()
    if encoding is None:
        return None
    return len(encoding.encode(text, disallowed_special=()))


def status() -> dict[str, Any]:
    """``{"encoding": "o200k_base"}`` when counts work, else ``{"problem": why}``."""
    if _encoding() is not None:
        return {"encoding": ENCODING}
    return {"problem": _state.get("problem", "unknown")}
