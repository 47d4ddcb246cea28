"""MQTT driver benchmarks, against bare paho-mqtt doing the same work in the same run.

1. Load: the largest AsyncAPI file of the corpus, from before the import to tools listed
   and described, in a child process (seconds, and its peak RSS read from outside with
   a launcher, ``bench._support.run_measured``). Bars: <= 1.0 s, <= 150 MB.
2. Order: 1,000 QoS 1 publishes through the driver (``call_tool``, one after the other)
   all arrive, in order, at a plain paho subscriber. Bar: 1000/1000 in order.
3. Latency: publish-to-receive, from the start of the publish to ``on_message`` of a
   subscriber in another process (a receiving device has its own interpreter; in one
   process, threads waking on the same GIL would skew both sides), through the driver
   (``call_tool``, which returns at the broker's PUBACK) versus a bare
   ``paho.Client.publish(...).wait_for_publish()`` of the same payload on the same broker
   (the same work: both start from the same value and sensor name, so the bare side also
   serialises the payload and formats the topic, as any application would), interleaved;
   ratio of medians. Bar: <= 1.2.
4. Per call: ``call_tool`` returning after the broker's PUBACK versus bare
   ``publish(...).wait_for_publish()``; ratio of medians (reported, no bar); and the
   driver's own work (the pipeline, topic, checks, encoding) as ``call_tool`` with
   ``dry_run`` (reported).

The broker is mosquitto (as in the tests) when installed, else the embedded amqtt broker
the demo uses. Run: ``python -m bench mqtt`` (``make bench``).
"""

from __future__ import annotations

import contextlib
import getpass
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bench._support import (
    HOST,
    SHARED,
    check,
    free_port,
    run_measured,
    server_process,
)

ASYNCAPI = SHARED / "corpus" / "asyncapi"
PUBLISHES = 1_000
LATENCY_RUNS = 300
LOAD_BAR_S, MEMORY_BAR_MB, RATIO_BAR = 1.0, 150.0, 1.2
SPEC = {
    "name": "bench",
    "topics": {"reading": {"topic": "bench/{sensor}/reading", "action": "send", "qos": 1,
                           "payload": {"type": "object", "properties": {"n": {"type": "integer"}},
                                       "required": ["n"]}}},
}


# ---------------------------------------------------------------------- broker


@contextlib.contextmanager
def _broker() -> Iterator[tuple[int, str]]:
    binary = shutil.which("mosquitto") or ("/usr/sbin/mosquitto" if Path("/usr/sbin/mosquitto").exists() else None)
    if binary is None:
        from mcs_mqtt.demo import embedded_broker

        with embedded_broker() as port:
            yield port, "amqtt (embedded; mosquitto is not installed)"
        return
    with tempfile.TemporaryDirectory() as folder:
        port = free_port()
        config = Path(folder) / "mosquitto.conf"
        config.write_text(f"listener {port} {HOST}\nallow_anonymous true\nuser {getpass.getuser()}\n"
                          "set_tcp_nodelay true\nmax_queued_messages 0\n")
        with server_process([binary, "-c", config], port):
            yield port, "mosquitto"


class _Subscriber:
    """A plain paho subscriber that stamps every message with perf_counter on arrival."""

    def __init__(self, port: int, topic_filter: str) -> None:
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion

        self.arrivals: list[tuple[float, bytes]] = []
        self.cond = threading.Condition()
        ready = threading.Event()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"bench-sub-{os.getpid()}")
        self.client.on_message = self._on_message
        self.client.on_subscribe = lambda *args: ready.set()
        self.client.connect(HOST, port)
        self.client.loop_start()
        self.client.subscribe(topic_filter, 1)
        ready.wait(10)

    def _on_message(self, client: Any, userdata: Any, message: Any) -> None:
        stamp = time.perf_counter()
        with self.cond:
            self.arrivals.append((stamp, bytes(message.payload)))
            self.cond.notify_all()

    def wait_for(self, count: int, timeout: float = 30.0) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: len(self.arrivals) >= count, timeout)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


