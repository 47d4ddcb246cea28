"""A gRPC driver served over the RFC-0001 wire (``mcs serve grpc ... --protocol rfc0001``):
its strict check of arguments as sent is the driver's own, with the protobuf JSON forms the
driver takes and the check of what a ``google.protobuf.Any`` packs, against real loopback
gRPC and HTTP servers."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import uvicorn
from grpc_servers import Running, lab_servicer, post_servicer, serve
from mcs_grpc import GrpcDriver
from support.servers import uvicorn_on_loopback

from mcs import FunctionDriver, Toolbox
from mcs.server.app import create_app
from mcs.server.backend import DriverBackend

T = "type.googleapis.com/"
LETTER = T + "mcs.parcel.Letter"


@pytest.fixture(scope="module")
def grpc_server() -> Iterator[Running]:
    with serve([post_servicer, lab_servicer]) as running:
        yield running


@pytest.fixture(scope="module")
def driver(grpc_server: Running) -> Iterator[GrpcDriver]:
    with GrpcDriver(grpc_server.target, include_defaults=False) as grpc:
        yield grpc


def _served(driver: GrpcDriver, *, strict: bool) -> Iterator[str]:
    config = uvicorn.Config(create_app(DriverBackend(driver, strict=strict)), log_level="critical", lifespan="off")
    with uvicorn_on_loopback(config, timeout=10) as url:
        yield url


@pytest.fixture(scope="module")
def strict_url(driver: GrpcDriver) -> Iterator[str]:
    yield from _served(driver, strict=True)


@pytest.fixture(scope="module")
def lenient_url(driver: GrpcDriver) -> Iterator[str]:
    yield from _served(driver, strict=False)


@pytest.fixture
def grpc(grpc_server: Running) -> Running:
    grpc_server.state.reset()
    return grpc_server


def _execute(url: str, tool: str, arguments: dict[str, Any]) -> httpx.Response:
    return httpx.post(url + "/mcp/execute", json={"tool": tool, "arguments": arguments}, timeout=10)


@pytest.mark.parametrize(("packed", "needle"), [
    ({"@type": LETTER, "pages": "2"}, "'pages'"),  # a string where the Letter has an int32
    ({"@type": LETTER, "seal": 5}, "'seal'"),
    ({"@type": LETTER, "enclosures": [{"@type": LETTER, "pages": "2"}]}, "'pages'"),
    ({"@type": T + "mcs.parcel.Nope"}, "names no message of this service"),
])
def test_a_strict_server_refuses_an_any_whose_fields_are_not_as_the_packed_type_says(
        strict_url: str, grpc: Running, packed: dict[str, Any], needle: str) -> None:
    refused = _execute(strict_url, "Post_Open", packed)
    assert refused.status_code == 400, refused.text
    body = refused.json()
    assert body["error"] == "INVALID_INPUT"
    assert "the Any in" in body["message"] and needle in body["message"]
    assert grpc.state.calls["Open"] == 0


def test_a_strict_server_refuses_a_bad_any_in_a_field_of_the_request(
        strict_url: str, grpc: Running) -> None:
    refused = _execute(strict_url, "Post_Send", {"label": "a", "content": {"@type": LETTER, "pages": "2"}})
    assert refused.status_code == 400 and "the Any in content:" in refused.json()["message"]
    assert grpc.state.calls["Send"] == 0


def test_a_lenient_server_repairs_what_a_strict_one_refuses(lenient_url: str, grpc: Running) -> None:
    done = _execute(lenient_url, "Post_Open", {"@type": LETTER, "pages": "2"})
    assert done.status_code == 200, done.text
    assert done.json()["result"]["message"] == {"@type": LETTER, "pages": 2}


@pytest.mark.parametrize("arguments", [
    {"unsigned_big": "5"},  # the field's proto name
    {"big": 5, "unsignedBig": 6},  # 64-bit integers as JSON numbers
    {"color": 1},  # an enum by its number
])
def test_a_strict_server_takes_the_protobuf_json_forms_the_driver_takes(
        strict_url: str, grpc: Running, arguments: dict[str, Any]) -> None:
    done = _execute(strict_url, "Lab_Echo", arguments)
    assert done.status_code == 200, done.text
    assert grpc.state.calls["Echo"] == 1


def test_a_strict_server_still_refuses_what_the_json_forms_do_not_cover(strict_url: str, grpc: Running) -> None:
    refused = _execute(strict_url, "Lab_Echo", {"small": "5"})
    assert refused.status_code == 400 and "'small'" in refused.json()["message"]
    assert grpc.state.calls["Echo"] == 0


# A gRPC member of a toolbox: the toolbox checks its tools with the member's own validator,
# whatever name it lists them under (as they are, prefixed apart from a second member's, or
# with the toolbox's own prefix).
BOXES = {
    "Post_Open": lambda grpc: Toolbox({"post": grpc}),
    "post_Post_Open": lambda grpc: Toolbox({"post": grpc, "other": FunctionDriver([Post_Open, Lab_Echo], name="other")}),
    "box_Post_Open": lambda grpc: Toolbox({"post": grpc}, prefix="box"),
}


def Post_Open(pages: int) -> int:  # named like the gRPC tool: the toolbox prefixes both
    """A function tool of another member with the gRPC tool's name."""
    return pages


