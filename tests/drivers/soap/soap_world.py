"""The loopback services of the SOAP driver's tests: a calculator (SOAP 1.1 and 1.2), a
country directory with nested types, arrays, an enumeration, a choice, dates and decimals,
and an rpc/literal echo, all behind ``world.wsdl`` on a :class:`mcs_soap.peer.SoapPeer`."""

from __future__ import annotations

import base64
import decimal
import html
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import quote, quote_plus

from lxml import etree
from mcs_soap.peer import SOAP11, WSSE, Context, PeerFault, Recorded, SoapPeer, element

HERE = Path(__file__).resolve().parent
WORLD_WSDL = HERE / "world.wsdl"
NS = "urn:mcs:world"
CORPUS = HERE.parents[2] / ".." / "shared" / "corpus"

COUNTRIES = {
    "NL": ("Netherlands", "Amsterdam", "EU", [("NL", "Dutch"), ("FY", "Frisian")], ("EUR", "Euro"), 17_900_000, "1815-03-16"),
    "JP": ("Japan", "Tokyo", "AS", [("JA", "Japanese")], ("JPY", "Yen"), 125_000_000, None),
    "KE": ("Kenya", "Nairobi", "AF", [("SW", "Swahili"), ("EN", "English")], ("KES", "Shilling"), 54_000_000, "1963-12-12"),
}


class World:
    """The running peer, its base URL and a local copy of its WSDL pointing at it."""

    def __init__(self, peer: SoapPeer, url: str, wsdl: Path) -> None:
        self.peer = peer
        self.url = url
        self.wsdl = wsdl


def q(name: str) -> str:
    return f"{{{NS}}}{name}"


def _text(request: etree._Element, name: str) -> str | None:
    return request.findtext(q(name))


def add(request: etree._Element, context: Context) -> etree._Element:
    total = int(_text(request, "a") or 0) + int(_text(request, "b") or 0)
    return element(q("AddResponse"), None, element(q("AddResult"), total))


def divide(request: etree._Element, context: Context) -> etree._Element:
    dividend = decimal.Decimal(_text(request, "dividend") or "0")
    divisor = decimal.Decimal(_text(request, "divisor") or "0")
    if divisor == 0:
        raise PeerFault("Division by zero", client=True, actor="urn:mcs:world:calculator",
                        detail=element(q("DivisionFault"), None, element(q("reason"), "the divisor is 0")))
    result = (dividend / divisor).quantize(decimal.Decimal("0.0000000001"))
    return element(q("DivideResponse"), None, element(q("DivideResult"), format(result, "f")))


def full_country_info(request: etree._Element, context: Context) -> etree._Element:
    code = _text(request, "sCountryISOCode") or ""
    if code not in COUNTRIES:
        raise PeerFault(f"Country not found: {code}", client=True)
    name, capital, continent, languages, currency, population, founded = COUNTRIES[code]
    info = element(
        q("FullCountryInfoResult"), None,
        element(q("sISOCode"), code), element(q("sName"), name), element(q("sCapitalCity"), capital),
        element(q("sContinentCode"), continent),
        element(q("Languages"), None, *[element(q("tLanguage"), None, element(q("sISOCode"), c), element(q("sName"), n))
                                          for c, n in languages]),
        element(q("Currency"), None, element(q("sISOCode"), currency[0]), element(q("sName"), currency[1])),
        element(q("Population"), population),
    )
    if founded:
        info.append(element(q("Founded"), founded))
    return element(q("FullCountryInfoResponse"), None, info)


def countries_by_continent(request: etree._Element, context: Context) -> etree._Element:
    continent = _text(request, "continent")
    limit = int(_text(request, "limit") or 100)
    codes = [c for c, row in COUNTRIES.items() if row[2] == continent][:limit]
    return element(q("CountriesByContinentResponse"), None, *[element(q("code"), c) for c in codes])


def find_country(request: etree._Element, context: Context) -> etree._Element:
    by_code, by_name = _text(request, "byCode"), _text(request, "byName")
    if by_code is not None and by_name is not None:
        raise PeerFault("choose one of byCode and byName", client=True)
    found = by_code if by_code in COUNTRIES else next((c for c, row in COUNTRIES.items() if row[0] == by_name), None)
    answer = element(q("code"), found)
    if found is None:
        answer.set("{http://www.w3.org/2001/XMLSchema-instance}nil", "true")
    return element(q("FindCountryResponse"), None, answer)


def holidays(request: etree._Element, context: Context) -> etree._Element:
    code = _text(request, "sCountryISOCode")
    start, until = _text(request, "from") or "", _text(request, "until") or ""
    rows = [("2024-04-27", "King's Day", "2024-04-27T00:00:00+02:00", "P1D", b"\x89PNG"),
            ("2024-05-05", "Liberation Day", "2024-05-05T00:00:00+02:00", "PT12H", None)] if code == "NL" else []
    out = element(q("HolidaysResponse"))
    for day, name, starts, length, logo in rows:
        if start <= day <= until:
            holiday = element(q("holiday"), None, element(q("day"), day), element(q("name"), name),
                              element(q("startsAt"), starts), element(q("length"), length))
            if logo is not None:
                import base64

                holiday.append(element(q("logo"), base64.b64encode(logo).decode()))
            note = element(q("note"))
            note.set("{http://www.w3.org/2001/XMLSchema-instance}nil", "true")
            holiday.append(note)
            out.append(holiday)
    return out


