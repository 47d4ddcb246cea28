"""A serving extension for the CLI test: ``mcs serve ... --extension serving_extension:install``."""

from __future__ import annotations

from typing import Any


def install(server: Any, driver: Any) -> None:
    """Say in ``initialize`` which driver the extension saw."""
    server.instructions = f"extended: {driver.meta.name}"
