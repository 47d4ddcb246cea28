"""A large real service goes to discovery mode on its own (default ``token_budget``): Pub/Sub from
the corpus's googleapis, searched, described and called through the meta-tools against a real
Publisher on loopback."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator

import pytest
from grpc_servers import GOOGLEAPIS, Running
from mcs_grpc import GrpcDriver

from mcs.errors import ErrorCode, ToolCallError

PUBSUB = GOOGLEAPIS / "google" / "pubsub" / "v1" / "pubsub.proto"
TOPIC = "projects/demo/topics/orders"


@pytest.fixture(scope="module")
def pubsub(pubsub_server: Running) -> Iterator[GrpcDriver]:
    with GrpcDriver(pubsub_server.target, proto=PUBSUB, include_paths=[GOOGLEAPIS]) as driver:
        yield driver


def test_pubsub_is_described_in_discovery_mode_by_default(pubsub: GrpcDriver) -> None:
    description = pubsub.get_function_description()
    assert pubsub.token_budget == 8000
    assert "search_tools" in description and "describe_tool" in description
    assert "ordering_key" not in description and "orderingKey" not in description  # no inline schemas
    names = {tool.name for tool in pubsub.list_tools()} - {"search_tools", "describe_tool", "call_tool"}
    assert {"Publisher_Publish", "Subscriber_Pull", "SchemaService_CreateSchema"} <= names and len(names) > 30


def test_search_describe_and_publish_through_the_meta_tools(pubsub: GrpcDriver, pubsub_server: Running) -> None:
    pubsub_server.state.reset()
    found = pubsub.process_llm_response(json.dumps(
        {"tool": "search_tools", "arguments": {"query": "publish messages to a topic"}}))
    assert "Publisher_Publish" in [tool["name"] for tool in found["tools"][:3]]
    described = pubsub.process_llm_response(json.dumps(
        {"tool": "describe_tool", "arguments": {"name": "Publisher_Publish"}}))
    assert {"topic", "messages"} <= set(described["input_schema"]["properties"])
    data = base64.b64encode(b"order 42 shipped").decode()
    result = pubsub.process_llm_response(json.dumps({"tool": "call_tool", "arguments": {
        "name": "Publisher_Publish",
        "arguments": {"topic": TOPIC, "messages": [{"data": data, "attributes": {"kind": "shipping"}}]}}}))
    assert result["messageIds"] == ["1"]
    assert pubsub_server.state.published == [(TOPIC, b"order 42 shipped", {"kind": "shipping"})]


def test_a_method_the_server_does_not_implement_is_a_clear_error_through_call_tool(pubsub: GrpcDriver) -> None:
    with pytest.raises(ToolCallError) as failed:
        pubsub.process_llm_response(json.dumps({"tool": "call_tool", "arguments": {
            "name": "Publisher_GetTopic", "arguments": {"topic": TOPIC}}}))
    assert failed.value.code is ErrorCode.EXECUTION_ERROR and "UNIMPLEMENTED" in failed.value.message
