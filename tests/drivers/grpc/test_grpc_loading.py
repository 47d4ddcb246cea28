"""Loading services: server reflection (v1, v1alpha), .proto files compiled at load, descriptor
sets; the service and method filters; every corpus proto; clear errors for bad sources."""

from __future__ import annotations

from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_reflection.v1alpha import reflection, reflection_pb2
from grpc_servers import LAB_PROTO, Running, lab_servicer, serve
from mcs_grpc import GrpcDriver

from mcs.errors import ConfigurationError

LAB_TOOLS = {"Lab_Echo", "Lab_EchoTree", "Lab_EchoExpr", "Lab_Fail", "Lab_Slow", "Lab_Flaky",
             "Lab_FlakyWrite", "Lab_Big", "Lab_Ticks", "Lab_Sum", "Lab_Shout", "Lab_Whoami"}


def names(driver: GrpcDriver) -> set[str]:
    return {tool.name for tool in driver.list_tools()}


def test_v1alpha_reflection_lists_every_method_and_leaves_infrastructure_out(lab: Running) -> None:
    with GrpcDriver(lab.target, description_mode="inline") as driver:
        assert names(driver) == LAB_TOOLS
        assert driver.meta.name == "mcs_test" and driver.meta.protocol == "gRPC"


def test_v1_reflection_loads_the_corpus_examples(examples: Running) -> None:
    with GrpcDriver(examples.target) as driver:
        assert names(driver) == {
            "Greeter_SayHello", "Greeter_SayHelloAgain", "KeyValueStore_GetValues",
            "RouteGuide_GetFeature", "RouteGuide_ListFeatures", "RouteGuide_RecordRoute", "RouteGuide_RouteChat",
        }
        assert driver.call_tool("Greeter_SayHello", {"name": "v1"}) == {"message": "Hello, v1!"}


def test_reflection_descriptions_come_from_the_descriptors_the_server_sends(examples: Running) -> None:
    with GrpcDriver(examples.target, services=["routeguide.*"]) as driver:
        tool = driver.get_tool("RouteGuide_ListFeatures")
        assert tool is not None and tool.meta["original_name"] == "routeguide.RouteGuide/ListFeatures"
        assert tool.annotations["readOnlyHint"] is False


