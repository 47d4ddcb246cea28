"""Loading OpenAPI documents and resolving their ``$ref``\\ s, lazily.

A :class:`Spec` holds the root document and a cache of the other documents it refers
to. Nothing is resolved up front: :meth:`Spec.resolve` follows one reference when a
caller needs it (one operation's parameters, one schema), and remembers the answer.

External references (``other.yaml#/Pet``) are read only from the root document's own
folder and below, unless ``allow_external`` names more roots or is ``True``; remote
(``http``) references are refused unless allowed. A document fetched from a URL follows
redirects only within that URL's origin, unless ``redirect_hosts`` names the other host.
Every error names the document and the place in it, so a broken spec can be fixed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit
from urllib.request import url2pathname

import orjson
import yaml

from mcs.errors import ConfigurationError
from mcs.urls import same_origin

__all__ = ["Spec", "SpecError", "load_document", "parse_document"]


class SpecError(ConfigurationError):
    """The spec is not valid (or cannot be read); the message names the document and place."""


class SpecRedirectRefused(SpecError):
    """The spec's URL redirected to another origin, on a host ``spec_redirect_hosts`` does
    not name; ``host`` is that host. The message says how to allow it as a driver option;
    :meth:`on_command_line` says it with the flag too."""

    def __init__(self, url: str, shown: str, host: str, *, flag: bool = False) -> None:
        self.url, self.shown, self.host = url, shown, host
        how = (f"--spec-redirect-host {host} (spec_redirect_hosts=[{host!r}] as a driver option)" if flag
               else f"spec_redirect_hosts=[{host!r}]")
        super().__init__(
            f"{url}: the spec's address redirected to {shown}, another origin; not followed. If that host "
            f"is trusted, allow it with {how} (or fetch the spec from there)."
        )

    def on_command_line(self) -> SpecRedirectRefused:
        """The same refusal, naming the ``--spec-redirect-host`` flag (for ``mcs rest check``
        and ``mcs convert openapi``)."""
        return SpecRedirectRefused(self.url, self.shown, self.host, flag=True)


class _Loader(yaml.CSafeLoader):
    """libyaml's loader without the timestamp rule: ``2020-08-01`` stays a string.

    A date parsed into :class:`datetime.date` would leak into schemas (``default``,
    ``example``) and break JSON serialisation.
    """


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.CSafeLoader.yaml_implicit_resolvers.items()
}


def parse_document(data: bytes, where: str) -> Any:
    """Parse JSON (orjson) or YAML (libyaml) bytes; a UTF-8 BOM is ignored."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    head = data.lstrip()[:1]
    if head in (b"{", b"["):
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass  # YAML is a superset of JSON; let the YAML parser report the place
    try:
        return yaml.load(data, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        place = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise SpecError(f"{where}: not valid JSON or YAML{place}: {problem}") from None


#: The most of a spec read over HTTP (decoded); a larger one is refused. The largest public
#: API descriptions are a few tens of MiB.
MAX_SPEC_BYTES = 64 * 1024 * 1024


#: The most redirects followed when fetching a spec.
MAX_SPEC_REDIRECTS = 5


def _read_url(url: str, timeout: float = 30.0, max_bytes: int = MAX_SPEC_BYTES,
              redirect_hosts: frozenset[str] = frozenset()) -> bytes:
    """The document at ``url``, read through the core's bounded HTTP path: ``timeout``
    covers the whole exchange, redirects included, and at most ``max_bytes`` of decoded
    content is read (a compression bomb is inflated no further). Redirects are followed
    (at most :data:`MAX_SPEC_REDIRECTS`) within ``url``'s origin (scheme, host and port),
    and to another origin only when its host is in ``redirect_hosts``; any other raises
    :class:`SpecError` naming where it pointed."""
    import time

    import httpx

    from mcs import http as mcs_http
    from mcs.errors import ExecutionError, ToolTimeoutError

    deadline = time.monotonic() + timeout
    try:
        with mcs_http.bounded(deadline), httpx.Client(transport=mcs_http.transport(), follow_redirects=False) as client:
            request = client.build_request("GET", url, timeout=timeout,
                                           headers={"Accept-Encoding": mcs_http.ACCEPT_ENCODING})
            response = client.send(request, stream=True)
            for _ in range(MAX_SPEC_REDIRECTS + 1):
                if not response.is_redirect or response.next_request is None:
                    break
                response.close()
                _check_redirect(url, response.next_request.url, redirect_hosts)
                response = client.send(response.next_request, stream=True)
            else:
                response.close()
                raise SpecError(f"{url}: the spec's address redirected more than {MAX_SPEC_REDIRECTS} times; stopped")
            if response.is_error:
                response.close()
                raise SpecError(f"{url}: could not fetch the spec: HTTP {response.status_code}")
            body = mcs_http.read_body(response, max_bytes=max_bytes, deadline=deadline)
    except (ToolTimeoutError, httpx.TimeoutException):
        raise SpecError(f"{url}: could not fetch the spec within {timeout:g} s") from None
    except httpx.HTTPError as exc:
        raise SpecError(f"{url}: could not fetch the spec: {exc}") from None
    except ExecutionError as exc:  # a content encoding the reader does not take, or a broken one
        raise SpecError(f"{url}: could not read the spec: {exc.message}") from None
    if body.truncated:
        raise SpecError(f"{url}: the spec is larger than {max_bytes} bytes; refused")
    return body.data


def _check_redirect(url: str, target: Any, redirect_hosts: frozenset[str]) -> None:
    """Raise :class:`SpecError` unless a redirect from ``url`` to ``target`` (an
    ``httpx.URL``) stays in ``url``'s origin or goes to a host in ``redirect_hosts``."""
    if target.scheme in ("http", "https") and (same_origin(target, url) or target.host.lower() in redirect_hosts):
        return
    shown = str(target.copy_with(query=None, fragment=None, username=None, password=None))
    raise SpecRedirectRefused(url, shown, target.host)


def load_document(location: str, redirect_hosts: frozenset[str] = frozenset()) -> Any:
    """Read and parse one document from a path or an ``http(s)`` URL (redirects as
    :func:`_read_url` follows them: ``redirect_hosts`` names the other hosts allowed)."""
    if location.startswith(("http://", "https://")):
        return parse_document(_read_url(location, redirect_hosts=redirect_hosts), location)
    try:
        data = Path(location).read_bytes()
    except OSError as exc:
        raise SpecError(f"{location}: could not read the spec: {exc.strerror or exc}") from None
    return parse_document(data, location)


def _pointer_parts(fragment: str) -> list[str]:
    fragment = unquote(fragment)
    if not fragment or fragment == "/":
        return []
    if not fragment.startswith("/"):
        fragment = "/" + fragment  # '#definitions/X' is common in the wild
    return [p.replace("~1", "/").replace("~0", "~") for p in fragment[1:].split("/")]


def _walk(document: Any, parts: list[str]) -> Any:
    node = document
    for part in parts:
        if isinstance(node, Mapping):
            if part in node:
                node = node[part]
            elif part.isdigit() and int(part) in node:  # YAML integer keys (200:)
                node = node[int(part)]
            else:
                raise KeyError(part)
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise KeyError(part)
    return node


@dataclass(frozen=True, slots=True)
class Ref:
    """A resolved reference: the document it lives in and the JSON pointer inside it."""

    document: str
    pointer: str

    @property
    def name(self) -> str:
        """The last pointer segment (``Pet`` for ``#/components/schemas/Pet``)."""
        parts = _pointer_parts(self.pointer)
        if parts:
            return parts[-1]
        return Path(urlsplit(self.document).path).stem or "root"


@dataclass
class Spec:
    """An OpenAPI 3.x or Swagger 2.0 document, with lazy reference resolution.

    ``root`` is the parsed root document; ``location`` where it came from (a path, a URL,
    or ``"<dict>"``), as given, for messages. ``root_key`` is the root's document key for
    :meth:`resolve` (an absolute path for files, so a reference back into the root from
    another file lands in the same document). ``version`` is ``"2.0"``, ``"3.0"`` or ``"3.1"``.
    """

    root: Mapping[str, Any]
    location: str = "<dict>"
    allow_external: bool | tuple[str, ...] = False
    #: Hosts a redirect may lead to from the spec's URL (or a remote ``$ref``'s) when
    #: it leaves that origin.
    redirect_hosts: frozenset[str] = frozenset()
    version: str = ""
    root_key: str = ""
    _documents: dict[str, Any] = field(default_factory=dict)
    _roots: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.root, Mapping):
            raise SpecError(f"{self.location}: the spec must be a mapping, got {type(self.root).__name__}")
        if "swagger" in self.root:
            if not str(self.root["swagger"]).startswith("2"):
                raise SpecError(f"{self.location}: unsupported swagger version {self.root['swagger']!r} (2.0 is)")
            self.version = "2.0"
        elif "openapi" in self.root:
            text = str(self.root["openapi"])
            if not text.startswith(("3.0", "3.1")):
                raise SpecError(f"{self.location}: unsupported openapi version {text!r} (3.0 and 3.1 are)")
            self.version = text[:3]
        else:
            raise SpecError(
                f"{self.location}: not an OpenAPI or Swagger document "
                "(no top-level 'openapi' or 'swagger' field)"
            )
        paths = self.root.get("paths", {})
        if paths is not None and not isinstance(paths, Mapping):
            raise SpecError(f"{self.location}: 'paths' must be a mapping")
        self.root_key = self.location
        if self.location != "<dict>" and not _is_url(self.location):
            self.root_key = str(Path(self.location).resolve())
            self._roots = (str(Path(self.root_key).parent),)
        self._documents[self.root_key] = self.root
        if isinstance(self.allow_external, tuple):
            self._roots += tuple(str(Path(p).resolve()) for p in self.allow_external)

    @classmethod
    def load(
        cls, source: str | os.PathLike[str] | Mapping[str, Any], *,
        allow_external: bool | tuple[str, ...] = False, redirect_hosts: Iterable[str] = (),
    ) -> Spec:
        """A spec from a path, an ``http(s)`` URL, or an already parsed mapping. A URL's
        redirects are followed within its origin, and to the hosts in ``redirect_hosts``."""
        hosts = frozenset(host.lower() for host in redirect_hosts)
        if isinstance(source, Mapping):
            return cls(root=source, allow_external=allow_external, redirect_hosts=hosts)
        location = os.fspath(source)
        if not _is_url(location):
            location = str(Path(location))
        return cls(root=load_document(location, hosts), location=location, allow_external=allow_external,
                   redirect_hosts=hosts)

    @property
    def is_swagger(self) -> bool:
        return self.version == "2.0"

    # ------------------------------------------------------------------ references

    def _document(self, target: str, base: str, ref: str, where: str) -> str:
        """The key of the document ``target`` (relative to ``base``), loading it on first use."""
        if _is_url(base) or _is_url(target):
            key = urljoin(base, target)
            if self.allow_external is not True:
                raise SpecError(
                    f"{where}: $ref {ref!r} points to a remote document; "
                    "pass allow_external_refs=True (--allow-external-refs on the command line) to follow it"
                )
        else:
            if base == "<dict>":
                if self.allow_external is not True:
                    raise SpecError(
                        f"{where}: $ref {ref!r} points to another file, but the spec was given "
                        "as a dict; load it from its path, or pass allow_external_refs=True"
                    )
                key = str(Path(target).resolve())
            else:
                key = str((Path(base).parent / unquote(target)).resolve())
            if self.allow_external is not True and not any(
                key == root or key.startswith(root + os.sep) for root in self._roots
            ):
                raise SpecError(
                    f"{where}: $ref {ref!r} leaves the spec's folder; "
                    "pass allow_external_refs=True (or the allowed folders; --allow-external-refs on the "
                    "command line) to follow it"
                )
        if key not in self._documents:
            try:
                self._documents[key] = load_document(key, self.redirect_hosts)
            except SpecError as exc:
                raise SpecError(f"{where}: $ref {ref!r} cannot be loaded: {exc}") from None
        return key

    def external_document(self, uri: str) -> Any:
        """The document at ``uri`` (a ``file:`` or ``http(s)`` URI) under the same rules as
        ``$ref``\\ s: inside the spec's folder unless ``allow_external`` says more.

        Raises:
            SpecError: the document is outside what is allowed, or cannot be read.
        """
        parsed = urlsplit(uri)
        target = uri if parsed.scheme in ("http", "https") else url2pathname(parsed.path)
        key = self._document(target, self.root_key, uri, self.location)
        return self._documents[key]

    def resolve(self, ref: str, base: str, where: str = "") -> tuple[Ref, Any]:
        """Follow one ``$ref`` string found in document ``base``; return where it led and the node.

        ``where`` names the referring place for error messages.
        """
        where = where or base
        if not isinstance(ref, str):
            raise SpecError(f"{self.location}: {where}: $ref must be a string, got {type(ref).__name__}")
        target, _, fragment = ref.partition("#")
        document = base if not target else self._document(target, base, ref, f"{self.location}: {where}")
        try:
            node = _walk(self._documents[document], _pointer_parts(fragment))
        except KeyError as exc:
            raise SpecError(
                f"{self.location}: {where}: $ref {ref!r} does not resolve "
                f"(no {exc.args[0]!r} in {_short(document)})"
            ) from None
        return Ref(document, fragment or "/"), node

    def deref(self, node: Any, base: str, where: str) -> tuple[Any, str]:
        """Follow a chain of ``$ref`` objects (parameters, bodies, path items) to a real node.

        Returns the node and the document it lives in. A loop of references is an error.
        """
        seen: set[tuple[str, str]] = set()
        while isinstance(node, Mapping) and "$ref" in node and isinstance(node["$ref"], str):
            text = node["$ref"]
            ref, node = self.resolve(text, base, where)
            key = (ref.document, ref.pointer)
            if key in seen:
                raise SpecError(f"{self.location}: {where}: $ref {text!r} refers to itself in a loop")
            seen.add(key)
            base = ref.document
        return node, base


def _is_url(text: str) -> bool:
    return text.startswith(("http://", "https://"))


def _short(document: str) -> str:
    return Path(urlsplit(document).path).name or document
