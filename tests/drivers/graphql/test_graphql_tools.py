"""How the schema becomes tools: input schemas, selection sets, persisted operations, modes."""

from __future__ import annotations

from pathlib import Path

import pytest
from graphql import parse, validate
from graphql_paths import OPERATIONS
from graphql_server import SDL
from mcs_graphql import GraphQLDriver

from mcs import discovery


@pytest.fixture(scope="module")
def driver() -> GraphQLDriver:
    return GraphQLDriver(schema=SDL, mutations="all", operations=OPERATIONS)


def test_generated_tools_cover_query_mutation_and_subscription_root_fields(driver: GraphQLDriver) -> None:
    kinds = {t.name: t.meta["operation"] for t in driver.list_tools() if "operation" in t.meta}
    assert kinds["books"] == "query" and kinds["addBook"] == "mutation" and kinds["ticks"] == "subscription"
    assert driver.get_tool("books").annotations["readOnlyHint"] is True
    assert driver.get_tool("deleteAll").annotations["destructiveHint"] is True
    assert driver.get_tool("deleteAll").annotations["readOnlyHint"] is False


def test_mutations_are_off_by_default() -> None:
    plain = GraphQLDriver(schema=SDL, operations=OPERATIONS)
    names = {t.name for t in plain.list_tools()}
    assert "addBook" not in names and "deleteAll" not in names and "AddBook" not in names
    persisted_only = GraphQLDriver(schema=SDL, operations=OPERATIONS, mutations="persisted")
    names = {t.name for t in persisted_only.list_tools()}
    assert "AddBook" in names and "addBook" not in names


def test_arguments_become_json_schema_with_required_enums_scalars_and_recursive_inputs(driver: GraphQLDriver) -> None:
    books = driver.get_tool("books").input_schema
    genre = books["properties"]["genre"]
    assert genre["enum"] == ["FICTION", "SCIENCE"]  # the deprecated POETRY is left out
    assert "FICTION: Made-up stories." in genre["description"]
    assert books["properties"]["first"]["maximum"] == 2**31 - 1
    assert "required" not in books and books["additionalProperties"] is False
    add = driver.get_tool("addBook").input_schema
    assert add["required"] == ["input"]
    assert add["properties"]["input"] == {"$ref": "#/$defs/BookInput"}
    book_input = add["$defs"]["BookInput"]
    assert book_input["description"] == "What a new book needs."
    assert book_input["required"] == ["title", "author"]
    assert book_input["properties"]["genre"]["default"] == "FICTION"
    assert book_input["properties"]["published"] == {"type": "string", "format": "date-time"}
    assert book_input["properties"]["link"] == {"type": "string", "format": "uri"}
    assert book_input["properties"]["tags"] == {"type": "array", "items": {"type": "string"}}
    assert add["$defs"]["AuthorInput"]["properties"]["mentor"] == {"$ref": "#/$defs/AuthorInput"}


def test_the_selection_is_bounded_cycle_safe_and_puts_identifiers_first(driver: GraphQLDriver) -> None:
    text = driver.operations["book"].text
    assert text == (
        "query Book($id: ID!) { book(id: $id) { id title genre published link tags author { id name } } }"
    )
    deep = GraphQLDriver(schema=SDL, selection_depth=5).operations["author"].text
    assert "mentor" not in deep  # Author.mentor is an Author: a type is never entered twice on one path
    assert "books" not in deep  # lists of objects are not expanded
    shallow = GraphQLDriver(schema=SDL, selection_depth=1).operations["book"].text
    assert "author" not in shallow


def test_relay_connections_page_with_first_after_and_page_info(driver: GraphQLDriver) -> None:
    text = driver.operations["books"].text
    assert "pageInfo { hasNextPage endCursor } totalCount nodes { id title" in text
    tool = driver.get_tool("books")
    assert tool.input_schema["properties"]["first"]["default"] == 10
    assert "pageInfo.endCursor" in tool.description
    assert driver.operations["books"].variables({}) == {"first": 10}
    assert driver.operations["books"].variables({"last": 2}) == {"last": 2}


