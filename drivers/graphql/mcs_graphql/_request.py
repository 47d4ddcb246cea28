"""A gql request whose document goes on the wire exactly as stored."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gql import GraphQLRequest
from graphql import DocumentNode, parse


class FixedRequest(GraphQLRequest):
    """A :class:`gql.GraphQLRequest` that sends ``text`` itself, byte for byte.

    gql prints its parsed document again for every request; this request sends the
    generated, persisted or checked text unchanged (SECURITY.md C1: what was reviewed is
    what is sent) and parses it only if gql asks for the document.
    """

    def __init__(self, text: str, operation_name: str | None, variables: Mapping[str, Any] | None) -> None:
        # GraphQLRequest.__init__ would parse the text on every call: the text is already checked.
        self._text = text
        self._document: DocumentNode | None = None
        self.variable_values = dict(variables) if variables else None
        self.operation_name = operation_name
        self.extensions = None

    @property
    def document(self) -> DocumentNode:  # type: ignore[override]
        if self._document is None:
            self._document = parse(self._text)
        return self._document

    @property
    def payload(self) -> dict[str, Any]:
        payload: dict[str, Any] = {"query": self._text}
        if self.operation_name:
            payload["operationName"] = self.operation_name
        if self.variable_values:
            payload["variables"] = self.variable_values
        return payload
