"""Several drivers behind one contract.

A :class:`Toolbox` is itself a driver: one function description, one system prompt,
one ``process_llm_response`` that routes each call to the driver that owns the tool.
Tool names are kept as the drivers chose them and prefixed (``<member>_<name>``) only
where two drivers use the same name. Drivers built on :class:`~mcs.ToolDriver` are
merged tool by tool; a driver that implements only the bare MCS contract is chained
(it gets the response when no merged tool claims it, per the MCS chaining rule).

Policies and hooks registered on the toolbox run before those of the member driver,
which still applies its own. They cannot see the calls a bare-contract member runs itself,
so a toolbox with policies, hooks or limits refuses to chain (``ConfigurationError``).

Members' prompts and resources pass through too (``prompts()``, ``render_prompt()``,
``resources()``, ``resource_templates()``, ``read_resource()``, ``acomplete()``): a prompt
name two members share is prefixed like a tool, a URI is read from the first member
that has it. A member's change (and :meth:`Toolbox.add`) is announced to the
toolbox's own change listeners.
"""

from __future__ import annotations

import json
import tomllib
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from mcs import prompts
from mcs.context import AgentContext
from mcs.driver import DriverMeta, MCSDriver, ToolDriver, _Prepared, refuse_unknown_options
from mcs.errors import ConfigurationError, InvalidInputError, ToolNotFoundError
from mcs.interfaces import normalise_declaration
from mcs.pipeline import Controls, Invocation
from mcs.tools import Tool, ToolCall, sanitize_tool_name
from mcs.validation import ArgumentValidator

_NAMESPACE = uuid.UUID("0c4a3c52-2f4e-4f1b-8a43-8f0d6d2b7a11")
_MEMBER = "toolbox_member"
_MEMBER_TOOL = "member_tool"
#: Driver options that name files; relative values are read from the config file's folder.
PATH_OPTIONS = frozenset({"spec", "path", "config", "server_config", "wsdl", "schema", "proto", "dbc"})


