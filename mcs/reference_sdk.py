"""Tool drivers of the MCS reference SDK, run through this framework's pipeline.

The reference SDK (``mcs-driver-core`` and its ``mcs-driver-<name>`` distributions,
imported as ``mcs.driver.core``, ``mcs.driver.filesystem``...) installs beside this
package (see ``mcs/__init__.py``). Its tool drivers (``MCSToolDriver``) offer
``list_tools()``, whose tools carry a ``parameters`` list (``name``, ``description``,
``required``, ``schema``), and ``execute_tool(name, arguments)``.
:class:`ReferenceToolDriver` wraps one as a :class:`~mcs.ToolDriver`, so its tools get
this framework's prompts per model, parser, argument validation, policies, hooks,
deadlines, error codes, toolboxes and ``mcs serve``::

    from mcs.driver.filesystem import FilesystemToolDriver
    from mcs.reference_sdk import ReferenceToolDriver

    driver = ReferenceToolDriver(FilesystemToolDriver(base_dir="."))

Nothing of the reference SDK is imported here: any object with those two methods works.
Its results are returned as its driver returns them (the filesystem driver's are JSON
text); its exceptions become ``EXECUTION_ERROR``.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable
from typing import Any

from mcs.driver import DriverMeta, ToolDriver, refuse_unknown_options
from mcs.pipeline import Invocation
from mcs.tools import Tool, sanitize_tool_name

__all__ = ["ReferenceToolDriver"]

_NAMESPACE = uuid.UUID("5f0b6c7e-9a1d-4e2b-8c3f-7d6e5a4b3c21")


def _input_schema(parameters: Iterable[Any]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    for parameter in parameters:
        schema = dict(getattr(parameter, "schema", None) or {})
        description = getattr(parameter, "description", None)
        if description:
            schema.setdefault("description", str(description))
        properties[str(parameter.name)] = schema
        if getattr(parameter, "required", False):
            required.append(str(parameter.name))
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    return out


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:40] or "reference"


class ReferenceToolDriver(ToolDriver):
    """A reference-SDK ``MCSToolDriver`` (any object with ``list_tools`` and ``execute_tool``)
    as a :class:`~mcs.ToolDriver`.

    ``name`` defaults to the wrapped driver's ``meta.name`` as a slug (``Filesystem MCS
    ToolDriver`` -> ``filesystem_mcs_tooldriver``); protocol, transport and spec format
    come from its first binding (capability, adapter, spec format). Accepts every
    :class:`~mcs.ToolDriver` option.
    """

    def __init__(self, tool_driver: Any, *, name: str | None = None, **options: Any) -> None:
        refuse_unknown_options(ReferenceToolDriver, options, "ReferenceToolDriver")
        super().__init__(**options)
        self.tool_driver = tool_driver
        theirs = getattr(tool_driver, "meta", None)
        binding = next(iter(getattr(theirs, "bindings", None) or ()), None)
        own_name = name or _slug(str(getattr(theirs, "name", None) or type(tool_driver).__name__))
        self.meta = DriverMeta(
            id=str(uuid.uuid5(_NAMESPACE, str(getattr(theirs, "id", None) or own_name))),
            name=own_name,
            version=str(getattr(theirs, "version", None) or "0.0.0"),
            protocol=str(getattr(binding, "capability", None) or "MCS reference SDK"),
            transport=str(getattr(binding, "adapter", None) or "in-process"),
            spec_format=str(getattr(binding, "spec_format", None) or "MCS Tool"),
            prefix=self.prefix,
        )

    def _list_tools(self) -> Iterable[Tool]:
        for theirs in self.tool_driver.list_tools():
            original = str(theirs.name)
            yield Tool(
                name=sanitize_tool_name(original),
                title=getattr(theirs, "title", None),
                description=str(getattr(theirs, "description", None) or getattr(theirs, "title", None) or ""),
                input_schema=_input_schema(getattr(theirs, "parameters", None) or ()),
                meta={"original_name": original},
            )

    def _call_tool(self, invocation: Invocation) -> Any:
        return self.tool_driver.execute_tool(invocation.tool.original_name, dict(invocation.arguments))
