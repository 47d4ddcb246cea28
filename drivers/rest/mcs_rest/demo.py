"""`make demo`: a real HTTP round trip through the REST driver, with no network and no API key.

It serves a tiny pet shop (``demo_api.yaml``) on a free loopback port, loads the REST
driver from that spec, prints the system prompt a model would get, feeds a recorded LLM
answer to ``process_llm_response``, which makes the real HTTP call, prints the result,
and stops the server.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from mcs.demo import serve_on_loopback
from mcs_rest.driver import RestDriver

SPEC = Path(__file__).with_name("demo_api.yaml")
MODEL = "gpt-4o"
RECORDED_ANSWERS = [
    '{"tool": "addPet", "arguments": {"name": "Rex", "species": "dog", "age": 3}}',
    '{"tool": "listPets", "arguments": {"species": "dog"}}',
]


class _Shop(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: every answer carries Content-Length
    wbufsize = -1  # headers and body leave in one write (no Nagle / delayed-ACK stalls)
    disable_nagle_algorithm = True
    pets: list[dict[str, Any]]  # a fresh list per server (see serve_shop)

    def log_message(self, format: str, *args: Any) -> None:  # keep the demo output clean
        pass

    def _send(self, status: int, payload: Any) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        if url.path == "/v1/pets":
            query = parse_qs(url.query)
            species = query.get("species", [None])[0]
            limit = int(query.get("limit", ["10"])[0])
            self._send(200, [p for p in self.pets if species in (None, p["species"])][:limit])
        elif url.path.startswith("/v1/pets/") and url.path[9:].isdigit():
            found = [p for p in self.pets if p["id"] == int(url.path[9:])]
            self._send(200, found[0]) if found else self._send(404, {"error": "no such pet"})
        else:
            self._send(404, {"error": "not found"})

    def do_POST(self) -> None:
        if urlsplit(self.path).path != "/v1/pets":
            self._send(404, {"error": "not found"})
            return
        data = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        pet = {"id": len(self.pets) + 1, **data}
        self.pets.append(pet)
        self._send(201, pet)


@contextmanager
def serve_shop() -> Iterator[str]:
    """Serve the demo shop on a free loopback port; yield its base URL; stop it after."""
    shop = type("Shop", (_Shop,), {"pets": [{"id": 1, "name": "Tom", "species": "cat", "age": 5}]})
    with serve_on_loopback(shop) as base:
        yield f"{base}/v1"


def main() -> None:
    with serve_shop() as base_url, RestDriver(SPEC, base_url=base_url) as driver:
        print(f"== Demo API on {base_url} (from {SPEC.name}) ==\n")
        print(f"== System prompt for {MODEL} ==\n{driver.get_driver_system_message(MODEL)}\n")
        for answer in RECORDED_ANSWERS:
            print(f"== Recorded LLM output ==\n{answer}\n")
            result = driver.process_llm_response(answer)
            if result is answer:
                print("== No tool call found in that output ==\n")
                continue
            print(f"== Result of the real HTTP call ==\n{json.dumps(result, indent=2)}\n")


if __name__ == "__main__":
    main()