class Toolbox(ToolDriver):
    """Combine drivers: ``Toolbox({"pets": rest_driver, "math": function_driver})``.

    A sequence of drivers is keyed by each driver's prefix (``meta.prefix``) or else its
    ``meta.name``, so two prefixed drivers of one kind are told apart.
    Accepts every :class:`~mcs.ToolDriver` option (timeouts, description mode...).
    """

    enforces_deadline = True  # each member enforces its own deadline

    def __init__(
        self,
        drivers: Mapping[str, MCSDriver] | Iterable[MCSDriver],
        *,
        name: str = "toolbox",
        **options: Any,
    ) -> None:
        refuse_unknown_options(Toolbox, options, "Toolbox")
        options.setdefault("timeout", None)
        super().__init__(**options)
        members = dict(drivers) if isinstance(drivers, Mapping) else self._keyed(drivers)
        if not members:
            raise ConfigurationError("a toolbox needs at least one driver")
        self.members: dict[str, MCSDriver] = {}
        self._name = name
        self._unsubscribe: dict[str, Callable[[], None]] = {}
        for key, driver in members.items():
            self._join(key, driver)
        self._build_meta()

    def _build_meta(self) -> None:
        members = self.members
        passed = ("prompts", "resources", "completions")
        capabilities = ["list_changed", *(c for c in passed if any(_offers(d, c) for d in members.values()))]
        self.meta = DriverMeta(
            id=str(uuid.uuid5(_NAMESPACE, ",".join(sorted(members)))),
            name=self._name,
            version="0.1.0",
            protocol="+".join(sorted({d.meta.protocol for d in members.values()})),
            transport="+".join(sorted({d.meta.transport for d in members.values()})),
            spec_format="+".join(sorted({d.meta.spec_format for d in members.values()})),
            target_llms=prompts.target_llms(self.prompt_templates),
            capabilities=tuple(capabilities),
            prefix=self.prefix,
        )

    def _join(self, key: str, driver: MCSDriver) -> None:
        self.members[key] = driver
        if isinstance(driver, ToolDriver):
            self._unsubscribe[key] = driver.add_change_listener(self._member_changed)

    def _member_changed(self, kind: Any, uri: str | None) -> None:
        self.notify_changed(kind, uri)

    def add(self, key: str, driver: MCSDriver) -> None:
        """Add a member while the toolbox is in use; listeners hear that tools, prompts
        and resources changed.

        Raises:
            ConfigurationError: a member already has that key.
        """
        if key in self.members:
            raise ConfigurationError(f"the toolbox already has a member named {key!r}")
        self._join(key, driver)
        self._build_meta()
        self.notify_changed("tools")
        self.notify_changed("prompts")
        self.notify_changed("resources")

    @staticmethod
    def _keyed(drivers: Iterable[MCSDriver]) -> dict[str, MCSDriver]:
        keyed: dict[str, MCSDriver] = {}
        for driver in drivers:
            # A driver built with prefix= is known by it, even one whose meta does not say so.
            key = driver.meta.prefix or getattr(driver, "prefix", None) or driver.meta.name
            if key in keyed:
                raise ConfigurationError(
                    f"two drivers are both named {key!r}; pass a mapping to name them apart"
                )
            keyed[key] = driver
        return keyed

    @classmethod
    def from_config(cls, path: str | Path, **options: Any) -> Toolbox:
        """Build a toolbox from a YAML, JSON or TOML file::

            drivers:
              pets: {driver: rest, spec: petstore.yaml, base_url: "http://127.0.0.1:8000"}
              math: {driver: functions}

        Each entry names a registered driver, or a driver class as
        ``package.module:ClassName``, and its constructor options (inline, or under
        ``options:``). Relative file options (``spec``, ``path``...) are read from the
        config file's folder. ``docs/toolbox.md`` describes the format.
        """
        from mcs.options import check_file_values
        from mcs.registry import driver_class, import_driver_class

        file = Path(path)
        data = _read_config(file)
        entries = data.get("drivers") if isinstance(data, Mapping) else None
        if not isinstance(entries, Mapping) or not entries:
            raise ConfigurationError(f"{file}: expected a 'drivers' mapping of name -> driver options")
        members: dict[str, MCSDriver] = {}
        for key, entry in entries.items():
            if not isinstance(entry, Mapping) or not isinstance(entry.get("driver"), str):
                raise ConfigurationError(f"{file}: drivers.{key} needs a 'driver' name")
            driver_options = dict(entry.get("options") or {})
            driver_options.update({k: v for k, v in entry.items() if k not in ("driver", "options")})
            target = entry["driver"]
            member = import_driver_class(target) if ":" in target else driver_class(target)
            check_file_values(member, driver_options, owner=f"{file}: drivers.{key}")
            for option in (PATH_OPTIONS | _declared_paths(member)) & driver_options.keys():
                driver_options[option] = _from_folder(file.parent, driver_options[option])
            members[str(key)] = member(**driver_options)
        settings = {k: v for k, v in data.items() if k != "drivers"}
        check_file_values(cls, settings, owner=str(file))
        return cls(members, **{**settings, **options})

    # ----------------------------------------------------------------- tools

    def _tool_drivers(self) -> dict[str, ToolDriver]:
        return {k: d for k, d in self.members.items() if isinstance(d, ToolDriver)}

    def _list_tools(self) -> Iterable[Tool]:
        from mcs import discovery

        listed = [
            (key, tool)
            for key, driver in self._tool_drivers().items()
            for tool in driver.list_tools()
            if not discovery.is_meta_tool(tool)
        ]
        counts = Counter(tool.name for _, tool in listed)
        for key, tool in listed:
            name = tool.name if counts[tool.name] == 1 else sanitize_tool_name(f"{key}_{tool.name}")
            meta = {**tool.meta, _MEMBER: key, _MEMBER_TOOL: tool.name}
            yield replace(tool, name=name, meta=meta)

    @property
    def implements(self) -> list[dict[str, Any]] | None:
        """The members' interface declarations (Interfaces RFC), with the tools named as the
        toolbox lists them: a tool prefixed here because two members share its name is in
        ``renamed``. ``None`` when no member declares one, as for a driver without ``implements``.
        """
        listed = {
            (str(t.meta[_MEMBER]), str(t.meta[_MEMBER_TOOL])): t.name
            for t in self.list_tools() if _MEMBER in t.meta
        }
        out: list[dict[str, Any]] = []
        for key, driver in self.members.items():
            renamed = {tool: name for (member, tool), name in listed.items() if member == key and tool != name}
            for ref, mapping, own_renames in normalise_declaration(getattr(driver, "implements", None)):
                out.append({
                    "interface": ref,
                    "tools": {m: renamed.get(t, t) for m, t in mapping.items()},
                    "renamed": {**{t: renamed.get(n, n) for t, n in own_renames.items()}, **renamed},
                })
        return out or None

    def get_function_description(self, model_name: str | None = None) -> str:
        description = super().get_function_description(model_name)
        chained = self._chained()
        if not chained or self.custom_tool_description is not None:
            return description
        own = [description] if self._own_tools() else []
        return "\n\n".join([*own, *(d.get_function_description(model_name) for d in chained)])

    def _chained(self) -> list[MCSDriver]:
        """Members that only speak the MCS contract: their descriptions are appended as they are."""
        return [d for d in self.members.values() if not isinstance(d, ToolDriver)]

    def _offers_tools(self) -> bool:
        return super()._offers_tools() or bool(self._chained())

    # ----------------------------------------------------------------- calls

    def upstream_of(self, tool: Tool) -> str:
        """Each member is its own upstream for the toolbox's circuit breaker."""
        return str(tool.meta.get(_MEMBER, ""))

    def _member(self, invocation: Invocation) -> tuple[ToolDriver, str]:
        key = str(invocation.tool.meta[_MEMBER])
        return self._tool_drivers()[key], str(invocation.tool.meta[_MEMBER_TOOL])

    def _validator(self, tool: Tool) -> ArgumentValidator:
        """A member's tool is checked by the member's own validator, whatever name the toolbox
        lists it under: a driver's may take more forms than the schema shows or check more
        (gRPC's protobuf JSON forms and ``Any`` check, REST's body repair), in ``prepare`` and
        in strict RFC-0001 serving alike. Its errors name the tool as the toolbox lists it."""
        key, name = tool.meta.get(_MEMBER), tool.meta.get(_MEMBER_TOOL)
        driver = self._tool_drivers().get(str(key)) if key is not None else None
        own = driver.get_tool(str(name)) if driver is not None and name is not None else None
        if driver is None or own is None:
            return super()._validator(tool)
        validator = driver._validator(own)
        return validator if own.name == tool.name else _Renamed(validator, tool.name, own.name)

    def _call_tool(self, invocation: Invocation) -> Any:
        driver, name = self._member(invocation)
        return driver.call_tool(name, invocation.arguments, context=invocation.context)

    async def _acall_tool(self, invocation: Invocation) -> Any:
        driver, name = self._member(invocation)
        return await driver.acall_tool(name, invocation.arguments, context=invocation.context)

    def _judges(self, prepared: list[_Prepared]) -> list[tuple[int, Invocation, Controls]]:
        """The toolbox's policies, then the member's (and, for a member that is a toolbox
        itself, its own members'), for each call of a batch: a call a member's policies
        refuse runs none of the batch either. (A member judges its policies again as the
        call runs; a policy that changed its mind then stops the batch there.)"""
        judges = super()._judges(prepared)
        for place, p in enumerate(prepared, 1):
            if _MEMBER not in p.invocation.tool.meta:
                continue
            driver, name = self._member(p.invocation)
            call = ToolCall(name=name, arguments=p.invocation.arguments)
            own = driver.prepare(call, p.invocation.context)
            judges += [(place, invocation, controls) for _, invocation, controls
                       in driver._judges([_Prepared(call, own, None)]) if controls.policies]
        return sorted(judges, key=lambda judge: judge[0])  # stable: the toolbox's before its member's

    def process_llm_response(self, llm_response: Any, *, context: AgentContext | None = None) -> Any:
        """Route each call to its driver; chain through bare-contract members otherwise."""
        result = super().process_llm_response(llm_response, context=context)
        if result is not llm_response:
            return result
        self._refuse_unguarded_chaining()
        for driver in self.members.values():
            if not isinstance(driver, ToolDriver):
                result = driver.process_llm_response(llm_response, context=context)
                if result is not llm_response:
                    return result
        return llm_response

    async def aprocess_llm_response(
        self, llm_response: Any, *, context: AgentContext | None = None
    ) -> Any:
        result = await super().aprocess_llm_response(llm_response, context=context)
        if result is not llm_response:
            return result
        self._refuse_unguarded_chaining()
        for driver in self.members.values():
            if not isinstance(driver, ToolDriver):
                result = await driver.aprocess_llm_response(llm_response, context=context)
                if result is not llm_response:
                    return result
        return llm_response

    def _refuse_unguarded_chaining(self) -> None:
        """Refuse to hand a response to bare-contract members while the toolbox has policies,
        hooks or limits: such a member runs the calls it finds itself, unseen by them, so a
        call the toolbox's policies deny would run and its audit hooks would miss it.

        Raises:
            ConfigurationError: naming the members, and what to do.
        """
        chained = [key for key, d in self.members.items() if not isinstance(d, ToolDriver)]
        if chained and not self.controls.is_empty():
            raise ConfigurationError(
                f"the toolbox has policies, hooks or limits, which cannot see the calls of its "
                f"bare-contract member(s) {', '.join(map(repr, chained))}: build them on ToolDriver "
                "(so their tools are merged and checked), or put the controls on each member"
            )

    # ----------------------------------------------------------------- prompts and resources

    def _offering(self, capability: str) -> dict[str, Any]:
        """Members offering prompts, resources or completions (by their methods, as ``mcs serve`` reads them)."""
        return {k: d for k, d in self.members.items() if _offers(d, capability)}

    def _prompt_routes(self) -> dict[str, tuple[Any, str, Any]]:
        listed = [(key, p) for key, d in self._offering("prompts").items() for p in d.prompts()]
        counts = Counter(_field(p, "name") for _, p in listed)
        routes: dict[str, tuple[Any, str, Any]] = {}
        for key, item in listed:
            original = str(_field(item, "name"))
            exposed = original if counts[original] == 1 else f"{key}_{original}"
            routes[exposed] = (self.members[key], original, item)
        return routes

    def prompts(self) -> list[Any]:
        """Every member's prompts (a shared name prefixed with the member's key)."""
        out: list[Any] = []
        for exposed, (_, original, item) in self._prompt_routes().items():
            if exposed != original:
                item = {**item, "name": exposed} if isinstance(item, Mapping) else _renamed(item, exposed)
            out.append(item)
        return out

    def _prompt_owner(self, name: str) -> tuple[Any, str]:
        route = self._prompt_routes().get(name)
        if route is None:
            raise ToolNotFoundError(f"There is no prompt named {name!r}.", tool=name)
        return route[0], route[1]

    def render_prompt(self, name: str, arguments: Mapping[str, Any], context: AgentContext | None = None) -> Any:
        driver, original = self._prompt_owner(name)
        return driver.render_prompt(original, arguments, context or AgentContext())

    async def arender_prompt(
        self, name: str, arguments: Mapping[str, Any], context: AgentContext | None = None
    ) -> Any:
        driver, original = self._prompt_owner(name)
        render = getattr(driver, "arender_prompt", None)
        if callable(render):
            return await render(original, arguments, context or AgentContext())
        import asyncio

        return await asyncio.to_thread(driver.render_prompt, original, arguments, context or AgentContext())

    def resources(self) -> list[Any]:
        """Every member's static resources, in member order."""
        return [r for d in self._offering("resources").values() for r in d.resources()]

    def resource_templates(self) -> list[Any]:
        """Every member's resource templates, in member order."""
        out: list[Any] = []
        for driver in self._offering("resources").values():
            templates = getattr(driver, "resource_templates", None)
            if callable(templates):
                out.extend(templates())
        return out

    def read_resource(self, uri: str, context: AgentContext | None = None) -> Any:
        """The content at ``uri`` from the first member that has it."""
        for driver in self._offering("resources").values():
            try:
                return driver.read_resource(uri, context or AgentContext())
            except (ToolNotFoundError, KeyError):
                continue
        raise ToolNotFoundError(f"There is no resource {uri!r}.", tool=uri)

    async def aread_resource(self, uri: str, context: AgentContext | None = None) -> Any:
        import asyncio

        for driver in self._offering("resources").values():
            read = getattr(driver, "aread_resource", None)
            try:
                if callable(read):
                    return await read(uri, context or AgentContext())
                return await asyncio.to_thread(driver.read_resource, uri, context or AgentContext())
            except (ToolNotFoundError, KeyError):
                continue
        raise ToolNotFoundError(f"There is no resource {uri!r}.", tool=uri)

    def resource_updated(self, uri: str) -> None:
        """Announce that the resource at ``uri`` has new content (members' own announcements
        pass through on their own)."""
        self.notify_changed("resource", uri)

    async def acomplete(
        self, kind: str, name: str, argument: str, value: str, arguments: Mapping[str, str] | None = None
    ) -> list[str]:
        """Completions from the member that owns the prompt or resource template."""
        members = self._offering("completions")
        if kind == "prompt":
            route = self._prompt_routes().get(name)
            if route is None or route[0] not in members.values():
                return []
            targets, name = [route[0]], route[1]
        else:
            targets = list(members.values())
        for driver in targets:
            acomplete = getattr(driver, "acomplete", None)
            if callable(acomplete):
                values: list[str] = await acomplete(kind, name, argument, value, arguments)
                if values:
                    return values
        return []

    def complete(
        self, kind: str, name: str, argument: str, value: str, arguments: Mapping[str, str] | None = None
    ) -> list[str]:
        from mcs._callables import run_awaitable

        result: list[str] = run_awaitable(self.acomplete(kind, name, argument, value, arguments))
        return result

    def has_completions(self) -> bool:
        return any(getattr(d, "has_completions", lambda: True)() for d in self._offering("completions").values())

    def close(self) -> None:
        for remove in self._unsubscribe.values():
            remove()
        for driver in self.members.values():
            close = getattr(driver, "close", None)
            if callable(close):
                close()

    async def aclose(self) -> None:
        """Close every member from async code: its own ``aclose`` when it has one (so pools
        bound to this event loop close on it), else its ``close`` on a worker thread."""
        import asyncio

        for remove in self._unsubscribe.values():
            remove()
        for driver in self.members.values():
            aclose = getattr(driver, "aclose", None)
            close = getattr(driver, "close", None)
            if callable(aclose):
                await aclose()
            elif callable(close):
                await asyncio.to_thread(close)


