"""The wire form of Interfaces on MCP, both sides.

**Method.** ``list_interfaces`` is a JSON-RPC request (``params`` optional)::

    {"jsonrpc": "2.0", "id": 7, "method": "list_interfaces",
     "params": {"supported": ["media.player.v1", "media.player.v2"]}}

``supported`` (optional) lists the interface versions the client understands; for each
family it names, the server answers with the highest version both support and moves the
tools of other versions of that family to ``unclassified``. The result::

    {"interfaces": [
      {"interface": "media.player.v1", "description": "...",
       "methods": [{"name": "play", "tool": "play", "description": "...",
                    "parameters": {...}, "returns": {...}}]},
      {"interface": "unclassified", "description": "Tools outside every interface.",
       "methods": [{"name": "add", "tool": "add", "description": "...",
                    "parameters": {...}, "returns": {...}}]}
    ]}

Each method carries its canonical ``name``, ``description``, ``parameters`` and
``returns`` (the interface's, not the tool's), and ``tool``: the name to pass to
``tools/call`` (it differs from ``name`` when a server maps methods to its own tools).
A section of a deprecated interface carries ``"deprecated"`` (``true`` or a note).
A method also carries the implementing tool's ``annotations`` and ``title`` when it has
them, so a client knows which methods only read.
``unclassified`` holds every other tool with its own description and schemas, so no
second ``tools/list`` is needed. Declared interfaces that fail their conformance check
are not listed; their tools are unclassified and ``"nonconforming": [{"interface",
"tools", "errors"}]`` says why. (JSON-RPC results are objects, so the seed's array
is wrapped in ``{"interfaces": [...]}``.)

**Tool.** For clients that only know tools, the same answer comes from a tool named
``list_interfaces`` (argument ``supported``, optional), as ``structuredContent`` and as
JSON text.

**Capability.** A server that offers it says so under ``mcs/interfaces`` in
``capabilities.experimental`` (and ``capabilities.extensions`` on 2026-07-28 sessions): ``{"method": "list_interfaces", "tool": "list_interfaces",
"interfaces": [names]}``. Clients that do not see it fall back to ``tools/list``.

:func:`install` adds all three to a server built with the official SDK, high-level
(``mcp.server.mcpserver.MCPServer``) or low-level (``mcp.server.lowlevel.Server``), whether
it serves an MCS driver or tools of its own.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Literal

from mcs.interfaces import UNCLASSIFIED, parse_interface_name
from mcs_mcp.interfaces.declaration import Implementation, declared, implementations, resolve
from mcs_mcp.interfaces.registry import InterfaceRegistry
from mcs_mcp.interfaces.versioning import matches, negotiate

logger = logging.getLogger("mcs_mcp.interfaces")

METHOD = "list_interfaces"
EXTENSION_ID = "mcs/interfaces"
METHOD_NOT_FOUND = -32601
UNCLASSIFIED_DESCRIPTION = "Tools outside every interface."

__all__ = [
    "EXTENSION_ID",
    "METHOD",
    "UNCLASSIFIED",
    "build_listing",
    "install",
    "matches",
    "negotiated",
    "tools_of",
]


# ---------------------------------------------------------------------------- the listing


def _method_entry(name: str, tool: str, description: str, parameters: Any, returns: Any) -> dict[str, Any]:
    return {
        "name": name,
        "tool": tool,
        "description": description,
        "parameters": dict(parameters or {}),
        "returns": dict(returns or {}),
    }


def _tool_dict(tool: Any) -> dict[str, Any]:
    if isinstance(tool, Mapping):
        return dict(tool)
    dump = getattr(tool, "model_dump", None)
    if callable(dump):
        out: dict[str, Any] = dump(by_alias=True, exclude_none=True, mode="json")
        return out
    return {
        "name": tool.name,
        "description": tool.description,
        "inputSchema": dict(tool.input_schema),
        **({"outputSchema": dict(tool.output_schema)} if tool.output_schema is not None else {}),
    }


def select_sections(sections: list[dict[str, Any]], supported: Sequence[str] | None) -> list[dict[str, Any]]:
    """Apply a client's ``supported`` list: per family it names, keep the highest common version.

    Methods of sections dropped this way move to ``unclassified`` (unless another kept
    section already lists their tool). Families the client does not name are kept whole.
    """
    if not supported:
        return sections
    offered = [s["interface"] for s in sections if s["interface"] != UNCLASSIFIED]
    chosen = negotiate(supported, offered)
    named = {parse_interface_name(n)[0] for n in supported}
    kept: list[dict[str, Any]] = []
    dropped: list[dict[str, Any]] = []
    unclassified: dict[str, Any] = {"interface": UNCLASSIFIED, "description": UNCLASSIFIED_DESCRIPTION, "methods": []}
    for section in sections:
        name = section["interface"]
        if name == UNCLASSIFIED:
            unclassified = {**section, "methods": list(section.get("methods", []))}
            continue
        family = parse_interface_name(name)[0]
        if family in named and chosen.get(family) != name:
            dropped.append(section)
        else:
            kept.append(section)
    listed = {m["tool"] for s in kept for m in s["methods"]} | {m["tool"] for m in unclassified["methods"]}
    for section in dropped:
        for method in section["methods"]:
            if method["tool"] not in listed:
                listed.add(method["tool"])
                unclassified["methods"].append({**method, "name": method["tool"]})
    return [*kept, unclassified]


def build_listing(
    served_tools: Sequence[Any],
    implemented: Sequence[Implementation],
    supported: Sequence[str] | None = None,
    hidden: Collection[str] = (),
) -> dict[str, Any]:
    """The ``list_interfaces`` result for tools as served and the (conforming) implementations.

    ``hidden``: tools the server has but does not serve this caller (its token lacks their
    scopes); a nonconforming implementation naming one is left out, not reported."""
    by_name = {t["name"]: t for t in (_tool_dict(x) for x in served_tools)}
    sections: list[dict[str, Any]] = []
    classified: set[str] = set()
    for impl in implemented:
        if not impl.conforms:
            continue
        methods = [
            _method_entry(m.name, impl.tool_for(m.name), m.description, m.parameters, m.returns)
            for m in impl.interface.methods
        ]
        classified.update(entry["tool"] for entry in methods)
        section: dict[str, Any] = {
            "interface": impl.interface.name, "description": impl.interface.description, "methods": methods,
        }
        if impl.interface.deprecated:
            section["deprecated"] = impl.interface.deprecated
        sections.append(section)
    rest = [
        _method_entry(name, name, t.get("description") or "", t.get("inputSchema"), t.get("outputSchema"))
        for name, t in by_name.items()
        if name not in classified and name != METHOD
    ]
    for entry in [*(m for s in sections for m in s["methods"]), *rest]:
        tool = by_name.get(entry["tool"], {})  # the tool's own hints travel with every method
        if tool.get("annotations"):
            entry["annotations"] = tool["annotations"]
        if tool.get("title"):
            entry["title"] = tool["title"]
    sections.append({"interface": UNCLASSIFIED, "description": UNCLASSIFIED_DESCRIPTION, "methods": rest})
    result: dict[str, Any] = {"interfaces": select_sections(sections, supported)}
    failing = [
        {"interface": i.interface.name, "tools": dict(i.tools), "errors": i.report.errors() if i.report else []}
        for i in implemented
        if not i.conforms and not set(i.tools.values()) & set(hidden)
    ]
    if failing:
        result["nonconforming"] = failing
    return result


# ---------------------------------------------------------------------------- client side


def negotiated(listing: Mapping[str, Any], supported: Sequence[str] | None) -> list[dict[str, Any]]:
    """The sections of a ``list_interfaces`` result after negotiation (the server may not have applied it)."""
    sections = listing.get("interfaces")
    if not isinstance(sections, list):
        raise ValueError("a list_interfaces result needs an 'interfaces' list")
    return select_sections([dict(s) for s in sections if isinstance(s, Mapping) and "interface" in s], supported)


def tools_of(sections: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """MCP-style tool dicts from listing sections; interface tools get ``_interface`` and ``_method``."""
    tools: dict[str, dict[str, Any]] = {}
    for section in sections:
        interface = section["interface"]
        for method in section.get("methods", []):
            tool = str(method.get("tool") or method["name"])
            if tool in tools:
                continue
            entry: dict[str, Any] = {
                "name": tool,
                "description": method.get("description") or "",
                "inputSchema": method.get("parameters") or {"type": "object", "properties": {}},
            }
            if method.get("returns"):
                entry["outputSchema"] = method["returns"]
            for key in ("annotations", "title"):
                if method.get(key):
                    entry[key] = method[key]
            if interface != UNCLASSIFIED:
                entry["_interface"] = interface
                entry["_method"] = method["name"]
            tools[tool] = entry
    return list(tools.values())


def server_offers_interfaces(capabilities: Any) -> bool:
    """True when a server's capabilities advertise ``mcs/interfaces``."""
    if capabilities is None:
        return False
    for field in ("extensions", "experimental"):
        table = getattr(capabilities, field, None)
        if isinstance(table, Mapping) and EXTENSION_ID in table:
            return True
    return False