def register_traveller(request: etree._Element, context: Context) -> etree._Element:
    traveller = request.find(q("traveller"))
    assert traveller is not None
    visited = [v.text for v in traveller.findall(q("visited"))]
    extra = traveller.find(q("extra"))
    extra_tags = [etree.QName(child).localname for child in extra] if extra is not None else []
    summary = (f"{traveller.findtext(q('name'))} (id {traveller.get('id')}, tier {traveller.get('tier', 'basic')}) "
               f"visited {','.join(visited) or 'nothing'}; extra {','.join(extra_tags) or 'none'}")
    stops = len(request.findall(f".//{q('value')}"))
    budget = request.find(q("budget"))
    out_budget = element(q("budget"), budget.text if budget is not None and budget.text else None)
    if budget is None or not budget.text:
        out_budget.set("{http://www.w3.org/2001/XMLSchema-instance}nil", "true")
    return element(q("RegisterTravellerResponse"), None, element(q("summary"), summary), element(q("stops"), stops),
                   out_budget, element(q("ticket"), 2**63 + 5))


def echo(request: etree._Element, context: Context) -> etree._Element:
    text = request.findtext("text") or ""
    times = int(request.findtext("times") or 1)
    return element(q("EchoResponse"), None, element("echoed", " ".join([text] * times)))


HANDLERS = {
    "Add": add, "Divide": divide, "FullCountryInfo": full_country_info,
    "CountriesByContinent": countries_by_continent, "FindCountry": find_country, "Holidays": holidays,
    "RegisterTraveller": register_traveller, "Echo": echo,
}


def world_peer() -> SoapPeer:
    """A fresh peer for world.wsdl (WS-Security on /secure, HTTP basic on /basic)."""
    return SoapPeer(
        wsdl=WORLD_WSDL.read_text(), handlers=dict(HANDLERS),
        wsse={"/secure": ("alice", "s3cret")}, basic={"/basic": ("bob", "hunter2")},
    )


class EchoPeer(SoapPeer):
    """A careless service that quotes back what it was sent, in every way a server can:

    * ``/fault``: any operation is a SOAP fault (of the request's version) whose string,
      actor and detail hold the ``Authorization`` header, that header's Basic pair decoded,
      the ``X-Api-Key`` header (percent- and form-encoded too), the WS-Security password and
      the text of the SOAP Header;
    * ``/page``: a 401 HTML page quoting those headers and the password (HTML-escaped);
    * ``/refs.html``, ``/refs.xml``: a 401 HTML page and a 500 XML error (not SOAP) quoting
      the ``X-Api-Key`` header as decimal and the password as hexadecimal character references;
    * ``/tag``: 200 with broken XML whose element is named after the ``X-Api-Key`` header;
    * ``/element``: a SOAP answer with an unexpected element named after that header;
    * anything else: an answer holding the ``X-Api-Key`` header (for ``Echo``).
    """

    def __init__(self) -> None:
        super().__init__(wsdl=WORLD_WSDL.read_text(), handlers=dict.fromkeys(HANDLERS, _echo), validate=False)

    def answer(self, method: str, path: str, headers: Mapping[str, str], body: bytes,
               base: str) -> tuple[int, str, bytes]:
        key = headers.get("x-api-key", "none")
        if path == "/page":
            self.requests.append(Recorded(method, path, dict(headers), body))
            envelope = etree.fromstring(body)
            password = envelope.findtext(f".//{{{WSSE}}}Password") or ""
            said = {"authorization": headers.get("authorization", ""), "x-api-key": key, "password": password}
            listed = "".join(f"<li>{name}: {html.escape(value)}</li>" for name, value in said.items())
            return 401, "text/html", f"<html><body><h1>Denied</h1><ul>{listed}</ul></body></html>".encode()
        if path in ("/refs.html", "/refs.xml"):
            self.requests.append(Recorded(method, path, dict(headers), body))
            password = etree.fromstring(body).findtext(f".//{{{WSSE}}}Password") or ""
            decimal = "".join(f"&#{ord(c)};" for c in key)
            hexadecimal = "".join(f"&#x{ord(c):x};" for c in password)
            if path == "/refs.html":
                page = f"<html><body><p>key {decimal}</p><p>password {hexadecimal}</p></body></html>"
                return 401, "text/html", page.encode()
            return 500, "application/xml", f"<error><key>{decimal}</key><pw>{hexadecimal}</pw></error>".encode()
        if path in ("/tag", "/element"):
            self.requests.append(Recorded(method, path, dict(headers), body))
            if path == "/tag":
                return 200, "text/xml", f"<{key}></x>".encode()
            wrong = f'<AddResponse xmlns="{NS}"><{key}>1</{key}></AddResponse>'
            envelope = f'<soap:Envelope xmlns:soap="{SOAP11}"><soap:Body>{wrong}</soap:Body></soap:Envelope>'
            return 200, "text/xml", envelope.encode()
        return super().answer(method, path, headers, body, base)


def _received(context: Context) -> tuple[str, str, str]:
    """The request's Authorization header, X-Api-Key header and WS-Security password."""
    password = None
    if context.soap_header is not None:
        password = context.soap_header.findtext(f"{{{WSSE}}}Security/{{{WSSE}}}UsernameToken/{{{WSSE}}}Password")
    return context.headers.get("authorization", ""), context.headers.get("x-api-key", ""), password or ""


def _echo(request: etree._Element, context: Context) -> etree._Element:
    authorization, key, password = _received(context)
    if context.path != "/fault":
        return element(q("EchoResponse"), None, element("echoed", key))
    pair = base64.b64decode(authorization.partition(" ")[2] or "").decode()
    detail = element(q("Received"), None, element(q("pair"), pair), element(q("password"), password),
                     element(q("key"), quote_plus(key)))
    detail.set("authorization", authorization)
    header = " ".join(context.soap_header.itertext()) if context.soap_header is not None else ""
    raise PeerFault(f"denied for {authorization} ({pair}), key {key}, password {password}, header {header}", client=True,
                    actor=f"urn:key:{quote(key, safe='')}", detail=detail)

