"""Hostile argument values from SECURITY.md, for every driver that builds HTTP requests from them."""

from __future__ import annotations

# B1: a path value stays one segment, whatever it holds: (value, the segment as sent).
B1_PATH_VALUES = [
    ("../admin/delete", "..%2Fadmin%2Fdelete"),
    ("..%2fadmin", "..%252fadmin"),
    ("%2e%2e/admin", "%252e%252e%2Fadmin"),
    ("a/b", "a%2Fb"),
    ("x?role=admin", "x%3Frole%3Dadmin"),
    ("x#frag", "x%23frag"),
    ("x%00", "x%2500"),
]

# B1 for a whole dot segment, which URL normalisation would otherwise remove with its parent.
B1_DOT_SEGMENTS = [("..", "%2E%2E"), (".", "%2E")]
