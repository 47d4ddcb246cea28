"""Flat messages skip ``json_format``: the direct path must give exactly its results, and hand
everything it does not take as it is back to ``json_format`` (which then judges it)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from mcs_grpc._catalog import Catalog
from mcs_grpc._messages import direct_builder, direct_reader
from mcs_grpc._protoc import compile_protos

PROTO3 = """
syntax = "proto3";
package flat.test;
import "google/protobuf/wrappers.proto";
message Flat {
  int32 small = 4;
  string text = 1;
  bool flag = 2;
  uint32 count = 5;
  optional int32 maybe = 6;
  sint32 signed_small = 7;
  fixed32 fixed = 8;
  sfixed32 signed_fixed = 9;
  string display_name = 10 [json_name = "shownAs"];
}
message Measure { double ratio = 1; string unit = 2; }
message Reply { string message = 2; int32 code = 1; optional bool done = 3; }
message WithOneof { oneof pick { string a = 1; string b = 2; } }
message WithList { repeated string items = 1; }
message WithLong { int64 big = 1; }
message WithInner { Reply reply = 1; }
message Wrapped { google.protobuf.StringValue value = 1; }
"""
PROTO2 = """
syntax = "proto2";
package flat.test2;
message Old { optional int32 port = 2 [default = 80]; required string host = 1; optional bool tls = 3; }
message Open { optional string name = 1; extensions 100 to 199; }
"""


@pytest.fixture(scope="module")
def classes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root: Path = tmp_path_factory.mktemp("protos")
    (root / "flat.proto").write_text(PROTO3)
    (root / "old.proto").write_text(PROTO2)
    files = compile_protos([root / "flat.proto", root / "old.proto"], [root]).file
    catalog = Catalog(files)
    found = {}
    for name in ("flat.test.Flat", "flat.test.Measure", "flat.test.Reply", "flat.test.WithOneof", "flat.test.WithList",
                 "flat.test.WithLong", "flat.test.WithInner", "flat.test.Wrapped",
                 "flat.test2.Old", "flat.test2.Open"):
        found[name.rsplit(".", 1)[1]] = catalog.message_class(catalog.pool.FindMessageTypeByName(name))
    found["StringValue"] = catalog.message_class(catalog.pool.FindMessageTypeByName("google.protobuf.StringValue"))
    return found


def _json_format(message: Any, include_defaults: bool) -> dict[str, Any]:
    return json_format.MessageToDict(message, always_print_fields_with_no_presence=include_defaults)


@pytest.mark.parametrize("include_defaults", [True, False])
def test_flat_messages_are_read_with_the_keys_values_and_order_of_json_format(
    classes: dict[str, Any], include_defaults: bool,
) -> None:
    flat, old = classes["Flat"], classes["Old"]
    messages = [
        flat(), flat(maybe=0), flat(text="a", small=-3, count=7, flag=True),
        flat(display_name="x", fixed=1, signed_fixed=-1, signed_small=-2, maybe=5, small=1),
        classes["Reply"](message="hi"), classes["Reply"](code=2, done=False),
        old(host="h"), old(host="h", port=80, tls=False), old(host="", port=0),
    ]
    for message in messages:
        read = direct_reader(type(message), include_defaults)
        assert read is not None
        expected = _json_format(message, include_defaults)
        got = read(message)
        assert got == expected
        assert list(got) == list(expected), message


def test_flat_arguments_build_the_message_json_format_builds(classes: dict[str, Any]) -> None:
    flat, old = classes["Flat"], classes["Old"]
    measure = classes["Measure"]
    cases = [
        (flat, {}), (flat, {"text": "a", "small": -3, "flag": True}),
        (flat, {"maybe": 0, "count": 4294967295, "signedSmall": -5}),
        (measure, {"ratio": 2, "unit": "m"}), (measure, {"ratio": -0.0}), (measure, {"ratio": 1e308}),
        (flat, {"signed_small": -5, "shownAs": "x"}), (flat, {"display_name": "y"}),
        (old, {"host": "h", "port": 80}), (old, {"tls": False}),
    ]
    for cls, arguments in cases:
        build = direct_builder(cls)
        assert build is not None
        built = build(arguments)
        assert built is not None, arguments
        expected = json_format.ParseDict(arguments, cls())
        assert built == expected
        assert built.ListFields() == expected.ListFields()  # presence too (maybe=0 is set)


@pytest.mark.parametrize("arguments", [
    {"unknown": 1}, {"text": None}, {"small": True}, {"small": 1.0}, {"small": "1"},
    {"small": 2**31}, {"count": -1}, {"text": 5}, {"signed_small": 1, "signedSmall": 2}, ["text"],
    {"ratio": float("nan")}, {"ratio": float("inf")}, {"ratio": 10**400}, {"ratio": True},
])
def test_the_direct_builder_leaves_to_json_format_what_it_must_judge(
    classes: dict[str, Any], arguments: Any,
) -> None:
    cls = classes["Measure"] if isinstance(arguments, dict) and "ratio" in arguments else classes["Flat"]
    build = direct_builder(cls)
    assert build is not None
    assert build(arguments) is None


@pytest.mark.parametrize("name", ["WithOneof", "WithList", "WithLong", "WithInner", "Wrapped", "Open", "StringValue"])
def test_messages_that_are_not_flat_take_the_json_format_path(classes: dict[str, Any], name: str) -> None:
    assert direct_builder(classes[name]) is None
    assert direct_reader(classes[name], True) is None


def test_doubles_are_built_directly_but_read_by_json_format(classes: dict[str, Any]) -> None:
    """Reading a double is json_format's: -0.0 counts as set, NaN and infinities become text."""
    measure = classes["Measure"]
    assert direct_builder(measure) is not None
    assert direct_reader(measure, True) is None
