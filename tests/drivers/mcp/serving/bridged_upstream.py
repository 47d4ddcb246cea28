"""An upstream MCP server for the bridge tests, served over stdio with
``mcs serve bridged_upstream`` (this folder on ``PYTHONPATH``)."""

from __future__ import annotations

import asyncio
import logging

import mcs


@mcs.tool
async def slow_upstream() -> str:
    """Takes a while."""
    await asyncio.sleep(1.5)
    return "slow done"


@mcs.tool
async def log_upstream(text: str) -> str:
    """Logs what it was given."""
    logging.getLogger("mcs.upstream").warning("processing %s", text)
    return "logged"
