"""zeep's exceptions mapped once to the core's error codes, with messages for the model.

* A SOAP fault -> ``EXECUTION_ERROR`` "The service answered with a SOAP fault" with its
  code, string, actor (SOAP 1.1 ``faultactor``; SOAP 1.2 ``Role``) and detail as text;
  ``error.details["fault"]`` holds the same fields (and SOAP 1.2 subcodes).
* Arguments zeep cannot serialise (a missing element, a value of the wrong kind) ->
  ``INVALID_INPUT`` naming the field.
* A response that declares a DTD or entities, or that is not XML -> ``EXECUTION_ERROR``
  saying it was refused; nothing in it is used.

A service may quote back what it was sent (in a fault, an element's name, an error page):
every error leaving :func:`translate_errors` has the configured credentials replaced by
``[redacted]`` in its message and details, in the forms :func:`echo_forms` lists, and
text from the service is scrubbed before it is cut, so no part of one is left at a cut.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Sequence
from typing import Any

from lxml import etree
from zeep import exceptions as zeep_errors
from zeep.plugins import Plugin

from mcs.errors import ExecutionError, InvalidInputError, ToolCallError
from mcs.redaction import MIN_SCRUBBED_LENGTH, credential_forms, excerpt, scrub, scrub_value

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


def echo_forms(credentials: Sequence[str]) -> tuple[str, ...]:
    """``credentials`` (values the driver sends) in every form a service may quote them back,
    longest first: those of :func:`mcs.redaction.credential_forms`, and each of them
    XML-escaped (as lxml writes a text or an attribute value, as an error page escapes it)
    and with its whitespace runs collapsed (as messages print text)."""
    from xml.sax.saxutils import escape

    forms = set(credential_forms(credentials))
    forms |= {escape(form) for form in forms} | {escape(form, {'"': "&quot;"}) for form in forms}
    forms |= {" ".join(form.split()) for form in forms}
    return tuple(sorted((f for f in forms if len(f) >= MIN_SCRUBBED_LENGTH), key=len, reverse=True))


def _text(value: Any, forms: Sequence[str]) -> str | None:
    if value is None:
        return None
    if isinstance(value, etree._Element):
        parts = [etree.tostring(child, encoding="unicode", with_tail=False) for child in value
                 if isinstance(child.tag, str)]
        raw = " ".join(parts) if parts else "".join(str(t) for t in value.itertext())
    else:
        raw = str(value)
    return excerpt(raw, forms, _DETAIL_CHARS) or None


def _role() -> str | None:
    """The ``Role`` of the SOAP 1.2 fault read during the current call, if any."""
    holder = _ROLE.get()
    return holder[-1] if holder else None


def fault_error(exc: Any, tool: str, forms: Sequence[str] = ()) -> ExecutionError:
    """``EXECUTION_ERROR`` for a SOAP fault, with ``forms`` (:func:`echo_forms`) scrubbed
    from every field the service wrote."""
    fault: dict[str, Any] = {
        "code": _text(exc.code, forms),
        "string": _text(exc.message, forms),
        "actor": _text(exc.actor, forms) or _text(_role(), forms),
        "detail": _text(exc.detail, forms),
    }
    if getattr(exc, "subcodes", None):
        fault["subcodes"] = [scrub(str(getattr(c, "text", c)), forms) for c in exc.subcodes]
    parts = [f"code {fault['code']}" if fault["code"] else None,
             f"actor {fault['actor']}" if fault["actor"] else None]
    said = ", ".join(p for p in parts if p)
    message = f"{tool}: the service answered with a SOAP fault: {fault['string'] or 'no reason given'}"
    if said:
        message += f" ({said})"
    if fault["detail"]:
        message += f". Detail: {fault['detail']}"
    return ExecutionError(message, tool=tool, details={"fault": fault})


def _scrubbed(error: ToolCallError, forms: Sequence[str]) -> ToolCallError:
    """``error`` with ``forms`` replaced by ``[redacted]`` in its message and details."""
    if forms:
        error.message = scrub(error.message, forms)
        error.args = (error.message,)
        error.details = scrub_value(error.details, forms)
    return error


@contextlib.contextmanager
def translate_errors(tool: str, credentials: Sequence[str] = ()) -> Iterator[None]:
    """Map zeep's and lxml's exceptions raised inside the block (see the module docstring);
    ``credentials`` (the values the driver sends) never leave it in an error."""
    _ROLE.set([])
    try:
        yield
    except Exception as exc:
        forms = echo_forms(credentials) if credentials else ()
        error = exc if isinstance(exc, ToolCallError) else _mapped(exc, tool, forms)
        if error is None:
            raise
        _scrubbed(error, forms)
        if error is exc:
            raise
        raise error from None


def _mapped(exc: Exception, tool: str, forms: Sequence[str]) -> ToolCallError | None:
    """The error the model reads for ``exc``, or ``None`` when it is not zeep's or lxml's."""
    if isinstance(exc, zeep_errors.Fault):
        return fault_error(exc, tool, forms)
    if isinstance(exc, zeep_errors.DTDForbidden | zeep_errors.EntitiesForbidden):
        kind = "a DTD" if isinstance(exc, zeep_errors.DTDForbidden) else "XML entities"
        return ExecutionError(
            f"{tool}: the service's response declares {kind}; it was refused unread "
            "(DTDs, entities and external references are never processed).",
            tool=tool, details={"refused": type(exc).__name__},
        )
    if isinstance(exc, zeep_errors.ExternalReferenceForbidden):
        return ExecutionError(f"{tool}: the response refers to an external resource ({exc.url}); refused.",
                              tool=tool, details={"refused": "ExternalReferenceForbidden"})
    if isinstance(exc, zeep_errors.TransportError | zeep_errors.XMLSyntaxError | zeep_errors.XMLParseError
                  | zeep_errors.UnexpectedElementError | etree.XMLSyntaxError):
        status = getattr(exc, "status_code", None)
        reason = scrub(str(getattr(exc, "message", "") or exc), forms).split("\n", 1)[0]
        return ExecutionError(
            f"{tool}: the service's response could not be read as a SOAP message: {excerpt(reason, forms, 300)}",
            tool=tool, details={"status": status} if status else {},
        )
    if isinstance(exc, zeep_errors.ValidationError):
        path = ".".join(str(p) for p in getattr(exc, "path", []) or [])
        where = f" at {path}" if path else ""
        return InvalidInputError(f"{tool}: {exc.message}{where}. Check the arguments against the tool's schema.",
                                 tool=tool, details={"path": path} if path else {})
    if isinstance(exc, TypeError | ValueError):
        return InvalidInputError(f"{tool}: the arguments cannot be sent: {excerpt(str(exc), forms, 300)}", tool=tool)
    return None
