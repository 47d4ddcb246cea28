"""Discovery search: BM25 over the fields a tool has, re-ranked by what the task asks to do.

The recall goals run over ``queries.yaml`` (tasks written as people say them) against the
real specs of the shared corpus; bench/discovery.py prints the same figures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

import mcs
from mcs import discovery
from mcs.tools import Tool
from mcs.toolsearch import ToolIndex, intent, plain_text, summary, task_intents, task_words, words

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parents[2] / "shared" / "corpus" / "openapi"
QUERIES: dict[str, Any] = yaml.safe_load((HERE / "queries.yaml").read_text(encoding="utf-8"))


def _tool(name: str, description: str = "", **meta: Any) -> Tool:
    return Tool(name=name, description=description, input_schema={"type": "object"}, meta=meta)


def test_the_query_set_is_large_and_names_real_operations_only() -> None:
    tasks = [task for api in QUERIES.values() for task in api["tasks"]]
    assert len(tasks) >= 150
    assert set(QUERIES) == {"github", "stripe", "kubernetes", "twilio", "docker"}
    assert all(task["expect"] and task["query"] == task["query"].strip() for task in tasks)


@pytest.fixture(scope="module")
def indexes() -> dict[str, ToolIndex]:
    if not CORPUS.exists():
        pytest.skip("the shared OpenAPI corpus is not here")
    return {api: ToolIndex(mcs.load_driver("rest", spec=str(CORPUS / entry["spec"])).list_tools())
            for api, entry in QUERIES.items()}


def test_every_expected_operation_exists(indexes: dict[str, ToolIndex]) -> None:
    for api, entry in QUERIES.items():
        names = {tool.original_name for tool in indexes[api].tools}
        missing = {name for task in entry["tasks"] for name in task["expect"]} - names
        assert not missing, f"{api}: {sorted(missing)}"


def test_recall_at_3_and_at_10_reach_the_goals(indexes: dict[str, ToolIndex]) -> None:
    at3 = at10 = total = 0
    for api, entry in QUERIES.items():
        for task in entry["tasks"]:
            found = [tool.original_name for tool in indexes[api].search(task["query"], 10)[0]]
            expected = set(task["expect"])
            at3 += bool(expected & set(found[:3]))
            at10 += bool(expected & set(found))
            total += 1
    assert at3 / total >= 0.95
    assert at10 / total >= 0.99


@pytest.mark.parametrize(("api", "query", "expected"), [
    ("stripe", "create a customer", {"PostCustomers"}),
    ("stripe", "refund a charge", {"PostRefunds", "PostChargesChargeRefunds", "PostChargesChargeRefund"}),
    ("github", "open a pull request", {"pulls/create"}),
    ("github", "close an issue", {"issues/update"}),
])
def test_the_misses_the_issue_names_come_first(indexes: dict[str, ToolIndex], api: str, query: str,
                                                expected: set[str]) -> None:
    found = [tool.original_name for tool in indexes[api].search(query, 10)[0]]
    assert expected & set(found[:3])
    assert not expected - set(found)  # every tool that does it is on the first page


def test_summaries_are_plain_text() -> None:
    tool = _tool("PostCustomers", "<p>Creates a new <b>customer</b> object.</p>\n<p>More.</p>")
    assert summary(tool) == "Creates a new customer object. More."
    assert plain_text("See [the docs](https://x.test/a) &amp; **bold** `code`") == "See the docs & bold code"
    long = _tool("x", "word " * 60)
    assert len(summary(long)) == 100 and summary(long).endswith("...")
    listed = discovery.search([tool], "customer")
    assert listed["tools"][0]["summary"] == "Creates a new customer object. More."


def test_names_split_into_words_the_way_specs_write_them() -> None:
    assert words("pulls/list-requested_reviewers") == ["pulls", "list", "requested", "reviewers"]
    assert words("createAutoscalingV1NamespacedHorizontalPodAutoscaler")[:4] == ["create", "autoscaling", "v1", "namespaced"]
    assert words("HTTPServer.getURL") == ["http", "server", "get", "url"]


def test_what_a_tool_does_comes_from_its_name_else_its_method_and_path() -> None:
    assert intent(_tool("issues_create-comment")) == "create"
    assert intent(_tool("readCoreV1NamespacedPod")) == "get"
    assert intent(_tool("PostCustomers", method="POST", path="/v1/customers")) == "create"
    assert intent(_tool("PostCustomersCustomer", method="POST", path="/v1/customers/{customer}")) == "update"
    assert intent(_tool("GetCharges", method="GET", path="/v1/charges")) == "list"
    assert intent(_tool("star", method="PUT", path="/user/starred/{owner}/{repo}")) == "update"
    assert intent(_tool("ping")) == ""


def test_what_a_task_asks_comes_from_its_first_word() -> None:
    assert task_words("run a new container from an image") == (["run", "new", "container"], ["image"])
    assert task_intents(["open", "pull", "request"]) == ["create"]
    assert task_intents(["list", "open", "pull", "requests"]) == ["list"]
    assert task_intents(["run", "new", "container"])[0] == "create"
    assert task_intents(["star", "repository"]) == ["update", "create"]  # a verb it does not know acts


def test_the_verb_of_the_task_ranks_the_tool_that_does_it_first() -> None:
    tools = [
        _tool("GetCustomers", "List all customers.", method="GET", path="/v1/customers"),
        _tool("PostCustomers", "Create a customer.", method="POST", path="/v1/customers"),
        _tool("DeleteCustomersCustomer", "Delete a customer.", method="DELETE", path="/v1/customers/{customer}"),
        _tool("PostCustomersCustomer", "Update a customer.", method="POST", path="/v1/customers/{customer}"),
    ]
    index = ToolIndex(tools)
    first = {query: index.search(query, 1)[0][0].name for query in
             ("add a new customer", "remove a customer", "show all customers", "change a customer's email")}
    assert first == {"add a new customer": "PostCustomers", "remove a customer": "DeleteCustomersCustomer",
                     "show all customers": "GetCustomers", "change a customer's email": "PostCustomersCustomer"}


def test_search_pages_counts_and_filters_by_group() -> None:
    tools = [_tool(f"issues_{verb}", f"{verb} an issue", group="issues") for verb in ("create", "update", "list")]
    tools += [_tool("pulls_create", "create a pull request", group="pulls")]
    first = discovery.search(tools, "create", limit=1)
    assert first["total"] == 2 and first["next_offset"] == 1 and len(first["tools"]) == 1
    second = discovery.search(tools, "create", limit=1, offset=1)
    assert "next_offset" not in second and second["tools"][0]["name"] != first["tools"][0]["name"]
    only = discovery.search(tools, "create", group="Pulls")
    assert [t["name"] for t in only["tools"]] == ["pulls_create"] and only["tools"][0]["group"] == "pulls"
    listed = discovery.search(tools, "", group="issues", limit=2)
    assert [t["name"] for t in listed["tools"]] == ["issues_create", "issues_update"] and listed["total"] == 3
    none = discovery.search(tools, "zebra")
    assert none["total"] == 0 and "issues" in none["hint"]
