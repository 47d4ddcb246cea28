"""The three free-form tools: read the schema, then run a document the model writes."""

from __future__ import annotations

from mcs.discovery import ALWAYS_LISTED
from mcs.tools import Tool

KIND = "graphql_freeform"
SEARCH, DESCRIBE, EXECUTE = "search_schema", "describe_type", "execute"
HINT = (
    "To reach any field of the GraphQL schema: search_schema finds types and fields by words, "
    "describe_type shows one type (or Type.field), and execute runs one operation you write, with "
    "every value passed in `variables` (declare them as $name in the document)."
)
_READ = {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": True}


def tools(mutations: bool) -> list[Tool]:
    """``search_schema``, ``describe_type`` and ``execute`` (which may write when ``mutations``)."""
    kinds = "a query or a mutation" if mutations else "a query"
    return [
        Tool(
            name=SEARCH, title="Search the GraphQL schema",
            description="Find GraphQL types and fields (Type.field, with arguments and type) by words.",
            input_schema={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "words to look for, e.g. 'repository issues'"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
                },
                "required": ["query"], "additionalProperties": False,
            },
            annotations=_READ, meta={KIND: SEARCH, "group": "schema", ALWAYS_LISTED: True},
        ),
        Tool(
            name=DESCRIBE, title="Describe a GraphQL type",
            description="Show one GraphQL type (fields, arguments, enum values) or one field as Type.field.",
            input_schema={
                "type": "object",
                "properties": {"name": {"type": "string", "description": "a type (Repository) or Type.field (Query.repository)"}},
                "required": ["name"], "additionalProperties": False,
            },
            annotations=_READ, meta={KIND: DESCRIBE, "group": "schema", ALWAYS_LISTED: True},
        ),
        Tool(
            name=EXECUTE, title="Run a GraphQL operation",
            description=(
                f"Run {kinds} you write against the API. It is checked against the schema and limits "
                "(depth, aliases, field count, complexity) before it is sent. Put every value in `variables`."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "one GraphQL operation, e.g. query($id: ID!) { node(id: $id) { id } }"},
                    "variables": {"type": "object", "description": "values of the operation's $variables"},
                    "operationName": {"type": "string", "description": "which operation to run, when the document names several"},
                },
                "required": ["query"], "additionalProperties": False,
            },
            annotations=_READ if not mutations else {
                "readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True,
            },
            meta={KIND: EXECUTE, "group": "schema", ALWAYS_LISTED: True},
        ),
    ]
