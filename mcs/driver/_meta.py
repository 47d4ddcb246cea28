"""Who a driver is: :class:`DriverMeta`, a frozen pydantic model.

Kept apart from :mod:`mcs.driver` so that importing a driver does not import pydantic:
``mcs.driver.DriverMeta`` loads this module the first time it is read.
"""

from __future__ import annotations

import uuid

from pydantic import BaseModel, ConfigDict, field_validator

from mcs.driver import MCS_SPEC_VERSION


class DriverMeta(BaseModel):
    """Who a driver is (seed, section 3). Frozen and validated."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    name: str
    version: str
    protocol: str
    transport: str
    spec_format: str
    target_llms: tuple[str, ...] = ("*",)
    capabilities: tuple[str, ...] = ()
    prefix: str | None = None
    spec_version: str = MCS_SPEC_VERSION

    @field_validator("id")
    @classmethod
    def _id_is_uuid(cls, value: str) -> str:
        uuid.UUID(value)
        return value

    @field_validator("name")
    @classmethod
    def _name_is_short(cls, value: str) -> str:
        if not value or len(value) > 40:
            raise ValueError("a driver name is 1 to 40 characters")
        return value
