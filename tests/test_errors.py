"""The error tree: codes, stdlib bases, the RFC-0001 wire shape."""

from __future__ import annotations

import pytest

from mcs.errors import (
    ConfigurationError,
    DriverNotFoundError,
    ErrorCode,
    ExecutionError,
    InvalidInputError,
    MCSError,
    MissingDependencyError,
    PolicyDeniedError,
    ToolCallError,
    ToolNotFoundError,
    ToolTimeoutError,
)

CALL_ERRORS = [
    (InvalidInputError, ErrorCode.INVALID_INPUT, ValueError),
    (ToolNotFoundError, ErrorCode.TOOL_NOT_FOUND, LookupError),
    (PolicyDeniedError, ErrorCode.POLICY_DENIED, PermissionError),
    (ExecutionError, ErrorCode.EXECUTION_ERROR, RuntimeError),
    (ToolTimeoutError, ErrorCode.TIMEOUT, TimeoutError),
]


def test_the_five_codes_are_rfc0001s() -> None:
    assert {code.value for code in ErrorCode} == {
        "INVALID_INPUT", "TOOL_NOT_FOUND", "POLICY_DENIED", "EXECUTION_ERROR", "TIMEOUT",
    }


@pytest.mark.parametrize(("cls", "code", "stdlib"), CALL_ERRORS)
def test_each_call_error_has_its_code_and_stdlib_base(
    cls: type[ToolCallError], code: ErrorCode, stdlib: type[Exception]
) -> None:
    error = cls("try again with a number", tool="add")
    assert error.code is code
    assert isinstance(error, ToolCallError)
    assert isinstance(error, MCSError)
    assert isinstance(error, stdlib)
    assert error.tool == "add"
    assert str(error) == "try again with a number"


@pytest.mark.parametrize(("cls", "code", "_stdlib"), CALL_ERRORS)
def test_to_dict_is_the_wire_shape(
    cls: type[ToolCallError], code: ErrorCode, _stdlib: type[Exception]
) -> None:
    assert cls("what went wrong").to_dict() == {"error": code.value, "message": "what went wrong"}


@pytest.mark.parametrize(("cls", "code", "_stdlib"), CALL_ERRORS)
def test_from_code_builds_the_matching_subclass(
    cls: type[ToolCallError], code: ErrorCode, _stdlib: type[Exception]
) -> None:
    error = ToolCallError.from_code(code.value, "m", tool="t", details={"status": 404})
    assert type(error) is cls
    assert (error.message, error.tool, error.details) == ("m", "t", {"status": 404})


def test_from_code_refuses_an_unknown_code() -> None:
    with pytest.raises(ValueError):
        ToolCallError.from_code("NOT_A_CODE", "m")


def test_details_are_copied_not_shared() -> None:
    details = {"field": "a"}
    error = InvalidInputError("m", details=details)
    details["field"] = "b"
    assert error.details == {"field": "a"}
    assert InvalidInputError("m").details == {}


def test_repr_names_the_code_and_message() -> None:
    assert repr(ToolTimeoutError("slow")) == "ToolTimeoutError(code='TIMEOUT', message='slow')"


def test_developer_errors_are_not_call_errors() -> None:
    for error in (
        ConfigurationError("bad option"),
        DriverNotFoundError("no such driver"),
        MissingDependencyError("pip install x", install="pip install x"),
    ):
        assert isinstance(error, MCSError)
        assert not isinstance(error, ToolCallError)
    assert isinstance(ConfigurationError("x"), ValueError)
    assert isinstance(DriverNotFoundError("x"), LookupError)


def test_missing_dependency_carries_the_install_command() -> None:
    error = MissingDependencyError("needs grpcio: pip install mcs-framework-grpc", install="pip install mcs-framework-grpc")
    assert isinstance(error, ImportError)
    assert error.install == "pip install mcs-framework-grpc"
    assert error.install in str(error)
