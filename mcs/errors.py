"""Errors raised by MCS.

Two audiences, two families. Errors for the *LLM* come out of a tool call and carry a
message the model can act on; errors for the *developer* come out of configuration,
spec loading and plugin discovery.

    MCSError
    ├── ToolCallError                 .code is one of the five RFC-0001 codes
    │   ├── InvalidInputError         INVALID_INPUT     (also ValueError)
    │   ├── ToolNotFoundError         TOOL_NOT_FOUND    (also LookupError)
    │   ├── PolicyDeniedError         POLICY_DENIED     (also PermissionError)
    │   ├── ExecutionError            EXECUTION_ERROR   (also RuntimeError)
    │   │   └── SessionUnavailableError   the caller's client cannot do that (elicit, sample...)
    │   └── ToolTimeoutError          TIMEOUT           (also TimeoutError)
    ├── ConfigurationError            bad options or spec (also ValueError)
    ├── DriverNotFoundError           no such driver (also LookupError)
    └── MissingDependencyError        a driver's package is missing (also ImportError)

Each error also subclasses the stdlib type a caller would naturally catch.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class ErrorCode(StrEnum):
    """The reserved error codes of RFC-0001, shared by every driver."""

    INVALID_INPUT = "INVALID_INPUT"
    TOOL_NOT_FOUND = "TOOL_NOT_FOUND"
    POLICY_DENIED = "POLICY_DENIED"
    EXECUTION_ERROR = "EXECUTION_ERROR"
    TIMEOUT = "TIMEOUT"


class MCSError(Exception):
    """Base of every error MCS raises on purpose."""


class ToolCallError(MCSError):
    """A tool call failed; ``message`` is written for the LLM to correct itself.

    ``code`` is one of :class:`ErrorCode`. ``tool`` names the tool when it is known.
    ``details`` holds structured, non-secret facts (a field path, an HTTP status) for
    clients that want more than the message.
    """

    code: ErrorCode = ErrorCode.EXECUTION_ERROR

    def __init__(
        self,
        message: str,
        *,
        tool: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.tool = tool
        self.details: dict[str, Any] = dict(details or {})

    def to_dict(self) -> dict[str, str]:
        """The RFC-0001 wire shape: ``{"error": CODE, "message": ...}``."""
        return {"error": self.code.value, "message": self.message}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code.value!r}, message={self.message!r})"

    @staticmethod
    def from_code(
        code: ErrorCode | str,
        message: str,
        *,
        tool: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> ToolCallError:
        """Build the subclass that matches ``code`` (for errors read off a wire)."""
        cls = _BY_CODE.get(ErrorCode(code), ExecutionError)
        return cls(message, tool=tool, details=details)


class InvalidInputError(ToolCallError, ValueError):
    """The call's arguments (or the call itself) could not be accepted."""

    code = ErrorCode.INVALID_INPUT


class ToolNotFoundError(ToolCallError, LookupError):
    """The call names a tool that does not exist."""

    code = ErrorCode.TOOL_NOT_FOUND


class PolicyDeniedError(ToolCallError, PermissionError):
    """A policy refused the call; nothing was executed."""

    code = ErrorCode.POLICY_DENIED


class ExecutionError(ToolCallError, RuntimeError):
    """The tool ran and failed (the remote system answered with an error, or broke)."""

    code = ErrorCode.EXECUTION_ERROR


class SessionUnavailableError(ExecutionError):
    """A tool asked the caller's client for something it cannot give here.

    Raised by :class:`~mcs.AgentContext` when a tool elicits, samples or lists roots
    and the call has no client session that can answer (a plain LLM loop, a stateless
    server, a client without that capability). The message says which, and what to do.
    """


class ToolTimeoutError(ToolCallError, TimeoutError):
    """The tool did not finish before its deadline."""

    code = ErrorCode.TIMEOUT


_BY_CODE: dict[ErrorCode, type[ToolCallError]] = {
    cls.code: cls
    for cls in (
        InvalidInputError,
        ToolNotFoundError,
        PolicyDeniedError,
        ExecutionError,
        ToolTimeoutError,
    )
}


class ConfigurationError(MCSError, ValueError):
    """Options, a spec or a file given to MCS are wrong; the message says where."""


class DriverNotFoundError(MCSError, LookupError):
    """No driver is registered under the requested name."""


class MissingDependencyError(MCSError, ImportError):
    """A driver or feature needs a package that is not installed.

    The message names the exact ``pip install`` command; ``install`` holds it alone.
    """

    def __init__(self, message: str, *, install: str) -> None:
        super().__init__(message)
        self.install = install