# ---------------------------------------------------------------------- 1. load


def _child_load(path: str) -> None:
    started = time.perf_counter()
    from mcs_mqtt import MqttDriver

    driver = MqttDriver(path, host=HOST)
    tools = driver.list_tools()
    driver.get_function_description()
    sys.stdout.write(json.dumps({"seconds": time.perf_counter() - started, "tools": len(tools)}))


def bench_load() -> None:
    files = sorted(ASYNCAPI.rglob("*.yml"), key=lambda p: p.stat().st_size)
    if not files:
        print("load: the shared corpus is absent, skipped")
        return
    largest = files[-1]
    code = "import sys; from bench.mqtt import _child_load; _child_load(sys.argv[1])"
    returncode, out, _, measured = run_measured([sys.executable, "-c", code, str(largest)],
                                                cwd=Path(__file__).resolve().parents[1])
    if returncode != 0:
        print(f"load: the child failed with {returncode}")
        return
    result = json.loads(out)
    peak_mb = measured["peak_rss_mb"]  # the child's own, read by a launcher
    cpu = measured["cpu_s"]
    print(f"load {largest.relative_to(ASYNCAPI)} ({largest.stat().st_size} bytes, {result['tools']} tools): "
          f"{result['seconds']:.3f} s {check('largest AsyncAPI document to ready driver, s', result['seconds'], LOAD_BAR_S, unit='s')} "
          f"(the whole child used {cpu:.2f} s of CPU), "
          f"peak RSS {peak_mb:.0f} MB {check('peak RSS loading it, MB', peak_mb, MEMORY_BAR_MB, unit='MB')}")


# ---------------------------------------------------------------------- 2-4. through a broker


_COMPACT = json.JSONEncoder(separators=(",", ":"))  # one encoder, reused, as the driver does


def _bare_publish(client: Any, sensor: str, value: Any) -> None:
    """What an application using paho directly does for the driver's call: topic, bytes, QoS 1, PUBACK."""
    client.publish(f"bench/{sensor}/reading", _COMPACT.encode(value).encode(), qos=1).wait_for_publish(10)


def _bare_client(port: int) -> Any:
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"bench-bare-{os.getpid()}")
    client.connect(HOST, port)
    client.loop_start()
    return client


def bench_order(driver: Any, port: int) -> None:
    subscriber = _Subscriber(port, "bench/order/reading")
    try:
        started = time.perf_counter()
        for n in range(PUBLISHES):
            driver.call_tool("reading", {"sensor": "order", "payload": {"n": n}})
        subscriber.wait_for(PUBLISHES)  # what came by then is judged below
        elapsed = time.perf_counter() - started
        with subscriber.cond:
            got = [json.loads(payload)["n"] for _, payload in subscriber.arrivals]
    finally:
        subscriber.close()
    in_order = got == list(range(PUBLISHES))
    # how many arrived in order before the first missing or misplaced one; the goal is all of them
    prefix = min(next((i for i, n in enumerate(got) if n != i), len(got)), PUBLISHES)
    verdict = check("QoS 1 publishes arrived in order", prefix, PUBLISHES, unit="publishes", kind="at least")
    print(f"order: {len(got)}/{PUBLISHES} QoS 1 publishes arrived, in order: {in_order} "
          f"({elapsed:.2f} s, {PUBLISHES / elapsed:.0f}/s) {verdict}")


def _child_subscriber(port: str, topic_filter: str) -> None:
    """A subscriber in its own process (its own GIL, as a real receiving device): prints the
    ``perf_counter`` of each arrival (a system-wide monotonic clock on Linux) on stdout."""
    subscriber = _Subscriber(int(port), topic_filter)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    seen = 0
    while True:
        with subscriber.cond:
            subscriber.cond.wait_for(lambda seen=seen: len(subscriber.arrivals) > seen)
            fresh = subscriber.arrivals[seen:]
        seen += len(fresh)
        sys.stdout.write("".join(f"{stamp!r}\n" for stamp, _ in fresh))
        sys.stdout.flush()


