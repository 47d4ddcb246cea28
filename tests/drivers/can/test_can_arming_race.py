"""arm() and disarm() racing each other (and a periodic send starting) on threads released by
one barrier: whatever order they land in, an armed driver has a running watchdog, and a
disarmed one has no periodic send and puts no frame on the bus."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator

import pytest
from can_support import CRUISE, drain
from mcs_can import CanDriver

from mcs.errors import ToolCallError

ROUNDS = 300


@pytest.fixture(autouse=True)
def frequent_thread_switches() -> Iterator[None]:
    """Switch threads every microsecond instead of every 5 ms, so the racing threads interleave
    inside arm() and disarm() rather than one running each to its end."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def _race(driver: CanDriver, *actions: object) -> None:
    """Run each action on its own thread, all released at once."""
    barrier = threading.Barrier(len(actions))
    errors: list[BaseException] = []

    def run(action: object) -> None:
        barrier.wait()
        try:
            action()  # type: ignore[operator]
        except ToolCallError:
            pass  # a send refused as not armed: the race's other order
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(action,)) for action in actions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert not errors, errors


def _consistent(driver: CanDriver) -> str | None:
    """What is wrong with the driver's state, or None."""
    status = driver.get_status()
    if status["armed"] and "watchdog_remaining_s" not in status:
        return "armed, but the watchdog is not running"
    if not status["armed"] and "watchdog_remaining_s" in status:
        return "disarmed, but the watchdog is still running"
    if not status["armed"] and status["periodic"]:
        return f"disarmed, but periodic sends survive: {status['periodic']}"
    return None


def test_an_arm_racing_a_disarm_leaves_the_watchdog_running_exactly_when_armed(make_driver) -> None:
    driver = make_driver(allow_send=["CruiseCommand"], watchdog_timeout=5.0)
    for round_ in range(ROUNDS):
        driver.arm()
        _race(driver, driver.disarm, driver.arm)
        problem = _consistent(driver)
        assert problem is None, f"round {round_}: {problem}"
        driver.disarm()


def test_a_periodic_send_racing_a_disarm_and_an_arm_never_outlives_the_disarm(make_driver, sniffer) -> None:
    driver = make_driver(allow_send=["CruiseCommand"], watchdog_timeout=5.0, tx_rate_limit=None)

    def start() -> None:
        driver.call_tool("send_CruiseCommand", {**CRUISE, "period_ms": 10})

    for round_ in range(ROUNDS // 3):
        driver.arm()
        _race(driver, start, driver.disarm, driver.arm)
        problem = _consistent(driver)
        assert problem is None, f"round {round_}: {problem}"
        driver.disarm()
        drain(sniffer)
        assert sniffer.recv(timeout=0.02) is None, f"round {round_}: a frame left after disarm()"
