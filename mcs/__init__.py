"""MCS: the Model Context Standard for Python.

One small contract lets any LLM use any existing system: a driver describes its tools
(``get_function_description``), gives a system prompt for the model family
(``get_driver_system_message``) and runs what the model asked for
(``process_llm_response``). Only the names in ``__all__`` are public.

``mcs`` shares its name with the MCS reference SDK, whose distributions install
``mcs.driver.<name>`` and ``mcs.adapter.<name>`` as namespace packages: ``__path__`` is
extended over every ``mcs`` folder on ``sys.path``, so both load in one environment.
"""

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)


from mcs.content import Audio, EmbeddedResource, Image
from mcs.context import AgentContext, Elicited, PolicyDecision, Root, Sampled, Session
from mcs.driver import CallOutcome, DriverMeta, MCSDriver, ToolDriver
from mcs.errors import (
    ConfigurationError,
    DriverNotFoundError,
    ErrorCode,
    ExecutionError,
    InvalidInputError,
    MCSError,
    MissingDependencyError,
    PolicyDeniedError,
    SessionUnavailableError,
    ToolCallError,
    ToolNotFoundError,
    ToolTimeoutError,
)
from mcs.function_prompts import FunctionPrompt, prompt
from mcs.function_resources import FunctionResource, resource
from mcs.functions import FunctionDriver, FunctionTool, tool
from mcs.interfaces import Interface
from mcs.parsing import parse_tool_calls
from mcs.pipeline import ExecutionEvent, Invocation
from mcs.registry import available_drivers, load_driver
from mcs.toolbox import Toolbox
from mcs.tools import Tool, ToolCall

__version__ = "0.1.0"

__all__ = [
    "AgentContext",
    "Audio",
    "CallOutcome",
    "ConfigurationError",
    "DriverMeta",
    "DriverNotFoundError",
    "Elicited",
    "EmbeddedResource",
    "ErrorCode",
    "ExecutionError",
    "ExecutionEvent",
    "FunctionDriver",
    "FunctionPrompt",
    "FunctionResource",
    "FunctionTool",
    "Image",
    "Interface",
    "InvalidInputError",
    "Invocation",
    "MCSDriver",
    "MCSError",
    "MissingDependencyError",
    "PolicyDecision",
    "PolicyDeniedError",
    "Root",
    "Sampled",
    "Session",
    "SessionUnavailableError",
    "Tool",
    "ToolCall",
    "ToolCallError",
    "ToolDriver",
    "ToolNotFoundError",
    "ToolTimeoutError",
    "Toolbox",
    "available_drivers",
    "load_driver",
    "parse_tool_calls",
    "prompt",
    "resource",
    "tool",
]
