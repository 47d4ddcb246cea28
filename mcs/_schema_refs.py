"""Reading a JSON Schema as written: local references followed, alternatives listed.

Shared by validation (types for messages and repairs) and redaction (where secrets are).
Bounded: at most 16 reference hops, alternatives at most 4 levels deep.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_MAX_REF_HOPS = 16
_MAX_OPTION_DEPTH = 4


def resolve_local(schema: Any, root: Mapping[str, Any]) -> Any:
    """Follow local references (``#/$defs/Inner``) to the schema they name; ``None`` when
    one names nothing or they loop past the hop bound."""
    for _ in range(_MAX_REF_HOPS):
        ref = schema.get("$ref") if isinstance(schema, Mapping) else None
        if not isinstance(ref, str) or not ref.startswith("#/"):
            return schema
        node: Any = root
        for part in ref[2:].split("/"):
            node = node.get(part.replace("~1", "/").replace("~0", "~")) if isinstance(node, Mapping) else None
        schema = node
    return None


def variants(schema: Any, root: Mapping[str, Any], depth: int = 0) -> list[Mapping[str, Any]]:
    """``schema`` and its ``anyOf``/``oneOf``/``allOf`` options, references followed."""
    schema = resolve_local(schema, root)
    if not isinstance(schema, Mapping):
        return []
    found = [schema]
    if depth < _MAX_OPTION_DEPTH:
        for key in ("anyOf", "oneOf", "allOf"):
            options = schema.get(key)
            if isinstance(options, list | tuple):
                for option in options:
                    found.extend(variants(option, root, depth + 1))
    return found