class _Renamed(ArgumentValidator):
    """A member's validator for a tool the toolbox lists under another name: the member's
    checks and repairs, with its refusals naming the tool as the toolbox lists it."""

    __slots__ = ("_inner", "_own")

    def __init__(self, inner: ArgumentValidator, tool: str, own: str) -> None:
        # No compiled schema of its own: every check is the member's.
        self._inner, self._tool, self._own = inner, tool, own
        self.secret_mask = inner.secret_mask

    @property
    def schema(self) -> Mapping[str, Any]:
        return self._inner.schema

    def validate(self, arguments: Any) -> dict[str, Any]:
        return self._as_listed(self._inner.validate, arguments)

    def validate_valid_text(self, arguments: Any) -> dict[str, Any]:
        return self._as_listed(self._inner.validate_valid_text, arguments)

    def validate_as_sent(self, arguments: Any) -> dict[str, Any]:
        return self._as_listed(self._inner.validate_as_sent, arguments)

    def _as_listed(self, check: Callable[[Any], dict[str, Any]], arguments: Any) -> dict[str, Any]:
        """``check(arguments)``, its refusal naming the tool as the toolbox lists it."""
        try:
            return check(arguments)
        except InvalidInputError as error:
            message = error.message
            for lead in ("Invalid arguments for ", "The arguments of "):
                if message.startswith(lead + self._own):
                    message = lead + self._tool + message[len(lead + self._own):]
                    break
            raise InvalidInputError(message, tool=self._tool, details=error.details) from None