def _request_types() -> tuple[type[Any], type[Any]]:
    import mcp.types as mt

    class ListInterfacesParams(mt.RequestParams):
        supported: list[str] | None = None

    class ListInterfacesRequest(mt.Request[ListInterfacesParams | None, Literal["list_interfaces"]]):
        method: Literal["list_interfaces"] = "list_interfaces"
        params: ListInterfacesParams | None = None

    return ListInterfacesParams, ListInterfacesRequest


_TYPES: tuple[type[Any], type[Any]] | None = None


def request_types() -> tuple[type[Any], type[Any]]:
    """``(ListInterfacesParams, ListInterfacesRequest)`` as SDK models (built once, lazily)."""
    global _TYPES
    if _TYPES is None:
        _TYPES = _request_types()
    return _TYPES


async def request_listing(session: Any, supported: Sequence[str] = ()) -> dict[str, Any] | None:
    """Send ``list_interfaces``; ``None`` when the server does not know the method."""
    from mcp.shared.exceptions import MCPError
    from pydantic import TypeAdapter

    params_type, request_type = request_types()
    request = request_type(params=params_type(supported=list(supported)) if supported else None)
    try:
        result: dict[str, Any] = await session.send_request(request, TypeAdapter(dict[str, Any]))
    except MCPError as exc:
        if exc.code == METHOD_NOT_FOUND:
            return None
        raise
    return result


