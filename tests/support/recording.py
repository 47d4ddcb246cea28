"""A driver over tools given as data that records every call it runs (for parser tests)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from mcs.driver import DriverMeta, ToolDriver
from mcs.pipeline import Invocation
from mcs.tools import Tool, sanitize_tool_name


class RecordingDriver(ToolDriver):
    """Offers ``tools`` (``{"name", "description", "input_schema"}`` mappings) and runs
    none of them for real: each call that passes the pipeline is appended to ``calls``."""

    def __init__(self, tools: Sequence[Mapping[str, Any]], **options: Any) -> None:
        super().__init__(**options)
        self.meta = DriverMeta(id="00000000-0000-4000-8000-00000000000d", name="recording", version="1",
                               protocol="test", transport="none", spec_format="none")
        self._specs = list(tools)
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def _list_tools(self) -> Iterable[Tool]:
        for spec in self._specs:  # `spotify.play` becomes `spotify_play`, as real drivers name it
            yield Tool(name=sanitize_tool_name(spec["name"]), description=spec.get("description", ""),
                       input_schema=dict(spec.get("input_schema") or {"type": "object"}),
                       meta={"original_name": spec["name"]})

    def _call_tool(self, invocation: Invocation) -> Any:
        self.calls.append((invocation.tool.name, dict(invocation.arguments)))
        return {"ok": True}
