"""URL pieces built from values a caller (an LLM) supplies, and where such URLs may go.

* :func:`encode_path_segment`: a value as exactly one path segment (SECURITY.md B1).
* :func:`header_value`: a value as an HTTP header value, or ``None`` when none can hold it
  (SECURITY.md B2).
* :func:`origin` and :func:`same_origin`: the one rule for "the same origin" (scheme,
  host, port; the loopback hosts are one host) that redirects, imports and served
  addresses are judged by.
* :class:`EgressPolicy`: the block list for destinations the model chose or influenced
  (SECURITY.md B3, B4): loopback, link-local, private, CGNAT and reserved addresses and
  metadata hosts are refused in every spelling, and a name's checked addresses are the
  ones to connect to. Destinations from configuration are not subject to it.
"""

from __future__ import annotations

import fnmatch
import ipaddress
import re
import socket
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import quote, urlsplit

from mcs.errors import ConfigurationError, ExecutionError, PolicyDeniedError

if TYPE_CHECKING:
    import httpx


def encode_path_segment(text: str) -> str:
    """``text`` percent-encoded as exactly one path segment, whatever it holds.

    Every reserved character is encoded (``/`` becomes ``%2F``, ``?`` ``%3F``, ``#``
    ``%23``), and the dot segments ``.`` and ``..`` become ``%2E`` and ``%2E%2E``, which
    clients and servers do not collapse: a value such as ``../admin`` can never move the
    request to another path (SECURITY.md B1).
    """
    encoded = quote(text, safe="")
    if encoded in (".", ".."):
        return "%2E" * len(encoded)
    return encoded


_NOT_IN_FIELD = re.compile(r"[^\x20-\x7e\t]")


def header_value(text: str) -> str | None:
    """``text`` as an HTTP header (field) value, or ``None`` when it cannot be one.

    What RFC 9110 (5.5) allows, in ASCII: visible characters, with spaces and tabs between
    them. Spaces and tabs around the value are dropped (they are not part of a field value;
    sent, HTTP libraries refuse the request after connecting). ``None`` for anything else:
    CR, LF, NUL and every other control character, DEL, non-ASCII text.
    """
    value = text.strip(" \t")
    return None if _NOT_IN_FIELD.search(value) else value


# ---------------------------------------------------------------------- origins


_DEFAULT_PORTS = {"http": 80, "https": 443}
#: The names of this machine's loopback host as a URL or a ``Host`` header writes them:
#: ``localhost`` (RFC 6761) and the addresses it means. Another address of 127.0.0.0/8 is a
#: loopback address too, but a server bound to 127.0.0.2 is another server.
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
_LOOPBACK_ADDRESSES = frozenset(ipaddress.ip_address(host.strip("[]")) for host in LOOPBACK_HOSTS if host != "localhost")


class Origin(NamedTuple):
    """Where an ``http(s)`` URL connects to (RFC 6454): scheme, host and port, as httpx
    reads them. The scheme and a host name are lower case, a name in Unicode (IDNA
    decoded), an IPv6 address without brackets, and the port explicit (80, 443 when the
    URL names none)."""

    scheme: str
    host: str
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"


def origin(url: str | httpx.URL) -> Origin | None:
    """The :class:`Origin` of ``url``; ``None`` when it is not an ``http`` or ``https``
    URL with a host, or httpx refuses to parse it. Parsing text needs httpx, which every
    HTTP-speaking driver has."""
    import httpx

    try:
        parsed = httpx.URL(url) if isinstance(url, str) else url
    except httpx.InvalidURL:
        return None
    default = _DEFAULT_PORTS.get(parsed.scheme)
    if default is None or not parsed.host:
        return None
    return Origin(parsed.scheme, parsed.host, parsed.port or default)


def _loopback(host: str) -> bool:
    """Whether ``host`` (as in an :class:`Origin`) is one of the names of this machine's
    loopback host, so that no DNS answer decides it: ``localhost`` (RFC 6761),
    ``127.0.0.1`` or ``::1``, in the usual spelling."""
    if host in LOOPBACK_HOSTS:
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address in _LOOPBACK_ADDRESSES


def same_origin(first: str | httpx.URL, second: str | httpx.URL) -> bool:
    """Whether two URLs have one origin: the same scheme, the same port and the same host.

    The loopback host's names are one host here: ``localhost``, ``127.0.0.1`` and ``::1``, so
    ``http://localhost:8000`` and ``http://127.0.0.1:8000`` are one origin, while
    ``http://127.0.0.1:8001`` and ``https://localhost:8000`` are others. Other spellings
    (``127.1``, ``::ffff:127.0.0.1``, ``localhost.``, names under ``.localhost``), the other
    addresses of ``127.0.0.0/8`` (a server bound to ``127.0.0.2`` is another server) and names
    that resolve to loopback do not count: nothing is resolved. ``False`` when either URL
    has no origin (:func:`origin`).
    """
    one, other = origin(first), origin(second)
    if one is None or other is None or (one.scheme, one.port) != (other.scheme, other.port):
        return False
    return one.host == other.host or (_loopback(one.host) and _loopback(other.host))


