"""MCS CAN driver: a CAN database's messages as LLM tools on a python-can bus, silent until armed.

    from mcs_can import CanDriver

    driver = CanDriver("vehicle.dbc", allow_send=["CruiseCommand"], limits={...})
    driver.arm()   # the operator's call; no tool can arm the driver

or ``mcs.load_driver("can", dbc="vehicle.dbc", ...)``. See :class:`CanDriver`.
"""

from mcs_can._safety import AllowedFrame, SignalLimit
from mcs_can.driver import CanDriver

__all__ = ["AllowedFrame", "CanDriver", "SignalLimit"]
