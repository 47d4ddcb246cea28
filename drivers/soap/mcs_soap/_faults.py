"""zeep's exceptions mapped once to the core's error codes, with messages for the model.

* A SOAP fault -> ``EXECUTION_ERROR`` "The service answered with a SOAP fault" with its
  code, string, actor (SOAP 1.1 ``faultactor``; SOAP 1.2 ``Role``) and detail as text;
  ``error.details["fault"]`` holds the same fields (and SOAP 1.2 subcodes).
* Arguments zeep cannot serialise (a missing element, a value of the wrong kind) ->
  ``INVALID_INPUT`` naming the field.
* A response that declares a DTD or entities, or that is not XML -> ``EXECUTION_ERROR``
  saying it was refused; nothing in it is used.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any

from lxml import etree
from zeep import exceptions as zeep_errors
from zeep.plugins import Plugin

from mcs.errors import ExecutionError, InvalidInputError, ToolCallError

SOAP12_ENV = "http://www.w3.org/2003/05/soap-envelope"
_DETAIL_CHARS = 2000
# A holder, not the value: an async call runs in a task with a copy of the caller's context,
# where a value set would not be seen by the caller; the holder is shared by both.
_ROLE: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("mcs_soap_fault_role", default=None)


class FaultRolePlugin(Plugin):
    """Keeps the ``Role`` of a SOAP 1.2 fault, which zeep's ``Fault`` does not carry."""

    def ingress(self, envelope: Any, http_headers: Any, operation: Any) -> tuple[Any, Any]:
        role = envelope.findtext(f"{{{SOAP12_ENV}}}Body/{{{SOAP12_ENV}}}Fault/{{{SOAP12_ENV}}}Role")
        holder = _ROLE.get()
        if role is not None and holder is not None:
            holder[:] = [role.strip()]
        return envelope, http_headers


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, etree._Element):
        parts = [etree.tostring(child, encoding="unicode", with_tail=False) for child in value
                 if isinstance(child.tag, str)]
        text = " ".join(" ".join(parts).split()) if parts else " ".join("".join(str(t) for t in value.itertext()).split())
    else:
        text = " ".join(str(value).split())
    if len(text) > _DETAIL_CHARS:
        text = text[:_DETAIL_CHARS] + "..."
    return text or None


def _role() -> str | None:
    """The ``Role`` of the SOAP 1.2 fault read during the current call, if any."""
    holder = _ROLE.get()
    return holder[-1] if holder else None


def fault_error(exc: Any, tool: str) -> ExecutionError:
    """``EXECUTION_ERROR`` for a SOAP fault."""
    fault: dict[str, Any] = {
        "code": _text(exc.code),
        "string": _text(exc.message),
        "actor": _text(exc.actor) or _role(),
        "detail": _text(exc.detail),
    }
    if getattr(exc, "subcodes", None):
        fault["subcodes"] = [getattr(c, "text", str(c)) for c in exc.subcodes]
    parts = [f"code {fault['code']}" if fault["code"] else None,
             f"actor {fault['actor']}" if fault["actor"] else None]
    said = ", ".join(p for p in parts if p)
    message = f"{tool}: the service answered with a SOAP fault: {fault['string'] or 'no reason given'}"
    if said:
        message += f" ({said})"
    if fault["detail"]:
        message += f". Detail: {fault['detail']}"
    return ExecutionError(message, tool=tool, details={"fault": fault})


@contextlib.contextmanager
def translate_errors(tool: str) -> Iterator[None]:
    """Map zeep's and lxml's exceptions raised inside the block (see the module docstring)."""
    _ROLE.set([])
    try:
        yield
    except ToolCallError:
        raise
    except zeep_errors.Fault as exc:
        raise fault_error(exc, tool) from None
    except (zeep_errors.DTDForbidden, zeep_errors.EntitiesForbidden) as exc:
        kind = "a DTD" if isinstance(exc, zeep_errors.DTDForbidden) else "XML entities"
        raise ExecutionError(
            f"{tool}: the service's response declares {kind}; it was refused unread "
            "(DTDs, entities and external references are never processed).",
            tool=tool, details={"refused": type(exc).__name__},
        ) from None
    except zeep_errors.ExternalReferenceForbidden as exc:
        raise ExecutionError(f"{tool}: the response refers to an external resource ({exc.url}); refused.",
                             tool=tool, details={"refused": "ExternalReferenceForbidden"}) from None
    except (zeep_errors.TransportError, zeep_errors.XMLSyntaxError, zeep_errors.XMLParseError,
            zeep_errors.UnexpectedElementError, etree.XMLSyntaxError) as exc:
        status = getattr(exc, "status_code", None)
        reason = str(getattr(exc, "message", "") or exc).split("\n", 1)[0]
        if len(reason) > 300:
            reason = reason[:300] + "..."
        raise ExecutionError(
            f"{tool}: the service's response could not be read as a SOAP message: {reason}",
            tool=tool, details={"status": status} if status else {},
        ) from None
    except zeep_errors.ValidationError as exc:
        path = ".".join(str(p) for p in getattr(exc, "path", []) or [])
        where = f" at {path}" if path else ""
        raise InvalidInputError(f"{tool}: {exc.message}{where}. Check the arguments against the tool's schema.",
                                tool=tool, details={"path": path} if path else {}) from None
    except (TypeError, ValueError) as exc:
        text = " ".join(str(exc).split())[:300]
        raise InvalidInputError(f"{tool}: the arguments cannot be sent: {text}", tool=tool) from None