@contextlib.contextmanager
def _remote_subscriber(port: int, topic_filter: str) -> Iterator[Any]:
    code = "import sys; from bench.mqtt import _child_subscriber; _child_subscriber(*sys.argv[1:])"
    process = subprocess.Popen([sys.executable, "-c", code, str(port), topic_filter], stdout=subprocess.PIPE,
                               text=True, cwd=Path(__file__).resolve().parents[1])
    assert process.stdout is not None
    try:
        if process.stdout.readline().strip() != "ready":
            raise RuntimeError("the subscriber process did not start")
        yield process.stdout
    finally:
        process.terminate()
        process.wait(10)
        process.stdout.close()


def _latency(publish: Callable[[], None], arrivals: Any) -> float:
    started = time.perf_counter()
    publish()
    return float(arrivals.readline()) - started


def bench_latency(driver: Any, port: int) -> None:
    bare = _bare_client(port)

    def through_driver() -> None:
        driver.call_tool("reading", {"sensor": "latency", "payload": {"n": 1}})

    def through_paho() -> None:  # the same work as the driver's call: a QoS 1 publish, until its PUBACK
        _bare_publish(bare, "latency", {"n": 1})

    try:
        with _remote_subscriber(port, "bench/latency/reading") as arrivals:
            ours: list[float] = []
            theirs: list[float] = []
            for _ in range(20):  # warm both paths
                _latency(through_driver, arrivals)
                _latency(through_paho, arrivals)
            for _ in range(LATENCY_RUNS):
                ours.append(_latency(through_driver, arrivals))
                theirs.append(_latency(through_paho, arrivals))
        ours_us, theirs_us = statistics.median(ours) * 1e6, statistics.median(theirs) * 1e6
        ratio = ours_us / theirs_us
        print(f"latency publish->receive at another process (median of {LATENCY_RUNS}): driver {ours_us:.0f} us, "
              f"bare paho {theirs_us:.0f} us, ratio {ratio:.2f} {check('publish to receive latency vs bare paho', ratio, RATIO_BAR)}")

        def call_driver() -> float:
            started = time.perf_counter()
            driver.call_tool("reading", {"sensor": "calls", "payload": {"n": 1}})
            return time.perf_counter() - started

        def call_paho() -> float:
            started = time.perf_counter()
            _bare_publish(bare, "calls", {"n": 1})
            return time.perf_counter() - started

        def dry_run() -> float:
            started = time.perf_counter()
            driver.call_tool("reading", {"sensor": "calls", "payload": {"n": 1}, "dry_run": True})
            return time.perf_counter() - started

        dry_us = statistics.median(dry_run() for _ in range(LATENCY_RUNS)) * 1e6
        print(f"driver work before a packet leaves (call_tool with dry_run, median of {LATENCY_RUNS}): "
              f"{dry_us:.0f} us (reported)")
        driver_calls, paho_calls = [], []
        for _ in range(LATENCY_RUNS):
            driver_calls.append(call_driver())
            paho_calls.append(call_paho())
        d_us, p_us = statistics.median(driver_calls) * 1e6, statistics.median(paho_calls) * 1e6
        print(f"per call until PUBACK (median of {LATENCY_RUNS}): driver {d_us:.0f} us, bare paho {p_us:.0f} us, "
              f"ratio {d_us / p_us:.2f} (reported)")
    finally:
        bare.disconnect()
        bare.loop_stop()


def main() -> None:
    bench_load()
    from mcs_mqtt import MqttDriver

    with _broker() as (port, which):
        print(f"broker: {which} on {HOST}:{port}")
        with MqttDriver(SPEC, host=HOST, port=port, rate_limit=None, rate_limit_total=None, timeout=10) as driver:
            bench_order(driver, port)
            bench_latency(driver, port)


if __name__ == "__main__":
    main()
