"""`make demo-graphql`: a real GraphQL round trip through the driver, with no network and no API key.

It serves a tiny library API on a free loopback port (graphql-core's reference executor
behind the standard library's HTTP server: nothing beyond the driver's own dependencies),
loads the driver by introspecting that endpoint, prints the system prompt a model would
get, feeds recorded LLM answers to ``process_llm_response``, which sends the real
requests (arguments only as variables), prints the results, and stops the server.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from typing import Any

from graphql import build_schema, graphql_sync

from mcs.demo import serve_on_loopback
from mcs_graphql.driver import GraphQLDriver

MODEL = "gpt-4o"
SDL = '''
"A book in the library."
type Book { id: ID! title: String! author: String! year: Int }
type Query {
  "Every book, optionally only those by one author."
  books(author: String): [Book!]!
  "One book by its id."
  book(id: ID!): Book
}
'''
BOOKS = [
    {"id": "1", "title": "The Left Hand of Darkness", "author": "Ursula K. Le Guin", "year": 1969},
    {"id": "2", "title": "A Wizard of Earthsea", "author": "Ursula K. Le Guin", "year": 1968},
    {"id": "3", "title": "Dune", "author": "Frank Herbert", "year": 1965},
]
#: Recorded LLM outputs (MCS JSON, then Hermes/Qwen style) and the tool each one calls.
RECORDED_ANSWERS = [
    ('{"tool": "books", "arguments": {"author": "Ursula K. Le Guin"}}', "books"),
    ('<tool_call>{"name": "book", "arguments": {"id": "3"}}</tool_call>', "book"),
]


class _Root:
    @staticmethod
    def books(_info: Any, author: str | None = None) -> list[dict[str, Any]]:
        return [b for b in BOOKS if author in (None, b["author"])]

    @staticmethod
    def book(_info: Any, id: str) -> dict[str, Any] | None:
        return next((b for b in BOOKS if b["id"] == id), None)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    wbufsize = -1
    disable_nagle_algorithm = True
    schema = build_schema(SDL)

    def log_message(self, format: str, *args: Any) -> None:  # keep the demo output clean
        pass

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        result = graphql_sync(self.schema, request["query"], root_value=_Root(),
                              variable_values=request.get("variables"), operation_name=request.get("operationName"))
        payload: dict[str, Any] = {"data": result.data}
        if result.errors:
            payload["errors"] = [e.formatted for e in result.errors]
        body = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def serve_library() -> Iterator[str]:
    """Serve the demo library on a free loopback port; yield its GraphQL URL; stop it after."""
    with serve_on_loopback(_Handler) as base:
        yield f"{base}/graphql"


def main() -> None:
    with serve_library() as url, GraphQLDriver(url) as driver:
        print(f"== Demo GraphQL API on {url} (schema read by introspection) ==\n")
        print(f"== System prompt for {MODEL} ==\n{driver.get_driver_system_message(MODEL)}\n")
        for answer, tool in RECORDED_ANSWERS:
            print(f"== Recorded LLM output ==\n{answer}\n")
            print(f"== Document sent (the arguments travel as variables) ==\n{driver.operations[tool].text}\n")
            result = driver.process_llm_response(answer)
            print(f"== Result of the real GraphQL call ==\n{json.dumps(result, indent=2)}\n")


if __name__ == "__main__":
    main()
