"""The HTTP transport's quicker readers and writers give what the general ones give.

``context_from_raw_headers`` (ASGI's byte pairs) against ``context_from_headers`` (a
mapping of text), the prebuilt JSON encoder against ``json.dumps``, and the JSON response
against Starlette's ``Response``: the same contexts, errors, bytes and headers.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.datastructures import Headers
from starlette.responses import Response

from mcs.errors import ExecutionError, InvalidInputError
from mcs.server.app import _json
from mcs.server.wire import context_from_headers, context_from_raw_headers, encode

_NAMES = st.sampled_from([
    "x-agent-id", "X-Agent-Id", "x-agent-model", "X-AGENT-MODEL", "x-request-id", "X-Request-ID",
    "x-agent-meta-env", "X-Agent-Meta-Env", "x-agent-meta-team", "x-agent-meta-bad.key", "x-agent-meta-",
    "x-agent-meta-\u00c9t\u00e9", "x-other", "content-type", "host", "xx-agent-id",
])
_VALUES = st.one_of(st.sampled_from(["bench", "prod", "req-1", "", "has spaces", "a" * 300]),
                    st.text(alphabet=st.characters(max_codepoint=255), max_size=12))


def _read(read: Any, headers: Any) -> tuple[str, Any]:
    try:
        context = read(headers)
    except InvalidInputError as error:
        return "error", error.message
    return "context", (context.agent_id, context.model, dict(context.metadata))


@settings(max_examples=400, deadline=None)
@given(pairs=st.lists(st.tuples(_NAMES, _VALUES), max_size=6))
def test_raw_headers_read_as_the_mapping_does(pairs: list[tuple[str, str]]) -> None:
    raw = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in pairs]
    mixed_case = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in pairs]
    expected = _read(context_from_headers, Headers(raw=raw))
    assert _read(context_from_raw_headers, raw) == expected
    assert _read(context_from_raw_headers, mixed_case) == expected
    if expected[0] == "context":
        given_id = [v for n, v in pairs if n.lower() == "x-request-id"]
        context = context_from_raw_headers(raw)
        assert context.request_id == given_id[-1] if given_id else len(context.request_id) == 32


@pytest.mark.parametrize("body", [
    {"tool": "t", "request_id": "r", "result": {"a": 1, "b": [1.5, None, True], "c": "é ü \u2603"}},
    {"error": "INVALID_INPUT", "message": "bad \"quote\" \n"},
    [], {}, "text", 3, None,
])
def test_the_prebuilt_encoder_writes_what_json_dumps_writes(body: Any) -> None:
    assert encode(body) == json.dumps(body, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


@pytest.mark.parametrize("body", [{"x": float("nan")}, {"x": float("inf")}, {"x": object()}])
def test_the_prebuilt_encoder_refuses_what_json_cannot_carry(body: Any) -> None:
    with pytest.raises(ExecutionError):
        encode(body)


@pytest.mark.parametrize(("status", "request_id"), [(200, "abc"), (400, None), (504, "r-1.2:x")])
def test_the_json_response_has_starlettes_headers(status: int, request_id: str | None) -> None:
    body = b'{"ok":true}'
    ours = _json(status, body, request_id)
    headers = {"X-Request-Id": request_id} if request_id else None
    theirs = Response(body, status_code=status, media_type="application/json", headers=headers)
    assert (ours.status_code, ours.body, ours.raw_headers, ours.background) == (
        theirs.status_code, theirs.body, theirs.raw_headers, theirs.background)
