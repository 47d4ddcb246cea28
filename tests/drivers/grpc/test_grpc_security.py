"""SECURITY.md C3 (gRPC limits and retry semantics) and the driver's other guards: the target
comes from configuration only, TLS and mTLS with certificates made in the test."""

from __future__ import annotations

import json
import unicodedata

import grpc
import pytest
from grpc_servers import Certificates, Running, lab_servicer, serve
from mcs_grpc import GrpcDriver

from mcs.errors import ErrorCode, ExecutionError, InvalidInputError, ToolCallError, ToolTimeoutError


def test_c3_a_message_over_the_receive_limit_is_resource_exhausted_and_not_retryable(lab: Running) -> None:
    with GrpcDriver(lab.target, max_receive_message_bytes=1024) as driver:
        assert len(driver.call_tool("Lab_Big", {"bytes": 100})["data"]) > 100
        with pytest.raises(ExecutionError) as info:
            driver.call_tool("Lab_Big", {"bytes": 4096})
    error = info.value
    assert error.details["grpc_code"] == "RESOURCE_EXHAUSTED" and error.details["retryable"] is False
    assert "larger than the configured limit" in error.message


def test_c3_a_non_idempotent_method_past_its_deadline_is_called_exactly_once(lab: Running) -> None:
    with GrpcDriver(lab.target, timeout=0.3, retries=4) as driver, pytest.raises(ToolTimeoutError) as info:
        driver.call_tool("Lab_Slow", {"seconds": 2})
    assert info.value.code is ErrorCode.TIMEOUT
    assert info.value.details["grpc_code"] == "DEADLINE_EXCEEDED" and info.value.details["retryable"] is False
    assert lab.state.calls["Slow"] == 1


def test_c3_an_idempotent_method_with_unavailable_is_retried_up_to_max_attempts(lab: Running) -> None:
    with GrpcDriver(lab.target, retries=2, retry_backoff=0.01) as driver:
        assert driver.call_tool("Lab_Flaky", {"failures": 2, "key": "ok"}) == {"value": 3}
        assert lab.state.calls["Flaky:ok"] == 3
        with pytest.raises(ExecutionError) as info:
            driver.call_tool("Lab_Flaky", {"failures": 5, "key": "never"})
    assert lab.state.calls["Flaky:never"] == 3  # maxAttempts = retries + 1, then the error
    assert info.value.details == {"grpc_code": "UNAVAILABLE", "grpc_status": 14, "grpc_details": "not yet (3)",
                                  "method": "mcs.test.Lab/Flaky", "retryable": True}


def test_c3_a_non_idempotent_method_with_unavailable_is_not_retried(lab: Running) -> None:
    with GrpcDriver(lab.target, retries=3, retry_backoff=0.01) as driver, pytest.raises(ExecutionError) as info:
        driver.call_tool("Lab_FlakyWrite", {"failures": 1, "key": "w"})
    assert lab.state.calls["FlakyWrite:w"] == 1
    assert info.value.details["retryable"] is False and "do not repeat it blindly" in info.value.message


def test_configuration_can_mark_a_method_idempotent(lab: Running) -> None:
    with GrpcDriver(lab.target, retry_backoff=0.01, idempotent_methods=["mcs.test.Lab/FlakyWrite"]) as driver:
        assert driver.call_tool("Lab_FlakyWrite", {"failures": 1, "key": "marked"}) == {"value": 2}
        assert driver.get_tool("Lab_FlakyWrite").annotations["idempotentHint"] is True


def test_retries_stay_within_the_deadline(lab: Running) -> None:
    import time

    started = time.monotonic()
    with GrpcDriver(lab.target, timeout=0.5, retries=4, retry_backoff=2.0) as driver, \
            pytest.raises(ToolCallError) as info:
        driver.call_tool("Lab_Flaky", {"failures": 5, "key": "slow-backoff"})
    assert time.monotonic() - started < 2.0  # not the 2 s + 4 s + ... the backoff alone would take
    # A6 jitters the first delay in [0, 2 s): a second attempt may fit in the deadline, no more.
    assert 1 <= lab.state.calls["Flaky:slow-backoff"] <= 2
    assert info.value.details["grpc_code"] in ("DEADLINE_EXCEEDED", "UNAVAILABLE")


