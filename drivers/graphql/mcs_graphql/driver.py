"""The GraphQL driver: any GraphQL API as MCS tools, arguments only as variables."""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from collections.abc import AsyncGenerator, Iterable, Iterator, Mapping, Sequence
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

from gql.utilities import get_introspection_query_ast
from graphql import GraphQLSchema, print_ast

from mcs import discovery
from mcs.driver import (
    DriverMeta,
    ToolDriver,
    non_negative_int,
    non_negative_seconds,
    refuse_unknown_options,
)
from mcs.errors import ConfigurationError, ExecutionError, InvalidInputError, ToolCallError
from mcs.pipeline import Invocation
from mcs.tools import Tool, sanitize_tool_name, unique_tool_names
from mcs_graphql import _freeform
from mcs_graphql._explore import SchemaExplorer
from mcs_graphql._http import Answer, AuthHeaders, HttpLink, check_headers
from mcs_graphql._inputs import InputSchemas
from mcs_graphql._limits import Limits, check
from mcs_graphql._operations import MutationsMode, Operation, generated, operation_files, persisted
from mcs_graphql._request import FixedRequest
from mcs_graphql._results import shaped
from mcs_graphql._schema import LoadedSchema, SchemaError, SchemaSource, from_introspection, load
from mcs_graphql._selection import SelectionRules
from mcs_graphql._ws import subscribe

__version__ = "0.1.0"

Freeform = bool | Literal["auto"]
OperationSource = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


