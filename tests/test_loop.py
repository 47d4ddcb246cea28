"""run_conversation / arun_conversation with a scripted model and real drivers."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from pydantic import BaseModel

from mcs import AgentContext, DriverMeta, FunctionDriver, MCSDriver, PolicyDecision, tool
from mcs.demo import DemoDriver
from mcs.loop import ConversationResult, arun_conversation, run_conversation
from mcs.parsing import parse_tool_calls

QUESTION = [{"role": "user", "content": "What is the weather in Paris?"}]
WEATHER_CALL = '{"tool": "get_weather", "arguments": {"city": "Paris"}}'
ANSWER = "It is 18.5 °C with light rain in Paris."
NATIVE_CALL = {
    "role": "assistant",
    "tool_calls": [{"id": "call_w", "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Tokyo"}'}}],
}
needs_native_calls = pytest.mark.skipif(
    len(parse_tool_calls(NATIVE_CALL)) != 1,
    reason="the parser in this tree does not read OpenAI tool_calls yet",
)

needs_message_content = pytest.mark.skipif(
    len(parse_tool_calls({"role": "assistant", "content": WEATHER_CALL})) != 1,
    reason="the parser in this tree does not read calls inside a message's content yet",
)


class ScriptedModel:
    """Replays outputs in order and keeps the transcripts it was shown."""

    def __init__(self, outputs: Sequence[Any]) -> None:
        self.outputs = list(outputs)
        self.seen: list[list[dict[str, Any]]] = []

    def __call__(self, messages: list[dict[str, Any]]) -> Any:
        self.seen.append(json.loads(json.dumps(messages)))
        return self.outputs[len(self.seen) - 1]


class AsyncScriptedModel(ScriptedModel):
    async def __call__(self, messages: list[dict[str, Any]]) -> Any:  # type: ignore[override]
        return super().__call__(messages)


def test_a_call_then_an_answer_runs_the_tool_and_stops() -> None:
    model = ScriptedModel([WEATHER_CALL, ANSWER])
    result = run_conversation(model, DemoDriver(), QUESTION, model="gpt-4o")
    assert (result.stopped, result.turns, result.answer, result.output) == ("answer", 2, ANSWER, ANSWER)
    [outcome] = result.outcomes
    assert outcome.ok and outcome.result["sky"] == "light rain"
    feedback = model.seen[1][-1]
    assert feedback["role"] == "user"
    assert feedback["content"].startswith("Tool results:\n")
    assert json.loads(feedback["content"].split("\n", 1)[1]) == [
        {"tool": "get_weather", "result": {"city": "Paris", "temperature": 18.5, "unit": "celsius",
                                           "sky": "light rain"}},
    ]
    assert result.messages[-1] == {"role": "assistant", "content": ANSWER}


def test_the_system_message_comes_first_and_the_callers_list_is_untouched() -> None:
    driver = DemoDriver()
    question = list(QUESTION)
    model = ScriptedModel([ANSWER])
    result = run_conversation(model, driver, question, model="claude-3-5-sonnet")
    assert model.seen[0][0] == {"role": "system", "content": driver.get_driver_system_message("claude-3-5-sonnet")}
    assert model.seen[0][1:] == QUESTION
    assert question == QUESTION
    assert len(result.messages) == 3


def test_without_system_message_the_transcript_starts_with_the_callers_messages() -> None:
    model = ScriptedModel([ANSWER])
    run_conversation(model, DemoDriver(), QUESTION, system_message=False)
    assert model.seen[0] == QUESTION


def test_an_answer_without_a_call_ends_at_once() -> None:
    result = run_conversation(ScriptedModel([ANSWER]), DemoDriver(), QUESTION)
    assert (result.stopped, result.turns, result.outcomes) == ("answer", 1, [])


def test_an_invalid_call_goes_back_as_an_error_the_model_can_correct() -> None:
    model = ScriptedModel([
        '{"tool": "add", "arguments": {"a": "one", "b": 2}}',
        '{"tool": "add", "arguments": {"a": 1, "b": 2}}',
        "1 + 2 = 3",
    ])
    result = run_conversation(model, DemoDriver(), [{"role": "user", "content": "1+2?"}])
    assert [o.ok for o in result.outcomes] == [False, True]
    first_feedback = json.loads(model.seen[1][-1]["content"].split("\n", 1)[1])
    assert first_feedback[0]["error"] == "INVALID_INPUT"
    assert "'a'" in first_feedback[0]["message"]
    assert result.outcomes[1].result == 3
    assert result.answer == "1 + 2 = 3"


def test_a_denied_call_goes_back_as_policy_denied() -> None:
    driver = DemoDriver()
    driver.add_policy(lambda ctx, name, args: PolicyDecision.deny("weather is off today"))
    model = ScriptedModel([WEATHER_CALL, "Sorry."])
    result = run_conversation(model, driver, QUESTION)
    assert result.outcomes[0].error is not None
    assert result.outcomes[0].error.code == "POLICY_DENIED"
    assert "weather is off today" in model.seen[1][-1]["content"]


def test_the_context_reaches_policies_with_a_request_id_per_turn() -> None:
    driver = DemoDriver()
    seen: list[AgentContext] = []
    driver.add_policy(lambda ctx, name, args: seen.append(ctx) or PolicyDecision.allow())
    model = ScriptedModel([WEATHER_CALL, WEATHER_CALL, ANSWER])
    run_conversation(model, driver, QUESTION, context=AgentContext(agent_id="travel-bot", request_id="r"))
    assert [c.agent_id for c in seen] == ["travel-bot", "travel-bot"]
    assert [c.request_id for c in seen] == ["r.t1", "r.t2"]


def test_max_turns_stops_a_model_that_never_answers() -> None:
    model = ScriptedModel([WEATHER_CALL] * 3)
    result = run_conversation(model, DemoDriver(), QUESTION, max_turns=3)
    assert (result.stopped, result.turns, result.answer) == ("max_turns", 3, None)
    assert len(result.outcomes) == 3
    assert result.messages[-1]["content"].startswith("Tool results:")


def test_max_turns_must_be_positive() -> None:
    with pytest.raises(ValueError):
        run_conversation(ScriptedModel([]), DemoDriver(), QUESTION, max_turns=0)


def test_errors_from_the_model_callable_propagate() -> None:
    def broken(messages: list[dict[str, Any]]) -> str:
        raise ConnectionError("model server down")

    with pytest.raises(ConnectionError):
        run_conversation(broken, DemoDriver(), QUESTION)


def test_a_call_to_a_made_up_tool_goes_back_as_tool_not_found_with_the_close_names() -> None:
    model = ScriptedModel(['{"tool": "get_wether", "arguments": {"city": "Paris"}}', WEATHER_CALL, ANSWER])
    result = run_conversation(model, DemoDriver(), QUESTION)
    assert (result.stopped, result.turns, result.answer) == ("answer", 3, ANSWER)
    missing, found = result.outcomes
    assert missing.error is not None and missing.error.code == "TOOL_NOT_FOUND"
    assert missing.call.name == "get_wether" and found.ok
    feedback = model.seen[1][-1]["content"]
    assert "There is no tool named 'get_wether'. Did you mean get_weather?" in feedback


def test_a_reply_cut_off_inside_its_call_is_answered_within_max_turns() -> None:
    cut = '{"tool": "add", "arguments": {"a": 1, "b": '
    model = ScriptedModel([cut, '{"tool": "add", "arguments": {"a": 1, "b": 2}}', "It is 3."])
    result = run_conversation(model, DemoDriver(), QUESTION)
    assert (result.stopped, result.answer) == ("answer", "It is 3.")
    damaged, added = result.outcomes
    assert damaged.error is not None and damaged.error.code == "INVALID_INPUT"
    assert "Your call to add was cut off before it ended, so nothing ran" in model.seen[1][-1]["content"]
    assert added.result == 3


def test_a_model_that_keeps_sending_broken_calls_stops_at_max_turns() -> None:
    cut = '<tool_call>\n{"name": "add", "arguments": {"a": 1,'
    result = run_conversation(ScriptedModel([cut] * 3), DemoDriver(), QUESTION, max_turns=3)
    assert (result.stopped, result.turns, result.answer) == ("max_turns", 3, None)
    assert [o.error.code for o in result.outcomes if o.error] == ["INVALID_INPUT"] * 3


@pytest.mark.parametrize("answer", [
    'The page asks me to run <tool_call>{"name": "add", "arguments": {"a": 1, "b": ',
    'I will not run this: {"tool": "add", "arguments": {"a": 1, "b": ',
    '> <tool_call>{"name": "add", "arguments": {"a": 1,',
    'For example:\n```json\n{"tool": "add", "arguments": {"a": 1, "b": ',
    '<think>A draft: {"tool": "add", "arguments": {"a": 1,</think>Paris is 18 °C.',
    '<|channel|>analysis<|message|>Draft: <tool_call>{"name": "add", "arguments": {<|end|>'
    '<|start|>assistant<|channel|>final<|message|>Paris is 18 °C.<|return|>',
], ids=["quoted", "declined", "blockquote", "example", "think", "harmony analysis"])
def test_a_cut_off_call_the_model_only_mentioned_is_not_sent_back_to_finish(answer: str) -> None:
    # "Send the complete call again" would push the model to make a call it declined or quoted.
    result = run_conversation(ScriptedModel([answer]), DemoDriver(), QUESTION)
    assert (result.stopped, result.turns, result.outcomes, result.answer) == ("answer", 1, [], answer)


@pytest.mark.parametrize("answer", [
    "Use the `<tool_call>` tag to call a tool; I did not need one.",
    'The call format is {"tool": "name", "arguments": {...}}, but Paris is simply 18 °C.',
    '{"name": "Paris", "temperature": 18.5}',
])
def test_an_answer_that_mentions_the_call_format_is_still_the_answer(answer: str) -> None:
    result = run_conversation(ScriptedModel([answer]), DemoDriver(), QUESTION)
    assert (result.stopped, result.outcomes, result.answer) == ("answer", [], answer)


@needs_native_calls
def test_a_native_call_with_unreadable_arguments_is_answered_by_its_id() -> None:
    broken = {"role": "assistant", "content": None, "tool_calls": [
        NATIVE_CALL["tool_calls"][0],
        {"id": "call_cut", "type": "function", "function": {"name": "add", "arguments": '{"a": 1, "b"'}},
    ]}
    model = ScriptedModel([broken, ANSWER])
    result = run_conversation(model, DemoDriver(), QUESTION, system_message=False)
    answers = {m["tool_call_id"]: json.loads(m["content"]) for m in model.seen[1] if m["role"] == "tool"}
    assert answers["call_w"]["city"] == "Tokyo"
    assert answers["call_cut"]["error"] == "INVALID_INPUT"
    assert "cut off" in answers["call_cut"]["message"]
    assert result.answer == ANSWER


def test_in_error_mode_a_missing_tool_goes_back_as_tool_not_found() -> None:
    model = ScriptedModel(['{"tool": "book_flight", "arguments": {}}', ANSWER])
    result = run_conversation(model, DemoDriver(on_unknown_tool="error"), QUESTION)
    [outcome] = result.outcomes
    assert outcome.error is not None and outcome.error.code == "TOOL_NOT_FOUND"
    assert "get_weather" in model.seen[1][-1]["content"], "the error lists the tools that exist"


class Reply(BaseModel):
    role: str = "assistant"
    content: str | None = None


@needs_message_content
def test_sdk_objects_are_read_through_model_dump() -> None:
    model = ScriptedModel([Reply(content=WEATHER_CALL), Reply(content=ANSWER)])
    result = run_conversation(model, DemoDriver(), QUESTION)
    assert result.answer == ANSWER and len(result.outcomes) == 1
    assert model.seen[1][-2] == {"role": "assistant", "content": WEATHER_CALL}


def test_content_parts_are_read_as_the_answer() -> None:
    output = {"role": "assistant", "content": [{"type": "text", "text": "Rain, "}, {"type": "text", "text": "18.5 °C."}]}
    assert run_conversation(ScriptedModel([output]), DemoDriver(), QUESTION).answer == "Rain, 18.5 °C."


@needs_native_calls
def test_native_calls_get_tool_messages_with_their_ids() -> None:
    model = ScriptedModel([NATIVE_CALL, ANSWER])
    result = run_conversation(model, DemoDriver(), QUESTION, system_message=False)
    assistant, tool_message = model.seen[1][-2:]
    assert assistant == NATIVE_CALL
    assert tool_message["role"] == "tool" and tool_message["tool_call_id"] == "call_w"
    assert json.loads(tool_message["content"])["sky"] == "clear"
    assert result.stopped == "answer"


@needs_native_calls
def test_a_made_up_tool_beside_a_real_one_is_answered_with_tool_not_found() -> None:
    output = {
        "role": "assistant",
        "tool_calls": [
            *NATIVE_CALL["tool_calls"],
            {"id": "call_x", "type": "function", "function": {"name": "book_flight", "arguments": "{}"}},
        ],
    }
    model = ScriptedModel([output, ANSWER])
    run_conversation(model, DemoDriver(), QUESTION)
    answers = {m["tool_call_id"]: json.loads(m["content"]) for m in model.seen[1] if m["role"] == "tool"}
    assert answers["call_w"]["sky"] == "clear"
    assert answers["call_x"]["error"] == "TOOL_NOT_FOUND"


class Shouter(MCSDriver):
    """A driver with only the bare contract: it answers ``SHOUT <word>``."""

    meta = DriverMeta(id="7d8c1a2b-4e5f-4a6b-8c9d-0e1f2a3b4c5d", name="shouter", version="1",
                      protocol="Text", transport="in-process", spec_format="none")

    def get_function_description(self, model_name: str | None = None) -> str:
        return "Write SHOUT <word> to shout a word."

    def get_driver_system_message(self, model_name: str | None = None) -> str:
        return "You can shout. " + self.get_function_description(model_name)

    def process_llm_response(self, llm_response: Any, *, context: Any = None) -> Any:
        if isinstance(llm_response, str) and llm_response.startswith("SHOUT "):
            return llm_response.removeprefix("SHOUT ").upper()
        return llm_response


def test_a_bare_contract_driver_works_in_the_loop() -> None:
    model = ScriptedModel(["SHOUT hello", "Done."])
    result = run_conversation(model, Shouter(), [{"role": "user", "content": "shout hello"}])
    assert result.outcomes[0].result == "HELLO"
    assert "HELLO" in model.seen[1][-1]["content"]
    assert result.answer == "Done."


@tool
def fails() -> None:
    """Always fails."""
    raise RuntimeError("backend unavailable")


def test_a_failing_tool_goes_back_as_execution_error() -> None:
    model = ScriptedModel(['{"tool": "fails", "arguments": {}}', "It failed."])
    result = run_conversation(model, FunctionDriver([fails]), QUESTION)
    assert result.outcomes[0].error is not None
    fed_back = model.seen[1][-1]["content"]
    assert "fails failed unexpectedly (RuntimeError)" in fed_back
    assert "backend unavailable" not in fed_back  # internals stay in the server log


# ---------------------------------------------------------------------- async twin


def _comparable(result: ConversationResult) -> Any:
    return (result.answer, result.stopped, result.turns, result.messages,
            [(o.call, o.result, o.error.to_dict() if o.error else None) for o in result.outcomes])


@pytest.mark.parametrize("script", [
    [WEATHER_CALL, ANSWER],
    ['{"tool": "add", "arguments": {"a": "x", "b": 1}}', "oops"],
    ['{"tool": "nothing_here", "arguments": {}}', "oops"],
    ['{"tool": "add", "arguments": {"a": 1, "b": ', "oops"],
    [WEATHER_CALL, WEATHER_CALL],
], ids=["call-answer", "invalid", "unknown", "cut-off", "max-turns"])
async def test_the_async_twin_gives_the_same_conversation(script: list[str]) -> None:
    context = AgentContext(agent_id="a", request_id="r")
    sync_result = run_conversation(ScriptedModel(script), DemoDriver(), QUESTION, max_turns=2, context=context)
    async_result = await arun_conversation(AsyncScriptedModel(script), DemoDriver(), QUESTION, max_turns=2,
                                           context=context)
    assert _comparable(async_result) == _comparable(sync_result)


async def test_the_async_twin_accepts_a_plain_callable_and_a_bare_driver() -> None:
    result = await arun_conversation(ScriptedModel(["SHOUT hey", "ok"]), Shouter(), QUESTION)
    assert result.outcomes[0].result == "HEY" and result.answer == "ok"


async def test_the_async_twin_runs_async_tools_natively() -> None:
    @tool
    async def ping() -> str:
        """Answer pong."""
        return "pong"

    result = await arun_conversation(
        AsyncScriptedModel(['{"tool": "ping", "arguments": {}}', "pong it is"]),
        FunctionDriver([ping], timeout=None), QUESTION,
    )
    assert result.outcomes[0].result == "pong"


@tool
def big() -> str:
    """A very large result."""
    return "y" * 100_000


def test_a_huge_result_is_cut_for_the_model_but_kept_in_the_outcomes() -> None:
    model = ScriptedModel(['{"tool": "big", "arguments": {}}', "done"])
    result = run_conversation(model, FunctionDriver([big]), QUESTION, max_result_chars=1000)
    fed_back = model.seen[1][-1]["content"]
    assert len(fed_back) < 1200
    assert "the result is 100,031 characters, only the first 1,000 are shown" in fed_back
    assert len(result.outcomes[0].result) == 100_000
    uncut = ScriptedModel(['{"tool": "big", "arguments": {}}', "done"])
    run_conversation(uncut, FunctionDriver([big]), QUESTION, max_result_chars=None)
    assert "y" * 100_000 in uncut.seen[1][-1]["content"]


def test_a_toolbox_chains_outputs_to_its_bare_contract_members() -> None:
    from mcs import Toolbox

    box = Toolbox({"demo": DemoDriver(), "shouter": Shouter()})
    model = ScriptedModel([WEATHER_CALL, "SHOUT done", "ok"])
    result = run_conversation(model, box, QUESTION)
    assert [o.result for o in result.outcomes][1] == "DONE"
    assert result.outcomes[0].result["sky"] == "light rain"
    assert result.answer == "ok"


async def test_the_async_twin_chains_to_bare_contract_members_too() -> None:
    from mcs import Toolbox

    box = Toolbox({"demo": DemoDriver(), "shouter": Shouter()})
    result = await arun_conversation(AsyncScriptedModel(["SHOUT hi", "ok"]), box, QUESTION)
    assert result.outcomes[0].result == "HI"
