"""The inspector's web app (Starlette): the page, its static files and a small JSON API.

All routes sit behind :class:`~mcs.inspector.guard.Guard` (token, Host, Origin). The API
answers JSON; work that touches the driver runs on worker threads, never on the event loop.

    GET  /                      the page            GET  /static/...        its files
    GET  /api/overview          driver, mode, model templates, token counting
    GET  /api/tools             every tool: name, group, summary, whether it writes
    GET  /api/search?q=&group=  the discovery search, best first
    GET  /api/tool?name=&model= one tool: rendered for the model, native exports, schemas
    GET  /api/prompt?model=     the full system prompt
    POST /api/call              {"tool", "arguments", "confirmation"}
    POST /api/calls             {"calls": [{"tool", "arguments"}...], "confirmation"}: in order,
                                stopping at the first that fails (the editor's Save)
    POST /api/reply/analyse     {"reply"}: the calls found, their kind and verdict
    POST /api/reply/run         {"reply", "confirmation"}: run it as process_llm_response

A call that may write answers ``409`` with ``{"error": "CONFIRMATION_REQUIRED", "tools",
"preview", "confirmation"}``: ``preview`` is exactly what would run, for the page to show,
and ``confirmation`` confirms that content only (with the tools it resolves to: a
``call_tool`` entry shows the tool its name reaches as ``runs``). The same request sent
again with that ``confirmation`` runs, once: a confirmation is used up by its run, and a
request with other content needs a confirmation of its own.
"""

from __future__ import annotations

import json
import mimetypes
from collections.abc import Callable
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcs.errors import ConfigurationError
from mcs.inspector.guard import ASGIApp, Guard
from mcs.inspector.session import ConfirmationRequired, Inspection, UnknownTool

#: The largest request body the API reads (a pasted reply, a call's arguments).
MAX_BODY_BYTES = 2 * 1024 * 1024


def static_files() -> dict[str, tuple[bytes, str]]:
    """Every file shipped in ``mcs/inspector/static``, by its path there, with its type."""
    files: dict[str, tuple[bytes, str]] = {}

    def walk(folder: Any, prefix: str) -> None:
        for item in folder.iterdir():
            name = f"{prefix}{item.name}"
            if item.is_dir():
                walk(item, name + "/")
            elif not item.name.startswith("."):
                kind = mimetypes.guess_type(item.name)[0] or "application/octet-stream"
                if item.name.endswith(".js"):
                    kind = "text/javascript"
                files[name] = (item.read_bytes(), f"{kind}; charset=utf-8" if kind.startswith("text/") else kind)

    walk(resources.files("mcs.inspector") / "static", "")
    return files


class _BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


async def _json_body(request: Request) -> dict[str, Any]:
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        raise _BadRequest(415, "send JSON (Content-Type: application/json)")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise _BadRequest(413, f"the body is over {MAX_BODY_BYTES:,} bytes")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            raise _BadRequest(413, f"the body is over {MAX_BODY_BYTES:,} bytes")
    try:
        data = json.loads(body)
    except RecursionError:
        raise _BadRequest(400, "the body is nested too deeply") from None
    except ValueError:
        raise _BadRequest(400, "the body is not valid JSON") from None
    if not isinstance(data, dict):
        raise _BadRequest(400, "the body must be a JSON object")
    return data


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise _BadRequest(400, f"{key!r} must be a string")
    return value


def _confirmation(data: dict[str, Any]) -> str | None:
    value = data.get("confirmation")
    if value is not None and not isinstance(value, str):
        raise _BadRequest(400, "'confirmation' must be the string a 409 CONFIRMATION_REQUIRED answer gave")
    return value


