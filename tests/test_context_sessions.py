"""A tool that talks back to its caller, in a plain LLM loop: the default and a custom session."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

import mcs
from mcs.errors import ErrorCode


@mcs.tool
async def sign_up(ctx: mcs.AgentContext) -> str:
    """Sign the user up, asking for their name."""
    await ctx.report_progress(1, 2, "asking")
    answer = await ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
    return f"welcome {answer.content['name']}" if answer.accepted and answer.content else "not signed up"


@mcs.tool
async def summarise(text: str, ctx: mcs.AgentContext) -> str:
    """Summarise with the client's model."""
    reply = await ctx.sample(f"Summarise: {text}", max_tokens=20)
    return reply.text


@mcs.tool
async def where(ctx: mcs.AgentContext) -> list[str]:
    """The client's roots."""
    return [root.uri for root in await ctx.list_roots()]


class Terminal(mcs.Session):
    """What a loop user supplies: answers from their own program."""

    def __init__(self) -> None:
        self.progress: list[tuple[float, float | None, str | None]] = []

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        self.progress.append((progress, total, message))

    async def elicit(self, message: str, schema: Mapping[str, Any]) -> mcs.Elicited:
        return mcs.Elicited("accept", {"name": "Ada"})

    async def sample(self, messages: str | Sequence[Mapping[str, Any]], **options: Any) -> mcs.Sampled:
        return mcs.Sampled(text=f"short ({options['max_tokens']} tokens)")

    async def list_roots(self) -> list[mcs.Root]:
        return [mcs.Root("file:///work", "work")]


def test_without_a_client_the_model_reads_that_the_tool_needs_one() -> None:
    driver = mcs.FunctionDriver([sign_up, summarise, where])
    for call in ({"tool": "sign_up", "arguments": {}}, {"tool": "summarise", "arguments": {"text": "t"}},
                 {"tool": "where", "arguments": {}}):
        with pytest.raises(mcs.SessionUnavailableError) as caught:
            driver.process_llm_response(call)
        assert caught.value.code is ErrorCode.EXECUTION_ERROR
        assert "interactive client" in caught.value.message and "`mcs serve`" in caught.value.message


def test_a_loop_that_supplies_a_session_answers_the_tool_itself() -> None:
    driver = mcs.FunctionDriver([sign_up, summarise, where])
    terminal = Terminal()
    context = mcs.AgentContext(session=terminal)
    assert driver.process_llm_response({"tool": "sign_up", "arguments": {}}, context=context) == "welcome Ada"
    assert terminal.progress == [(1, 2, "asking")]
    summary = asyncio.run(driver.aprocess_llm_response(
        {"tool": "summarise", "arguments": {"text": "long"}}, context=context))
    assert summary == "short (20 tokens)"
    assert driver.call_tool("where", {}, context=context) == ["file:///work"]


def test_progress_without_a_listener_is_a_no_op_and_the_session_survives_copies() -> None:
    context = mcs.AgentContext()
    asyncio.run(context.report_progress(5, 10))
    terminal = Terminal()
    copied = mcs.AgentContext(session=terminal).with_request_id()
    assert copied.session is terminal
    # equality ignores the session: it is what the client can do, not who calls
    assert mcs.AgentContext(request_id="r", session=terminal) == mcs.AgentContext(request_id="r")
    assert "session" not in repr(copied)