def test_the_model_cannot_choose_a_destination(lab: Running) -> None:
    with GrpcDriver(lab.target) as driver:
        for extra in ({"target": "169.254.169.254:80"}, {"authority": "evil.example"}, {"metadata": {"a": "b"}}):
            with pytest.raises(InvalidInputError):
                driver.process_llm_response({"tool": "Lab_Echo", "arguments": {"text": "x", **extra}})
    assert lab.state.calls["Echo"] == 0


def test_a_value_with_line_breaks_travels_as_data(lab: Running) -> None:
    text = "x\r\nauthorization: Bearer stolen\x00"
    with GrpcDriver(lab.target, include_defaults=False) as driver:
        assert driver.call_tool("Lab_Echo", {"text": text}) == {"text": text}
    assert "authorization" not in lab.state.metadata[-1]


@pytest.mark.parametrize("blob", ["!!!", "AAAA!!!!BBBB", "aGVsbG8=\x00", "aGVsbG8=aGVsbG8="])
def test_bytes_that_are_not_base64_are_refused_before_the_call(lab: Running, blob: str) -> None:
    # protobuf's JSON parser skips what is not base64: "!!!" would be sent as empty bytes
    with GrpcDriver(lab.target) as driver, pytest.raises(InvalidInputError, match="blob"):
        driver.call_tool("Lab_Echo", {"blob": blob})
    assert lab.state.calls["Echo"] == 0


@pytest.mark.parametrize(("blob", "sent"), [
    ("aGVsbG8=", "aGVsbG8="), ("aGVsbG8", "aGVsbG8="), ("aGVs\nbG8=", "aGVsbG8="), ("-_8=", "+/8="),
])
def test_standard_url_safe_unpadded_and_wrapped_base64_are_taken(lab: Running, blob: str, sent: str) -> None:
    with GrpcDriver(lab.target, include_defaults=False) as driver:
        assert driver.call_tool("Lab_Echo", {"blob": blob}) == {"blob": sent}


@pytest.mark.parametrize("type_url", [
    "http://169.254.169.254/latest/mcs.test.Inner",  # a URL a server's type resolver may fetch
    "https://evil.example/mcs.test.Inner",
    "type.googleapis.com.evil.example/mcs.test.Inner",
])
def test_an_any_with_a_type_url_outside_type_googleapis_com_is_refused(lab: Running, type_url: str) -> None:
    with GrpcDriver(lab.target) as driver, pytest.raises(InvalidInputError, match="@type"):
        driver.call_tool("Lab_Echo", {"packed": {"@type": type_url, "note": "x"}})
    assert lab.state.calls["Echo"] == 0


def test_an_any_packs_a_message_of_the_services_types(lab: Running) -> None:
    packed = {"@type": "type.googleapis.com/mcs.test.Inner", "note": "x"}
    with GrpcDriver(lab.target, include_defaults=False) as driver:
        assert driver.call_tool("Lab_Echo", {"packed": packed}) == {"packed": packed}


HIDDEN = "\u200b\u202e\U000e0049\U000e0047\U000e004e\U000e004f\U000e0052\U000e0045"  # zero-width, bidi, "IGNORE" in tag characters


def test_comments_carry_no_invisible_characters_into_descriptions(tmp_path) -> None:
    (tmp_path / "hidden.proto").write_text(f"""syntax = "proto3";
package hidden;
// Colours{HIDDEN}.
enum Colour {{
  // None{HIDDEN}.
  NONE = 0;
}}
message Ask {{
  // Who asks{HIDDEN}.
  string who = 1;
  Colour colour = 2;
}}
service Desk {{
  // Answers a question{HIDDEN}.
  rpc Answer(Ask) returns (Ask);
}}
""", encoding="utf-8")
    with GrpcDriver(proto=tmp_path / "hidden.proto") as driver:
        tool = driver.get_tool("Desk_Answer")
        shown = [tool.description, json.dumps(tool.input_schema, ensure_ascii=False), driver.get_function_description()]
    assert "Answers a question." in shown[0] and "Who asks." in shown[1] and "None." in shown[1]
    assert [[f"U+{ord(c):04X}" for c in text if unicodedata.category(c) == "Cf"] for text in shown] == [[], [], []]


# ---------------------------------------------------------------------- TLS


