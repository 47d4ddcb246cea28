"""The public names of mcs_mcp.mcpfile."""

from __future__ import annotations

import mcs_mcp.mcpfile as package


def test_all_is_sorted_and_importable() -> None:
    assert package.__all__ == sorted(package.__all__)
    for name in package.__all__:
        assert getattr(package, name) is not None
