"""MCS SOAP driver: any WSDL service (SOAP 1.1 and 1.2) as LLM tools, XML-safe.

    import mcs
    driver = mcs.load_driver("soap", wsdl="CountryInfoService.wsdl")

or ``SoapDriver(wsdl=...)`` directly. See :class:`SoapDriver` for the options.
"""

from mcs_soap._cache import clear_memory as clear_wsdl_cache
from mcs_soap._loading import WsdlError
from mcs_soap.driver import SoapDriver

__all__ = ["SoapDriver", "WsdlError", "clear_wsdl_cache"]