def _tls_server(certificates: Certificates, *, mutual: bool):
    credentials = grpc.ssl_server_credentials(
        [(certificates.server_key, certificates.server_cert)],
        root_certificates=certificates.ca if mutual else None, require_client_auth=mutual,
    )
    return serve([lab_servicer], credentials=credentials)


def test_tls_with_the_servers_ca(certificates: Certificates) -> None:
    with _tls_server(certificates, mutual=False) as running, GrpcDriver(
        running.target, root_certificates=certificates.ca, include_defaults=False,
    ) as driver:
        assert driver.call_tool("Lab_Echo", {"text": "secure"}) == {"text": "secure"}
        assert driver.healthcheck()["status"] == "ok"


def test_tls_with_another_ca_fails_clearly(certificates: Certificates) -> None:
    with _tls_server(certificates, mutual=False) as running, \
            pytest.raises(Exception, match=r"reflection on .* failed with UNAVAILABLE"):
        GrpcDriver(running.target, root_certificates=certificates.other_ca, load_timeout=3)


def test_mtls_needs_the_client_certificate(certificates: Certificates, tmp_path) -> None:
    (tmp_path / "ca.pem").write_bytes(certificates.ca)
    (tmp_path / "client.pem").write_bytes(certificates.client_cert)
    (tmp_path / "client.key").write_bytes(certificates.client_key)
    with _tls_server(certificates, mutual=True) as running:
        with GrpcDriver(running.target, root_certificates=str(tmp_path / "ca.pem"),
                        client_certificate=tmp_path / "client.pem", client_key=tmp_path / "client.key",
                        include_defaults=False) as driver:
            assert driver.call_tool("Lab_Echo", {"text": "mutual"}) == {"text": "mutual"}
        with pytest.raises(Exception, match="failed with UNAVAILABLE"):
            GrpcDriver(running.target, root_certificates=certificates.ca, load_timeout=3)


def test_a_plain_channel_to_a_tls_server_fails_clearly(certificates: Certificates) -> None:
    from grpc_servers import LAB_PROTO

    with _tls_server(certificates, mutual=False) as running, GrpcDriver(running.target, proto=LAB_PROTO, timeout=3) as driver, \
            pytest.raises(ExecutionError) as info:
        driver.call_tool("Lab_Echo", {})
    assert info.value.details["grpc_code"] == "UNAVAILABLE"


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("static", [True, False], ids=["static", "callable"])
def test_metadata_echoed_in_a_status_never_reaches_the_model(lab: Running, use_async: bool, static: bool) -> None:
    import asyncio

    pairs = {"authorization": "Bearer grpc-token-7", "x-api-key": "grpc-key-8"}
    with GrpcDriver(lab.target, metadata=pairs if static else lambda: pairs) as driver, \
            pytest.raises(ExecutionError) as info:
        arguments = {"code": "PERMISSION_DENIED", "details": "denied for $METADATA"}
        if use_async:
            asyncio.run(driver.acall_tool("Lab_Fail", arguments))
        else:
            driver.call_tool("Lab_Fail", arguments)
    text = f"{info.value.message} {info.value.details} {info.value}"
    assert "authorization=" in text  # the server did echo what the call carried
    assert "[redacted]" in text
    assert "grpc-token-7" not in text and "grpc-key-8" not in text


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("value", [b"binary-key-5150", "text-in-bin-6160"])
def test_a_binary_metadata_value_echoed_in_a_status_never_reaches_the_model(
        lab: Running, use_async: bool, value: str | bytes) -> None:
    """A ``-bin`` key's value (bytes, or text gRPC sends as its UTF-8) is a credential too:
    echoed as its text or as the base64 it travels in, it is redacted."""
    import asyncio
    import base64

    raw = value if isinstance(value, bytes) else value.encode()
    with GrpcDriver(lab.target, metadata={"x-key-bin": value}) as driver, pytest.raises(ExecutionError) as info:
        arguments = {"code": "PERMISSION_DENIED", "details": "denied for $METADATA"}
        if use_async:
            asyncio.run(driver.acall_tool("Lab_Fail", arguments))
        else:
            driver.call_tool("Lab_Fail", arguments)
    text = f"{info.value.message} {info.value.details} {info.value}"
    assert "x-key-bin=" in text  # the server did echo what the call carried
    assert raw.decode() not in text and base64.b64encode(raw).decode() not in text
