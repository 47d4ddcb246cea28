"""Another CAN node, in its own process, on python-can's ``udp_multicast`` bus.

    python can_peer.py GROUP PORT DATABASE

Once its bus is open it prints ``{"event": "ready"}``. It then reads JSON commands on
stdin, one a line, and answers each with one JSON line on stdout:

* ``{"op": "watch", "window_s": S}``: waits ``S`` seconds, then answers
  ``{"event": "seen", "frames": [...]}`` with every frame received since the previous
  ``watch`` (or since ready), less the frames this peer sent itself (multicast loops them
  back to their sender).
* ``{"op": "send", "message": NAME, "values": [{signal: value}, ...], "delay_s": D,
  "interval_s": I}``: after ``D`` seconds, encodes each values dict with cantools and
  sends it, ``I`` seconds apart; answers ``{"event": "sent", "frames": [...]}``.
* ``{"op": "quit"}`` or the end of stdin: closes the bus and exits.

A command it cannot carry out answers ``{"event": "error", "error": ...}``. A frame is
reported as its id, id kind, DLC, data (hex), FD, BRS, remote and error flags, and the
receive timestamp (seconds since the epoch).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections import Counter
from typing import Any

import can
import cantools

FrameKey = tuple[int, bool, bytes]


def describe(frame: can.Message) -> dict[str, Any]:
    return {
        "arbitration_id": frame.arbitration_id, "is_extended_id": frame.is_extended_id, "dlc": frame.dlc,
        "data_hex": bytes(frame.data).hex(), "is_fd": frame.is_fd, "bitrate_switch": frame.bitrate_switch,
        "is_remote_frame": frame.is_remote_frame, "is_error_frame": frame.is_error_frame,
        "timestamp": frame.timestamp,
    }


class Peer:
    """The bus, a thread that keeps what it receives, and the frames this peer sent."""

    def __init__(self, group: str, port: int, database: str) -> None:
        self.database = cantools.database.load_file(database)
        self.bus = can.Bus(interface="udp_multicast", channel=group, port=port)
        self._seen: list[can.Message] = []
        self._own: Counter[FrameKey] = Counter()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._receive, name="can-peer-receive", daemon=True)
        self._thread.start()

    def _receive(self) -> None:
        while not self._stop.is_set():
            frame = self.bus.recv(timeout=0.05)
            if frame is None:
                continue
            key = (frame.arbitration_id, frame.is_extended_id, bytes(frame.data))
            with self._lock:
                if self._own[key]:
                    self._own[key] -= 1
                else:
                    self._seen.append(frame)

    def watch(self, window_s: float) -> dict[str, Any]:
        time.sleep(window_s)
        with self._lock:
            frames, self._seen = self._seen, []
        return {"event": "seen", "frames": [describe(frame) for frame in frames]}

    def send(self, message: str, values: list[dict[str, Any]], delay_s: float, interval_s: float) -> dict[str, Any]:
        spec = self.database.get_message_by_name(message)
        frames = [
            can.Message(arbitration_id=spec.frame_id, is_extended_id=spec.is_extended_frame,
                        data=spec.encode(signals))
            for signals in values
        ]
        time.sleep(delay_s)
        sent = []
        for index, frame in enumerate(frames):
            if index:
                time.sleep(interval_s)
            with self._lock:
                self._own[(frame.arbitration_id, frame.is_extended_id, bytes(frame.data))] += 1
            frame.timestamp = time.time()
            self.bus.send(frame)
            sent.append(describe(frame))
        return {"event": "sent", "frames": sent}

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.bus.shutdown()


def answer(peer: Peer, command: dict[str, Any]) -> dict[str, Any]:
    op = command.get("op")
    if op == "watch":
        return peer.watch(float(command["window_s"]))
    if op == "send":
        return peer.send(str(command["message"]), list(command["values"]), float(command.get("delay_s", 0.0)),
                         float(command.get("interval_s", 0.0)))
    raise ValueError(f"unknown op {op!r}; give watch, send or quit")


def emit(record: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def main(argv: list[str]) -> int:
    group, port, database = argv[1], int(argv[2]), argv[3]
    peer = Peer(group, port, database)
    emit({"event": "ready"})
    try:
        for line in sys.stdin:
            if not line.strip():
                continue
            try:
                command = json.loads(line)
                if command.get("op") == "quit":
                    break
                emit(answer(peer, command))
            except Exception as exc:
                emit({"event": "error", "error": f"{type(exc).__name__}: {exc}"})
    finally:
        peer.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
