"""MCS REST driver: any OpenAPI 3.0/3.1 or Swagger 2.0 API as LLM tools.

    import mcs
    driver = mcs.load_driver("rest", spec="petstore.yaml", base_url="http://127.0.0.1:8000")

or ``RestDriver(spec=...)`` directly. See :class:`RestDriver` for the options.
"""

from mcs.content import Binary as BinaryContent
from mcs_rest._check import SpecProblem, SpecReport
from mcs_rest._spec import SpecError
from mcs_rest.driver import RestDriver

__all__ = ["BinaryContent", "RestDriver", "SpecError", "SpecProblem", "SpecReport"]
