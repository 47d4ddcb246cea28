"""RFC-0001 tools: the ``@tool`` decorator, its rules, and immutable :class:`ToolMetadata`.

    class CustomerRequest(BaseModel):
        customer_id: str

    class CustomerResponse(BaseModel):
        customer_id: str
        status: str

    @tool(name="get_customer", timeout_ms=500)
    def get_customer(req: CustomerRequest, ctx: AgentContext) -> CustomerResponse: ...

The rules of RFC-0001 section 8 are checked when the decorator runs, so a tool that
breaks one never reaches a server; the :class:`ToolDefinitionError` names the rule.
A decorated function stays callable as the plain function.
"""

from __future__ import annotations

import inspect
import json
import math
import sys
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Generic, ParamSpec, TypeVar, get_type_hints

import pydantic_core
from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError

from mcs.context import AgentContext, is_context_annotation
from mcs.errors import ConfigurationError, ExecutionError, InvalidInputError
from mcs.tools import TOOL_NAME_PATTERN

P = ParamSpec("P")
R = TypeVar("R")
_MODEL_VALIDATE = BaseModel.model_validate.__func__  # type: ignore[attr-defined]


class ToolDefinitionError(ConfigurationError, TypeError):
    """A function given to ``@tool`` (or a server) breaks an RFC-0001 rule.

    ``rule`` is a short stable identifier (``"synchronous"``, ``"input-model"``,
    ``"output-model"``, ``"name"``, ``"timeout"``, ``"idempotent"``, ``"signature"``,
    ``"duplicate-name"``, ``"not-a-tool"``); the message says what was found.
    """

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"RFC-0001 rule '{rule}': {message}")
        self.rule = rule


class _FrozenDict(dict[str, Any]):
    """A ``dict`` that refuses every mutation (the schemas inside :class:`ToolMetadata`)."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("ToolMetadata is immutable; copy it (dict(...)) to change a schema")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _refuse

    def __copy__(self) -> _FrozenDict:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> _FrozenDict:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (_FrozenDict, (dict(self),))

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(json.dumps(self, sort_keys=True, default=list))


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return _FrozenDict({str(k): _freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value


def _freeze_schema(value: dict[str, Any]) -> dict[str, Any]:
    frozen: dict[str, Any] = _freeze(value)
    return frozen


FrozenSchema = Annotated[dict[str, Any], AfterValidator(_freeze_schema)]


class ToolMetadata(BaseModel):
    """What discovery says about one tool (RFC-0001 section 9). Immutable, deeply.

    Assigning a field raises a ``ValidationError``; the schema dicts refuse item
    assignment, and their nested lists are tuples. ``model_dump(mode="json")`` gives
    plain JSON data, which is what ``GET /mcp/capabilities`` returns.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str | None
    input_schema: FrozenSchema
    output_schema: FrozenSchema
    timeout_ms: int
    idempotent: bool


def _schema_of(model: type[BaseModel], rule: str, name: str) -> dict[str, Any]:
    try:
        return model.model_json_schema()
    except Exception as exc:
        raise ToolDefinitionError(
            rule, f"{name}: no JSON Schema can be made for {model.__name__} ({exc})"
        ) from None


def _is_model(annotation: Any) -> bool:
    return inspect.isclass(annotation) and issubclass(annotation, BaseModel)


