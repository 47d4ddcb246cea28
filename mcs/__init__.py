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


from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names below load on first use (see __getattr__); type checkers see them here
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

#: The module each public name lives in. ``import mcs`` loads none of them: a name's
#: module is imported the first time the name is read (PEP 562), so a process that uses
#: one driver does not pay for pydantic, YAML, asyncio or the parser until it needs them.
_EXPORTS: dict[str, str] = {
    "Audio": "mcs.content",
    "EmbeddedResource": "mcs.content",
    "Image": "mcs.content",
    "AgentContext": "mcs.context",
    "Elicited": "mcs.context",
    "PolicyDecision": "mcs.context",
    "Root": "mcs.context",
    "Sampled": "mcs.context",
    "Session": "mcs.context",
    "CallOutcome": "mcs.driver",
    "DriverMeta": "mcs.driver",
    "MCSDriver": "mcs.driver",
    "ToolDriver": "mcs.driver",
    "ConfigurationError": "mcs.errors",
    "DriverNotFoundError": "mcs.errors",
    "ErrorCode": "mcs.errors",
    "ExecutionError": "mcs.errors",
    "InvalidInputError": "mcs.errors",
    "MCSError": "mcs.errors",
    "MissingDependencyError": "mcs.errors",
    "PolicyDeniedError": "mcs.errors",
    "SessionUnavailableError": "mcs.errors",
    "ToolCallError": "mcs.errors",
    "ToolNotFoundError": "mcs.errors",
    "ToolTimeoutError": "mcs.errors",
    "FunctionPrompt": "mcs.function_prompts",
    "prompt": "mcs.function_prompts",
    "FunctionResource": "mcs.function_resources",
    "resource": "mcs.function_resources",
    "FunctionDriver": "mcs.functions",
    "FunctionTool": "mcs.functions",
    "tool": "mcs.functions",
    "Interface": "mcs.interfaces",
    "parse_tool_calls": "mcs.parsing",
    "ExecutionEvent": "mcs.pipeline",
    "Invocation": "mcs.pipeline",
    "available_drivers": "mcs.registry",
    "load_driver": "mcs.registry",
    "Toolbox": "mcs.toolbox",
    "Tool": "mcs.tools",
    "ToolCall": "mcs.tools",
}


if not TYPE_CHECKING:  # type checkers see the names imported above, so a misspelt one is an error

    def __getattr__(name: str) -> Any:
        """Load a public name's module on first use and keep the name here (PEP 562)."""
        import importlib.util

        module_name = _EXPORTS.get(name)
        if module_name is None:
            # a submodule (`mcs.parsing`), importable as an attribute as before exports were lazy
            if name.startswith("_") or importlib.util.find_spec(f"mcs.{name}") is None:
                raise AttributeError(f"module 'mcs' has no attribute {name!r}")
            return importlib.import_module(f"mcs.{name}")
        value = getattr(importlib.import_module(module_name), name)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
