"""Loading a WSDL and the documents it imports: where from, how much, how safely.

What a caller can rely on:

* The WSDL itself comes from the path or URL given. Every document it imports or
  includes (``wsdl:import``, ``xsd:import``, ``xsd:include``) must live at the WSDL's own
  location: under the WSDL's folder for a file, on the same origin (scheme, host,
  port) for a URL. ``allow_imports`` adds folders or URL prefixes (``True``: anywhere); a
  URL prefix allows its origin and the paths under its path, segment by segment, as httpx
  reads them (``https://h/xsd`` allows ``https://h/xsd/a.xsd``, not ``https://h/xsd-old/``,
  ``https://h:8443/xsd/`` or ``https://h/xsd/%2e%2e/admin``).
  Anything else is refused before a byte is read, with an error naming the URL.
* Each document is read up to ``max_bytes`` (a larger one is refused, not cut), at most
  ``max_documents`` documents are read, and remote reads go through the core's bounded
  HTTP path (:mod:`mcs.http`): one total ``timeout`` covers connecting, the headers and
  the body, and the size is counted after decompression. Redirects are not followed.
* The SOAP 1.1 encoding schema (``http://schemas.xmlsoap.org/soap/encoding/``), which
  zeep imports whenever a WSDL names its namespace, is served from a small copy shipped
  with the driver (``soap-encoding.xsd``), never fetched.
* Nothing here imports zeep, lxml or httpx (httpx only when a URL is read): a driver
  whose tools come from the disk cache reads its WSDL's bytes (for the content key)
  without them. Parsing with zeep is :mod:`mcs_soap._parsing`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from mcs.errors import ConfigurationError, ExecutionError
from mcs.urls import origin, same_origin

if TYPE_CHECKING:
    import httpx


class WsdlError(ConfigurationError):
    """A WSDL (or a document it imports) cannot be loaded; the message says which and where."""


SOAP_ENCODING = "http://schemas.xmlsoap.org/soap/encoding/"
_BUNDLED = {SOAP_ENCODING: "soap-encoding.xsd", SOAP_ENCODING.rstrip("/"): "soap-encoding.xsd"}


def is_url(location: str) -> bool:
    return urlsplit(location).scheme in ("http", "https")


def _segments(url: str) -> list[str] | None:
    """The path segments of ``url`` as httpx, which fetches it, reads them (dot segments
    resolved, percent-escapes decoded); ``None`` if httpx refuses the URL, or if a segment
    still means ``.`` or ``..`` (``%2e%2e``), which a server may climb out with."""
    import httpx

    try:
        segments = httpx.URL(url).path.split("/")[1:]
    except httpx.InvalidURL:
        return None
    return None if any(segment in (".", "..") for segment in segments) else segments


def _segments_on_origin(location: str, base: str) -> list[str] | None:
    """The path segments of ``location`` (:func:`_segments`) when it and ``base`` are
    http(s) URLs on one origin (:func:`mcs.urls.same_origin`); else ``None``. The caller
    checks that ``base``'s own segments read cleanly."""
    if not (is_url(location) and same_origin(location, base)):
        return None
    return _segments(location)


def _as_path(location: str) -> Path | None:
    parts = urlsplit(location)
    if parts.scheme == "file":
        return Path(unquote(parts.path)).resolve()
    if parts.scheme in ("", ) or (len(parts.scheme) == 1 and os.name == "nt"):
        return Path(os.path.expanduser(location)).resolve()
    return None


@dataclass
class LoadPolicy:
    """Where documents may come from, and how much of them."""

    entry: str
    allow: bool | tuple[str, ...] = ()
    max_bytes: int = 32 * 1024 * 1024
    max_documents: int = 256
    timeout: float = 30.0
    verify: bool | str = True

    def check(self, location: str) -> None:
        """Raise :class:`WsdlError` unless ``location`` may be read."""
        if location == self.entry or self.allow is True:
            return
        if self._own(location) or any(self._under(location, allowed) for allowed in self.allow or ()):
            return
        found = origin(self.entry) if is_url(self.entry) else None
        where = "the WSDL's folder" if found is None else f"{found.scheme}://{found.host}"
        raise WsdlError(
            f"{self.entry}: refused to load {location!r}: a WSDL may import documents from its own "
            f"location only ({where}). Add the location to the driver's allow_imports option to allow it."
        )

    def _own(self, location: str) -> bool:
        if is_url(self.entry):
            return _segments(self.entry) is not None and _segments_on_origin(location, self.entry) is not None
        entry = _as_path(self.entry)
        target = _as_path(location)
        return entry is not None and target is not None and target.is_relative_to(entry.parent)

    @staticmethod
    def _under(location: str, allowed: str) -> bool:
        if is_url(allowed):  # the same origin, and under the allowed path segment by segment
            prefix = _segments(allowed)
            read = _segments_on_origin(location, allowed) if prefix is not None else None
            if read is None or prefix is None:
                return False
            segments = prefix[:-1] if prefix[-1:] == [""] else prefix
            return read[:len(segments)] == segments
        folder, target = _as_path(allowed), _as_path(location)
        return folder is not None and target is not None and target.is_relative_to(folder)


