"""Tool-definition pinning for the MCP bridge: :mod:`mcs.pinning`, shared with the
``rfc0001`` client driver (SECURITY.md F2)."""

from mcs.pinning import (
    Definition,
    HeldTool,
    HoldReason,
    PinStore,
    definition_hash,
    suspicious_definition,
    suspicious_text,
)

__all__ = [
    "Definition",
    "HeldTool",
    "HoldReason",
    "PinStore",
    "definition_hash",
    "suspicious_definition",
    "suspicious_text",
]
