"""`make demo-soap`: a real SOAP round trip through the SOAP driver, with no network and no API key.

It serves a small calculator (``calculator.wsdl``) on a free loopback port with the
driver's own lxml SOAP peer, loads the driver from the served WSDL, prints the system
prompt a model would get, feeds recorded LLM answers to ``process_llm_response`` (which
sends the real SOAP requests), prints the results (a SOAP fault included), and stops.
"""

from __future__ import annotations

import decimal
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from lxml import etree

from mcs.errors import ToolCallError
from mcs_soap.driver import SoapDriver
from mcs_soap.peer import Context, PeerFault, SoapPeer, element, serve

WSDL = Path(__file__).with_name("calculator.wsdl")
NS = "urn:mcs:demo:calculator"
MODEL = "gpt-4o"
RECORDED_ANSWERS = [
    '{"tool": "Add", "arguments": {"intA": 19, "intB": 23}}',
    'Let me divide: {"tool": "Divide", "arguments": {"dividend": "10", "divisor": "4"}}',
    '{"tool": "Divide", "arguments": {"dividend": "1", "divisor": "0"}}',
]


def _add(request: etree._Element, context: Context) -> etree._Element:
    total = int(request.findtext(f"{{{NS}}}intA") or 0) + int(request.findtext(f"{{{NS}}}intB") or 0)
    return element(f"{{{NS}}}AddResponse", None, element(f"{{{NS}}}AddResult", total))


def _divide(request: etree._Element, context: Context) -> etree._Element:
    divisor = decimal.Decimal(request.findtext(f"{{{NS}}}divisor") or "0")
    if divisor == 0:
        raise PeerFault("Division by zero", client=True)
    quotient = decimal.Decimal(request.findtext(f"{{{NS}}}dividend") or "0") / divisor
    return element(f"{{{NS}}}DivideResponse", None, element(f"{{{NS}}}DivideResult", format(quotient, "f")))


@contextmanager
def serve_calculator() -> Iterator[str]:
    """Serve the demo calculator on a free loopback port; yield its WSDL URL; stop it after."""
    peer = SoapPeer(wsdl=WSDL.read_text(), handlers={"Add": _add, "Divide": _divide})
    with serve(peer) as base:
        yield base + "/?wsdl"


def main() -> None:
    with serve_calculator() as wsdl, SoapDriver(wsdl) as driver:
        print(f"== Demo SOAP service: {wsdl} ==\n")
        print(f"== System prompt for {MODEL} ==\n{driver.get_driver_system_message(MODEL)}\n")
        for answer in RECORDED_ANSWERS:
            print(f"== Recorded LLM output ==\n{answer}\n")
            try:
                result = driver.process_llm_response(answer)
            except ToolCallError as error:
                print(f"== Error for the model ({error.code.value}) ==\n{error.message}\n")
                continue
            print(f"== Result of the real SOAP call ==\n{json.dumps(result, indent=2)}\n")


if __name__ == "__main__":
    main()
