"""An httpx request as openapi-core's Request protocol, for cross-checking what the driver sends."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

import httpx
from openapi_core.datatypes import RequestParameters
from werkzeug.datastructures import Headers, ImmutableMultiDict


@dataclass
class CoreRequest:
    host_url: str
    path: str
    method: str
    parameters: RequestParameters
    content_type: str
    body: bytes | None


def core_request(request: httpx.Request) -> CoreRequest:
    url = request.url
    cookies: dict[str, Any] = {}
    for part in request.headers.get("cookie", "").split(";"):
        name, sep, value = part.strip().partition("=")
        if sep:
            cookies[name] = unquote(value)
    headers = Headers([(k, v) for k, v in request.headers.multi_items() if k.lower() != "cookie"])
    parameters = RequestParameters(
        query=ImmutableMultiDict(list(url.params.multi_items())),
        header=headers,
        cookie=ImmutableMultiDict(list(cookies.items())),
    )
    body = request.read()
    return CoreRequest(
        host_url=f"{url.scheme}://{url.netloc.decode('ascii')}",
        path=url.path,
        method=request.method.lower(),
        parameters=parameters,
        content_type=request.headers.get("content-type", "").lower(),
        body=body or None,
    )
