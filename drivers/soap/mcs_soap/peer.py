"""A small real SOAP server on loopback, for the demo, the tests and a user's own tests.

:func:`serve` runs a :class:`SoapPeer` on a free loopback port (a thread, HTTP/1.1 with
keep-alive) and yields its base URL. The peer:

* serves its WSDL on ``GET /?wsdl`` (``{address}`` in the WSDL text becomes its URL) and
  any extra document on ``GET /<name>``;
* answers ``POST`` with SOAP 1.1 or 1.2 (by the envelope's namespace): the first child of
  the Body names the operation, a handler ``(request_element, context) -> response_element``
  answers, and :class:`PeerFault` becomes a SOAP fault of the request's version;
* validates every request body against the WSDL's XML Schema with lxml (a request the
  schema refuses is a ``Client``/``Sender`` fault naming the problem);
* checks WS-Security UsernameToken (text or digest) and HTTP basic auth when configured,
  per path prefix;
* records each request (path, headers, body) in :attr:`SoapPeer.requests`.

Request XML is parsed with no DTD, entity or network access. Raw answers (``raw``: path ->
status, content type, bytes) let a test send anything back, malicious XML included.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import urlsplit

from lxml import etree

from mcs.demo import serve_on_loopback

SOAP11 = "http://schemas.xmlsoap.org/soap/envelope/"
SOAP12 = "http://www.w3.org/2003/05/soap-envelope"
WSSE = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd"
WSU = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd"
DIGEST = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordDigest"
_XSD = "http://www.w3.org/2001/XMLSchema"


class PeerFault(Exception):
    """Raised by a handler: answered as a SOAP fault (``client`` faults are the caller's)."""

    def __init__(self, string: str, *, client: bool = False, actor: str | None = None,
                 detail: etree._Element | None = None) -> None:
        super().__init__(string)
        self.string = string
        self.client = client
        self.actor = actor
        self.detail = detail


@dataclass
class Context:
    """What a handler knows about the request besides its body element."""

    path: str
    version: str
    headers: Mapping[str, str]
    soap_header: etree._Element | None


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


Handler = Callable[[etree._Element, Context], etree._Element]


def _parser() -> etree.XMLParser:
    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)


def _schema_of(wsdl: bytes) -> tuple[etree.XMLSchema, frozenset[str]] | None:
    """The XML Schema of the WSDL's (single) ``types/schema`` and its global element names."""
    root = etree.fromstring(wsdl, _parser())
    schemas = root.findall(f".//{{{_XSD}}}schema")
    if len(schemas) != 1:
        return None
    schema = schemas[0]
    target = schema.get("targetNamespace")
    names = frozenset(etree.QName(target, e.get("name", "")).text for e in schema.iterchildren(f"{{{_XSD}}}element"))
    return etree.XMLSchema(etree.fromstring(etree.tostring(schema), _parser())), names


