"""`make demo-mqtt`: a real MQTT round trip through the driver, with no network and no API key.

It starts an embedded, pure-Python broker (amqtt) on a free loopback port, a simulated
sensor that publishes a retained temperature and a simulated window actuator that
listens, loads the driver from ``demo_api.yaml`` (AsyncAPI 3), prints the system prompt a
model would get, feeds recorded LLM answers to ``process_llm_response`` (a read, a dry
run, a real publish, and a hostile topic level that is refused), prints each result and
what the actuator received, and stops everything.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mcs.errors import MissingDependencyError, ToolCallError
from mcs_mqtt.driver import MqttDriver

SPEC = Path(__file__).with_name("demo_api.yaml")
MODEL = "claude-3-5-sonnet"
RECORDED_ANSWERS = [
    '{"tool": "readTemperature", "arguments": {"zone": "north"}}',
    '{"tool": "setWindow", "arguments": {"zone": "north", "payload": {"open_percent": 40}, "dry_run": true}}',
    '{"tool": "setWindow", "arguments": {"zone": "north", "payload": {"open_percent": 40}}}',
    '{"tool": "setWindow", "arguments": {"zone": "#", "payload": {"open_percent": 100}}}',
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def embedded_broker() -> Iterator[int]:
    """An amqtt broker (MQTT 3.1.1) on a free loopback port, on its own thread; yields the port."""
    try:
        from amqtt.broker import Broker  # type: ignore[import-untyped]
    except ImportError:
        raise MissingDependencyError(
            "the MQTT demo's embedded broker needs amqtt: pip install 'mcs-framework-mqtt[demo]'",
            install="pip install 'mcs-framework-mqtt[demo]'",
        ) from None
    for name in ("amqtt", "transitions"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    port = _free_port()
    config = {
        "listeners": {"default": {"type": "tcp", "bind": f"127.0.0.1:{port}"}},
        "plugins": {"amqtt.plugins.authentication.AnonymousAuthPlugin": {"allow_anonymous": True}},
    }
    loop = asyncio.new_event_loop()
    started = threading.Event()
    holder: dict[str, Any] = {}

    writers: list[asyncio.StreamWriter] = []

    class _Broker(Broker):  # type: ignore[misc]
        """amqtt's broker, keeping each client connection's writer: amqtt leaves the connection
        of a client that went before its session ended to the garbage collector."""

        async def stream_connected(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                                   listener_name: str) -> None:
            writers.append(writer)
            await super().stream_connected(reader, writer, listener_name)

    async def start() -> None:
        holder["broker"] = _Broker(config, loop=loop)
        await holder["broker"].start()

    async def close_connections() -> None:
        for writer in writers:
            writer.close()
        await asyncio.sleep(0)  # a closed transport lets its socket go on the next iteration

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(start())
        except BaseException as exc:  # reported to the starting thread below
            holder["error"] = exc
            started.set()
            return
        started.set()
        loop.run_forever()
        # What amqtt left running (connection handlers) ends here, on its own loop.
        pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in pending:
            task.cancel()
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.run_until_complete(close_connections())
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.close()

    thread = threading.Thread(target=run, name="demo-broker", daemon=True)
    thread.start()
    started.wait(30)
    if "error" in holder or "broker" not in holder:
        raise RuntimeError(f"the embedded broker did not start: {holder.get('error')!r}")
    try:
        yield port
    finally:
        asyncio.run_coroutine_threadsafe(holder["broker"].shutdown(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)


class _Device:
    """The greenhouse's side: a sensor that publishes, an actuator that records commands."""

    def __init__(self, port: int) -> None:
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion

        self.received: list[tuple[str, str]] = []
        self._got = threading.Condition()
        self._ready = threading.Event()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="greenhouse-device")
        self.client.on_message = self._on_message
        self.client.on_subscribe = lambda *args: self._ready.set()
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        self.client.subscribe("greenhouse/+/window", 1)
        self._ready.wait(10)
        reading = json.dumps({"celsius": 31.5, "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
        self.client.publish("greenhouse/north/temperature", reading, qos=1, retain=True).wait_for_publish(10)

    def _on_message(self, client: Any, userdata: Any, message: Any) -> None:
        with self._got:
            self.received.append((message.topic, message.payload.decode()))
            self._got.notify_all()

    def wait_for(self, count: int) -> list[tuple[str, str]]:
        with self._got:
            self._got.wait_for(lambda: len(self.received) >= count, 10)
            return list(self.received)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def main() -> None:
    with embedded_broker() as port:
        device = _Device(port)
        try:
            with MqttDriver(SPEC, host="127.0.0.1", port=port, timeout=10) as driver:
                print(f"== Embedded MQTT broker (amqtt) on 127.0.0.1:{port}; spec {SPEC.name} ==\n")
                print(f"== System prompt for {MODEL} ==\n{driver.get_driver_system_message(MODEL)}\n")
                for answer in RECORDED_ANSWERS:
                    print(f"== Recorded LLM output ==\n{answer}\n")
                    try:
                        result = driver.process_llm_response(answer)
                    except ToolCallError as error:
                        print(f"== Refused ({error.code.value}) ==\n{error.message}\n")
                        continue
                    print(f"== Result of the real MQTT call ==\n{json.dumps(result, indent=2)}\n")
            print(f"== What the window actuator received ==\n{json.dumps(device.wait_for(1))}\n")
        finally:
            device.close()


if __name__ == "__main__":
    main()