# ---------------------------------------------------------------------- egress


#: Names that are never a destination an LLM may choose: cloud metadata services and
#: names that only ever mean this machine or its private network.
BLOCKED_NAMES = frozenset({
    "localhost", "metadata", "metadata.google.internal", "metadata.goog", "instance-data",
    "instance-data.ec2.internal", "metadata.azure.com", "metadata.platformequinix.com",
})
BLOCKED_SUFFIXES = (".localhost", ".internal", ".local", ".localdomain", ".home.arpa", ".intranet", ".lan")
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
#: Where every public IPv6 address is (RFC 4291); Python's ``is_global`` also lets by
#: IPv4-compatible (``::127.0.0.1``), IPv4-translated and deprecated site-local addresses.
_GLOBAL_UNICAST = ipaddress.ip_network("2000::/3")
_LOOPBACK_NETWORKS = ("127.0.0.0/8", "::1/128")
_IPV4_SPELLING = re.compile(r"^(?:0x[0-9a-f]+|[0-9]+)(?:\.(?:0x[0-9a-f]+|[0-9]+)){0,3}$", re.IGNORECASE)
_UNSAFE_URL_CHARS = re.compile(r"[\x00-\x20\x7f\\]")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Sequence[str]]


def ip_literal(host: str) -> IPAddress | None:
    """``host`` as an IP address when it spells one in any form a resolver accepts, else ``None``.

    Besides the usual forms (``127.0.0.1``, ``[::1]``), the classic ``inet_aton`` spellings
    count: ``127.1``, ``2130706433``, ``0x7f.1``, ``0177.0.0.1`` all mean 127.0.0.1.
    """
    text = host.strip().strip("[]")
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        pass
    if _IPV4_SPELLING.match(text):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(text))
        except OSError:
            return None
    return None


def blocked_reason(address: IPAddress) -> str | None:
    """Why ``address`` is not a public destination (loopback, private...), or ``None``.

    IPv6 forms that carry an IPv4 address (``::ffff:127.0.0.1``, 6to4, Teredo, NAT64) are
    judged by the IPv4 address inside; any other IPv6 address must be global unicast
    (``2000::/3``).
    """
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is None and address.teredo is not None:
            embedded = address.teredo[1]
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None:
            return blocked_reason(embedded)
    if address.is_loopback:
        return "a loopback address"
    if address.is_link_local:
        return "a link-local address (where cloud metadata services answer)"
    if isinstance(address, ipaddress.IPv4Address) and address in _CGNAT:
        return "a carrier-grade NAT address"
    if address.is_unspecified:
        return "the unspecified address"
    if address.is_multicast:
        return "a multicast address"
    if address.is_private:
        return "a private address"
    if not address.is_global or (isinstance(address, ipaddress.IPv6Address) and address not in _GLOBAL_UNICAST):
        return "a reserved address"
    return None