@dataclass
class SoapPeer:
    """A SOAP service: a WSDL, handlers by operation element name, and its checks."""

    wsdl: str
    handlers: dict[str, Handler]
    documents: dict[str, bytes] = field(default_factory=dict)
    #: path prefix -> (username, password) required in a WS-Security UsernameToken.
    wsse: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: path prefix -> (username, password) required as HTTP basic auth.
    basic: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: path -> (status, content type, body) sent back as is, whatever the request.
    raw: dict[str, tuple[int, str, bytes]] = field(default_factory=dict)
    #: path -> extra response headers for a ``raw`` answer (e.g. ``Content-Encoding``).
    raw_headers: dict[str, dict[str, str]] = field(default_factory=dict)
    requests: list[Recorded] = field(default_factory=list)
    validate: bool = True
    _schema: etree.XMLSchema | None = None
    _globals: frozenset[str] = frozenset()
    _seen_nonces: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        if self.validate:
            found = _schema_of(self.wsdl.replace("{address}", "http://x").encode())
            if found is not None:
                self._schema, self._globals = found

    # ------------------------------------------------------------------ answering

    def answer(self, method: str, path: str, headers: Mapping[str, str], body: bytes, base: str) -> tuple[int, str, bytes]:
        """The (status, content type, body) for one HTTP request."""
        self.requests.append(Recorded(method, path, dict(headers), body))
        plain = urlsplit(path).path
        if plain in self.raw:
            return self.raw[plain]
        for prefix, (user, password) in self.basic.items():
            if plain.startswith(prefix):
                expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
                if headers.get("authorization") != expected:
                    return 401, "text/plain", b"authentication required"
        if method == "GET":
            if urlsplit(path).query.lower() == "wsdl":
                return 200, "text/xml; charset=utf-8", self.wsdl.replace("{address}", base).encode()
            name = plain.lstrip("/")
            if name in self.documents:
                return 200, "text/xml; charset=utf-8", self.documents[name]
            return 404, "text/html", b"<html><body>not found</body></html>"
        return self._soap(plain, headers, body)

    def _soap(self, path: str, headers: Mapping[str, str], body: bytes) -> tuple[int, str, bytes]:
        try:
            envelope = etree.fromstring(body, _parser())
        except etree.XMLSyntaxError as exc:
            return self._fault(SOAP11, PeerFault(f"not XML: {exc.msg}", client=True))
        version = etree.QName(envelope).namespace or ""
        if version not in (SOAP11, SOAP12) or etree.QName(envelope).localname != "Envelope":
            return self._fault(SOAP11, PeerFault("not a SOAP envelope", client=True))
        if getattr(envelope.getroottree().docinfo, "doctype", None):
            return self._fault(version, PeerFault("a DOCTYPE is not allowed", client=True))
        header = envelope.find(f"{{{version}}}Header")
        body_node = envelope.find(f"{{{version}}}Body")
        request = next(iter(body_node), None) if body_node is not None else None
        try:
            for prefix, credentials in self.wsse.items():
                if path.startswith(prefix):
                    self._check_wsse(header, credentials)
            if request is None:
                raise PeerFault("the Body is empty", client=True)
            name = etree.QName(request).localname
            handler = self.handlers.get(name)
            if handler is None:
                raise PeerFault(f"no operation {name}", client=True)
            if self._schema is not None and request.tag in self._globals:
                self._validate(request)  # rpc wrappers are not schema elements
            response = handler(request, Context(path, version, headers, header))
        except PeerFault as fault:
            return self._fault(version, fault)
        except Exception as exc:  # a broken handler is a Server fault, not a dropped connection
            return self._fault(version, PeerFault(f"the service failed ({type(exc).__name__})"))
        out = etree.Element(f"{{{version}}}Envelope", nsmap={"soap": version})
        etree.SubElement(out, f"{{{version}}}Body").append(response)
        return 200, _content_type(version), etree.tostring(out, xml_declaration=True, encoding="utf-8")

    def _validate(self, request: etree._Element) -> None:
        assert self._schema is not None
        document = etree.fromstring(etree.tostring(request), _parser())
        if self._schema.validate(document):
            return
        error = getattr(self._schema.error_log, "last_error", None)
        raise PeerFault(f"the request does not match the schema: {error.message if error else 'invalid'}", client=True)

    def _check_wsse(self, header: etree._Element | None, credentials: tuple[str, str]) -> None:
        token = header.find(f"{{{WSSE}}}Security/{{{WSSE}}}UsernameToken") if header is not None else None
        if token is None:
            raise PeerFault("wsse:FailedAuthentication: no UsernameToken", client=True)
        username = token.findtext(f"{{{WSSE}}}Username")
        password = token.find(f"{{{WSSE}}}Password")
        user, secret = credentials
        if username != user or password is None:
            raise PeerFault("wsse:FailedAuthentication: unknown user", client=True)
        if password.get("Type") == DIGEST:
            nonce = token.findtext(f"{{{WSSE}}}Nonce") or ""
            created = token.findtext(f"{{{WSU}}}Created") or ""
            if not nonce or not created or nonce in self._seen_nonces:
                raise PeerFault("wsse:FailedAuthentication: a digest needs a fresh nonce and a timestamp", client=True)
            expected = base64.b64encode(hashlib.sha1(base64.b64decode(nonce) + created.encode() + secret.encode()).digest())
            if (password.text or "").encode() != expected:
                raise PeerFault("wsse:FailedAuthentication: wrong password digest", client=True)
            self._seen_nonces.add(nonce)
        elif password.text != secret:
            raise PeerFault("wsse:FailedAuthentication: wrong password", client=True)

    def _fault(self, version: str, fault: PeerFault) -> tuple[int, str, bytes]:
        env = etree.Element(f"{{{version}}}Envelope", nsmap={"soap": version})
        body = etree.SubElement(env, f"{{{version}}}Body")
        node = etree.SubElement(body, f"{{{version}}}Fault")
        if version == SOAP11:
            etree.SubElement(node, "faultcode").text = "soap:Client" if fault.client else "soap:Server"
            etree.SubElement(node, "faultstring").text = fault.string
            if fault.actor:
                etree.SubElement(node, "faultactor").text = fault.actor
            if fault.detail is not None:
                etree.SubElement(node, "detail").append(fault.detail)
        else:
            code = etree.SubElement(node, f"{{{version}}}Code")
            etree.SubElement(code, f"{{{version}}}Value").text = "soap:Sender" if fault.client else "soap:Receiver"
            reason = etree.SubElement(node, f"{{{version}}}Reason")
            text = etree.SubElement(reason, f"{{{version}}}Text")
            text.set("{http://www.w3.org/XML/1998/namespace}lang", "en")
            text.text = fault.string
            if fault.actor:
                etree.SubElement(node, f"{{{version}}}Role").text = fault.actor
            if fault.detail is not None:
                etree.SubElement(node, f"{{{version}}}Detail").append(fault.detail)
        status = 400 if version == SOAP12 and fault.client else 500
        return status, _content_type(version), etree.tostring(env, xml_declaration=True, encoding="utf-8")


def _content_type(version: str) -> str:
    return "text/xml; charset=utf-8" if version == SOAP11 else "application/soap+xml; charset=utf-8"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    wbufsize = -1
    disable_nagle_algorithm = True
    peer: SoapPeer
    base: str

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _handle(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        status, content_type, payload = self.peer.answer(method, self.path, headers, body, self.base)
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for key, value in self.peer.raw_headers.get(urlsplit(self.path).path, {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")


@contextmanager
def serve(peer: SoapPeer) -> Iterator[str]:
    """Run ``peer`` on a free loopback port for the block; yields its base URL (no slash)."""
    handler: type[_Handler] = type("PeerHandler", (_Handler,), {"peer": peer, "base": ""})
    with serve_on_loopback(handler, poll_interval=0.05) as base:
        handler.base = base  # before the caller, who alone knows the URL, can send a request
        yield base


def element(tag: str, text: Any = None, *children: etree._Element, **attributes: str) -> etree._Element:
    """A response element: ``element("{ns}AddResponse", None, element("{ns}AddResult", 3))``."""
    node = etree.Element(tag, attrib=attributes)
    if text is not None:
        node.text = str(text)
    for child in children:
        node.append(child)
    return node
