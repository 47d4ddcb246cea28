"""The result a model reads: ``data`` as the server sent it, or ``data`` and ``errors``.

* no errors: the raw ``data``;
* errors beside data (a partial result): ``{"data": ..., "errors": [...]}``;
* errors without data: ``EXECUTION_ERROR`` listing each message with its path, so the model
  can fix its query; the errors themselves are in ``error.details["errors"]``;
* ``data`` or ``errors`` nested deeper than :data:`mcs.truncation.MAX_JSON_DEPTH` (a JSON
  scalar, an ``extensions`` object): ``EXECUTION_ERROR``, as the code that handles a
  result after it (``json.dumps``, an MCP server) would run out of stack.

The errors are the server's words: the credentials the request carried (``secrets``) are
replaced by ``[redacted]`` in them, as a server may echo what it was sent.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcs.errors import ExecutionError
from mcs.redaction import scrub_value
from mcs.truncation import MAX_JSON_DEPTH, too_deep

_LISTED = 10
_MESSAGE = 300


def _compact(error: Any) -> dict[str, Any]:
    if not isinstance(error, dict):
        return {"message": str(error)[:_MESSAGE]}
    out: dict[str, Any] = {"message": str(error.get("message", ""))[:_MESSAGE]}
    for key in ("path", "locations", "extensions"):
        if error.get(key):
            out[key] = error[key]
    return out


def shaped(data: Any, errors: list[Any] | None, tool: str, secrets: Sequence[str] = ()) -> Any:
    """``data``, ``{"data", "errors"}`` or an :class:`ExecutionError`, as the docstring says;
    ``secrets`` (:func:`mcs.redaction.credential_forms`) are scrubbed from the errors."""
    if too_deep([data, errors], MAX_JSON_DEPTH + 1):
        raise ExecutionError(
            f"{tool}: the GraphQL server answered with JSON nested more than {MAX_JSON_DEPTH} levels deep; "
            "it was not read. Select fewer nested fields.", tool=tool,
        )
    if not errors:
        return data
    compact = [_compact(e) for e in errors]
    if secrets:
        compact = scrub_value(compact, secrets)
    if data is None:
        lines = []
        for error in compact[:_LISTED]:
            path = ".".join(str(p) for p in error.get("path") or ())
            lines.append(error["message"] + (f" (at {path})" if path else ""))
        more = f" (and {len(compact) - _LISTED} more)" if len(compact) > _LISTED else ""
        raise ExecutionError(
            f"{tool}: the GraphQL server answered with errors and no data: " + "; ".join(lines) + more,
            tool=tool, details={"errors": compact},
        )
    return {"data": data, "errors": compact}
