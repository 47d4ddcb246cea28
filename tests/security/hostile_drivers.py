"""The REST spec and the gen-mcp file that point the HTTP drivers at the hostile peer."""

from __future__ import annotations

from typing import Any

ENDPOINTS = ["drip-headers", "drip-body", "endless", "big", "bomb-gzip", "bomb-deflate", "inject", "redirect", "echo",
             "flaky", "fail", "hold", "short"]
POSTS = ["reset", "flaky"]


def rest_spec() -> dict[str, Any]:
    ok = {"200": {"description": "ok"}}
    paths: dict[str, Any] = {f"/{name}": {"get": {"operationId": name.replace("-", "_"), "responses": ok}}
                             for name in ENDPOINTS}
    for name in POSTS:
        paths.setdefault(f"/{name}", {})["post"] = {"operationId": f"post_{name}", "responses": ok}
    paths["/users/{id}/profile"] = {"get": {
        "operationId": "profile", "responses": ok,
        "parameters": [
            {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}},
            {"name": "q", "in": "query", "schema": {"type": "string"}},
            {"name": "X-Trace", "in": "header", "schema": {"type": "string"}},
        ],
    }}
    return {"openapi": "3.0.3", "info": {"title": "hostile", "version": "1"}, "paths": paths}


def mcp_file(url: str, *, dynamic: bool = False) -> dict[str, Any]:
    """HTTP tools for each endpoint and ``profile``; with ``dynamic``, also ``fetch`` (a whole
    URL from the model) and ``fetch_host`` (its host), which need ``allow_dynamic_hosts``."""
    def http_tool(name: str, target: str, properties: dict[str, Any] | None = None, **http: Any) -> dict[str, Any]:
        return {"name": name, "description": name,
                "inputSchema": {"type": "object", "properties": properties or {}},
                "invocation": {"http": {"method": "GET", "url": target, **http}}}

    string = {"type": "string"}
    tools = [http_tool(name.replace("-", "_"), f"{url}/{name}") for name in ENDPOINTS]
    tools.append(http_tool("profile", url + "/users/{id}/profile", {"id": string, "q": string, "trace": string},
                           headers={"X-Trace": "{trace}"}))
    if dynamic:
        tools.append(http_tool("fetch", "{url}", {"url": string}))
        tools.append(http_tool("fetch_host", "http://{host}:{port}/echo", {"host": string, "port": string}))
    return {"mcpFileVersion": "0.1.0", "name": "hostile", "version": "1", "tools": tools}