def test_unions_and_interfaces_select_typename_and_member_fields(driver: GraphQLDriver) -> None:
    assert "__typename ... on Book { id title" in driver.operations["search"].text
    assert "... on Author { id name" in driver.operations["search"].text
    assert driver.operations["node"].text.endswith("node(id: $id) { __typename id } }")


def test_a_selection_can_be_overridden_per_field() -> None:
    driver = GraphQLDriver(schema=SDL, selections={"book": "{ title author { name } }"})
    assert driver.operations["book"].text == "query Book($id: ID!) { book(id: $id) { title author { name } } }"


def test_every_generated_document_validates_against_the_schema(driver: GraphQLDriver) -> None:
    for name, op in driver.operations.items():
        assert validate(driver.schema, parse(op.text)) == [], name


def test_every_generated_github_document_validates(github: GraphQLDriver) -> None:
    assert len(github.operations) == 28 + 230
    for name, op in github.operations.items():
        assert validate(github.schema, parse(op.text)) == [], name


def test_persisted_operations_become_tools_described_by_their_leading_comment(driver: GraphQLDriver) -> None:
    tool = driver.get_tool("BooksByGenre")
    assert tool.description == "Find books of one genre, with their authors. Gives up to `first` books (3 unless said otherwise)."
    schema = tool.input_schema
    assert schema["required"] == ["genre"]
    assert schema["properties"]["first"]["default"] == 3
    assert schema["properties"]["genre"]["enum"] == ["FICTION", "SCIENCE"]
    assert driver.get_tool("Greet").description == "Say hello through a persisted operation."
    assert driver.get_tool("AddBook").input_schema["$defs"]["BookInput"]["required"] == ["title", "author"]
    op = driver.operations["BooksByGenre"]
    assert op.text == (OPERATIONS / "books.graphql").read_text()


def test_a_persisted_file_that_does_not_match_the_schema_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.graphql"
    bad.write_text("query Q {\n  book(id: 1) { nope }\n}\n")
    with pytest.raises(Exception, match=r"bad.graphql: does not match the schema: line 2, column 17: Cannot query field 'nope'"):
        GraphQLDriver(schema=SDL, operations=[bad])
    anonymous = tmp_path / "anon.graphql"
    anonymous.write_text("{ now }")
    with pytest.raises(Exception, match=r"anon\.graphql: line 1: a persisted operation needs a name"):
        GraphQLDriver(schema=SDL, operations=tmp_path / "anon.graphql")


def test_freeform_tools_appear_in_discovery_mode_and_the_description_stays_small() -> None:
    inline = GraphQLDriver(schema=SDL)
    assert inline.get_tool("execute") is None
    driver = GraphQLDriver(schema=SDL, description_mode="discovery")
    assert driver.get_tool("execute") is not None and driver.get_tool("search_schema") is not None
    text = driver.get_function_description()
    assert '"name":"execute"' in text and '"name":"search_tools"' in text
    assert "variables" in text
    assert discovery.estimate_tokens(text) < 3000


def test_in_discovery_mode_the_freeform_tools_leave_the_driver_with_the_meta_tools() -> None:
    from mcs.native import export_tools

    driver = GraphQLDriver(schema=SDL, description_mode="discovery")
    names = [entry["name"] for entry in export_tools(driver.list_tools(), "anthropic")]
    assert sorted(names) == sorted(["search_tools", "describe_tool", "call_tool", "search_schema",
                                    "describe_type", "execute"])


def test_tool_names_stay_unique_when_a_root_field_is_named_like_a_freeform_tool() -> None:
    driver = GraphQLDriver(schema="type Query { execute: Int, search_schema: Int }", freeform=True)
    names = [t.name for t in driver.list_tools()]
    assert len(set(names)) == len(names) == 5
    assert driver.operations["execute"].text == "query Execute { execute }"