_OFFER_METHODS = {
    "prompts": ("prompts", "render_prompt"),
    "resources": ("resources", "read_resource"),
    "completions": ("acomplete",),
}


def _offers(driver: MCSDriver, capability: str) -> bool:
    return all(callable(getattr(driver, method, None)) for method in _OFFER_METHODS[capability])


def _field(item: Any, name: str) -> Any:
    return item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)


def _renamed(item: Any, name: str) -> Any:
    """A copy of a prompt object (a dataclass or a pydantic model) with another name."""
    copy = getattr(item, "model_copy", None)
    if callable(copy):
        return copy(update={"name": name})
    return replace(item, name=name)


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe subset, refusing a mapping that names one key twice (YAML keeps the last
    silently, so a second ``timeout:`` further down would override the one a reader saw)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *base`: its keys may be overridden
                continue
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, list | dict):  # unhashable: SafeConstructor says so itself
                continue
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"the key {key!r} appears twice in one mapping", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {key!r} appears twice in one object")
        out[key] = value
    return out


def _read_config(file: Path) -> Any:
    """The file's data; a key given twice in one mapping is refused (TOML refuses it itself)."""
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigurationError(f"cannot read toolbox config {file}: {exc.strerror}") from None
    try:
        if file.suffix == ".json":
            return json.loads(text, object_pairs_hook=_unique_pairs)
        if file.suffix == ".toml":
            return tomllib.loads(text)
        return yaml.load(text, Loader=_UniqueKeyLoader)
    except (ValueError, yaml.YAMLError) as exc:
        kind = {".json": "JSON", ".toml": "TOML"}.get(file.suffix, "YAML")
        raise ConfigurationError(f"{file} is not valid {kind}: {exc}") from None


def _declared_paths(cls: type[MCSDriver]) -> frozenset[str]:
    """The file-path options a driver class declares (``ToolDriver.path_options``)."""
    declared: frozenset[str] = getattr(cls, "path_options", frozenset())
    return frozenset(declared)


def _from_folder(folder: Path, value: Any) -> Any:
    """A relative path (or each of a list of them) read from ``folder``; URLs stay as they are."""
    if isinstance(value, list):
        return [_from_folder(folder, item) for item in value]
    if isinstance(value, str) and "://" not in value and not Path(value).is_absolute():
        return str(folder / value)
    return value
