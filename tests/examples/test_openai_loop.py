"""examples/openai_loop.py against a local OpenAI-compatible server that replays real model outputs.

The server (Starlette + uvicorn on a free loopback port) answers ``/v1/chat/completions``
with recorded outputs, in order, and keeps every request it got. The outputs mirror real
ones from the BFCL v1 corpus (question ``parallel_function_199``: current weather in four
cities), adapted to the demo driver's ``get_weather(city, unit)``: the function renamed,
``location`` renamed ``city``, the two booleans the demo tool does not take dropped.
``test_replayed_outputs_mirror_the_corpus`` checks that adaptation against the corpus.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from support.servers import uvicorn_on_loopback

from mcs.parsing import parse_tool_calls

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "openai_loop.py"
CORPUS_OUTPUTS = ROOT / ".." / "shared" / "corpus" / "bfcl" / "v1" / "model_outputs"
HERMES_FILE = "NousResearch_Hermes-2-Pro-Llama-3-8B/gorilla_openfunctions_v1_test_parallel_function_result.json"
GPT4O_FILE = "gpt-4o-2024-08-06-FC/gorilla_openfunctions_v1_test_parallel_function_result.json"
QUESTION_ID = "parallel_function_199"

# NousResearch Hermes-2-Pro-Llama-3-8B, parallel_function_199 (raw text, adapted).
HERMES_REPLY = '<tool_call>\n{"arguments": {"city": "New York"}, "name": "get_weather"}\n</tool_call>\n'
# gpt-4o-2024-08-06 with function calling, parallel_function_199 (arguments as sent, adapted).
GPT4O_ARGUMENTS = ['{"city": "New York"}', '{"city": "Los Angeles"}', '{"city": "London"}', '{"city": "Tokyo"}']
GPT4O_REPLY: dict[str, Any] = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {"id": f"call_{index}", "type": "function", "function": {"name": "get_weather", "arguments": arguments}}
        for index, arguments in enumerate(GPT4O_ARGUMENTS)
    ],
}
# The reply the demo driver's own system prompt teaches (MCS canonical JSON).
CANONICAL_REPLY = '{"tool": "get_weather", "arguments": {"city": "Paris"}}'
FINAL_ANSWER = "It is 18.5 °C with light rain in Paris."


def _adapt(raw: str) -> str:
    return (
        raw.replace('"get_current_weather"', '"get_weather"')
        .replace('"location"', '"city"')
        .replace(', "include_temperature": true, "include_humidity": true', "")
    )


class ReplayServer:
    """An OpenAI-compatible chat endpoint that answers with recorded assistant messages."""

    def __init__(self, replies: list[str | dict[str, Any]]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.app = Starlette(routes=[Route("/v1/chat/completions", self.completions, methods=["POST"])])

    async def completions(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        if not self.replies:
            return JSONResponse({"error": {"message": "the replay has no more replies"}}, status_code=500)
        reply = self.replies.pop(0)
        message = {"role": "assistant", "content": reply} if isinstance(reply, str) else reply
        return JSONResponse({
            "id": f"chatcmpl-replay-{len(self.requests)}",
            "object": "chat.completion",
            "created": 1700000000,
            "model": body.get("model", "replay"),
            "choices": [{
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
            }],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        })


@pytest.fixture
def serve() -> Iterator[Any]:
    """Start a ReplayServer on a free loopback port; yields ``start(replies) -> (server, url)``."""
    with ExitStack() as running:

        def start(replies: list[str | dict[str, Any]]) -> tuple[ReplayServer, str]:
            replay = ReplayServer(replies)
            config = uvicorn.Config(replay.app, log_level="warning", lifespan="off", ws="none")
            return replay, running.enter_context(uvicorn_on_loopback(config)) + "/v1"

        yield start


def run_example(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
    env.pop("OPENAI_API_KEY", None)
    return subprocess.run(
        [sys.executable, str(EXAMPLE), "--base-url", url, "--api-key", "replay-key", *args],
        capture_output=True, text=True, timeout=120, env=env, check=False,
    )


def _needs(reply: Any, count: int, what: str) -> None:
    if len(parse_tool_calls(reply)) != count:
        pytest.skip(f"the parser in this tree does not read {what} yet")


def test_text_mode_runs_the_tool_and_ends_with_the_answer(serve: Any) -> None:
    replay, url = serve([CANONICAL_REPLY, FINAL_ANSWER])
    done = run_example(url, "--model", "qwen2.5", "What is the weather in Paris?")
    assert done.returncode == 0, done.stderr
    assert '-> get_weather({"city": "Paris"})' in done.stdout
    assert '<- {"city": "Paris", "temperature": 18.5, "unit": "celsius", "sky": "light rain"}' in done.stdout
    assert done.stdout.rstrip().endswith(f"Answer: {FINAL_ANSWER}")
    assert len(replay.requests) == 2, "one request per turn, and the conversation ended"
    first, second = replay.requests
    assert first["model"] == "qwen2.5" and "tools" not in first
    assert first["messages"][0]["role"] == "system" and "get_weather" in first["messages"][0]["content"]
    assert first["messages"][1] == {"role": "user", "content": "What is the weather in Paris?"}
    assert second["messages"][-2] == {"role": "assistant", "content": CANONICAL_REPLY}
    feedback = second["messages"][-1]
    assert feedback["role"] == "user" and '"temperature": 18.5' in feedback["content"]
    assert replay.headers[0]["authorization"] == "Bearer replay-key"


def test_text_mode_with_a_hermes_tool_call(serve: Any) -> None:
    _needs(HERMES_REPLY, 1, "Hermes <tool_call> text")
    replay, url = serve([HERMES_REPLY, "It is 20 °C in New York."])
    done = run_example(url, "--model", "NousResearch/Hermes-2-Pro-Llama-3-8B",
                       "What is the current temperature in New York?")
    assert done.returncode == 0, done.stderr
    assert '-> get_weather({"city": "New York"})' in done.stdout
    assert '"temperature": 20.0' in done.stdout
    assert "Answer: It is 20 °C in New York." in done.stdout
    assert len(replay.requests) == 2
    assert '"city": "New York"' in replay.requests[1]["messages"][-1]["content"]


def test_native_mode_answers_each_tool_call_by_id(serve: Any) -> None:
    _needs(GPT4O_REPLY, 4, "OpenAI tool_calls")
    replay, url = serve([GPT4O_REPLY, "New York 20 °C, Los Angeles 20 °C, London 20 °C, Tokyo 24 °C."])
    done = run_example(url, "--native", "--model", "gpt-4o-2024-08-06",
                       "What is the current temperature in New York, Los Angeles, London and Tokyo?")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("-> get_weather(") == 4
    assert '<- {"city": "Tokyo", "temperature": 24.0, "unit": "celsius", "sky": "clear"}' in done.stdout
    assert "Answer: New York 20 °C" in done.stdout
    first, second = replay.requests
    assert [t["function"]["name"] for t in first["tools"]] == ["get_weather", "add"]
    assert first["messages"] == [{"role": "user", "content":
                                  "What is the current temperature in New York, Los Angeles, London and Tokyo?"}]
    assert second["messages"][1]["tool_calls"][3]["function"]["arguments"] == '{"city": "Tokyo"}'
    tool_messages = [m for m in second["messages"] if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_0", "call_1", "call_2", "call_3"]
    assert json.loads(tool_messages[3]["content"])["sky"] == "clear"


def test_a_model_that_never_stops_calling_is_cut_at_max_turns(serve: Any) -> None:
    replay, url = serve([CANONICAL_REPLY] * 3)
    done = run_example(url, "--max-turns", "2")
    assert done.returncode == 1
    assert "stopped after 2 turns" in done.stdout
    assert len(replay.requests) == 2


def test_a_reply_cut_off_inside_its_call_is_sent_back_and_the_model_recovers(serve: Any) -> None:
    cut = '{"tool": "get_weather", "arguments": {"city": "Par'
    replay, url = serve([cut, CANONICAL_REPLY, FINAL_ANSWER])
    done = run_example(url, "--model", "qwen2.5", "What is the weather in Paris?")
    assert done.returncode == 0, done.stderr
    assert len(replay.requests) == 3, "the cut reply was not taken for the answer"
    feedback = replay.requests[1]["messages"][-1]
    assert feedback["role"] == "user"
    assert "Your call to get_weather was cut off before it ended, so nothing ran" in feedback["content"]
    assert '<- {"error": "INVALID_INPUT"' in done.stdout
    assert done.stdout.rstrip().endswith(f"Answer: {FINAL_ANSWER}")


def test_a_call_to_a_made_up_tool_is_answered_with_the_close_names(serve: Any) -> None:
    made_up = '{"tool": "get_wheather", "arguments": {"city": "Paris"}}'
    replay, url = serve([made_up, CANONICAL_REPLY, FINAL_ANSWER])
    done = run_example(url, "--model", "qwen2.5", "What is the weather in Paris?")
    assert done.returncode == 0, done.stderr
    assert len(replay.requests) == 3
    feedback = replay.requests[1]["messages"][-1]["content"]
    assert "There is no tool named 'get_wheather'. Did you mean get_weather?" in feedback
    assert done.stdout.rstrip().endswith(f"Answer: {FINAL_ANSWER}")


def test_native_mode_answers_a_call_with_cut_arguments_by_its_id(serve: Any) -> None:
    _needs(GPT4O_REPLY, 4, "OpenAI tool_calls")
    cut = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_cut", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Tok'}},
    ]}
    replay, url = serve([cut, FINAL_ANSWER])
    done = run_example(url, "--native", "--model", "gpt-4o-2024-08-06", "Weather in Tokyo?")
    assert done.returncode == 0, done.stderr
    [answer] = [m for m in replay.requests[1]["messages"] if m["role"] == "tool"]
    assert answer["tool_call_id"] == "call_cut"
    error = json.loads(answer["content"])
    assert error["error"] == "INVALID_INPUT" and "cut off" in error["message"]


def test_replayed_outputs_mirror_the_corpus() -> None:
    if not CORPUS_OUTPUTS.is_dir():
        pytest.skip(f"the BFCL corpus is not beside the repository ({CORPUS_OUTPUTS})")

    def recorded(file: str) -> Any:
        for line in (CORPUS_OUTPUTS / file).read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if row["id"] == QUESTION_ID:
                return row["result"]
        raise AssertionError(f"{QUESTION_ID} is not in {file}")

    assert _adapt(recorded(HERMES_FILE)) == HERMES_REPLY
    gpt4o = recorded(GPT4O_FILE)
    assert [_adapt(next(iter(call.values()))) for call in gpt4o] == GPT4O_ARGUMENTS
    assert {next(iter(call)) for call in gpt4o} == {"get_current_weather"}


def test_no_model_server_at_the_url_is_one_line_saying_what_to_start_or_pass() -> None:
    with socket.socket() as probe:  # a loopback port nothing listens on once it is closed
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    done = run_example(url, "What is the weather in Paris?")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith(f"openai_loop.py: no model server answers at {url} (")
    assert line.endswith("start one there (Ollama: `ollama serve`) or give its /v1 URL with --base-url")


def test_a_model_server_that_refuses_the_request_is_one_line_with_its_status(serve: Any) -> None:
    _, url = serve([])  # the replay answers 500 once it has no reply left
    done = run_example(url, "What is the weather in Paris?")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"openai_loop.py: the model server at {url} refused the request (Error code: 500 - the replay "
        "has no more replies); check --model and --api-key"
    ]