def Lab_Echo(text: str) -> str:  # named like the gRPC tool: the toolbox prefixes both
    """A function tool of another member with the gRPC tool's name."""
    return text


@pytest.fixture(scope="module", params=sorted(BOXES))
def boxed(request: pytest.FixtureRequest, driver: GrpcDriver) -> Iterator[tuple[str, str]]:
    """``(url of a strict RFC-0001 server of a toolbox holding the gRPC driver, the name it lists Post.Open under)``."""
    box = BOXES[request.param](driver)
    assert request.param in {t.name for t in box.list_tools()}
    config = uvicorn.Config(create_app(DriverBackend(box, strict=True)), log_level="critical", lifespan="off")
    with uvicorn_on_loopback(config, timeout=10) as url:
        yield url, request.param


def _renamed(tool: str, name: str) -> str:
    return name.removesuffix("Post_Open") + tool


@pytest.mark.parametrize(("packed", "needle"), [
    ({"@type": LETTER, "pages": "2"}, "'pages'"),
    ({"@type": T + "mcs.parcel.Nope"}, "names no message of this service"),
])
def test_a_strict_toolbox_server_refuses_a_bad_any_of_its_grpc_member(
        boxed: tuple[str, str], grpc: Running, packed: dict[str, Any], needle: str) -> None:
    url, name = boxed
    refused = _execute(url, name, packed)
    assert refused.status_code == 400, refused.text
    body = refused.json()
    assert body["error"] == "INVALID_INPUT"
    assert body["message"].startswith(f"Invalid arguments for {name}: the Any in"), body["message"]
    assert needle in body["message"]
    assert grpc.state.calls["Open"] == 0


def test_a_strict_toolbox_server_runs_a_good_any_of_its_grpc_member(boxed: tuple[str, str], grpc: Running) -> None:
    url, name = boxed
    done = _execute(url, name, {"@type": LETTER, "pages": 2})
    assert done.status_code == 200, done.text
    assert grpc.state.calls["Open"] == 1


@pytest.mark.parametrize("arguments", [{"unsigned_big": "5"}, {"big": 5, "unsignedBig": 6}, {"color": 1}])
def test_a_strict_toolbox_server_takes_the_protobuf_json_forms_of_its_grpc_member(
        boxed: tuple[str, str], grpc: Running, arguments: dict[str, Any]) -> None:
    url, name = boxed
    done = _execute(url, _renamed("Lab_Echo", name), arguments)
    assert done.status_code == 200, done.text
    assert grpc.state.calls["Echo"] == 1


def test_a_strict_toolbox_server_still_refuses_what_the_json_forms_do_not_cover(
        boxed: tuple[str, str], grpc: Running) -> None:
    url, name = boxed
    echo = _renamed("Lab_Echo", name)
    refused = _execute(url, echo, {"small": "5"})
    assert refused.status_code == 400
    assert refused.json()["message"].startswith(f"Invalid arguments for {echo}:") and "'small'" in refused.json()["message"]
    assert grpc.state.calls["Echo"] == 0
