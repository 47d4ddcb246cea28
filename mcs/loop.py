"""A small LLM loop: ask the model, run its tool calls, feed the results back, repeat.

    from mcs.loop import run_conversation

    def llm(messages):                      # any callable: OpenAI, Anthropic, Ollama, a test
        reply = client.chat.completions.create(model="qwen2.5", messages=messages)
        return reply.choices[0].message.content

    result = run_conversation(llm, driver, [{"role": "user", "content": "Weather in Paris?"}],
                              model="qwen2.5")
    print(result.answer)

Each turn calls ``llm(messages)`` once and hands its output to the driver. The output may
be text or a provider's message (a dict, or an SDK object with ``model_dump()``). What a
caller can rely on:

* The driver's system message (for ``model``) is the first message, unless
  ``system_message=False`` (native function calling, where tools travel separately).
* Every call in the output gets an answer the model can act on: its result, or its
  error (``{"error": CODE, "message": ...}``) when it was refused or failed, including
  ``TOOL_NOT_FOUND`` for a made-up tool beside real ones (listed after the others). Errors never end the
  conversation; the model gets to correct itself.
* A huge result is cut to ``max_result_chars`` for the model (the context window is
  finite); the outcomes keep it whole.
* Results go back as OpenAI-style ``{"role": "tool", "tool_call_id": ...}`` messages when
  every call in the output carried an id, else as one user message holding the results
  as JSON.
* An output that *tried* to call but holds no call that can run is answered, not
  taken for the final answer: a call cut off (a token limit) or too damaged to read
  gets ``INVALID_INPUT`` saying so and that nothing ran; a call naming a tool the
  driver does not list gets ``TOOL_NOT_FOUND`` with the close names ("did you mean
  add?"). See :func:`attempted_calls`.
* The loop stops when the output holds no call and no attempted one (the MCS chaining
  rule: the driver returns the output unchanged, it is the answer) or after
  ``max_turns`` model calls.
* The caller's ``messages`` list is not modified.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from mcs.cli import to_jsonable
from mcs.context import AgentContext
from mcs.driver import CallOutcome, MCSDriver, ToolDriver
from mcs.errors import InvalidInputError, ToolCallError
from mcs.parsing import parse_tool_calls
from mcs.parsing.attempts import DamagedCall, find_damaged_calls
from mcs.tools import ToolCall

__all__ = ["ConversationResult", "arun_conversation", "attempted_calls", "run_conversation"]

Message = dict[str, Any]
LLM = Callable[[list[Message]], Any]
AsyncLLM = Callable[[list[Message]], Awaitable[Any] | Any]
StopReason = Literal["answer", "max_turns"]


@dataclass
class ConversationResult:
    """How a conversation ended.

    ``answer`` is the model's last output as text (``None`` if it never answered
    without a call); ``output`` is that output as the model returned it. ``messages``
    is the whole transcript, system message included. ``outcomes`` lists every call
    the loop ran, in order; ``turns`` counts model calls.
    """

    answer: str | None
    output: Any
    messages: list[Message]
    outcomes: list[CallOutcome] = field(default_factory=list)
    turns: int = 0
    stopped: StopReason = "answer"


def _normalise(output: Any) -> Any:
    """SDK objects (pydantic models with ``model_dump``) become plain dicts."""
    dump = getattr(output, "model_dump", None)
    if callable(dump) and not isinstance(output, Mapping):
        return dump(exclude_none=True)
    return output


def _assistant_message(output: Any) -> Message:
    if isinstance(output, Mapping):
        message = dict(output)
        message.setdefault("role", "assistant")
        return message
    return {"role": "assistant", "content": output if isinstance(output, str) else _to_json(output)}


def _text_of(output: Any) -> str | None:
    if isinstance(output, str):
        return output
    if isinstance(output, Mapping):
        content = output.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):  # content parts (Anthropic, OpenAI multimodal)
            texts = [p["text"] for p in content if isinstance(p, Mapping) and isinstance(p.get("text"), str)]
            return "".join(texts) if texts else None
    return None


def _to_json(value: Any) -> str:
    return json.dumps(to_jsonable(value), ensure_ascii=False)


def _payload(outcome: CallOutcome) -> Any:
    return outcome.result if outcome.error is None else outcome.error.to_dict()


def _capped(text: str, limit: int | None) -> str:
    if limit is None or len(text) <= limit:
        return text
    return text[:limit] + f"\n[... cut: the result is {len(text):,} characters, only the first {limit:,} are shown]"


def _result_messages(outcomes: Sequence[CallOutcome], limit: int | None) -> list[Message]:
    if outcomes and all(o.call.id for o in outcomes):
        return [
            {"role": "tool", "tool_call_id": o.call.id, "content": _capped(_to_json(_payload(o)), limit)}
            for o in outcomes
        ]
    results = [{"tool": o.call.name, **({"result": o.result} if o.ok else _payload(o))} for o in outcomes]
    return [{"role": "user", "content": "Tool results:\n" + _capped(_to_json(results), limit)}]


def _start(driver: MCSDriver, messages: Sequence[Mapping[str, Any]], model: str | None,
           system_message: bool) -> list[Message]:
    transcript = [dict(m) for m in messages]
    if system_message:
        transcript.insert(0, {"role": "system", "content": driver.get_driver_system_message(model)})
    return transcript


def _with_missing(driver: ToolDriver, outcomes: list[CallOutcome], calls: list[ToolCall]) -> list[CallOutcome]:
    """Add ``TOOL_NOT_FOUND`` for calls beside the driver's own that name no tool of it.

    A model that made up a tool should hear so, and with native calls every call id
    needs an answer.
    """
    missing = [c for c in calls if driver.get_tool(c.name) is None and all(o.call != c for o in outcomes)]
    return outcomes + [_not_found(driver, c) for c in missing]


def _not_found(driver: ToolDriver, call: ToolCall) -> CallOutcome:
    try:
        driver.prepare(call)
    except ToolCallError as error:
        return CallOutcome(call, error=error)
    raise AssertionError(f"{call.name!r} was expected to be unknown")  # pragma: no cover


def _bare_outcomes(calls: list[ToolCall], result: Any) -> list[CallOutcome]:
    """Outcomes for a driver that implements only the bare contract (one result or a list)."""
    if len(calls) > 1 and isinstance(result, list) and len(result) == len(calls):
        return [CallOutcome(call, result=item) for call, item in zip(calls, result, strict=True)]
    call = calls[0] if len(calls) == 1 else ToolCall(name="(response)")
    return [CallOutcome(call, result=result)]


def _bare_error(calls: list[ToolCall], error: ToolCallError) -> list[CallOutcome]:
    call = calls[0] if len(calls) == 1 else ToolCall(name=error.tool or "(response)")
    return [CallOutcome(call, error=error)]


def attempted_calls(driver: MCSDriver, output: Any) -> list[CallOutcome]:
    """Error outcomes for the calls ``output`` tried to make that cannot run.

    For a reply the driver handed back unchanged (the MCS chaining rule): a call cut off
    or too damaged to read gets ``INVALID_INPUT`` saying so
    (:func:`mcs.parsing.attempts.find_damaged_calls`), and, when the driver lists its
    tools, an explicit call naming none of them gets ``TOOL_NOT_FOUND`` with the close
    names. ``[]`` means the reply is a true answer.
    """
    outcomes = [_damaged(damage) for damage in find_damaged_calls(output)]
    if isinstance(driver, ToolDriver):
        calls = parse_tool_calls(output, known_names=driver._known_names())
        outcomes += [_not_found(driver, c) for c in calls if driver.get_tool(c.name) is None]
    return outcomes


def _damaged(damage: DamagedCall) -> CallOutcome:
    call = ToolCall(name=damage.name or "", id=damage.id)
    return CallOutcome(call, error=InvalidInputError(damage.message, tool=damage.name))


def _unanswered(output: Any, outcomes: list[CallOutcome]) -> list[CallOutcome]:
    """Answers for provider calls beside the ones that ran whose arguments were unreadable."""
    answered = {o.call.id for o in outcomes}
    return [_damaged(d) for d in find_damaged_calls(output) if d.id and d.id not in answered]


def _run_sync(driver: MCSDriver, output: Any, context: AgentContext) -> list[CallOutcome]:
    calls = parse_tool_calls(output)
    if isinstance(driver, ToolDriver):
        outcomes = driver.run_llm_response(output, context=context)
        if outcomes:
            outcomes = _with_missing(driver, outcomes, calls)
            return outcomes + _unanswered(output, outcomes)
    # No call for its tools: the driver still gets the output through the bare contract
    # (a toolbox chains it to members without a tool list; others hand it back unchanged).
    try:
        result = driver.process_llm_response(output, context=context)
    except ToolCallError as error:
        return _bare_error(calls, error)
    return attempted_calls(driver, output) if result is output else _bare_outcomes(calls, result)


async def _run_async(driver: MCSDriver, output: Any, context: AgentContext) -> list[CallOutcome]:
    calls = parse_tool_calls(output)
    if isinstance(driver, ToolDriver):
        outcomes = await driver.arun_llm_response(output, context=context)
        if outcomes:
            outcomes = _with_missing(driver, outcomes, calls)
            return outcomes + _unanswered(output, outcomes)
    try:
        result = await driver.aprocess_llm_response(output, context=context)
    except ToolCallError as error:
        return _bare_error(calls, error)
    return attempted_calls(driver, output) if result is output else _bare_outcomes(calls, result)


class _Conversation:
    """What both loops share; each turn: ask the model, record its output, run, feed back."""

    def __init__(
        self, driver: MCSDriver, messages: Sequence[Mapping[str, Any]], *, model: str | None,
        max_turns: int, context: AgentContext | None, system_message: bool, max_result_chars: int | None,
    ) -> None:
        if max_turns < 1:
            raise ValueError("max_turns must be at least 1")
        self.base = context or AgentContext(model=model)
        self.transcript = _start(driver, messages, model, system_message)
        self.limit = max_result_chars
        self.outcomes: list[CallOutcome] = []
        self.output: Any = None

    def heard(self, output: Any, turn: int) -> AgentContext:
        """Record the model's output; returns the context for this turn's calls."""
        self.output = _normalise(output)
        self.transcript.append(_assistant_message(self.output))
        return self.base.with_request_id(f"{self.base.request_id}.t{turn}")

    def ran(self, outcomes: list[CallOutcome], turn: int) -> ConversationResult | None:
        """Feed the outcomes back, or end the conversation when nothing ran."""
        if not outcomes:
            return self.result(turn, "answer")
        self.outcomes.extend(outcomes)
        self.transcript.extend(_result_messages(outcomes, self.limit))
        return None

    def result(self, turns: int, stopped: StopReason) -> ConversationResult:
        answer = _text_of(self.output) if stopped == "answer" else None
        return ConversationResult(answer, self.output, self.transcript, self.outcomes, turns, stopped)


def run_conversation(
    llm: LLM,
    driver: MCSDriver,
    messages: Sequence[Mapping[str, Any]],
    *,
    model: str | None = None,
    max_turns: int = 8,
    context: AgentContext | None = None,
    system_message: bool = True,
    max_result_chars: int | None = 20_000,
) -> ConversationResult:
    """Run a conversation until the model answers without a tool call (or ``max_turns``).

    ``llm`` receives the whole transcript (OpenAI-style message dicts) and returns the
    model's output. ``context`` identifies the agent to the driver's policies and hooks.
    A result longer than ``max_result_chars`` (as JSON) is cut for the model, with a note
    saying so; ``outcomes`` keep it whole. Exceptions raised by ``llm`` itself propagate;
    tool errors never do.
    """
    talk = _Conversation(driver, messages, model=model, max_turns=max_turns, context=context,
                         system_message=system_message, max_result_chars=max_result_chars)
    for turn in range(1, max_turns + 1):
        turn_context = talk.heard(llm(list(talk.transcript)), turn)
        ended = talk.ran(_run_sync(driver, talk.output, turn_context), turn)
        if ended is not None:
            return ended
    return talk.result(max_turns, "max_turns")


async def arun_conversation(
    llm: AsyncLLM,
    driver: MCSDriver,
    messages: Sequence[Mapping[str, Any]],
    *,
    model: str | None = None,
    max_turns: int = 8,
    context: AgentContext | None = None,
    system_message: bool = True,
    max_result_chars: int | None = 20_000,
) -> ConversationResult:
    """Async twin of :func:`run_conversation`; ``llm`` may be a coroutine function.

    Tools run through the driver's async path (``arun_llm_response`` / ``aprocess_llm_response``),
    so the event loop is never blocked by a tool.
    """
    talk = _Conversation(driver, messages, model=model, max_turns=max_turns, context=context,
                         system_message=system_message, max_result_chars=max_result_chars)
    for turn in range(1, max_turns + 1):
        reply = llm(list(talk.transcript))
        turn_context = talk.heard(await reply if inspect.isawaitable(reply) else reply, turn)
        ended = talk.ran(await _run_async(driver, talk.output, turn_context), turn)
        if ended is not None:
            return ended
    return talk.result(max_turns, "max_turns")
