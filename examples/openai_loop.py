"""An LLM loop over any OpenAI-compatible endpoint: OpenAI, Ollama, vLLM, LM Studio...

The model gets the driver's tools, asks for calls, MCS runs them and feeds the results
back until the model answers in plain text.

    # Ollama on this machine, the built-in demo driver (weather and add), text mode:
    python examples/openai_loop.py --base-url http://localhost:11434/v1 --model qwen2.5 \\
        "What's the weather in Paris and in Tokyo?"

    # the same with native function calling (tools sent in the request's `tools`):
    python examples/openai_loop.py --native --base-url http://localhost:8000/v1 --model my-vllm-model

    # any installed driver, with its options:
    python examples/openai_loop.py --driver rest -o spec=petstore.yaml \\
        -o base_url=http://127.0.0.1:8080 "List the available pets"

Text mode puts the driver's system prompt first and lets MCS parse the model's reply
(JSON, Hermes ``<tool_call>``, Llama, Mistral, pythonic calls...). ``--native`` sends the
tools in OpenAI's format instead and reads the reply's ``tool_calls``.
The API key comes from ``--api-key``, else ``OPENAI_API_KEY``, else ``none`` (local
servers ignore it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from openai import APIConnectionError, APIStatusError, OpenAI

from mcs import MCSDriver, ToolDriver
from mcs.cli import load_with_options, to_jsonable
from mcs.demo import DemoDriver
from mcs.loop import run_conversation
from mcs.native import export_tools
from mcs.options import typed_options


def build_driver(name: str | None, options: list[str]) -> MCSDriver:
    """The demo driver, or the one registered as ``name``; ``-o`` values typed by its signature."""
    if name is None:
        return DemoDriver(**typed_options(DemoDriver, options))
    return load_with_options(name, options)


def text_llm(client: OpenAI, model: str) -> Any:
    """The model as ``messages -> text``: MCS finds the calls in what it writes."""

    def llm(messages: list[dict[str, Any]]) -> str:
        reply = client.chat.completions.create(model=model, messages=messages)  # type: ignore[arg-type]
        return reply.choices[0].message.content or ""

    return llm


def native_llm(client: OpenAI, model: str, driver: MCSDriver) -> Any:
    """The model with OpenAI function calling: returns the assistant message as a dict."""
    if not isinstance(driver, ToolDriver):
        raise SystemExit("--native needs a driver that lists its tools (a ToolDriver)")
    tools = export_tools(driver.list_tools(), "openai")

    def llm(messages: list[dict[str, Any]]) -> dict[str, Any]:
        reply = client.chat.completions.create(model=model, messages=messages, tools=tools)  # type: ignore[arg-type]
        message = reply.choices[0].message
        out: dict[str, Any] = {"role": "assistant", "content": message.content}
        if message.tool_calls:
            out["tool_calls"] = [call.model_dump(mode="json") for call in message.tool_calls]
        return out

    return llm


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("prompt", nargs="?", default="What is the weather in Paris?")
    parser.add_argument("--base-url", default=os.environ.get("OPENAI_BASE_URL", "http://localhost:11434/v1"),
                        help="the endpoint's /v1 URL (default: OPENAI_BASE_URL, else Ollama's)")
    parser.add_argument("--model", default=os.environ.get("MCS_MODEL", "qwen2.5"))
    parser.add_argument("--api-key", default=os.environ.get("OPENAI_API_KEY", "none"))
    parser.add_argument("--driver", help="a registered driver name (default: the demo driver)")
    parser.add_argument("-o", "--option", action="append", default=[], metavar="KEY=VALUE",
                        help="a driver option (repeatable)")
    parser.add_argument("--native", action="store_true", help="use the API's native function calling")
    parser.add_argument("--max-turns", type=int, default=8)
    args = parser.parse_args(argv)

    driver = build_driver(args.driver, args.option)
    client = OpenAI(base_url=args.base_url, api_key=args.api_key, max_retries=0, timeout=120)
    llm = native_llm(client, args.model, driver) if args.native else text_llm(client, args.model)
    try:
        result = run_conversation(
            llm,
            driver,
            [{"role": "user", "content": args.prompt}],
            model=args.model,
            max_turns=args.max_turns,
            system_message=not args.native,
        )
    except APIConnectionError as exc:
        print(f"openai_loop.py: no model server answers at {args.base_url} ({exc}); start one there "
              "(Ollama: `ollama serve`) or give its /v1 URL with --base-url", file=sys.stderr)
        return 2
    except APIStatusError as exc:
        print(f"openai_loop.py: the model server at {args.base_url} refused the request ({exc.message}); "
              "check --model and --api-key", file=sys.stderr)
        return 2
    for outcome in result.outcomes:
        print(f"-> {outcome.call.name}({json.dumps(outcome.call.arguments, ensure_ascii=False)})")
        shown = to_jsonable(outcome.result) if outcome.ok else outcome.error.to_dict()  # type: ignore[union-attr]
        print(f"<- {json.dumps(shown, ensure_ascii=False)}")
    if result.stopped == "max_turns":
        print(f"(stopped after {result.turns} turns without a final answer)")
        return 1
    print(f"Answer: {result.answer}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
