"""Parsing a WSDL with zeep, safely, and turning it into the driver's tools.

This is the only loading module that imports zeep (and, through it, httpx and lxml): a
driver whose tools come from the disk cache does not import it until its first call or
:meth:`~mcs_soap.SoapDriver.warmup`.

* Parsing uses zeep's hardened settings: no DTD, no entity, no huge-tree mode
  (:func:`hardened_settings`). For loading, the :class:`~mcs_soap._loading.LoadPolicy`
  decides every import (zeep's own ``forbid_external`` would refuse the same-origin
  imports of a WSDL served over HTTP); for responses, ``forbid_external`` is on as well.
* zeep reads every document through the driver's :class:`~mcs_soap._loading.DocumentReader`,
  so the policy, the size caps and the record of what was read apply to each import.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

from lxml import etree
from zeep import Settings
from zeep.transports import Transport
from zeep.wsdl import Document

from mcs_soap._cache import Parsed, digest
from mcs_soap._loading import DocumentReader, WsdlError, describe_zeep_error
from mcs_soap._operations import build_tools, ports_of
from mcs_soap._xsd import build_index


def hardened_settings(*, forbid_external: bool = True) -> Settings:
    """zeep settings for documents and responses from anyone (SECURITY.md C2).

    ``forbid_external=False`` is for loading a WSDL only, where the load policy decides
    each import; responses are parsed with it on.
    """
    return Settings(
        strict=True,
        forbid_dtd=True,
        forbid_entities=True,
        forbid_external=forbid_external,
        xml_huge_tree=False,
        force_https=False,  # the configured endpoint's scheme is kept as given
    )


class ReaderTransport(Transport):
    """The zeep transport that reads WSDL and XSD documents through a :class:`DocumentReader`."""

    def __init__(self, reader: DocumentReader) -> None:
        # zeep's Transport.__init__ would open a requests session; nothing here needs one.
        self.reader = reader
        self.cache = None
        self._close_session = False
        self.session = None

    def load(self, url: str) -> bytes:
        return self.reader.load(url)

    def __del__(self) -> None:  # zeep's Transport closes a session here; there is none
        pass


class CapturingDocument(Document):
    """zeep's WSDL document, keeping the WSDL trees zeep parsed (the schema index reads
    them instead of parsing them again)."""

    def __init__(self, location: str, transport: ReaderTransport, settings: Settings) -> None:
        self.trees: dict[str, etree._Element] = {}
        init: Any = super().__init__
        init(location, transport, settings=settings)

    def _get_xml_document(self, location: Any, *, _initial: bool = False) -> etree._Element:
        parse: Any = super()._get_xml_document
        root: etree._Element = parse(location, _initial=_initial)
        self.trees[str(location)] = root
        return root


def parse_document(location: str, reader: DocumentReader) -> tuple[CapturingDocument, list[str]]:
    """zeep's document for the WSDL at ``location`` and what zeep warned about meanwhile.

    Raises:
        WsdlError: a document cannot be read, is refused, or zeep cannot parse it.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            document = CapturingDocument(location, ReaderTransport(reader), hardened_settings(forbid_external=False))
        except WsdlError:
            raise
        except Exception as exc:
            raise WsdlError(describe_zeep_error(location, exc)) from None
    return document, [" ".join(str(w.message).split()) for w in caught]


def parse_wsdl(location: str, reader: DocumentReader, key: str, *, selected: Sequence[str],
               idempotent: Sequence[str]) -> Parsed:
    """The WSDL at ``location`` parsed, with one tool per operation of the selected ports.

    The tools' input schemas are built on first read (see :mod:`mcs_soap._operations`).

    Raises:
        WsdlError: as :func:`parse_document`, or no port offers an operation.
        ConfigurationError: ``selected`` names a port the WSDL does not have.
    """
    document, reported = parse_document(location, reader)
    index = build_index(reader.documents, document.trees)
    document.trees = {}
    ports = ports_of(document, selected)
    tools = build_tools(index, ports, idempotent, location=location)
    if not tools:
        detail = f" (zeep reported: {'; '.join(reported[:3])})" if reported else ""
        raise WsdlError(
            f"{location}: no operation to offer: the WSDL defines no service port with a SOAP "
            "or HTTP binding" + (f" among the selected ports {list(selected)}" if selected else "")
            + detail
        )
    dependencies = {loc: digest(content) for loc, content in reader.documents.items() if loc != location}
    return Parsed(key, dependencies, tools, document, warnings=reported)
