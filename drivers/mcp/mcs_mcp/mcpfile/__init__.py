"""gen-mcp MCP files (``mcpFileVersion: 0.1.0`` and the 0.2.0 pair) as MCS drivers.

Use it through the registry, ``mcs.load_driver("mcpfile", path=...)``, or directly:

    from mcs_mcp.mcpfile import MCPFileDriver

Modules: :mod:`.model` (the file as validated data), :mod:`.loader` (versions, defaults,
``GENMCP_*`` overrides, compilation), :mod:`.extends`, :mod:`.templates`, :mod:`.http`,
:mod:`.cli` and :mod:`.shell` (injection-free commands), :mod:`.uritemplate`, :mod:`.driver`.
"""

from mcs_mcp.mcpfile.driver import (
    InvokeResult,
    MCPFileDriver,
    PromptArgumentSpec,
    PromptMessage,
    PromptSpec,
    RenderedPrompt,
    ResourceContents,
    ResourceSpec,
    ResourceTemplateSpec,
)

__all__ = [
    "InvokeResult",
    "MCPFileDriver",
    "PromptArgumentSpec",
    "PromptMessage",
    "PromptSpec",
    "RenderedPrompt",
    "ResourceContents",
    "ResourceSpec",
    "ResourceTemplateSpec",
]