class DocumentReader:
    """Reads WSDL and XSD documents under a :class:`LoadPolicy`.

    It records every document read (location and bytes), for the schema index and the
    content key of the cache. zeep reads through it while parsing (see
    :mod:`mcs_soap._parsing`); it never sends SOAP calls (see :mod:`mcs_soap._http`).
    """

    def __init__(self, policy: LoadPolicy) -> None:
        self.policy = policy
        self.documents: dict[str, bytes] = {}
        self._client: httpx.Client | None = None

    def load(self, url: str) -> bytes:
        if not url:
            raise WsdlError(f"{self.policy.entry}: an import names no location")
        if url in self.documents:
            return self.documents[url]
        if url in _BUNDLED:
            content = resources.files("mcs_soap").joinpath(_BUNDLED[url]).read_bytes()
            self.documents[url] = content
            return content
        self.policy.check(url)
        if len(self.documents) >= self.policy.max_documents:
            raise WsdlError(f"{self.policy.entry}: more than {self.policy.max_documents} documents imported; refused")
        content = self._read_url(url) if is_url(url) else self._read_file(url)
        self.documents[url] = content
        return content

    def _too_big(self, location: str) -> WsdlError:
        return WsdlError(f"{location}: larger than {self.policy.max_bytes} bytes (max_wsdl_bytes); refused")

    def _read_file(self, location: str) -> bytes:
        path = _as_path(location)
        if path is None:
            raise WsdlError(f"{self.policy.entry}: cannot load {location!r} (only files and http(s) URLs)")
        try:
            with path.open("rb") as handle:
                content = handle.read(self.policy.max_bytes + 1)
        except OSError as exc:
            what = location if location == self.policy.entry else f"{self.policy.entry}: the imported document {location}"
            raise WsdlError(f"{what}: cannot be read ({exc.strerror or exc})") from None
        if len(content) > self.policy.max_bytes:
            raise self._too_big(location)
        return content

    def _read_url(self, url: str) -> bytes:
        """The document at ``url``, read through the core's bounded HTTP path: the load
        timeout covers connecting, the headers and the body as a whole."""
        import httpx

        from mcs import http as mcs_http
        from mcs.errors import ToolTimeoutError

        if self._client is None:
            self._client = httpx.Client(transport=mcs_http.transport(verify=self.policy.verify), follow_redirects=False)
        deadline = time.monotonic() + self.policy.timeout
        try:
            with mcs_http.bounded(deadline):
                request = self._client.build_request("GET", url, timeout=self.policy.timeout,
                                                     headers={"Accept-Encoding": mcs_http.ACCEPT_ENCODING})
                response = self._client.send(request, stream=True)
                if response.status_code != 200:
                    response.close()
                    raise WsdlError(f"{url}: HTTP {response.status_code} (expected 200 with a WSDL or XSD document)")
                body = mcs_http.read_body(response, max_bytes=self.policy.max_bytes, deadline=deadline)
        except (ToolTimeoutError, httpx.TimeoutException):
            raise WsdlError(f"{url}: not read within {self.policy.timeout:g} s (load_timeout)") from None
        except httpx.HTTPError as exc:
            raise WsdlError(f"{url}: cannot be fetched ({type(exc).__name__}: {exc})") from None
        except ExecutionError as exc:  # a content encoding the reader does not take, or a broken one
            raise WsdlError(f"{url}: cannot be read ({exc})") from None
        if body.truncated:
            raise self._too_big(url)
        return body.data

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


def normalise_allow(allow: bool | Sequence[str]) -> bool | tuple[str, ...]:
    if isinstance(allow, bool):
        return allow
    if isinstance(allow, str):
        return (allow,)
    return tuple(str(a) for a in allow)


def entry_location(wsdl: str | os.PathLike[str]) -> str:
    """The canonical location of the entry WSDL (an absolute path or the URL as given)."""
    text = os.fspath(wsdl)
    if is_url(text):
        return text
    path = _as_path(text)
    if path is None:
        raise WsdlError(f"{text}: not a file path or an http(s) URL")
    return str(path)


def describe_zeep_error(location: str, exc: BaseException) -> str:
    """zeep's reason a document could not be loaded, prefixed with the document."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    line = getattr(exc, "sourceline", None)
    where = f" (line {line})" if line else ""
    filename = getattr(exc, "filename", None)
    if filename and filename != location:
        where = f" in {filename}{where}"
    if len(text) > 600:
        text = text[:600] + "..."
    return f"{location}: cannot be loaded{where}: {type(exc).__name__}: {text}"

