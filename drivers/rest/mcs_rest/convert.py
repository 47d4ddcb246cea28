"""``mcs convert openapi SPEC -o mcpfile.yaml``: an OpenAPI spec as a gen-mcp MCP file (0.1.0).

Each operation becomes one tool with an ``http`` invocation, built from the same
operation model the REST driver uses, so nothing the LLM needs is lost on the way:

* path parameters become ``{arg}`` placeholders in the URL; header and cookie parameters
  become templated ``headers``; query parameters of non-GET operations are templated
  into the URL's query (gen-mcp sends the remaining arguments of a GET as its query,
  and those of other methods as the JSON body);
* every input property keeps its enum, format, default, nullability and required flag,
  and carries its location as ``x-mcs-in`` (``path``, ``query``, ``header``, ``cookie``,
  ``body``), which gen-mcp's own converter drops;
* recursive schemas stay finite (``$ref`` into the tool's ``$defs``).

gen-mcp sends request bodies as JSON only. Operations whose body is form data, multipart
or text are still written (their media type kept as ``x-mcs-body-media-type`` in the input
schema), and the command names them on stderr: gen-mcp cannot call them correctly.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from mcs.errors import ConfigurationError
from mcs_rest._operations import Operation
from mcs_rest.cli import add_redirect_host_argument

if TYPE_CHECKING:
    from mcs_rest.driver import RestDriver

MCP_FILE_VERSION = "0.1.0"
_GENMCP_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"})


class _Dumper(yaml.SafeDumper):
    """Plain YAML: shared sub-schemas are written out, never as anchors and aliases."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _tool(op: Operation, base_url: str) -> dict[str, Any]:
    schema = op.input_schema
    properties: dict[str, Any] = {}
    by_arg = {p.arg: p for p in op.params}
    for arg, sub in (schema.get("properties") or {}).items():
        param = by_arg.get(arg)
        location = param.location if param is not None else "body"
        properties[arg] = {**sub, "x-mcs-in": location} if isinstance(sub, Mapping) else sub
    input_schema: dict[str, Any] = {"type": "object", "properties": properties}
    if schema.get("required"):
        input_schema["required"] = list(schema["required"])
    if schema.get("$defs"):
        input_schema["$defs"] = schema["$defs"]

    path = op.path
    for param in op.params:
        if param.location == "path":
            path = path.replace("{" + param.name + "}", "{" + param.arg + "}")
    url = base_url + path
    query = [p for p in op.params if p.location == "query"]
    if query and op.method != "GET":
        url += "?" + "&".join(f"{p.name}={{{p.arg}}}" for p in query)
    headers: dict[str, str] = {}
    cookies = [p for p in op.params if p.location == "cookie"]
    for param in op.params:
        if param.location == "header":
            headers[param.name] = "{" + param.arg + "}"
    if cookies:
        headers["Cookie"] = "; ".join(f"{p.name}={{{p.arg}}}" for p in cookies)
    if op.body is not None and op.body.kind != "json":
        # gen-mcp sends a body as JSON only; the media type the API expects is kept here.
        input_schema["x-mcs-body-media-type"] = op.body.media_type
    http: dict[str, Any] = {"method": op.method, "url": url}
    if headers:
        http["headers"] = headers

    tool = op.tool()
    out: dict[str, Any] = {"name": tool.name}
    if tool.title:
        out["title"] = tool.title
    out["description"] = tool.description
    out["inputSchema"] = input_schema
    annotations = {k: v for k, v in tool.annotations.items() if k in ("readOnlyHint", "idempotentHint", "destructiveHint")}
    if annotations:
        out["annotations"] = annotations
    out["invocation"] = {"http": http}
    return out


def to_mcp_file(driver: RestDriver, base_url: str | None = None) -> dict[str, Any]:
    """The MCP file (as a dict) for every operation of ``driver`` gen-mcp can call.

    Operations whose method gen-mcp does not support (OPTIONS, TRACE) are left out.

    Raises:
        ConfigurationError: no base URL is known (pass ``base_url``).
    """
    from mcs_rest.driver import _slug

    info = driver.spec.root.get("info") or {}
    tools = []
    for op in driver.operations.values():
        if op.method not in _GENMCP_METHODS:
            continue
        try:
            base = base_url.rstrip("/") if base_url else driver.base_url_for(op)
        except Exception:
            raise ConfigurationError(
                "the spec names no absolute server URL; pass --base-url"
            ) from None
        tools.append(_tool(op, base))
    document: dict[str, Any] = {
        "mcpFileVersion": MCP_FILE_VERSION,
        "name": _slug(str(info.get("title") or "rest")).replace("_", "-"),
        "version": str(info.get("version") or "0.0.0"),
    }
    description = info.get("description")
    if isinstance(description, str) and description.strip():
        document["instructions"] = description.strip()
    document["tools"] = tools
    return document


def dump(document: Mapping[str, Any]) -> str:
    return yaml.dump(dict(document), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=120)


def _handler(args: argparse.Namespace) -> int:
    from mcs_rest._spec import SpecRedirectRefused
    from mcs_rest.driver import RestDriver

    include = {"tags": args.tag} if args.tag else None
    options: dict[str, Any] = {"allow_external_refs": args.allow_external_refs,
                               "spec_redirect_hosts": args.spec_redirect_hosts or ()}
    if include:
        options["include"] = include
    try:
        driver = RestDriver(args.spec, **options)
    except SpecRedirectRefused as exc:
        raise exc.on_command_line() from None
    try:
        document = to_mcp_file(driver, args.base_url)
    finally:
        driver.close()
    text = "# Generated by `mcs convert openapi` from an OpenAPI spec.\n" + dump(document)
    odd = [t["name"] for t in document["tools"] if "x-mcs-body-media-type" in t["inputSchema"]]
    if odd:
        print(f"note: gen-mcp sends bodies as JSON; {len(odd)} operation(s) expect another media "
              f"type: {', '.join(odd[:10])}{', ...' if len(odd) > 10 else ''}", file=sys.stderr)
    if args.output in (None, "-"):
        sys.stdout.write(text)
    else:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"wrote {len(document['tools'])} tools to {args.output}", file=sys.stderr)
    return 0


def register_command(subparsers: Any) -> None:
    """Add ``mcs convert openapi`` to the CLI (entry point group ``mcs.commands``)."""
    convert = subparsers.add_parser("convert", help="convert a spec into another format")
    kinds = convert.add_subparsers(dest="kind", metavar="KIND", required=True)
    openapi = kinds.add_parser("openapi", help="an OpenAPI/Swagger spec to a gen-mcp MCP file (0.1.0)")
    openapi.add_argument("spec", help="path or URL of the OpenAPI 3.x / Swagger 2.0 spec")
    openapi.add_argument("-o", "--output", help="the MCP file to write (default: stdout)")
    openapi.add_argument("--base-url", help="the API's base URL (default: from the spec's servers)")
    openapi.add_argument("--tag", action="append", help="only operations with this tag (repeatable)")
    openapi.add_argument("--allow-external-refs", action="store_true",
                         help="follow $refs outside the spec's folder")
    add_redirect_host_argument(openapi)
    openapi.set_defaults(handler=_handler)