async def call_listing_tool(client: Any, supported: Sequence[str] = ()) -> dict[str, Any] | None:
    """Read the listing through the ``list_interfaces`` tool; ``None`` if it fails or is unreadable."""
    result = await client.call_tool(METHOD, {"supported": list(supported)} if supported else {})
    if result.is_error:
        return None
    data = result.structured_content
    if data is None:
        text = "".join(getattr(b, "text", "") for b in result.content or [])
        try:
            data = json.loads(text)
        except ValueError:
            return None
    return data if isinstance(data, dict) and isinstance(data.get("interfaces"), list) else None


# ---------------------------------------------------------------------------- server side


def install(
    server: Any,
    driver: Any = None,
    *,
    implements: Any = None,
    registry: InterfaceRegistry | None = None,
    as_method: bool = True,
) -> list[Implementation]:
    """Offer ``list_interfaces`` on an MCP server built with the official SDK.

    ``server`` is an ``mcp.server.mcpserver.MCPServer`` or a low-level
    ``mcp.server.lowlevel.Server`` that handles ``tools/list`` and ``tools/call``;
    ``driver`` is the MCS driver it serves, if any. The declaration is ``implements``
    (``["media.player.v1"]``, ``{"media.player.v1": {"play": "player_play"}}``...: see
    :mod:`.declaration`), else ``driver.implements``::

        server = MCPServer("media")
        ...                                   # @server.tool() for player_play, player_pause...
        install(server, implements={"media.player.v1": {"play": "player_play", "pause": "player_pause",
                                                        "set_volume": "player_volume"}})

    Registers the ``list_interfaces`` request method, adds a ``list_interfaces`` tool (by
    wrapping the server's ``tools/list`` and ``tools/call`` handlers), serves implementing
    tools with the canonical descriptions in ``tools/list``, and advertises
    ``mcs/interfaces`` (with the declared interface names) in the server's capabilities.
    Each interface is checked against the served tools on first request; one that does
    not conform is logged and its tools listed as unclassified (``nonconforming`` says why).

    A server that declares no interface gets the request method only: its tool list is
    left exactly as it is. ``as_method=False`` offers only the tool (no request method, no
    capability), for servers that must stay within the standard method set.

    Returns the declared implementations (checked against the driver's own tools when it
    is a :class:`mcs.ToolDriver`; the served listing is re-checked when first requested).

    Raises:
        ConfigurationError: an interface the registry does not know (the message names
            the known versions of its family), or a mapping naming a method it lacks.
        ValueError: ``server`` has no ``tools/list`` and ``tools/call`` handlers.
    """
    import mcp.types as mt

    target = _target(driver) if driver is not None else str(getattr(server, "name", None) or "server")
    server = _lowlevel(server)
    spec = declared(driver, implements)
    names = [interface.name for interface, _ in resolve(spec, registry=registry)] if spec else []
    list_entry = server.get_request_handler("tools/list")
    call_entry = server.get_request_handler("tools/call")
    if list_entry is None or call_entry is None:
        raise ValueError("install(server, driver) needs a server that already handles tools/list and tools/call")
    params_type, _ = request_types()
    state: dict[frozenset[str], list[Implementation]] = {}
    preview: list[Implementation] = []
    list_tools = getattr(driver, "list_tools", None)
    if spec is not None and callable(list_tools):
        preview = implementations(list_tools(), spec, registry=registry, target=target)
        for impl in preview:
            if not impl.conforms and impl.report is not None:
                logger.warning("%s", impl.report.to_text())
    if as_method:
        # With the driver's tools at hand, only what conforms; else what is declared (the
        # served tools are checked on first request).
        advertised = [i.interface.name for i in preview if i.conforms] if preview else names
        _advertise(server, {"method": METHOD, "tool": METHOD, "interfaces": advertised})

    async def served_tools(ctx: Any) -> list[Any]:
        tools: list[Any] = []
        cursor: str | None = None
        for _ in range(1000):
            page = await list_entry.handler(ctx, mt.PaginatedRequestParams(cursor=cursor))
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    async def implemented(ctx: Any, tools: list[Any] | None = None) -> tuple[list[Any], list[Implementation]]:
        """The tools this request is served and the implementations among them. Checked once
        per set of tools: callers whose tokens see different tools (OAuth scopes) each get
        the check of their own set, never another caller's."""
        tools = tools if tools is not None else await served_tools(ctx)
        key = frozenset(str(getattr(t, "name", "")) for t in tools)
        found = state.get(key)
        if found is None:
            found = implementations(tools, spec, registry=registry, target=target) if spec else []
            if not state:  # a nonconforming declaration is reported once, not per caller
                for impl in found:
                    if not impl.conforms and impl.report is not None:
                        logger.warning("%s", impl.report.to_text())
            state[key] = found
        return tools, found

    async def listing(ctx: Any, supported: Sequence[str] | None) -> dict[str, Any]:
        tools, impls = await implemented(ctx)
        return build_listing(tools, impls, supported, hidden=hidden_from(tools))

    def hidden_from(tools: list[Any]) -> frozenset[str]:
        """The driver's tools missing from ``tools`` (the ones this caller is not served)."""
        own = getattr(driver, "list_tools", None)
        if not callable(own):
            return frozenset()
        return frozenset(str(t.name) for t in own()) - {str(getattr(t, "name", "")) for t in tools}

    async def on_list_interfaces(ctx: Any, params: Any) -> dict[str, Any]:
        return await listing(ctx, getattr(params, "supported", None))

    async def on_list_tools(ctx: Any, params: Any) -> Any:
        page = await list_entry.handler(ctx, params)
        whole = page.tools if page.next_cursor is None and getattr(params, "cursor", None) is None else None
        impls = (await implemented(ctx, whole))[1] if spec else []
        canonical: dict[str, str] = {}
        for impl in impls:
            if impl.conforms:
                for method in impl.interface.methods:
                    canonical.setdefault(impl.tool_for(method.name), method.description)
        tools = [
            t.model_copy(update={"description": canonical[t.name]}) if t.name in canonical else t for t in page.tools
        ]
        if page.next_cursor is None and not any(t.name == METHOD for t in tools):
            tools.append(_listing_tool(mt))
        return page.model_copy(update={"tools": tools})

    async def on_call_tool(ctx: Any, params: Any) -> Any:
        if params.name != METHOD:
            return await call_entry.handler(ctx, params)
        supported = (params.arguments or {}).get("supported")
        if supported is not None and not (
            isinstance(supported, list) and all(isinstance(s, str) for s in supported)
        ):
            return mt.CallToolResult(
                content=[mt.TextContent(type="text", text="'supported' must be a list of interface names")],
                is_error=True,
            )
        data = await listing(ctx, supported)
        return mt.CallToolResult(
            content=[mt.TextContent(type="text", text=json.dumps(data, ensure_ascii=False))],
            structured_content=data,
        )

    if as_method:
        server.add_request_handler(METHOD, params_type, on_list_interfaces)
    if spec is None:
        # Nothing declared: the method still answers (every tool unclassified), but the
        # served tool list stays exactly the driver's own (a gen-mcp file's, for example).
        return preview
    server.add_request_handler("tools/list", list_entry.params_type, on_list_tools)
    server.add_request_handler("tools/call", call_entry.params_type, on_call_tool)
    return preview


