"""What a model may pack in a ``google.protobuf.Any``, against a real loopback server whose
methods take one (protos/parcel.proto): a message of the service's own descriptor pool,
its fields checked as that message's, and nothing sent otherwise."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest
from grpc_servers import Running, post_servicer, serve
from mcs_grpc import GrpcDriver

from mcs.errors import InvalidInputError

T = "type.googleapis.com/"
LETTER = T + "mcs.parcel.Letter"


@pytest.fixture(scope="module")
def post_server() -> Iterator[Running]:
    with serve([post_servicer]) as running:
        yield running


@pytest.fixture
def post(post_server: Running) -> Iterator[GrpcDriver]:
    post_server.state.reset()
    with GrpcDriver(post_server.target, include_defaults=False) as driver:
        yield driver


def test_a_packed_message_of_the_service_reaches_it_as_those_fields(post: GrpcDriver) -> None:
    letter = {"@type": LETTER, "text": "hi", "seal": "aGVsbG8", "pages": 2, "weight_mg": 7}
    opened = post.call_tool("Post_Open", letter)
    assert opened["type_url"] == LETTER
    assert opened["message"] == {"@type": LETTER, "text": "hi", "seal": "aGVsbG8=", "pages": 2, "weightMg": "7"}


def test_anys_inside_a_packed_message_a_repeated_field_and_a_map_are_taken(post: GrpcDriver) -> None:
    inner = {"@type": LETTER, "text": "enclosed"}
    content = {"@type": LETTER, "text": "outer", "enclosures": [inner, {"@type": T + "google.protobuf.Duration",
                                                                         "value": "1.5s"}]}
    opened = post.call_tool("Post_Send", {"label": "a", "content": content, "extras": {"note": inner}})
    assert opened["message"]["enclosures"] == [inner, {"@type": T + "google.protobuf.Duration", "value": "1.500s"}]


def test_a_packed_well_known_type_gives_its_json_form_as_value(post: GrpcDriver) -> None:
    opened = post.call_tool("Post_Open", {"@type": T + "google.protobuf.Duration", "value": "90s"})
    assert opened["message"] == {"@type": T + "google.protobuf.Duration", "value": "90s"}


@pytest.mark.parametrize(("packed", "where", "needle"), [
    ({"@type": T + "mcs.parcel.Nope"}, "the request", "names no message of this service"),
    ({"@type": T + "google.protobuf.Timestamp.Nope", "value": "x"}, "the request", "names no message of this service"),
    ({"@type": LETTER, "seal": "!!!aGVsbG8="}, "the request", "'seal'"),  # protobuf would skip the !!! and send "hello"
    ({"@type": LETTER, "pages": 2**40}, "the request", "'pages'"),
    ({"@type": LETTER, "text": 5}, "the request", "'text'"),
    ({"@type": LETTER, "colour": "red"}, "the request", "'colour'"),
    ({"@type": LETTER, "enclosures": [{"@type": LETTER, "pages": "many"}]}, "enclosures[0]", "'pages'"),
    ({"@type": T + "google.protobuf.Duration", "value": "soon"}, "the request", "'value'"),
    ({"@type": T + "google.protobuf.Duration", "seconds": 5}, "the request", "'seconds'"),
])
def test_what_does_not_fit_the_packed_type_is_refused_naming_the_any_and_nothing_is_sent(
        post: GrpcDriver, post_server: Running, packed: dict[str, Any], where: str, needle: str) -> None:
    with pytest.raises(InvalidInputError) as info:
        post.call_tool("Post_Open", packed)
    assert f"the Any in {where}:" in info.value.message and needle in info.value.message
    assert info.value.details["field"] == where
    assert post_server.state.calls["Open"] == 0


def test_an_any_in_a_field_of_the_request_is_checked_and_named_by_its_path(post: GrpcDriver, post_server: Running) -> None:
    with pytest.raises(InvalidInputError, match=r"the Any in extras\['x'\]: .*names no message of this service"):
        post.call_tool("Post_Send", {"label": "a", "extras": {"x": {"@type": T + "evil.Type"}}})
    with pytest.raises(InvalidInputError, match=r"the Any in content: its fields do not fit .*'seal'"):
        post.call_tool("Post_Send", {"content": {"@type": LETTER, "seal": "not base64!"}})
    assert post_server.state.calls["Send"] == 0


def test_anys_nested_deeper_than_the_bound_are_refused(post: GrpcDriver, post_server: Running) -> None:
    def nested(levels: int) -> dict[str, Any]:
        value: dict[str, Any] = {"@type": LETTER, "text": "core"}
        for _ in range(levels):
            value = {"@type": LETTER, "enclosures": [value]}
        return value

    assert post.call_tool("Post_Open", nested(7))["type_url"] == LETTER
    with pytest.raises(InvalidInputError, match="nest more than 8 deep"):
        post.call_tool("Post_Open", nested(8))
    assert post_server.state.calls["Open"] == 1


def test_the_bytes_sent_are_the_packed_message_serialised(post: GrpcDriver) -> None:
    opened = post.call_tool("Post_Open", {"@type": LETTER, "text": "hi"})
    assert base64.b64decode(opened["value_base64"]) == b"\n\x02hi"