class GraphQLDriver(ToolDriver):
    """Tools for one GraphQL API, three ways (combinable).

    * **generated**: one tool per root field of Query (and Mutation with
      ``mutations="all"``, and Subscription), its arguments as the input schema and a
      bounded selection set (``selection_depth``, ``selections`` overrides it per field);
    * **persisted**: one tool per named operation of the ``.graphql`` files in
      ``operations`` (a folder or a list of files), described by its leading comment;
    * **free-form** (``freeform``: ``"auto"`` turns them on when the tools go to discovery
      mode): ``search_schema``, ``describe_type`` and ``execute``, whose document is checked
      against the schema and ``limits`` before anything is sent.

    Keyword arguments, besides :class:`mcs.ToolDriver`'s (``timeout``, ``prefix``,
    ``description_mode``, ``token_budget``, ...):

    * ``url``: the HTTP endpoint; ``ws_url`` the subscription endpoint (default: ``url``
      with ``ws``/``wss``). Requests go there only, never anywhere the model names.
    * ``schema``: an SDL or introspection-JSON file, SDL text, an introspection mapping or
      a :class:`graphql.GraphQLSchema`; without it the schema is fetched from ``url`` by
      introspection. ``lenient=True`` drops fields a schema defines twice.
    * ``mutations``: ``"none"`` (default), ``"persisted"`` (persisted mutations only) or
      ``"all"`` (generated mutation tools and free-form mutations too).
    * ``headers`` (static) and ``auth`` (a callable returning headers, called before every
      request, so it can refresh a token; called again once after an HTTP 401).
    * ``max_response_bytes`` (1 MiB), ``retries`` (2, queries only), ``backoff`` (0.25 s),
      ``verify`` (TLS), ``page_size`` (10, the default ``first`` of connections),
      ``scalars`` (JSON Schema per custom scalar), ``limits`` (:class:`Limits` or a dict),
      ``subscription_max_events`` (20) and ``subscription_window`` (10 s), ``name``.

    Raises:
        ConfigurationError: an option is wrong, or the schema or an operation file cannot
            be loaded (:class:`SchemaError`, naming the file and the place).
    """

    enforces_deadline = True

    def __init__(
        self,
        url: str | None = None,
        *,
        schema: SchemaSource | None = None,
        operations: OperationSource | None = None,
        generate: bool = True,
        freeform: Freeform = "auto",
        mutations: MutationsMode = "none",
        selections: Mapping[str, str] | None = None,
        selection_depth: int = 2,
        page_size: int = 10,
        scalars: Mapping[str, Mapping[str, Any]] | None = None,
        limits: Limits | Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        auth: AuthHeaders | None = None,
        ws_url: str | None = None,
        max_response_bytes: int = 1_048_576,
        retries: int = 2,
        backoff: float = 0.25,
        verify: bool | str = True,
        subscription_max_events: int = 20,
        subscription_window: float = 10.0,
        lenient: bool = False,
        name: str | None = None,
        **options: Any,
    ) -> None:
        refuse_unknown_options(GraphQLDriver, options, "the GraphQL driver")
        super().__init__(**options)
        retries, backoff = non_negative_int("retries", retries), non_negative_seconds("backoff", backoff)
        if mutations not in ("none", "persisted", "all"):
            raise ConfigurationError(f"mutations must be 'none', 'persisted' or 'all', not {mutations!r}")
        if freeform not in (True, False, "auto"):
            raise ConfigurationError(f"freeform must be true, false or 'auto', not {freeform!r}")
        for option, value in (("max_response_bytes", max_response_bytes), ("selection_depth", selection_depth),
                              ("page_size", page_size), ("subscription_max_events", subscription_max_events)):
            if not isinstance(value, int) or value < 1:
                raise ConfigurationError(f"{option} must be a positive integer, not {value!r}")
        if url is not None:
            _check_url(url, ("http", "https"), "url")
        if ws_url is not None:
            _check_url(ws_url, ("ws", "wss"), "ws_url")
        if auth is not None and not callable(auth):
            raise ConfigurationError("auth must be a callable returning a mapping of headers")
        self.url = url
        self.ws_url = ws_url or (_ws_from(url) if url else None)
        self.mutations: MutationsMode = mutations
        self.limits = Limits.from_option(limits)
        self.subscription_max_events = subscription_max_events
        self.subscription_window = float(subscription_window)
        self._static_headers = check_headers(headers or {}, "headers")
        self._link = HttpLink(
            url or "", headers=self._static_headers, auth=auth, max_response_bytes=max_response_bytes,
            retries=retries, backoff=backoff, verify=verify,
        ) if url else None
        try:
            self.loaded = self._load(schema, lenient)
            self.schema: GraphQLSchema = self.loaded.schema
            converter = InputSchemas(scalars)
            ops: list[Operation] = []
            if generate:
                ops += generated(self.schema, converter, mutations=mutations,
                                 rules=SelectionRules(depth=selection_depth), page_size=page_size,
                                 selections=selections or {})
            elif selections:
                raise ConfigurationError("selections applies to generated tools, and generate is false")
            if operations is not None:
                ops += persisted(operation_files(operations), self.schema, converter, mutations=mutations)
            self.explorer = SchemaExplorer(self.schema)
            self._targets: dict[str, Operation | str] = {}
            self._op_tools = self._tools_for(ops, freeform)
            has_streams = self.schema.subscription_type is not None or any(op.kind == "subscription" for op in ops)
        except BaseException:
            self.close()  # the introspection may have opened a connection pool
            raise
        self.meta = DriverMeta(
            id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"mcs-driver-graphql:{url or self.loaded.origin}")),
            name=name or "graphql",
            version=__version__,
            protocol="GraphQL",
            transport="HTTP",
            spec_format=self.loaded.spec_format,
            capabilities=("stream",) if has_streams else (),
            prefix=self.prefix,
        )

    # ------------------------------------------------------------------ loading

    def _load(self, schema: SchemaSource | None, lenient: bool) -> LoadedSchema:
        if schema is not None:
            return load(schema, lenient=lenient)
        if self._link is None:
            raise ConfigurationError("give the GraphQL endpoint (url=...) or a schema (schema=...), or both")
        request = FixedRequest(print_ast(get_introspection_query_ast()), None, None)
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        try:
            answer = self._link.send(request, deadline, retryable=True, tool="introspection")
            data = shaped(answer.data, answer.errors, "introspection", answer.secrets)
        except ToolCallError as exc:
            raise SchemaError(f"{self.url}: the schema could not be fetched by introspection: {exc.message}") from None
        if answer.truncated is not None or not isinstance(data, Mapping):
            raise SchemaError(f"{self.url}: the introspection answer was not a schema (or passed max_response_bytes)")
        return from_introspection(data, str(self.url))

    def _tools_for(self, ops: list[Operation], freeform: Freeform) -> list[Tool]:
        tools = [Tool(name=sanitize_tool_name(op.name), description=op.description, input_schema=op.input_schema)
                 for op in ops]
        wanted = freeform is True or (freeform == "auto" and (
            not ops or self.description_mode == "discovery"
            or (self.description_mode == "auto" and discovery.choose_mode(tools, self.token_budget) == "discovery")
        ))
        extra = _freeform.tools(self.mutations == "all") if wanted else []
        names = unique_tool_names([op.name for op in ops] + [t.name for t in extra])
        out: list[Tool] = []
        for op, tool_name in zip(ops, names, strict=False):
            self._targets[tool_name] = op
            out.append(Tool(
                name=tool_name, title=op.title, description=op.description, input_schema=op.input_schema,
                annotations=op.annotations,
                meta={"original_name": op.name, "group": op.group, "operation": op.kind, "source": op.source},
            ))
        for tool, tool_name in zip(extra, names[len(ops):], strict=True):
            self._targets[tool_name] = str(tool.meta[_freeform.KIND])
            out.append(Tool(name=tool_name, title=tool.title, description=tool.description,
                            input_schema=tool.input_schema, annotations=tool.annotations, meta=tool.meta))
        return out

    # ------------------------------------------------------------------ tools

    def _list_tools(self) -> Iterable[Tool]:
        return self._op_tools

    @property
    def operations(self) -> Mapping[str, Operation]:
        """The operations by tool name (without prefix): their documents are what is sent."""
        return {name: target for name, target in self._targets.items() if isinstance(target, Operation)}

    def get_function_description(self, model_name: str | None = None) -> str:
        """Like :class:`mcs.ToolDriver`'s; in discovery mode the free-form tools are shown in
        full beside the meta-tools, as they are how the model reaches the rest of the schema."""
        tools = self._tool_map()
        if self.custom_tool_description is not None or self._resolved_mode(tools) != "discovery":
            return super().get_function_description(model_name)
        extra = [t for t in tools.values() if _freeform.KIND in t.meta]
        own = [t for t in self._own_tools() if _freeform.KIND not in t.meta]
        if not extra or not own:
            return super().get_function_description(model_name)
        return discovery.render_description(
            own, [*discovery.meta_tools(self.prefix), *extra], model_name=model_name,
        ) + "\n" + _freeform.HINT

    # ------------------------------------------------------------------ calls

    def _require_link(self, tool: str) -> HttpLink:
        if self._link is None:
            raise ExecutionError(f"{tool} cannot run: the driver has no url (the GraphQL endpoint) configured.", tool=tool)
        return self._link

    def _plan(self, invocation: Invocation) -> tuple[str, str | None, dict[str, Any], str]:
        """The text, operation name, variables and kind to send for ``invocation``."""
        target = self._targets[invocation.tool.unprefixed_name]
        if isinstance(target, Operation):
            return target.text, target.operation_name, target.variables(invocation.arguments), target.kind
        args = invocation.arguments
        variables = args.get("variables") or {}
        if not isinstance(variables, Mapping):
            raise InvalidInputError("variables must be an object of variable names to values.", tool=invocation.tool.name)
        checked = check(str(args["query"]), self.schema, self.limits, mutations=self.mutations == "all",
                        variables=variables, operation_name=args.get("operationName"))
        return checked.text, checked.operation_name, checked.variables, checked.kind

    def _local(self, kind: str, invocation: Invocation) -> Any:
        args = invocation.arguments
        if kind == _freeform.SEARCH:
            return self.explorer.search(str(args["query"]), int(args.get("limit", 10)))
        return self.explorer.describe(str(args["name"]))

    def _answer(self, answer: Answer, tool: str) -> Any:
        if answer.truncated is not None:
            return answer.truncated
        return shaped(answer.data, answer.errors, tool, answer.secrets)

    def _call_tool(self, invocation: Invocation) -> Any:
        tool = invocation.tool.name
        target = self._targets[invocation.tool.unprefixed_name]
        if isinstance(target, str) and target != _freeform.EXECUTE:
            return self._local(target, invocation)
        text, op_name, variables, kind = self._plan(invocation)
        if kind == "subscription":
            return list(self._stream_tool(invocation))
        link = self._require_link(tool)
        answer = link.send(FixedRequest(text, op_name, variables), invocation.deadline, retryable=kind == "query", tool=tool)
        return self._answer(answer, tool)

    async def _acall_tool(self, invocation: Invocation) -> Any:
        tool = invocation.tool.name
        target = self._targets[invocation.tool.unprefixed_name]
        if isinstance(target, str):
            if target != _freeform.EXECUTE:
                return await asyncio.to_thread(self._local, target, invocation)
            text, op_name, variables, kind = await asyncio.to_thread(self._plan, invocation)
        else:
            text, op_name, variables, kind = self._plan(invocation)
        if kind == "subscription":
            return [item async for item in self._astream_tool(invocation)]
        link = self._require_link(tool)
        request = FixedRequest(text, op_name, variables)
        answer = await link.asend(request, invocation.deadline, retryable=kind == "query", tool=tool)
        return self._answer(answer, tool)

    # ------------------------------------------------------------------ streams

    def _is_stream(self, invocation: Invocation) -> bool:
        target = self._targets[invocation.tool.unprefixed_name]
        if isinstance(target, Operation):
            return target.kind == "subscription"
        return target == _freeform.EXECUTE and self.limits.subscriptions

    async def _astream_tool(self, invocation: Invocation) -> AsyncGenerator[Any, None]:
        """A subscription's events, bounded by count, time window, deadline and message size;
        any other tool yields its one result."""
        if not self._is_stream(invocation):
            yield await self._acall_tool(invocation)
            return
        text, op_name, variables, kind = self._plan(invocation)
        if kind != "subscription":
            yield await self._acall_tool(invocation)
            return
        tool = invocation.tool.name
        link = self._require_link(tool)
        if self.ws_url is None:  # pragma: no cover - a url always gives a ws_url
            raise ExecutionError(f"{tool}: no ws_url for subscriptions is configured.", tool=tool)
        auth = await link.aauth_headers()
        headers = {**self._static_headers, **auth}
        events = subscribe(
            self.ws_url, FixedRequest(text, op_name, variables), headers=headers, secrets=link.secrets(auth),
            max_events=self.subscription_max_events, window=self.subscription_window,
            deadline=invocation.deadline, max_bytes=link.max_response_bytes, tool=tool,
        )
        try:
            async for item in events:
                yield item
        finally:
            await events.aclose()

    def _stream_tool(self, invocation: Invocation) -> Iterator[Any]:
        """The sync twin: the subscription runs on a private event loop, closed at the end."""
        if not self._is_stream(invocation):
            yield self._call_tool(invocation)
            return
        loop = asyncio.new_event_loop()
        events = self._astream_tool(invocation)
        try:
            while True:
                try:
                    item = loop.run_until_complete(anext(events))
                except StopAsyncIteration:
                    return
                yield item
        finally:
            loop.run_until_complete(events.aclose())
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    # ------------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Close the HTTP connection pools."""
        if self._link is not None:
            self._link.close()

    async def aclose(self) -> None:
        """Close the pools from inside the event loop that used them."""
        if self._link is not None:
            await self._link.aclose()


def _check_url(url: str, schemes: tuple[str, ...], option: str) -> None:
    parsed = urlsplit(url)
    if parsed.scheme not in schemes or not parsed.hostname:
        raise ConfigurationError(f"{option} must be an absolute {'/'.join(schemes)} URL, got {url!r}")


def _ws_from(url: str) -> str:
    parsed = urlsplit(url)
    return urlunsplit(parsed._replace(scheme="wss" if parsed.scheme == "https" else "ws"))