class ServerTool(Generic[P, R]):
    """A function that passed the RFC-0001 rules, with its :class:`ToolMetadata`.

    Calling it calls the plain function. :meth:`invoke` is what a server runs: it
    builds the input model, injects the :class:`AgentContext` when the function
    declares one, and checks that the result is the declared output model.
    """

    def __init__(
        self,
        func: Callable[P, R],
        *,
        name: str,
        description: str | None = None,
        timeout_ms: int = 1000,
        idempotent: bool = True,
        localns: Mapping[str, Any] | None = None,
    ) -> None:
        label = getattr(func, "__qualname__", repr(func))
        if not isinstance(name, str) or not TOOL_NAME_PATTERN.match(name):
            raise ToolDefinitionError(
                "name", f"{label}: name {name!r} must match {TOOL_NAME_PATTERN.pattern}"
            )
        if isinstance(timeout_ms, bool) or not isinstance(timeout_ms, int) or timeout_ms <= 0:
            raise ToolDefinitionError(
                "timeout", f"{name}: timeout_ms must be a positive integer, got {timeout_ms!r}"
            )
        if not isinstance(idempotent, bool):
            raise ToolDefinitionError(
                "idempotent", f"{name}: idempotent must be True or False, got {idempotent!r}"
            )
        if not callable(func):
            raise ToolDefinitionError("signature", f"{name}: {func!r} is not callable")
        if (
            inspect.iscoroutinefunction(func)
            or inspect.isasyncgenfunction(func)
            or inspect.isgeneratorfunction(func)
        ):
            raise ToolDefinitionError(
                "synchronous",
                f"{name}: tools MUST be synchronous in v1.0 (section 8); "
                f"{label} is a coroutine or generator function",
            )
        try:
            # ``localns``: the namespace the decorator ran in, so models defined inside a
            # function resolve under ``from __future__ import annotations`` too.
            hints = get_type_hints(func, localns=dict(localns) if localns else None)
        except Exception as exc:
            raise ToolDefinitionError(
                "signature", f"{name}: the type hints of {label} cannot be resolved ({exc})"
            ) from None
        self._context_param: str | None = None
        self._input_param: str | None = None
        input_model: type[BaseModel] | None = None
        for param in inspect.signature(func).parameters.values():
            annotation = hints.get(param.name)
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise ToolDefinitionError(
                    "signature", f"{name}: {label} cannot take *args or **kwargs"
                )
            if is_context_annotation(annotation):
                if self._context_param is not None:
                    raise ToolDefinitionError(
                        "signature", f"{name}: {label} declares AgentContext twice"
                    )
                self._context_param = param.name
            elif _is_model(annotation) and input_model is None:
                self._input_param = param.name
                input_model = annotation
            elif param.default is inspect.Parameter.empty:
                raise ToolDefinitionError(
                    "input-model",
                    f"{name}: input MUST be one Pydantic BaseModel (section 8); parameter "
                    f"{param.name!r} of {label} is annotated {annotation!r}",
                )
        if input_model is None:
            raise ToolDefinitionError(
                "input-model",
                f"{name}: input MUST be a Pydantic BaseModel (section 8); "
                f"{label} has no parameter annotated with a BaseModel subclass",
            )
        output_model = hints.get("return")
        if not (inspect.isclass(output_model) and issubclass(output_model, BaseModel)):
            raise ToolDefinitionError(
                "output-model",
                f"{name}: output MUST be a Pydantic BaseModel (section 8); "
                f"{label} is annotated to return {output_model!r}",
            )
        self.func = func
        self.input_model: type[BaseModel] = input_model
        self.output_model: type[BaseModel] = output_model
        # Whether the output model keeps pydantic's own model_validate and model_dump: its
        # results are then checked by calling the validator and serializer those call
        # (with the same arguments), without their Python-level wrappers.
        self._pydantic_output = (
            getattr(output_model.model_validate, "__func__", None) is _MODEL_VALIDATE
            and output_model.model_dump is BaseModel.model_dump
        )
        doc = inspect.getdoc(func)
        self.metadata = ToolMetadata(
            name=name,
            description=description if description is not None else (doc or None),
            input_schema=_schema_of(input_model, "input-model", name),
            output_schema=_schema_of(output_model, "output-model", name),
            timeout_ms=timeout_ms,
            idempotent=idempotent,
        )

    @property
    def name(self) -> str:
        return self.metadata.name

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.func(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<ServerTool {self.name!r} of {getattr(self.func, '__qualname__', self.func)!r}>"

    def invoke(self, arguments: dict[str, Any], context: AgentContext, *, strict: bool = True) -> dict[str, Any]:
        """Run the function; returns the result as JSON-ready data.

        ``strict`` (the RFC-0001 wire's rule, section 3) builds the input model from the
        arguments as JSON in Pydantic's strict mode: ``"5"`` is not an ``int``, ``"a"`` is
        not a ``list``. ``strict=False`` lets Pydantic convert in its lax mode.

        Raises:
            InvalidInputError: ``arguments`` do not build the input model.
            ExecutionError: the function returned something other than a valid
                instance of its output model.
        """
        try:
            if strict:
                # pydantic-core writes the JSON several times faster than json.dumps
                model = self.input_model.model_validate_json(
                    pydantic_core.to_json(arguments, inf_nan_mode="constants"), strict=True)
            else:
                model = self.input_model.model_validate(arguments)
        except (ValidationError, pydantic_core.PydanticSerializationError) as exc:
            # Arguments as decoded from a request are always JSON: pydantic-core fails to
            # write or read them back only past its nesting limit.
            problems = _problems(exc) if isinstance(exc, ValidationError) and not _too_deep(exc) else (
                "they are nested too deeply")
            raise InvalidInputError(f"Invalid arguments for {self.name}: {problems}.", tool=self.name) from None
        kwargs: dict[str, Any] = {str(self._input_param): model}
        if self._context_param is not None:
            kwargs[self._context_param] = context
        result = self.func(**kwargs)  # type: ignore[call-arg]
        return self._checked_output(result)

    def _checked_output(self, result: Any) -> dict[str, Any]:
        expected = self.output_model.__name__
        if not isinstance(result, self.output_model):
            raise ExecutionError(
                f"{self.name} returned {type(result).__name__}, not its declared output "
                f"model {expected}.",
                tool=self.name,
            )
        # Re-validate: a model built with model_construct() or mutated after creation
        # can hold values its own schema forbids.
        model = self.output_model
        direct = self._pydantic_output and type(result) is model
        try:
            if direct:  # model.model_validate(result.model_dump(warnings=False))
                serializer = model.__pydantic_serializer__
                checked = model.__pydantic_validator__.validate_python(serializer.to_python(result, warnings=False))
            else:
                checked = model.model_validate(result.model_dump(warnings=False))
        except ValidationError as exc:
            raise ExecutionError(
                f"{self.name} returned a {expected} that does not match its output schema: "
                f"{_problems(exc)}.",
                tool=self.name,
            ) from None
        data: dict[str, Any] = (serializer.to_python(checked, mode="json") if direct
                                else checked.model_dump(mode="json"))
        if not _finite(data):
            raise ExecutionError(
                f"{self.name} returned NaN or Infinity, which JSON cannot carry.", tool=self.name
            )
        return data


_PLAIN = frozenset({str, int, bool, type(None)})


def _finite(value: Any) -> bool:
    """Whether no float in ``value`` (JSON-ready data) is NaN or infinite. The exact types
    JSON data is made of are told apart by one type lookup; anything else (a subclass, a
    tuple) takes the ``isinstance`` checks."""
    kind = type(value)
    if kind is dict:
        items: Any = value.values()
    elif kind is list:
        items = value
    elif kind in _PLAIN:
        return True
    elif isinstance(value, float):
        return math.isfinite(value)
    elif isinstance(value, dict):
        items = value.values()
    elif isinstance(value, list | tuple):
        items = value
    else:
        return True
    for item in items:
        kind = type(item)
        if kind is float:
            if not math.isfinite(item):
                return False
        elif kind not in _PLAIN and not _finite(item):
            return False
    return True


def _too_deep(exc: ValidationError) -> bool:
    """Whether pydantic-core refused the arguments' JSON text itself (its recursion limit)."""
    return any(error["type"] == "json_invalid" for error in exc.errors())


def _problems(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors()[:5]:
        where = ".".join(map(str, error["loc"])) or "(root)"
        parts.append(f"field '{where}': {error['msg']}")
    more = len(exc.errors()) - 5
    if more > 0:
        parts.append(f"and {more} more")
    return "; ".join(parts)


def tool(
    *,
    name: str,
    description: str | None = None,
    timeout_ms: int = 1000,
    idempotent: bool = True,
) -> Callable[[Callable[P, R]], ServerTool[P, R]]:
    """Declare an RFC-0001 tool (section 8). Register it with ``server.add_tool``.

    Raises:
        ToolDefinitionError: the function breaks a rule (synchronous, one Pydantic
            input model, a Pydantic output model, a valid name, a positive timeout).
    """

    def wrap(func: Callable[P, R]) -> ServerTool[P, R]:
        return ServerTool(
            func, name=name, description=description, timeout_ms=timeout_ms,
            idempotent=idempotent, localns=sys._getframe(1).f_locals,
        )

    return wrap