def _arguments(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _BadRequest(400, "'arguments' must be a JSON object")
    return value


def create_app(inspection: Inspection, *, token: str, port: int) -> ASGIApp:
    """The guarded ASGI app for ``inspection``, answering on ``127.0.0.1:port`` under ``/token/``."""
    files = static_files()
    page = files["index.html"][0]

    def api(work: Callable[[Request], Any]) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> Response:
            try:
                payload = await work(request)
            except _BadRequest as exc:
                return JSONResponse({"error": "BAD_REQUEST", "message": str(exc)}, status_code=exc.status)
            except UnknownTool as exc:
                return JSONResponse({"error": "UNKNOWN_TOOL", "message": f"no tool named {exc}"}, status_code=404)
            except ConfirmationRequired as exc:
                return JSONResponse({"error": "CONFIRMATION_REQUIRED", "message": str(exc), "tools": exc.tools,
                                     "preview": exc.preview, "confirmation": exc.confirmation}, status_code=409)
            except ConfigurationError as exc:  # e.g. a toolbox with controls refusing to chain a reply
                return JSONResponse({"error": "CONFIGURATION", "message": str(exc)}, status_code=409)
            return JSONResponse(payload)

        return endpoint

    def model_of(request: Request) -> str | None:
        return request.query_params.get("model") or None

    async def index(request: Request) -> Response:
        return Response(page, media_type="text/html; charset=utf-8")

    async def static(request: Request) -> Response:
        found = files.get(request.path_params["path"])
        if found is None:
            return Response("not found\n", status_code=404, media_type="text/plain")
        return Response(found[0], media_type=found[1])

    async def overview(request: Request) -> Any:
        return await run_in_threadpool(inspection.overview)

    async def tools(request: Request) -> Any:
        return {"tools": inspection.tool_rows()}

    async def search(request: Request) -> Any:
        query, group = request.query_params.get("q", ""), request.query_params.get("group")
        return await run_in_threadpool(inspection.search, query, group)

    async def tool(request: Request) -> Any:
        return await run_in_threadpool(inspection.tool_detail, request.query_params.get("name", ""), model_of(request))

    async def prompt(request: Request) -> Any:
        return await run_in_threadpool(inspection.prompt, model_of(request))

    async def call(request: Request) -> Any:
        data = await _json_body(request)
        name, arguments, confirmation = _text(data, "tool"), _arguments(data.get("arguments")), _confirmation(data)
        return await run_in_threadpool(lambda: inspection.call(name, arguments, confirmation=confirmation))

    async def calls(request: Request) -> Any:
        data = await _json_body(request)
        listed = data.get("calls")
        if not isinstance(listed, list) or not listed or not all(isinstance(c, dict) for c in listed):
            raise _BadRequest(400, "'calls' must be a non-empty list of {\"tool\", \"arguments\"} objects")
        batch = [(_text(c, "tool"), _arguments(c.get("arguments"))) for c in listed]
        confirmation = _confirmation(data)
        return await run_in_threadpool(lambda: inspection.calls(batch, confirmation=confirmation))

    async def analyse(request: Request) -> Any:
        data = await _json_body(request)
        return await run_in_threadpool(inspection.analyse, _text(data, "reply"))

    async def run_reply(request: Request) -> Any:
        data = await _json_body(request)
        reply, confirmation = _text(data, "reply"), _confirmation(data)
        return await run_in_threadpool(lambda: inspection.run_reply(reply, confirmation=confirmation))

    async def interfaces(request: Request) -> Any:
        return await run_in_threadpool(inspection.interfaces)

    routes = [
        Route("/", index),
        Route("/static/{path:path}", static),
        Route("/api/overview", api(overview)),
        Route("/api/tools", api(tools)),
        Route("/api/search", api(search)),
        Route("/api/tool", api(tool)),
        Route("/api/prompt", api(prompt)),
        Route("/api/call", api(call), methods=["POST"]),
        Route("/api/calls", api(calls), methods=["POST"]),
        Route("/api/reply/analyse", api(analyse), methods=["POST"]),
        Route("/api/reply/run", api(run_reply), methods=["POST"]),
        Route("/api/interfaces", api(interfaces)),
    ]
    return Guard(Starlette(routes=routes), token=token, port=port)