def _lowlevel(server: Any) -> Any:
    """The low-level ``Server`` behind ``server``: itself, or the one an ``MCPServer`` wraps."""
    if callable(getattr(server, "get_request_handler", None)) and callable(getattr(server, "add_request_handler", None)):
        return server
    # MCPServer (SDK 2.x) builds its low-level Server at construction and exposes no
    # public accessor; this is the one place that reaches for it.
    inner = getattr(server, "_lowlevel_server", None)
    if inner is not None:
        return inner
    raise ValueError(f"install() needs an MCP server built with the official SDK, got {type(server).__name__}")


def _advertise(server: Any, settings: dict[str, Any]) -> None:
    """Announce ``mcs/interfaces`` under ``capabilities.extensions`` (2026 sessions) and
    ``capabilities.experimental`` (earlier sessions, which drop ``extensions``)."""
    server.extensions[EXTENSION_ID] = settings
    original = server.get_capabilities

    def get_capabilities(
        notification_options: Any = None, experimental_capabilities: Any = None, *args: Any, **kwargs: Any
    ) -> Any:
        experimental = dict(experimental_capabilities or {})
        experimental.setdefault(EXTENSION_ID, settings)
        return original(notification_options, experimental, *args, **kwargs)

    server.get_capabilities = get_capabilities


def _target(driver: Any) -> str:
    if driver is None:
        return "server"
    meta = getattr(driver, "meta", None)
    return str(getattr(meta, "name", None) or type(driver).__name__)


def _listing_tool(mt: Any) -> Any:
    return mt.Tool(
        name=METHOD,
        description=(
            "List the interfaces this server implements, with every method's canonical name, "
            "description and parameter and result schemas; other tools are under 'unclassified'."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "supported": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Interface versions the caller understands, e.g. ['media.player.v1'].",
                }
            },
        },
        annotations=mt.ToolAnnotations(read_only_hint=True, idempotent_hint=True),
    )
