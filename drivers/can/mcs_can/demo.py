"""`make demo-can`: a CAN round trip on python-can's virtual bus, with no hardware and no API key.

A simulated ECU joins a virtual bus: it broadcasts wheel speeds and prints every frame it
receives. The CAN driver loads ``demo.dbc``, prints the system prompt a model would get,
and runs recorded LLM outputs through ``process_llm_response``: a read, a send refused
because nobody armed the driver, the operator arming it (a method call, not a tool), the
same send reaching the ECU, and a high-risk send that needs the approval token bound to
its exact frame.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import can
import cantools

from mcs.errors import ToolCallError
from mcs_can.driver import CanDriver

DBC = Path(__file__).with_name("demo.dbc")
MODEL = "gpt-4o"
READ = '{"tool": "read", "arguments": {"message": "WheelSpeeds", "wait_s": 1}}'
CRUISE = '{"tool": "send_CruiseCommand", "arguments": {"TargetSpeed": 80, "Mode": "Active", "Acceleration": 0.5}}'
TORQUE: dict[str, Any] = {"tool": "send_SteeringTorque", "arguments": {"Torque": 4.5}}


class Ecu:
    """A node on the bus: sends WheelSpeeds every 20 ms, records and decodes what it receives."""

    def __init__(self, channel: str) -> None:
        self.db: Any = cantools.database.load_file(str(DBC))
        self.bus = can.Bus(interface="virtual", channel=channel)
        self.received: list[str] = []
        self._arrived = threading.Event()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._broadcast), threading.Thread(target=self._listen)]

    def _broadcast(self) -> None:
        speed = 87.5
        while not self._stop.wait(0.02):
            data = self.db.encode_message("WheelSpeeds", {f"WheelSpeed{w}": speed for w in ("FL", "FR", "RL", "RR")})
            self.bus.send(can.Message(arbitration_id=0x100, data=data, is_extended_id=False))
            speed += 0.01

    def _listen(self) -> None:
        while not self._stop.is_set():
            frame = self.bus.recv(timeout=0.05)
            if frame is None:
                continue
            decoded = self.db.decode_message(frame.arbitration_id, bytes(frame.data))
            self.received.append(f"0x{frame.arbitration_id:03X} [{bytes(frame.data).hex(' ')}] {decoded}")
            self._arrived.set()

    def take(self, timeout: float = 1.0) -> list[str]:
        """What the ECU received since the last take (waiting up to ``timeout`` for a first frame)."""
        self._arrived.wait(timeout)
        self._arrived.clear()
        taken, self.received = self.received, []
        return taken

    def __enter__(self) -> Ecu:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()
        self.bus.shutdown()


@contextmanager
def demo_bus() -> Iterator[tuple[str, Ecu]]:
    """A fresh virtual channel with the simulated ECU on it."""
    channel = f"mcs-can-demo-{uuid.uuid4().hex[:8]}"
    with Ecu(channel) as ecu:
        yield channel, ecu


def _run(driver: CanDriver, answer: Any) -> Any:
    text = answer if isinstance(answer, str) else json.dumps(answer)
    print(f"== Recorded LLM output ==\n{text}\n")
    try:
        result = driver.process_llm_response(text)
    except ToolCallError as error:
        print(f"== Refused ({error.code.value}) ==\n{error.message}\n")
        return None
    print(f"== Result ==\n{json.dumps(result, indent=2)}\n")
    return result


def main() -> None:
    with demo_bus() as (channel, ecu):
        driver = CanDriver(
            DBC, channel=channel, allow_send=["CruiseCommand", "SteeringTorque"], high_risk=["SteeringTorque"],
            limits={"SteeringTorque.Torque": {"minimum": -20, "maximum": 20, "max_step": 5}},
            watchdog_timeout=None,
        )
        try:
            _story(driver, channel, ecu)
        finally:
            driver.close()


def _story(driver: CanDriver, channel: str, ecu: Ecu) -> None:
    print(f"== CAN database {DBC.name} on virtual channel {channel}; a simulated ECU is on the bus ==\n")
    print(f"== System prompt for {MODEL} ==\n{driver.get_driver_system_message(MODEL)}\n")
    _run(driver, READ)
    _run(driver, CRUISE)
    print("== The operator arms the driver: driver.arm() (a method, never a tool) ==\n")
    driver.arm()
    _run(driver, CRUISE)
    print(f"== The ECU received ==\n{chr(10).join(ecu.take())}\n")
    first = _run(driver, TORQUE)
    if first is not None and "approval_token" in first:
        approved = {**TORQUE, "arguments": {**TORQUE["arguments"], "approval_token": first["approval_token"]}}
        _run(driver, approved)
        print(f"== The ECU received ==\n{chr(10).join(ecu.take())}\n")
    driver.disarm()
    print("== The operator disarmed the driver; every periodic send stopped ==")


if __name__ == "__main__":
    main()
