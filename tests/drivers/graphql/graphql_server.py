"""A real GraphQL server on loopback for the driver's tests: ariadne (schema-first) under uvicorn.

Ariadne is chosen over strawberry because its schema is SDL, the very input the driver
reads, so the test schema is written once, in GraphQL, with every feature the driver must
map (enums with descriptions, recursive input objects, custom scalars, a union, an
interface, a Relay connection, a subscription); and it brings fewer dependencies.

Routes: ``/graphql`` (subscriptions over graphql-transport-ws), ``/legacy`` (Apollo's older
graphql-ws), ``/private`` (needs a bearer token from ``state.tokens``), ``/flaky`` (answers
503 ``state.fail_next`` times first), ``/bomb`` (a gzip body that inflates to 64 MiB),
``/html`` (a page, not GraphQL), ``/echo-denied``, ``/echo-partial``, ``/echo-html`` and
``/echo-refs`` (errors and a page quoting the credentials received, as debug servers do, the
last as character references). Every HTTP request is
recorded with its headers and body.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import logging
from collections.abc import AsyncIterator, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from ariadne import (
    EnumType,
    InterfaceType,
    MutationType,
    QueryType,
    ScalarType,
    SubscriptionType,
    UnionType,
    make_executable_schema,
)
from ariadne.asgi import GraphQL
from ariadne.asgi.handlers import GraphQLTransportWSHandler, GraphQLWSHandler
from graphql import GraphQLError
from support.servers import asgi_body, loopback_socket, running_uvicorn

_QUIET = "mcs.tests.graphql_server"  # resolver errors are the tests' expected failures: not printed
logging.getLogger(_QUIET).addHandler(logging.NullHandler())
logging.getLogger(_QUIET).propagate = False

SDL = '''
"An ISO 8601 instant."
scalar DateTime
scalar URI

"A literary genre."
enum Genre {
  "Made-up stories."
  FICTION
  "Facts about the world."
  SCIENCE
  POETRY @deprecated(reason: "merged into FICTION")
}

interface Node { id: ID! }

type Author implements Node {
  id: ID!
  name: String!
  "Who taught this author: a recursive type."
  mentor: Author
  "This author's books, the first limit of them."
  books(limit: Int): [Book!]!
}

type Book implements Node {
  id: ID!
  title: String!
  genre: Genre!
  published: DateTime
  link: URI
  tags: [String!]!
  author: Author!
}

type PageInfo { hasNextPage: Boolean! endCursor: String hasPreviousPage: Boolean! startCursor: String }
type BookEdge { cursor: String! node: Book! }
type BookConnection { pageInfo: PageInfo! edges: [BookEdge!]! nodes: [Book!]! totalCount: Int! }

union SearchResult = Book | Author

input AuthorInput { name: String! mentor: AuthorInput }

"What a new book needs."
input BookInput {
  title: String!
  genre: Genre = FICTION
  published: DateTime
  tags: [String!]
  link: URI
  author: AuthorInput!
}

type Partial { ok: String! broken: String }

type Query {
  "Say hello to someone."
  hello(name: String!): String!
  book(id: ID!): Book
  author(id: ID!): Author
  "All books, a page at a time."
  books(first: Int, after: String, genre: Genre): BookConnection!
  search(text: String!): [SearchResult!]!
  node(id: ID!): Node
  now: DateTime!
  "One field answers, the other fails."
  partial: Partial!
  "Always fails, so there is no data at all."
  fail: String!
  slow(ms: Int!): String!
  big(kb: Int!): String!
  "The Authorization header the server received."
  whoami: String
}

type Mutation {
  addBook(input: BookInput!): Book!
  "Deletes every book."
  deleteAll: Int!
}

type Subscription {
  "Counts from 1 to count, then ends."
  ticks(count: Int!): Int!
  "Counts forever, every 20 ms."
  forever: Int!
}
'''


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class State:
    books: list[dict[str, Any]] = field(default_factory=list)
    authors: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[Recorded] = field(default_factory=list)
    tokens: set[str] = field(default_factory=lambda: {"good"})
    fail_next: int = 0
    deleted: int = 0
    subscriptions: int = 0

    def reset(self) -> None:
        self.authors = {
            "a1": {"id": "a1", "name": "Ursula", "mentor": None},
            "a2": {"id": "a2", "name": "Ted", "mentor": "a1"},
        }
        self.books = [
            {"id": f"b{i}", "title": f"Book {i}", "genre": "FICTION" if i % 2 else "SCIENCE",
             "published": f"2020-01-0{i % 9 + 1}T00:00:00Z", "link": f"https://books.test/{i}",
             "tags": ["t"], "author": "a1" if i % 2 else "a2"}
            for i in range(1, 8)
        ]
        self.requests.clear()
        self.tokens = {"good"}
        self.fail_next = 0
        self.deleted = 0
        self.subscriptions = 0

    def graphql_bodies(self) -> list[dict[str, Any]]:
        return [r.json() for r in self.requests if r.body]


def _schema(state: State) -> Any:
    query, mutation, subscription = QueryType(), MutationType(), SubscriptionType()
    node = InterfaceType("Node")
    result = UnionType("SearchResult")

    @node.type_resolver
    @result.type_resolver
    def _kind(obj: dict[str, Any], *_: Any) -> str:
        return "Book" if "title" in obj else "Author"

    def author_of(book: dict[str, Any], *_: Any) -> dict[str, Any]:
        return state.authors[book["author"]]

    query.set_field("hello", lambda *_, name: f"Hello, {name}!")
    query.set_field("book", lambda *_, id: next((b for b in state.books if b["id"] == id), None))
    query.set_field("author", lambda *_, id: state.authors.get(id))
    query.set_field("node", lambda *_, id: next((b for b in state.books if b["id"] == id), None) or state.authors.get(id))
    query.set_field("now", lambda *_: "2024-05-01T12:00:00Z")
    query.set_field("partial", lambda *_: {"ok": "fine"})
    query.set_field("whoami", lambda _, info: info.context["request"].headers.get("authorization"))
    query.set_field("big", lambda *_, kb: "x" * (kb * 1024))

    @query.field("books")
    def _books(*_: Any, first: int | None = None, after: str | None = None, genre: str | None = None) -> dict[str, Any]:
        pool = [b for b in state.books if genre in (None, b["genre"])]
        start = next((i + 1 for i, b in enumerate(pool) if b["id"] == after), 0) if after else 0
        page = pool[start: start + (first or len(pool))]
        return {
            "nodes": page, "edges": [{"cursor": b["id"], "node": b} for b in page], "totalCount": len(pool),
            "pageInfo": {"hasNextPage": start + len(page) < len(pool), "endCursor": page[-1]["id"] if page else None,
                         "hasPreviousPage": start > 0, "startCursor": page[0]["id"] if page else None},
        }

    @query.field("search")
    def _search(*_: Any, text: str) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = [b for b in state.books if text.lower() in b["title"].lower()]
        return found + [a for a in state.authors.values() if text.lower() in a["name"].lower()]

    @query.field("fail")
    def _fail(*_: Any) -> str:
        raise GraphQLError("the fail field always fails")

    @query.field("slow")
    async def _slow(*_: Any, ms: int) -> str:
        await asyncio.sleep(ms / 1000)
        return "done"

    @mutation.field("addBook")
    def _add(*_: Any, input: dict[str, Any]) -> dict[str, Any]:
        author = {"id": f"a{len(state.authors) + 1}", "name": input["author"]["name"], "mentor": None}
        state.authors[author["id"]] = author
        book = {"id": f"b{len(state.books) + 1}", "title": input["title"], "genre": input.get("genre", "FICTION"),
                "published": input.get("published"), "link": input.get("link"), "tags": input.get("tags") or [],
                "author": author["id"]}
        state.books.append(book)
        return book

    @mutation.field("deleteAll")
    def _delete(*_: Any) -> int:
        state.deleted += len(state.books)
        count = len(state.books)
        state.books.clear()
        return count

    @subscription.source("ticks")
    async def _ticks(*_: Any, count: int) -> AsyncIterator[int]:
        state.subscriptions += 1
        for i in range(1, count + 1):
            await asyncio.sleep(0.005)
            yield i

    @subscription.source("forever")
    async def _forever(*_: Any) -> AsyncIterator[int]:
        state.subscriptions += 1
        i = 0
        while True:
            i += 1
            await asyncio.sleep(0.02)
            yield i

    subscription.set_field("ticks", lambda value, *_, **__: value)
    subscription.set_field("forever", lambda value, *_, **__: value)
    from ariadne import ObjectType

    book_type, author_type, partial = ObjectType("Book"), ObjectType("Author"), ObjectType("Partial")
    book_type.set_field("author", author_of)
    author_type.set_field("mentor", lambda a, *_: state.authors.get(a["mentor"]) if a["mentor"] else None)
    author_type.set_field(
        "books", lambda a, *_, limit=None: [b for b in state.books if b["author"] == a["id"]][:limit],
    )

    @partial.field("broken")
    def _broken(*_: Any) -> str:
        raise GraphQLError("broken is broken")

    scalars = [ScalarType("DateTime"), ScalarType("URI")]
    return make_executable_schema(
        SDL, query, mutation, subscription, node, result, book_type, author_type, partial,
        EnumType("Genre", {"FICTION": "FICTION", "SCIENCE": "SCIENCE", "POETRY": "POETRY"}), *scalars,
    )


def build_app(state: State) -> Any:
    schema = _schema(state)
    main = GraphQL(schema, websocket_handler=GraphQLTransportWSHandler(), logger=_QUIET)
    legacy = GraphQL(schema, websocket_handler=GraphQLWSHandler(), logger=_QUIET)
    bomb = gzip.compress(b" " * (64 * 1024 * 1024), compresslevel=9)

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope.get("path", "/")
        if scope["type"] == "lifespan":
            return
        if scope["type"] == "http":
            body = await asgi_body(receive)
            headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
            state.requests.append(Recorded(path, headers, body))
            replayed = False

            async def receive_again() -> dict[str, Any]:
                nonlocal replayed
                if replayed:
                    return {"type": "http.disconnect"}
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}

            if path == "/private" and headers.get("authorization", "").removeprefix("Bearer ") not in state.tokens:
                await _plain(send, 401, b'{"message": "Bad credentials"}')
                return
            if path in ("/echo-denied", "/echo-partial", "/echo-html", "/echo-refs"):  # a debug server echoing what it got
                received = {"authorization": headers.get("authorization"), "x-api-key": headers.get("x-api-key")}
                if path == "/echo-refs":  # as decimal character references
                    refs = {name: "".join(f"&#{ord(c)};" for c in value or "") for name, value in received.items()}
                    await _plain(send, 200, f"<html>denied: {refs}</html>".encode(), json_type=False)
                    return
                if path == "/echo-html":
                    await _plain(send, 200, f"<html>denied: {received}</html>".encode(), json_type=False)
                    return
                error = {"message": f"token {received['authorization']} is not valid", "extensions": {"received": received}}
                answer = {"data": {"whoami": None} if path == "/echo-partial" else None, "errors": [error]}
                await _plain(send, 200, json.dumps(answer).encode())
                return
            if path == "/flaky" and state.fail_next > 0:
                state.fail_next -= 1
                await _plain(send, 503, b"busy")
                return
            if path == "/bomb":
                await _plain(send, 200, bomb, [(b"content-encoding", b"gzip")])
                return
            if path == "/html":
                await _plain(send, 200, b"<html>hello</html>", [(b"content-type", b"text/html")], json_type=False)
                return
            await main(scope, receive_again, send)
            return
        await (legacy if path == "/legacy" else main)(scope, receive, send)

    return app


async def _plain(send: Any, status: int, body: bytes, extra: list[tuple[bytes, bytes]] | None = None,
                 json_type: bool = True) -> None:
    headers = [(b"content-length", str(len(body)).encode()), *(extra or [])]
    if json_type:
        headers.append((b"content-type", b"application/json"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


@dataclass
class Running:
    url: str
    state: State

    @property
    def graphql(self) -> str:
        return self.url + "/graphql"


@contextmanager
def serve() -> Iterator[Running]:
    """Run the server on a free loopback port in a thread; stop it on exit."""
    state = State()
    state.reset()
    config = uvicorn.Config(build_app(state), log_level="error", lifespan="off", ws="websockets-sansio",
                            access_log=False)
    with closing(loopback_socket()) as sock, running_uvicorn(config, sock):
        yield Running(f"http://127.0.0.1:{sock.getsockname()[1]}", state)