def _default_resolver(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _egress_denied(target: str, why: str) -> PolicyDeniedError:
    return PolicyDeniedError(
        f"The request to {target} was refused by the egress policy: {why}. Only public hosts "
        "may be chosen by the model; the configuration can allow more (egress_allow).",
        details={"egress": why},
    )


class EgressPolicy:
    """Where a request may go when the model chose (or influenced) its destination.

    Refused: schemes other than ``schemes``; URLs with credentials (``user@host``), spaces,
    control characters or backslashes; the names in :data:`BLOCKED_NAMES` and under
    :data:`BLOCKED_SUFFIXES`; and any address that is not public (:func:`blocked_reason`)
    however it is spelled. A name is resolved once and *every* address it resolves to
    must pass; :meth:`check_host` returns those addresses so the connection can be pinned
    to them (a second, different answer from DNS is never used: DNS rebinding).

    ``hosts``, when given, is an allow-list of host names (``fnmatch`` patterns such as
    ``"*.example.org"``): no other host may be requested, and these still only at public
    addresses. ``allow`` lists IP addresses or networks (``"10.1.0.0/16"``) that may be
    reached even though they are not public; ``"localhost"`` stands for the loopback
    networks and also allows that name. ``resolver(host, port)`` returns IP address
    strings (default: :func:`socket.getaddrinfo`); tests pass a stub.
    """

    def __init__(
        self,
        *,
        hosts: Iterable[str] | None = None,
        allow: Iterable[str] = (),
        schemes: Iterable[str] = ("http", "https"),
        resolver: Resolver | None = None,
    ) -> None:
        self.hosts = None if hosts is None else tuple(h.strip().lower().rstrip(".") for h in hosts)
        networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        self.allow_localhost = False
        for entry in allow:
            if entry.strip().lower() == "localhost":
                self.allow_localhost = True
                networks.extend(ipaddress.ip_network(n) for n in _LOOPBACK_NETWORKS)
                continue
            try:
                networks.append(ipaddress.ip_network(entry.strip().strip("[]"), strict=False))
            except ValueError:
                raise ConfigurationError(
                    f"egress allow entry {entry!r} is not an IP address, a network or 'localhost'"
                ) from None
        self.allowed_networks = tuple(networks)
        self.schemes = frozenset(s.lower() for s in schemes)
        self.resolver: Resolver = resolver or _default_resolver

    def _allowed(self, address: IPAddress) -> bool:
        return any(address.version == net.version and address in net for net in self.allowed_networks)

    def _check_address(self, address: IPAddress, target: str) -> None:
        if self._allowed(address):
            return
        why = blocked_reason(address)
        if why is not None:
            raise _egress_denied(target, f"{address} is {why}")

    def _check_name(self, host: str) -> tuple[str, IPAddress | None]:
        """The checks that need no DNS: the host allow-list, blocked names, IP literals."""
        name = host.strip().strip("[]").lower().rstrip(".")
        if self.hosts is not None and not any(fnmatch.fnmatchcase(name, pattern) for pattern in self.hosts):
            raise _egress_denied(host, f"{name!r} is not one of the allowed hosts ({', '.join(self.hosts)})")
        literal = ip_literal(name)
        if literal is not None:
            self._check_address(literal, host)
            return name, literal
        if not (self.allow_localhost and (name == "localhost" or name.endswith(".localhost"))) and (
            name in BLOCKED_NAMES or name.endswith(BLOCKED_SUFFIXES)
        ):
            raise _egress_denied(host, f"{name!r} names a local or metadata host")
        return name, None

    def check_host(self, host: str, port: int) -> tuple[str, ...]:
        """The addresses ``host`` may be reached at (to connect to exactly those).

        Raises:
            PolicyDeniedError: the name or one of its addresses is not allowed.
            ExecutionError: the name does not resolve.
        """
        name, literal = self._check_name(host)
        if literal is not None:
            return (str(literal),)
        try:
            found = list(self.resolver(name, port))
        except OSError as exc:
            raise ExecutionError(
                f"The host {host!r} could not be resolved ({type(exc).__name__}).",
                details={"category": "dns", "retryable": True},
            ) from None
        addresses: list[str] = []
        for text in found:
            address = ip_literal(text.split("%", 1)[0])
            if address is None:
                raise _egress_denied(host, f"the resolver answered {text!r}, which is not an address")
            self._check_address(address, host)
            addresses.append(str(address))
        if not addresses:
            raise ExecutionError(f"The host {host!r} has no address.", details={"category": "dns"})
        return tuple(addresses)

    def check_url(self, url: str) -> tuple[str, int, tuple[str, ...]]:
        """``(host, port, addresses)`` of ``url`` when it may be requested.

        Raises:
            PolicyDeniedError: the scheme, the form of the URL or its destination is refused.
            ExecutionError: the host does not resolve.
        """
        host, port = self.check_form(url)
        return host, port, self.check_host(host, port)

    def check_form(self, url: str) -> tuple[str, int]:
        """``(host, port)`` of ``url`` when all that can be judged without DNS allows it:
        the scheme, no credentials, no spaces or control characters, the host allow-list,
        blocked names, and a host written as an IP address in any spelling.

        Raises:
            PolicyDeniedError: the URL is refused.
        """
        if _UNSAFE_URL_CHARS.search(url):
            raise _egress_denied(repr(url[:80]), "the URL holds spaces, control characters or backslashes")
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in self.schemes:
            raise _egress_denied(repr(url[:80]), f"the scheme {scheme or '(none)'!r} is not allowed")
        if "@" in parts.netloc:
            raise _egress_denied(repr(url[:80]), "a URL with credentials (user@host) is not allowed")
        try:
            host, port = parts.hostname, parts.port
        except ValueError:
            raise _egress_denied(repr(url[:80]), "the port is not a number") from None
        if not host:
            raise _egress_denied(repr(url[:80]), "the URL names no host")
        self._check_name(host)
        return host, port or (443 if scheme == "https" else 80)
