"""A CAN driver with the demo's simulated ECU on its bus, for ``mcs serve can_ecu_driver:EcuDriver``
(the ECU lives in the serving process, beside the driver, on python-can's virtual bus)."""

from __future__ import annotations

from typing import Any

from mcs_can import CanDriver
from mcs_can.demo import DBC, Ecu


class EcuDriver(CanDriver):
    def __init__(self, channel: str = "mcs-can-served", **options: Any) -> None:
        self.ecu = Ecu(channel).__enter__()
        super().__init__(DBC, channel=channel, **options)

    def close(self) -> None:
        super().close()
        self.ecu.__exit__(None, None, None)
