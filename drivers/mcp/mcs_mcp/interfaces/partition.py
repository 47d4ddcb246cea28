"""Prompt context partitioning: describe only the interfaces a task needs, switch during a session.

:class:`InterfaceView` wraps any :class:`mcs.ToolDriver` (a toolbox too) that implements
interfaces and offers only the methods of the *active* ones, each with its canonical
description and schemas. :meth:`InterfaceView.use` switches interfaces mid-session (the
seed's "dynamic tool use": ``filesystem.navigator.v1`` to find a file, then
``code.editor.v1`` to edit it). Calls go to the wrapped driver's tools.

The MCP driver has the same switch built in (``interfaces=`` and ``use_interfaces``).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from mcs import prompts
from mcs.driver import DriverMeta, ToolDriver, refuse_unknown_options
from mcs.errors import ConfigurationError
from mcs.pipeline import Invocation
from mcs.tools import Tool
from mcs_mcp.interfaces.declaration import Implementation, declared, implementations
from mcs_mcp.interfaces.registry import InterfaceRegistry
from mcs_mcp.interfaces.versioning import matches


class InterfaceView(ToolDriver):
    """Only the active interfaces of ``driver``, described canonically.

    ``implements`` overrides the driver's own declaration; ``active`` names the interfaces
    (or families) to describe first (default: all declared). Interfaces whose tools do not
    conform are refused at construction, with the conformance errors.
    """

    def __init__(
        self,
        driver: ToolDriver,
        *,
        implements: Any = None,
        active: Sequence[str] | None = None,
        registry: InterfaceRegistry | None = None,
        **options: Any,
    ) -> None:
        refuse_unknown_options(InterfaceView, options, "InterfaceView")
        super().__init__(**options)
        self.driver = driver
        found = implementations(driver.list_tools(), declared(driver, implements), registry=registry,
                                target=driver.meta.name)
        if not found:
            raise ConfigurationError(f"driver {driver.meta.name!r} declares no interface")
        for impl in found:
            if not impl.conforms:
                assert impl.report is not None
                raise ConfigurationError(
                    f"{driver.meta.name} does not conform to {impl.interface.name}: "
                    + "; ".join(impl.report.errors())
                )
        self.implementations: list[Implementation] = found
        self.active: tuple[str, ...] = tuple(active) if active else tuple(i.interface.name for i in found)
        self._check_names(self.active)
        self.meta = DriverMeta(
            id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"mcs:interface-view:{driver.meta.id}")),
            name=driver.meta.name,
            version=driver.meta.version,
            protocol=driver.meta.protocol,
            transport=driver.meta.transport,
            spec_format="MCP Interfaces",
            target_llms=prompts.target_llms(self.prompt_templates),
            prefix=self.prefix,
        )

    def _check_names(self, names: Iterable[str]) -> None:
        for name in names:
            if not any(matches(i.interface.name, name) for i in self.implementations):
                offered = ", ".join(i.interface.name for i in self.implementations)
                raise ConfigurationError(f"interface {name!r} is not implemented here; offered: {offered}")

    def use(self, *names: str) -> None:
        """Switch to these interfaces (names or families); the description changes at once."""
        self._check_names(names)
        self.active = tuple(names)
        self.refresh_tools()

    def _list_tools(self) -> Iterable[Tool]:
        tools: dict[str, Tool] = {}
        for impl in self.implementations:
            if not any(matches(impl.interface.name, wanted) for wanted in self.active):
                continue
            for method in impl.interface.methods:
                target = impl.tool_for(method.name)
                if target in tools:
                    continue
                tools[target] = Tool(
                    name=target,
                    description=method.description,
                    input_schema=method.input_schema,
                    output_schema=method.returns or None,
                    meta={"interface": impl.interface.name, "method": method.name, "original_name": target},
                )
        return tools.values()

    def _call_tool(self, invocation: Invocation) -> Any:
        return self.driver.call_tool(invocation.tool.unprefixed_name, invocation.arguments, context=invocation.context)

    async def _acall_tool(self, invocation: Invocation) -> Any:
        return await self.driver.acall_tool(invocation.tool.unprefixed_name, invocation.arguments, context=invocation.context)

    def close(self) -> None:
        self.driver.close()