def _chain(depth: int) -> descriptor_pb2.FileDescriptorProto:
    """deep.M0 holds an M1, which holds an M2, ... down to M{depth-1}; deep.Deep/Call takes an M0."""
    file = descriptor_pb2.FileDescriptorProto(name="deep.proto", package="deep", syntax="proto3")
    for index in range(depth):
        message = file.message_type.add(name=f"M{index}")
        message.field.add(name="v", number=1, json_name="v", type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
                          label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
        if index + 1 < depth:
            message.field.add(name="next", number=2, json_name="next", type_name=f".deep.M{index + 1}",
                              type=descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
                              label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    file.service.add(name="Deep").method.add(name="Call", input_type=".deep.M0", output_type=".deep.M0")
    return file


def test_reflection_with_messages_nested_deeper_than_protobuf_parses_is_a_configuration_error() -> None:
    pool = descriptor_pool.DescriptorPool()
    pool.Add(_chain(400))  # a hostile server: loading it overflowed Python's stack (RecursionError)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    reflection.enable_server_reflection(["deep.Deep", reflection.SERVICE_NAME], server, pool=pool)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        with pytest.raises(ConfigurationError, match=r"deep\.Deep\.Call: its request deep\.M0 nests messages more than 100"):
            GrpcDriver(f"127.0.0.1:{port}")
    finally:
        server.stop(None)


def test_a_reflection_server_answering_without_end_is_cut_after_what_was_asked() -> None:
    """A hostile reflection server answers the one ``list_services`` request with endless
    1 MiB responses: the load stops at the first response too many, cancels the call, and
    keeps nothing of the rest (the stream was read whole into memory before)."""
    sent: list[int] = []

    def answer(requests: Any, context: grpc.ServicerContext) -> Any:
        for _ in requests:
            while len(sent) < 150 and context.is_active():
                sent.append(1)
                response = reflection_pb2.ServerReflectionResponse()
                response.list_services_response.service.add(name=f"s{len(sent)}" + "x" * (1 << 20))
                yield response
            return

    handler = grpc.stream_stream_rpc_method_handler(
        answer, request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(
        "grpc.reflection.v1.ServerReflection", {"ServerReflectionInfo": handler})])
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        with pytest.raises(ConfigurationError, match=r"sent more than was asked \(1 responses\)"):
            GrpcDriver(f"127.0.0.1:{port}", load_timeout=20)
        server.stop(5).wait()
        assert len(sent) < 50  # cancelled: the server stopped well before its 150 MiB
    finally:
        server.stop(None)


def test_a_server_without_reflection_gives_a_clear_error_naming_the_other_sources() -> None:
    with serve([lab_servicer], reflection_version=None) as running, \
            pytest.raises(ConfigurationError, match=r"has no server reflection.*proto="):
        GrpcDriver(running.target)


def test_an_unreachable_target_fails_at_load_with_the_target_named() -> None:
    from support.servers import free_port

    target = f"127.0.0.1:{free_port()}"
    with pytest.raises(ConfigurationError, match=f"reflection on {target} failed with UNAVAILABLE"):
        GrpcDriver(target, load_timeout=2)


def test_service_and_method_filters_choose_the_tools(lab: Running) -> None:
    with GrpcDriver(lab.target, methods=["Echo*", "mcs.test.Lab/Sum"]) as driver:
        assert names(driver) == {"Lab_Echo", "Lab_EchoTree", "Lab_EchoExpr", "Lab_Sum"}
    with GrpcDriver(lab.target, services="grpc.health.v1.Health") as driver:
        assert names(driver) == {"Health_Check", "Health_List", "Health_Watch"}
    with GrpcDriver(lab.target, read_only=True) as driver:
        assert names(driver) == {"Lab_Echo", "Lab_EchoTree", "Lab_Big", "Lab_Ticks"}


def test_a_filter_that_matches_nothing_is_a_configuration_error(lab: Running) -> None:
    with pytest.raises(ConfigurationError, match=r"match no method; services: .*mcs.test.Lab"):
        GrpcDriver(lab.target, services=["mcs.test.Lba"])


def test_proto_files_compile_at_load_with_comments() -> None:
    with GrpcDriver(proto=LAB_PROTO) as driver:
        assert names(driver) == LAB_TOOLS
        echo = driver.get_tool("Lab_Echo")
        assert echo is not None and echo.description == "Returns what it was given."
        assert echo.annotations == {"readOnlyHint": True, "destructiveHint": False,
                                    "idempotentHint": True, "openWorldHint": False}


def test_the_pubsub_protos_compile_with_their_imports(corpus: Path) -> None:
    root = corpus / "proto" / "googleapis"
    with GrpcDriver(proto=root / "google/pubsub/v1/pubsub.proto", include_paths=[root],
                    description_mode="inline") as driver:
        tools = names(driver)
        assert {"Publisher_Publish", "Subscriber_Pull", "Subscriber_StreamingPull"} <= tools
        assert len(tools) == 35
        publish = driver.get_tool("Publisher_Publish")
        assert publish is not None and publish.input_schema["required"] == ["topic", "messages"]


def test_a_descriptor_set_loads_from_bytes_and_from_a_file(tmp_path: Path) -> None:
    from mcs_grpc._protoc import compile_protos

    data = compile_protos([LAB_PROTO]).SerializeToString()
    with GrpcDriver(descriptor_set=data) as driver:
        assert names(driver) == LAB_TOOLS
    path = tmp_path / "lab.pb"
    path.write_bytes(data)
    with GrpcDriver(descriptor_set=path, methods="Echo") as driver:
        assert names(driver) == {"Lab_Echo"}


def test_every_corpus_proto_with_services_loads(corpus: Path) -> None:
    roots = [corpus / "proto" / "grpc-examples", corpus / "proto" / "grpc-proto", corpus / "proto" / "googleapis"]
    loaded = 0
    for path in sorted((corpus / "proto").rglob("*.proto")):
        root = next(r for r in roots if r in path.parents)
        try:
            driver = GrpcDriver(proto=path, include_paths=[root], services=None)
        except ConfigurationError as error:
            assert path.name in str(error) or "match no method" in str(error), str(error)
            continue
        with driver:
            loaded += 1
            for tool in driver.list_tools():
                assert tool.input_schema["type"] == "object"
    assert loaded >= 8


@pytest.mark.parametrize(("text", "expected"), [
    ('syntax = "proto3";\nmessage A { strin b = 1; }\n', r'bad\.proto:2:\d+: "strin" is not defined'),
    ('syntax = "proto3";\nimport "missing.proto";\n', r"missing\.proto: File not found"),
])
def test_a_proto_that_does_not_compile_names_the_file_and_the_place(tmp_path: Path, text: str, expected: str) -> None:
    bad = tmp_path / "bad.proto"
    bad.write_text(text)
    with pytest.raises(ConfigurationError, match=expected):
        GrpcDriver(proto=bad)


@pytest.mark.parametrize(("options", "expected"), [
    ({}, "needs a target"),
    ({"proto": "nowhere.proto"}, "no such .proto file"),
    ({"descriptor_set": b"\xff\xff"}, "not a serialized FileDescriptorSet"),
    ({"proto": str(LAB_PROTO), "descriptor_set": b""}, "not both"),
    ({"proto": str(LAB_PROTO), "max_stream_messages": 0}, "max_stream_messages must be a positive integer"),
    ({"proto": str(LAB_PROTO), "target": "host:1\r\nx"}, "target must be a gRPC target"),
    ({"proto": str(LAB_PROTO), "target": "h:1", "client_key": "-----BEGIN x"}, "both client_certificate and client_key"),
    ({"proto": str(LAB_PROTO), "target": "h:1", "metadata": {"Bad Key": "x"}}, "must be lower-case ASCII"),
    ({"proto": str(LAB_PROTO), "target": "h:1", "retry_codes": ["NOPE"]}, "not a gRPC status name"),
    ({"proto": str(LAB_PROTO), "colour": "red"}, "has no option 'colour'"),
])
def test_bad_options_are_configuration_errors(options: dict, expected: str) -> None:
    with pytest.raises(ConfigurationError, match=expected):
        GrpcDriver(**options)


def test_the_driver_is_found_through_its_entry_point(lab: Running) -> None:
    import mcs

    with mcs.load_driver("grpc", target=lab.target, methods="Echo") as driver:
        assert isinstance(driver, GrpcDriver)
        assert driver.call_tool("Lab_Echo", {"text": "x"})["text"] == "x"


def test_the_public_api_is_the_driver_class_and_the_package_is_typed() -> None:
    import mcs_grpc

    assert mcs_grpc.__all__ == ["GrpcDriver"] and mcs_grpc.GrpcDriver is GrpcDriver
    assert (Path(mcs_grpc.__file__).parent / "py.typed").is_file()
    assert (Path(mcs_grpc.__file__).parent / "demo.proto").is_file()  # the demo's service ships inside
