"""Several drivers behind one contract (placeholder: replaced by the full module)."""

from __future__ import annotations

from typing import Any


class Toolbox:
    @classmethod
    def from_config(cls, path: str) -> Any:
        raise NotImplementedError
